"""Drives an S3 endpoint with boto3/botocore at their defaults, as an independent client of GQLStorageEmulator.

Reads one JSON object on standard input: {"endpoint", "accessKey", "secretKey", "region", "bucket", "scratch"
(a writable folder), "check" (one of CHECKS below)}, runs that check, and writes one JSON object of what it saw on
standard output. A failed expectation raises (exit 1, the traceback on standard error), so the Swift test
(Tests/GQLEmulatorsTests/StorageInteropTests.swift) both asserts on the output and fails on an error.
"""
import base64
import json
import os
import socket
import sys
import zlib

# No configuration of the machine's may leak in: credentials and region come from the input only.
for name in list(os.environ):
    if name.startswith("AWS_"):
        del os.environ[name]
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull

import boto3  # noqa: E402
import botocore  # noqa: E402
from boto3.s3.transfer import TransferConfig  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402
from crc64nvme import crc64nvme  # noqa: E402


def client(spec, secret=None, **config):
    return boto3.client(
        "s3",
        endpoint_url=spec["endpoint"],
        aws_access_key_id=spec["accessKey"],
        aws_secret_access_key=secret or spec["secretKey"],
        region_name=spec["region"],
        config=Config(retries={"max_attempts": 1}, **config),
    )


def seeded(size, seed):
    """`size` deterministic bytes (no randomness: the Swift side prints no seed for these)."""
    block = bytes((i * 131 + seed * 7) & 0xFF for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


def transfers(spec):
    """upload_file goes in parts above the default 8 MiB threshold; download_file fetches ranges."""
    s3 = client(spec)
    path = os.path.join(spec["scratch"], "big.bin")
    data = seeded(20 * 1024 * 1024 + 12345, 3)
    with open(path, "wb") as handle:
        handle.write(data)
    sent = []
    s3.upload_file(path, spec["bucket"], "boto/big file.bin", Callback=sent.append,
                   ExtraArgs={"Metadata": {"origin": "boto3"}, "ContentType": "application/x-test"})
    head = s3.head_object(Bucket=spec["bucket"], Key="boto/big file.bin")
    back = os.path.join(spec["scratch"], "back.bin")
    received = []
    s3.download_file(spec["bucket"], "boto/big file.bin", back, Callback=received.append,
                     Config=TransferConfig(multipart_chunksize=8 * 1024 * 1024))
    with open(back, "rb") as handle:
        same = handle.read() == data
    ranged = s3.get_object(Bucket=spec["bucket"], Key="boto/big file.bin", Range="bytes=100-199")
    body = ranged["Body"].read()
    small = seeded(1000, 5)
    put = s3.put_object(Bucket=spec["bucket"], Key="boto/small.bin", Body=small)
    return {
        "sentTotal": sum(sent),
        "etag": head["ETag"],
        "metadata": head["Metadata"],
        "contentType": head["ContentType"],
        "contentLength": head["ContentLength"],
        "downloadedSame": same,
        "receivedTotal": sum(received),
        "rangeStatus": ranged["ResponseMetadata"]["HTTPStatusCode"],
        "contentRange": ranged["ContentRange"],
        "rangeSame": body == data[100:200],
        "smallETag": put["ETag"],
        "smallChecksum": put.get("ChecksumCRC32"),
    }


def listing(spec):
    """list_objects_v2 paginated (continuation tokens), with a delimiter, with encoding-type=url."""
    s3 = client(spec)
    keys = [f"list/{group}/item {index:03d}+%.txt" for group in ("a", "b") for index in range(125)]
    keys.append("list/top.txt")
    for key in keys:
        s3.put_object(Bucket=spec["bucket"], Key=key, Body=b"x")
    paginator = s3.get_paginator("list_objects_v2")
    listed, pages = [], 0
    for page in paginator.paginate(Bucket=spec["bucket"], Prefix="list/", PaginationConfig={"PageSize": 100}):
        pages += 1
        listed += [item["Key"] for item in page.get("Contents", [])]
    folders = s3.list_objects_v2(Bucket=spec["bucket"], Prefix="list/", Delimiter="/")
    v1 = s3.list_objects(Bucket=spec["bucket"], Prefix="list/a/", MaxKeys=10)
    deleted = s3.delete_objects(
        Bucket=spec["bucket"], Delete={"Objects": [{"Key": key} for key in keys[:50]], "Quiet": False})
    left = s3.list_objects_v2(Bucket=spec["bucket"], Prefix="list/")["KeyCount"]
    return {
        "pages": pages,
        "listedSorted": listed == sorted(keys),
        "count": len(listed),
        "commonPrefixes": [item["Prefix"] for item in folders.get("CommonPrefixes", [])],
        "folderKeys": [item["Key"] for item in folders.get("Contents", [])],
        "v1Truncated": v1["IsTruncated"],
        "v1Count": len(v1.get("Contents", [])),
        "deleted": len(deleted.get("Deleted", [])),
        "left": left,
    }


def presigned(spec):
    """generate_presigned_url for PUT and GET (botocore's default: Signature Version 2 query strings; and SigV4 when
    configured), used with a plain HTTP client; an altered URL is refused."""
    import urllib.request
    import urllib.error

    s3 = client(spec)
    put_url = s3.generate_presigned_url(
        "put_object", Params={"Bucket": spec["bucket"], "Key": "shared/hello world.txt"}, ExpiresIn=300)
    # No Content-Type (urllib would add a form type), as the URL was signed without one.
    request = urllib.request.Request(put_url, data=b"hello from a presigned PUT", method="PUT",
                                     headers={"Content-Type": ""})
    put_status = urllib.request.urlopen(request).status
    get_url = s3.generate_presigned_url(
        "get_object", Params={"Bucket": spec["bucket"], "Key": "shared/hello world.txt"}, ExpiresIn=300)
    got = urllib.request.urlopen(get_url).read().decode()
    altered = get_url.replace("hello%20world", "hello%20there")
    altered_code = ""
    try:
        urllib.request.urlopen(altered)
        altered_status = 200
    except urllib.error.HTTPError as error:
        altered_status = error.code
        altered_code = error.read().decode()
    v4 = client(spec, signature_version="s3v4")
    v4_url = v4.generate_presigned_url(
        "get_object", Params={"Bucket": spec["bucket"], "Key": "shared/hello world.txt"}, ExpiresIn=300)
    got_v4 = urllib.request.urlopen(v4_url).read().decode()
    return {"putStatus": put_status, "got": got, "gotV4": got_v4, "v4": "X-Amz-Signature" in v4_url,
            "v2": "Signature=" in get_url and "X-Amz-" not in get_url, "alteredStatus": altered_status,
            "alteredSignatureMismatch": "SignatureDoesNotMatch" in altered_code}


def refusals(spec):
    """A wrong secret, an unknown access key and a missing object, as botocore reports them."""
    codes = {}
    for name, s3 in (("wrongSecret", client(spec, secret="not-the-secret")),
                     ("unknownKey", boto3.client("s3", endpoint_url=spec["endpoint"], aws_access_key_id="AKIANOTKNOWN",
                                                 aws_secret_access_key="x", region_name=spec["region"],
                                                 config=Config(retries={"max_attempts": 1})))):
        try:
            s3.put_object(Bucket=spec["bucket"], Key="refused", Body=b"x")
            codes[name] = "accepted"
        except ClientError as error:
            codes[name] = error.response["Error"]["Code"]
    try:
        client(spec).get_object(Bucket=spec["bucket"], Key="missing")
    except ClientError as error:
        codes["missing"] = error.response["Error"]["Code"]
    try:
        client(spec).head_object(Bucket=spec["bucket"], Key="missing")
    except ClientError as error:
        codes["missingHead"] = error.response["Error"]["Code"]
    return codes


def virtual_hosted(spec):
    """Virtual-hosted addressing (bucket.localhost:PORT) with copy_object and metadata replaced."""
    real = socket.getaddrinfo

    def loopback(host, *args, **kwargs):
        if host.endswith(".localhost") or host == "localhost":
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    socket.getaddrinfo = loopback
    endpoint = spec["endpoint"].replace("127.0.0.1", "localhost")
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=spec["accessKey"],
                      aws_secret_access_key=spec["secretKey"], region_name=spec["region"],
                      config=Config(s3={"addressing_style": "virtual"}, retries={"max_attempts": 1}))
    s3.put_object(Bucket=spec["bucket"], Key="vh/source.txt", Body=b"virtual", Metadata={"a": "1"})
    s3.copy_object(Bucket=spec["bucket"], Key="vh/copy.txt",
                   CopySource={"Bucket": spec["bucket"], "Key": "vh/source.txt"},
                   Metadata={"b": "2"}, MetadataDirective="REPLACE")
    copy = s3.get_object(Bucket=spec["bucket"], Key="vh/copy.txt")
    return {"body": copy["Body"].read().decode(), "metadata": copy["Metadata"]}


