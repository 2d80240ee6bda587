"""An S3-compatible server for the GQLStorage tests: moto's server mode with request authentication on.

moto checks SigV4 signatures only for access keys its IAM knows, so the peer lets the first three requests through
unauthenticated, uses them to create a user with an allow-all policy and an access key, and from then on every
request must be signed with that key. It prints one line, `READY {"port": …, "accessKey": …, "secretKey": …}`,
and serves on 127.0.0.1 until its standard input closes.

With `--no-auth` moto checks nothing: for presigned URLs, which moto cannot check while authentication is on (its
authenticator reads only the Authorization header and fails with a 500 on any presigned request, botocore's own
included). Their signatures are proven against botocore's presigner in SigV4OracleTests instead.

With `--fail-every K`, the 1st, (K+1)-th, (2K+1)-th … S3 request to the same method, path and query (so with K = 2
every request fails once and its retry succeeds; with K = 1 every attempt fails) is answered `503 SlowDown` in S3's XML error shape before moto sees it, and `GET /__faults` answers how
many were injected: the retry tests' fault injector.
"""
import json
import os
import sys

AUTHENTICATED = "--no-auth" not in sys.argv[1:]
# Read by moto when it is imported: after three unauthenticated actions, every request is checked.
if AUTHENTICATED:
    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"

import threading  # noqa: E402

import boto3  # noqa: E402
from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: E402


class Faults:
    """WSGI middleware answering every K-th request to the same method and path with 503 SlowDown."""

    def __init__(self, app, every: int):
        self.app, self.every = app, every
        self.lock = threading.Lock()
        self.counts: dict = {}
        self.injected = 0

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/__faults":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [str(self.injected).encode()]
        key = (environ.get("REQUEST_METHOD"), path, environ.get("QUERY_STRING", ""))
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1
            # Only S3 paths: the IAM set-up posts to "/".
            fail = path != "/" and (self.counts[key] - 1) % self.every == 0
            if fail:
                self.injected += 1
        if not fail:
            return self.app(environ, start_response)
        body = (
            b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
            b"<Message>Please reduce your request rate.</Message><RequestId>FAULT</RequestId></Error>"
        )
        start_response("503 Slow Down", [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
        return [body]


def main() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    arguments = sys.argv[1:]
    every = int(arguments[arguments.index("--fail-every") + 1]) if "--fail-every" in arguments else 0
    if every:
        # The server thread builds its app when it starts: wrap the dispatcher it will use.
        import moto.moto_server.threaded_moto_server as threaded

        dispatcher = threaded.DomainDispatcherApplication
        threaded.DomainDispatcherApplication = lambda *a, **k: Faults(dispatcher(*a, **k), every)
    server.start()
    _, port = server.get_host_and_port()
    iam = boto3.client(
        "iam",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="bootstrap",
        aws_secret_access_key="bootstrap",
    )
    iam.create_user(UserName="gqlstorage")
    iam.put_user_policy(
        UserName="gqlstorage",
        PolicyName="everything",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        ),
    )
    key = iam.create_access_key(UserName="gqlstorage")["AccessKey"]
    ready = {"port": port, "accessKey": key["AccessKeyId"], "secretKey": key["SecretAccessKey"]}
    print("READY " + json.dumps(ready), flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
