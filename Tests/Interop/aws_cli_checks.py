"""Drives an S3 endpoint with the AWS CLI (`aws s3`, `aws s3api`) at its defaults, as an independent client of
GQLStorageEmulator.

Reads one JSON object on standard input: {"endpoint" (http://127.0.0.1:PORT), "accessKey", "secretKey", "region",
"bucket", "scratch" (a writable folder), "check" (one of CHECKS below)}, runs that check, and writes one JSON object
of what it saw on standard output. A failed command raises (exit 1, its output on standard error), so the Swift test
(Tests/GQLEmulatorsTests/AWSCLIInteropTests.swift) both asserts on the output and fails on an error.

Every `aws` runs as a child process of this interpreter (`python -m awscli`, the pinned awscli of requirements.txt)
with a clean environment: HOME, AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE point into the scratch folder, so
nothing of the machine's AWS configuration is read, and the instance metadata lookup is off. The endpoint must be
on 127.0.0.1. What a check sets up or looks at besides the commands under test goes through boto3 in this process
(no CLI start-up for it: each `aws` costs about half a second).
"""
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

# This process's own boto3 reads nothing of the machine's either.
for name in list(os.environ):
    if name.startswith("AWS_"):
        del os.environ[name]
os.environ["AWS_CONFIG_FILE"] = os.devnull
os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402


