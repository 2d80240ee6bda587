"""Signs S3 requests with botocore, the AWS SDK for Python's own signer, as an oracle for GQLStorage's SigV4.

Reads one JSON array of requests on standard input, each
  {"method", "url" (scheme://host[:port]), "bucket", "key" (not encoded), "query": [[name, value]…] (not encoded),
   "headers": [[name, value]…] (names distinct in any case), "body": hex, "timestamp": "20130524T000000Z", "region",
   "accessKey", "secretKey", "sessionToken" (optional)}
and writes one JSON array of their Authorization headers on standard output. A request with "expires" (seconds)
is presigned instead (botocore's query-string signer), and its X-Amz-Signature is written.
"""
import datetime
import json
import sys
from urllib.parse import parse_qs, urlsplit
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode


def sign(spec: dict) -> str:
    moment = datetime.datetime.strptime(spec["timestamp"], "%Y%m%dT%H%M%SZ")
    credentials = Credentials(spec["accessKey"], spec["secretKey"], spec.get("sessionToken"))
    request = AWSRequest(
        method=spec["method"],
        # The path as botocore's own serializer builds it for S3: the bucket, then the key with `/` kept.
        url=spec["url"] + "/" + percent_encode(spec["bucket"]) + "/" + percent_encode(spec["key"], safe="/~"),
        params=[tuple(pair) for pair in spec["query"]] or None,
        headers=dict(spec["headers"]),
        data=bytes.fromhex(spec["body"]),
    )
    if "expires" in spec:
        signer = botocore.auth.S3SigV4QueryAuth(credentials, "s3", spec["region"], expires=spec["expires"])
    else:
        signer = botocore.auth.S3SigV4Auth(credentials, "s3", spec["region"])
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=moment):
        signer.add_auth(request)
    if "expires" in spec:
        return parse_qs(urlsplit(request.url).query)["X-Amz-Signature"][0]
    return request.headers["Authorization"]


def main() -> None:
    specs = json.load(sys.stdin)
    json.dump([sign(spec) for spec in specs], sys.stdout)


if __name__ == "__main__":
    main()