def default_checksum(spec):
    """S3's default checksum: an object uploaded without one (here through a presigned PUT, which carries none)
    gets the CRC-64/NVME of its bytes, FULL_OBJECT, which boto3 at its defaults reads on HeadObject and GetObject
    with ChecksumMode ENABLED and in a listing; an object boto3 put at its defaults (with a CRC-32) keeps only that."""
    import urllib.request

    assert crc64nvme(b"123456789") == "rosUhgp5mIg=", "the reference CRC-64/NVME is wrong"
    s3 = client(spec)
    data = seeded(70001, 9)
    url = s3.generate_presigned_url("put_object", Params={"Bucket": spec["bucket"], "Key": "default/plain.bin"},
                                    ExpiresIn=300)
    request = urllib.request.Request(url, data=data, method="PUT", headers={"Content-Type": ""})
    put_checksum = urllib.request.urlopen(request).headers.get("x-amz-checksum-crc64nvme")
    head = s3.head_object(Bucket=spec["bucket"], Key="default/plain.bin", ChecksumMode="ENABLED")
    got = s3.get_object(Bucket=spec["bucket"], Key="default/plain.bin", ChecksumMode="ENABLED")
    body = got["Body"].read()
    plain_head = s3.head_object(Bucket=spec["bucket"], Key="default/plain.bin")
    s3.put_object(Bucket=spec["bucket"], Key="default/crc32.bin", Body=data)
    crc32_head = s3.head_object(Bucket=spec["bucket"], Key="default/crc32.bin", ChecksumMode="ENABLED")
    listed = {item["Key"]: item.get("ChecksumAlgorithm")
              for item in s3.list_objects_v2(Bucket=spec["bucket"], Prefix="default/")["Contents"]}
    return {
        "expected": crc64nvme(data),
        "putAnswer": put_checksum,
        "head": head.get("ChecksumCRC64NVME"),
        "headType": head.get("ChecksumType"),
        "get": got.get("ChecksumCRC64NVME"),
        "getSame": body == data,
        "withoutMode": "ChecksumCRC64NVME" in plain_head,
        "crc32Object": {"crc32": crc32_head.get("ChecksumCRC32"), "crc64nvme": crc32_head.get("ChecksumCRC64NVME")},
        "listed": listed,
    }


