"""An S3-compatible server for the GQLStorage tests: moto's server mode with request authentication on.

moto checks SigV4 signatures only for access keys its IAM knows, so the peer lets the first three requests through
unauthenticated, uses them to create a user with an allow-all policy and an access key, and from then on every
request must be signed with that key. It prints one line, `READY {"port": …, "accessKey": …, "secretKey": …}`,
and serves on 127.0.0.1 until its standard input closes.

With `--no-auth` moto checks nothing: for presigned URLs, which moto cannot check while authentication is on (its
authenticator reads only the Authorization header and fails with a 500 on any presigned request, botocore's own
included). Their signatures are proven against botocore's presigner in SigV4OracleTests instead.
"""
import json
import os
import sys

AUTHENTICATED = "--no-auth" not in sys.argv[1:]
# Read by moto when it is imported: after three unauthenticated actions, every request is checked.
if AUTHENTICATED:
    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402


def main() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
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
