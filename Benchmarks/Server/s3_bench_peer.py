"""botocore and boto3 as StorageBench's peers, at their best.

  sign N SEED      presigns N generated requests with botocore's own SigV4 query signer (S3SigV4QueryAuth, called
                   directly: no client, endpoint resolution or hooks in the timed loop) and prints the
                   seconds of the loop, then the signatures, one a line
  upload URL FILE BUCKET KEY [tuned]
                   boto3's transfer manager (upload_file), prints seconds; with the default TransferConfig (8 MiB
                   parts, 10 threads), or with `tuned` the TransferConfig knobs boto3 documents for throughput set
                   to what was fastest against the storage emulator here (TUNED_UPLOAD: 32 MiB parts, 4 threads;
                   picked from 8/16/32/64 MiB parts, 4/10 threads, `request_checksum_calculation` and
                   `payload_signing_enabled`, each tried twice at 256 MiB)
  download URL BUCKET KEY FILE [one-get]
                   boto3's transfer manager (download_file), prints seconds; with the default TransferConfig
                   (ranged GETs of 8 MiB, 10 threads, for an object over 8 MiB), or with `one-get` a TransferConfig
                   whose multipart threshold is above any object, so that it fetches the object with one GET

The generated requests are the same as StorageBench's (see keys()): GQLStorage signs the same ones.
"""
import datetime
import sys
import time
from unittest import mock

import boto3
import botocore.auth
from boto3.s3.transfer import TransferConfig
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

ACCESS, SECRET = "AKIDBENCHMARK", "bench/secret+key"
TUNED_UPLOAD = TransferConfig(multipart_chunksize=32 << 20, max_concurrency=4)


def keys(count: int, seed: int) -> list:
    alphabet = "abcdefghij KLMNO 0123+!()*~-_./é"
    state = seed
    out = []
    for index in range(count):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        length = 8 + state % 24
        text = []
        for position in range(length):
            state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            text.append(alphabet[(state >> 33) % len(alphabet)])
        out.append(f"folder{index % 10}/" + "".join(text))
    return out


def sign(count: int, seed: int) -> None:
    moment = datetime.datetime(2026, 11, 23, 12, 0, 0)
    credentials = Credentials(ACCESS, SECRET)
    names = keys(count, seed)
    signatures = []
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=moment):
        started = time.perf_counter()
        for key in names:
            request = AWSRequest(
                method="GET", url="http://127.0.0.1:9000/bench-bucket/" + percent_encode(key, safe="/~")
            )
            botocore.auth.S3SigV4QueryAuth(credentials, "s3", "us-east-1", expires=900).add_auth(request)
            signatures.append(request.url.rsplit("X-Amz-Signature=", 1)[1])
        elapsed = time.perf_counter() - started
    print(elapsed)
    print("\n".join(signatures))


def client(url: str):
    return boto3.client(
        "s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id=ACCESS, aws_secret_access_key=SECRET
    )


def main() -> None:
    command = sys.argv[1]
    if command == "sign":
        sign(int(sys.argv[2]), int(sys.argv[3]))
    elif command == "upload":
        url, path, bucket, key = sys.argv[2:6]
        config = TUNED_UPLOAD if sys.argv[6:7] == ["tuned"] else TransferConfig()
        s3 = client(url)
        started, cpu = time.perf_counter(), time.process_time()
        s3.upload_file(path, bucket, key, Config=config)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        print(f"boto3 upload: {elapsed:.3f} s, {cpu:.3f} s of CPU", file=sys.stderr)
        print(elapsed)
    elif command == "download":
        url, bucket, key, path = sys.argv[2:6]
        one_get = sys.argv[6:7] == ["one-get"]
        config = TransferConfig(multipart_threshold=1 << 50) if one_get else TransferConfig()
        s3 = client(url)
        started = time.perf_counter()
        s3.download_file(bucket, key, path, Config=config)
        print(time.perf_counter() - started)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