def full_object_checksum(spec):
    """A full-object CRC-64/NVME on CompleteMultipartUpload. What boto3 sends at its defaults: upload_file starts
    its multipart upload with CRC32 (composite) and sends no whole-object checksum at the completion. So the
    low-level client sends one, as an application does (botocore computes CRC-64/NVME only with the AWS CRT, absent
    here, so the part and object CRCs come from crc64nvme above): an upload started with CRC64NVME, a part sent with
    botocore's default checksum (CRC-32) refused, parts with their CRC-64/NVME, a wrong whole-object one refused
    (BadDigest) with the upload left open, the right one completing, the object then reporting it."""
    s3 = client(spec)
    sent = {}

    def record(request, event_name, **_):
        sent.setdefault(event_name.rsplit(".", 1)[-1], []).append(
            {name.lower(): value.decode() if isinstance(value, bytes) else value for name, value in request.headers.items()
             if name.lower().startswith("x-amz-checksum-") or name.lower() == "x-amz-sdk-checksum-algorithm"})

    s3.meta.events.register("before-send.s3.*", record)
    path = os.path.join(spec["scratch"], "defaults.bin")
    data = seeded(9 * 1024 * 1024, 11)
    with open(path, "wb") as handle:
        handle.write(data)
    s3.upload_file(path, spec["bucket"], "full/defaults.bin")
    defaults = {name: list(sent.get(name, [])) for name in ("CreateMultipartUpload", "CompleteMultipartUpload")}
    # Read back, and its composite CRC-32 (the CRC-32 of its parts' CRC-32s, "-N") in 8 MiB parts, boto3's
    # default TransferConfig.multipart_chunksize.
    chunk = 8 * 1024 * 1024
    crcs = b"".join(zlib.crc32(data[at:at + chunk]).to_bytes(4, "big") for at in range(0, len(data), chunk))
    defaults_expected = "%s-%d" % (base64.b64encode(zlib.crc32(crcs).to_bytes(4, "big")).decode(), len(crcs) // 4)
    defaults_head = s3.head_object(Bucket=spec["bucket"], Key="full/defaults.bin", ChecksumMode="ENABLED")
    defaults_same = s3.get_object(Bucket=spec["bucket"], Key="full/defaults.bin")["Body"].read() == data

    parts = [seeded(3000, 12), seeded(1500, 13)]
    whole = crc64nvme(b"".join(parts))
    created = s3.create_multipart_upload(Bucket=spec["bucket"], Key="full/object.bin", ChecksumAlgorithm="CRC64NVME")
    upload = {"Bucket": spec["bucket"], "Key": "full/object.bin", "UploadId": created["UploadId"]}
    try:
        s3.upload_part(PartNumber=1, Body=parts[0], **upload)
        default_part = "accepted"
    except ClientError as error:
        default_part = error.response["Error"]["Code"]
    listed = []
    for number, body in enumerate(parts, start=1):
        answer = s3.upload_part(PartNumber=number, Body=body, ChecksumCRC64NVME=crc64nvme(body), **upload)
        listed.append({"PartNumber": number, "ETag": answer["ETag"]})
        assert answer["ChecksumCRC64NVME"] == crc64nvme(body), answer
    try:
        s3.complete_multipart_upload(MultipartUpload={"Parts": listed}, ChecksumCRC64NVME=crc64nvme(parts[0]),
                                     ChecksumType="FULL_OBJECT", **upload)
        wrong = ("accepted", 200)
    except ClientError as error:
        wrong = (error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"])
    still_open = len(s3.list_parts(**upload)["Parts"])
    done = s3.complete_multipart_upload(MultipartUpload={"Parts": listed}, ChecksumCRC64NVME=whole,
                                        ChecksumType="FULL_OBJECT", **upload)
    head = s3.head_object(Bucket=spec["bucket"], Key="full/object.bin", ChecksumMode="ENABLED")
    body = s3.get_object(Bucket=spec["bucket"], Key="full/object.bin")["Body"].read()
    return {
        "defaults": defaults,
        "defaultsExpected": defaults_expected,
        "defaultsHead": [defaults_head.get("ChecksumCRC32"), defaults_head.get("ChecksumType")],
        "defaultsSame": defaults_same,
        "created": [created.get("ChecksumAlgorithm"), created.get("ChecksumType")],
        "defaultPart": default_part,
        "wrong": list(wrong),
        "stillOpen": still_open,
        "expected": whole,
        "completed": [done.get("ChecksumCRC64NVME"), done.get("ChecksumType")],
        "head": [head.get("ChecksumCRC64NVME"), head.get("ChecksumType")],
        "same": body == b"".join(parts),
    }


CHECKS = {"transfers": transfers, "listing": listing, "presigned": presigned, "refusals": refusals,
          "virtualHosted": virtual_hosted, "defaultChecksum": default_checksum, "fullObjectChecksum": full_object_checksum}

if __name__ == "__main__":
    spec = json.load(sys.stdin)
    json.dump(CHECKS[spec["check"]](spec), sys.stdout)