class Cli:
    """The AWS CLI with a configuration of its own in `scratch`: the emulator's credentials (or `secret` /
    `access_key` instead), the region, and `extra` lines for the default profile."""

    def __init__(self, spec, secret=None, access_key=None, profile="emulator", extra=""):
        host = urllib.parse.urlsplit(spec["endpoint"]).hostname
        if host != "127.0.0.1":
            raise SystemExit(f"the endpoint must be on 127.0.0.1, not {host}")
        self.spec = spec
        self.home = os.path.join(spec["scratch"], f"home-{profile}")
        aws = os.path.join(self.home, ".aws")
        os.makedirs(aws, exist_ok=True)
        self.config = os.path.join(aws, "config")
        self.credentials = os.path.join(aws, "credentials")
        with open(self.config, "w") as handle:
            handle.write(f"[default]\nregion = {spec['region']}\noutput = json\n{extra}")
        with open(self.credentials, "w") as handle:
            handle.write(f"[default]\naws_access_key_id = {access_key or spec['accessKey']}\n"
                         f"aws_secret_access_key = {secret or spec['secretKey']}\n")

    def run(self, *args, check=True, cwd=None):
        """Runs `aws ARGS --endpoint-url ENDPOINT`; returns (exit status, standard output, standard error)."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "AWS_CONFIG_FILE": self.config,
            "AWS_SHARED_CREDENTIALS_FILE": self.credentials,
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_PAGER": "",
            "LANG": "C.UTF-8",
        }
        command = [sys.executable, "-m", "awscli", *args, "--endpoint-url", self.spec["endpoint"]]
        done = subprocess.run(command, env=env, cwd=cwd or self.spec["scratch"], capture_output=True, text=True,
                              timeout=60)
        if check and done.returncode != 0:
            raise SystemExit(f"aws {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done.returncode, done.stdout, done.stderr

    def json(self, *args):
        return json.loads(self.run(*args)[1] or "{}")


def sdk(spec):
    """boto3, for setting up and looking at what the commands under test did."""
    return boto3.client("s3", endpoint_url=spec["endpoint"], aws_access_key_id=spec["accessKey"],
                        aws_secret_access_key=spec["secretKey"], region_name=spec["region"],
                        config=Config(retries={"max_attempts": 1}))


def seeded(size, seed):
    """`size` deterministic bytes (no randomness: the Swift side prints no seed for these)."""
    block = bytes((i * 131 + seed * 7) & 0xFF for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def listed(output):
    """`aws s3 ls` lines as (kind, name): ("PRE", "folder/") or ("OBJ", "name")."""
    rows = []
    for line in output.splitlines():
        parts = line.split()
        if parts[:1] == ["PRE"]:
            rows.append(("PRE", parts[1]))
        elif len(parts) >= 4:
            rows.append(("OBJ", line.split(None, 3)[3]))
    return rows


def transfers(spec):
    """`aws s3 cp` up (above the CLI's 8 MiB multipart threshold: parts) and down, and `aws s3 ls` of a prefix."""
    cli = Cli(spec)
    bucket = spec["bucket"]
    data = seeded(17 * 1024 * 1024 + 4321, 11)
    source = os.path.join(spec["scratch"], "up", "big.bin")
    write(source, data)
    cli.run("s3", "cp", source, f"s3://{bucket}/cli/big file.bin")
    s3 = sdk(spec)
    s3.put_object(Bucket=bucket, Key="cli/sub/again.bin", Body=b"again")
    head = s3.head_object(Bucket=bucket, Key="cli/big file.bin")
    back = os.path.join(spec["scratch"], "down", "big.bin")
    cli.run("s3", "cp", f"s3://{bucket}/cli/big file.bin", back)
    listing = listed(cli.run("s3", "ls", f"s3://{bucket}/cli/")[1])
    return {
        "etag": head["ETag"],
        "contentLength": head["ContentLength"],
        "downloadedSame": read(back) == data,
        "listing": [f"{kind} {name}" for kind, name in listing],
    }


def sync(spec):
    """`aws s3 sync` up, again after one change (only that file goes), down; then `aws s3 rm --recursive`."""
    cli = Cli(spec)
    bucket = spec["bucket"]
    local = os.path.join(spec["scratch"], "tree")
    files = {"a.txt": b"alpha", "nested/b.txt": b"bravo", "nested/deeper/c.bin": seeded(70000, 2),
             "with space/d.txt": b"delta"}
    for name, data in files.items():
        write(os.path.join(local, name), data)
    first = cli.run("s3", "sync", local, f"s3://{bucket}/sync/")[1]
    write(os.path.join(local, "a.txt"), b"alpha, changed")
    files["a.txt"] = b"alpha, changed"
    second = cli.run("s3", "sync", local, f"s3://{bucket}/sync/")[1]
    down = os.path.join(spec["scratch"], "tree-down")
    cli.run("s3", "sync", f"s3://{bucket}/sync/", down)
    same = all(read(os.path.join(down, name)) == data for name, data in files.items())
    s3 = sdk(spec)
    recursive = [item["Key"] for item in s3.list_objects_v2(Bucket=bucket, Prefix="sync/").get("Contents", [])]
    removed = cli.run("s3", "rm", "--recursive", f"s3://{bucket}/sync/")[1]
    left = s3.list_objects_v2(Bucket=bucket, Prefix="sync/")
    return {
        "firstUploads": sum(1 for line in first.splitlines() if line.startswith("upload:")),
        "secondUploads": [line.split(" to ")[-1].strip() for line in second.splitlines() if line.startswith("upload:")],
        "downloadedSame": same,
        "recursive": recursive,
        "removed": sum(1 for line in removed.splitlines() if line.startswith("delete:")),
        "left": left.get("KeyCount", 0),
    }


def s3api(spec):
    """`aws s3api put-object`, `head-object`, `list-objects-v2 --max-items` (the CLI's own pagination tokens)."""
    cli = Cli(spec)
    bucket = spec["bucket"]
    body = os.path.join(spec["scratch"], "body.txt")
    write(body, b"put through s3api")
    put = cli.json("s3api", "put-object", "--bucket", bucket, "--key", "api/object.txt", "--body", body,
                   "--content-type", "text/plain", "--metadata", "origin=awscli")
    head = cli.json("s3api", "head-object", "--bucket", bucket, "--key", "api/object.txt")
    s3 = sdk(spec)
    for index in range(6):
        s3.put_object(Bucket=bucket, Key=f"api/page/{index}.txt", Body=b"page")
    pages, keys, token = 0, [], None
    while True:
        args = ["s3api", "list-objects-v2", "--bucket", bucket, "--prefix", "api/page/", "--max-items", "4"]
        if token:
            args += ["--starting-token", token]
        page = cli.json(*args)
        pages += 1
        keys += [item["Key"] for item in page.get("Contents", [])]
        token = page.get("NextToken")
        if not token or pages > 5:
            break
    return {
        "putETag": put.get("ETag"),
        "headETag": head.get("ETag"),
        "contentType": head.get("ContentType"),
        "metadata": head.get("Metadata"),
        "contentLength": head.get("ContentLength"),
        "pages": pages,
        "keys": keys,
    }


def presign(spec):
    """`aws s3 presign` fetched with a plain HTTP client: at the CLI's default (Signature Version 2) and with a
    profile whose `s3.signature_version` is `s3v4`; an altered URL is refused."""
    cli = Cli(spec)
    bucket = spec["bucket"]
    sdk(spec).put_object(Bucket=bucket, Key="api/object.txt", Body=b"put through s3api")
    url = cli.run("s3", "presign", f"s3://{bucket}/api/object.txt", "--expires-in", "300")[1].strip()
    got = urllib.request.urlopen(url, timeout=10).read().decode()
    v4 = Cli(spec, profile="v4", extra="s3 =\n    signature_version = s3v4\n")
    v4_url = v4.run("s3", "presign", f"s3://{bucket}/api/object.txt", "--expires-in", "300")[1].strip()
    got_v4 = urllib.request.urlopen(v4_url, timeout=10).read().decode()
    altered_status = []
    for signed in (url, v4_url):
        try:
            urllib.request.urlopen(signed.replace("api/object.txt", "api/other.txt"), timeout=10)
            altered_status.append(200)
        except urllib.error.HTTPError as error:
            altered_status.append(error.code)
    return {
        "presignedV2": "Signature=" in url and "X-Amz-" not in url,
        "presignedGot": got,
        "presignedV4": "X-Amz-Signature=" in v4_url,
        "presignedV4Got": got_v4,
        "alteredStatus": altered_status,
    }


def refusals(spec):
    """A wrong secret and an unknown access key: the CLI fails and names S3's error code."""
    seen = {}
    for name, cli in (("wrongSecret", Cli(spec, secret="not-the-secret", profile="wrong")),
                      ("unknownKey", Cli(spec, access_key="AKIANOTKNOWN", profile="unknown"))):
        status, _, error = cli.run("s3api", "list-objects-v2", "--bucket", spec["bucket"], check=False)
        seen[name] = {"status": status, "code": next(
            (code for code in ("SignatureDoesNotMatch", "InvalidAccessKeyId") if code in error), error[-300:])}
    status, _, error = Cli(spec).run("s3", "cp", f"s3://{spec['bucket']}/missing.txt",
                                     os.path.join(spec["scratch"], "missing.txt"), check=False)
    seen["missing"] = {"status": status, "says404": "404" in error}
    return seen


CHECKS = {"transfers": transfers, "sync": sync, "s3api": s3api, "presign": presign, "refusals": refusals}

if __name__ == "__main__":
    spec = json.load(sys.stdin)
    json.dump(CHECKS[spec["check"]](spec), sys.stdout)
