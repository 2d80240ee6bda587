"""A hostile S3 stand-in for the GQLStorage and `gql-cli storage` tests, on Python's standard http.server. It checks
no signature; the bucket (the first path segment, path-style) picks what every request to it is answered:

  deep          200 with XML nested 50,000 elements deep (350 KB), whatever was asked
  deep-error    400 with the same document as its error body
  dtd           a listing declaring entities that expand a billion times (and one naming an external file)
  repeat        listing pages that all give the same continuation token
  endless       listing pages that never end, each with a new token
  huge          a 128 MiB listing, chunked, without a Content-Length
  entities      a listing without encoding-type whose keys hold entity and character references
  encoded       a listing with encoding-type=url, keys encoded as S3 does (a space is '+', a '+' is %2B)
  bad-percent   a listing with encoding-type=url whose key is not valid percent-encoding
  bad-utf8      a listing with encoding-type=url whose key decodes to bytes that are not UTF-8
  control       a listing with encoding-type=url whose keys hold control and bidirectional characters
  slow          GET of an object: 64 MiB announced, 64 KiB sent every 20 ms
  slow-chunked  the same without a Content-Length (chunked) and without an ETag
  escape-error  400 with a body that is not XML, holding a terminal escape sequence and a newline
  etag          GET of an object of 6 MiB + 123 bytes (byte i is i mod 251) whose key picks its ETag and body:
                `intact` the body and its MD5; `damaged` the body with one byte changed and the MD5 of the intact
                one; `multipart`, `kms` and `customer-key` the same damaged body with an ETag that is no digest of
                it: a multipart ETag (`<MD5 of the intact body>-3`), and the intact MD5 on an object encrypted with
                KMS (`x-amz-server-side-encryption: aws:kms`) or with a customer's key
  cut           GET of the intact `etag` object, whose first answer to each key stops after half its announced
                length and closes the connection; later answers are whole
  crc           GET of 200,000 bytes of the same pattern with a multipart ETag and, only when the GET asks with
                `x-amz-checksum-mode: ENABLED`, a whole-object checksum of the intact bytes: `crc64-intact`,
                `crc64-damaged` (x-amz-checksum-crc64nvme, FULL_OBJECT; one byte changed), `crc32-damaged`
                (x-amz-checksum-crc32, no type), `composite-damaged` (a composite CRC-32 `…-2`, COMPOSITE),
                `composite-untyped-damaged` (the same without a type), `crc64-range` (206 Partial Content: the
                first 100,000 bytes, with Content-Range and the whole object's CRC-64/NVME) and `crc64-range-200`
                (the same answered 200); `crc32-damaged-big` is
                the damaged `etag` object (6 MiB + 123 bytes) with the intact one's CRC-32, FULL_OBJECT

and `POST /graphql` (for gql-cli's GraphQL error lines) answers 7 GraphQL errors whose messages hold the same.

`GET /__sent` answers how many body bytes the last `huge` answer wrote before the client stopped reading, and
`GET /__requests` how many requests arrived. Prints `READY http://127.0.0.1:PORT` and serves until standard input
closes (http_peer.py).
"""
import base64
import hashlib
import json
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from crc64nvme import crc64nvme
from http_peer import serve_until_stdin_closes

DEPTH = 50_000
DEEP = b'<?xml version="1.0" encoding="UTF-8"?>' + b"<a>" * DEPTH + b"</a>" * DEPTH

CONTROL_KEYS = ["line%0Aforged%202026-01-01%20%20%20%20%20%20%20%20%20%20%20%201%20%20evil", "esc%1B%5B31mred",
                "bell%07del%7F", "rlo%E2%80%AEtxt.exe", "csi%C2%9B31m"]

ETAG_BODY = bytes(i % 251 for i in range((6 << 20) + 123))
ETAG_DAMAGED = ETAG_BODY[:3_000_000] + bytes([ETAG_BODY[3_000_000] ^ 0xFF]) + ETAG_BODY[3_000_001:]
ETAG_MD5 = hashlib.md5(ETAG_BODY).hexdigest()
ETAG_ANSWERS = {
    "intact": (ETAG_BODY, []),
    "damaged": (ETAG_DAMAGED, []),
    "multipart": (ETAG_DAMAGED, [], f"{ETAG_MD5}-3"),
    "kms": (ETAG_DAMAGED, [("x-amz-server-side-encryption", "aws:kms")]),
    "customer-key": (ETAG_DAMAGED, [("x-amz-server-side-encryption-customer-algorithm", "AES256")]),
}

# Objects with a multipart ETag (no digest of the body) and a whole-object checksum S3 answers only to a GET with
# x-amz-checksum-mode: ENABLED: 200,000 bytes of the same pattern, `…-damaged` with the byte at 100,000 changed and
# the checksum of the intact bytes; `composite-damaged` with a composite CRC-32 (of the parts' CRCs), which says
# nothing of the body.
CRC_BODY = ETAG_BODY[:200_000]
CRC_DAMAGED = CRC_BODY[:100_000] + bytes([CRC_BODY[100_000] ^ 0xFF]) + CRC_BODY[100_001:]
CRC32_BODY = base64.b64encode(zlib.crc32(CRC_BODY).to_bytes(4, "big")).decode()
CRC_ANSWERS = {
    "crc64-intact": (CRC_BODY, [("x-amz-checksum-crc64nvme", crc64nvme(CRC_BODY)), ("x-amz-checksum-type", "FULL_OBJECT")]),
    "crc64-damaged": (CRC_DAMAGED, [("x-amz-checksum-crc64nvme", crc64nvme(CRC_BODY)), ("x-amz-checksum-type", "FULL_OBJECT")]),
    "crc32-damaged": (CRC_DAMAGED, [("x-amz-checksum-crc32", CRC32_BODY)]),
    "composite-damaged": (CRC_DAMAGED, [("x-amz-checksum-crc32", CRC32_BODY + "-2"), ("x-amz-checksum-type", "COMPOSITE")]),
    "composite-untyped-damaged": (CRC_DAMAGED, [("x-amz-checksum-crc32", CRC32_BODY + "-2")]),
    "crc64-range": (CRC_BODY[:100_000], [("x-amz-checksum-crc64nvme", crc64nvme(CRC_BODY)), ("x-amz-checksum-type", "FULL_OBJECT")]),
    "crc64-range-200": (CRC_BODY[:100_000], [("x-amz-checksum-crc64nvme", crc64nvme(CRC_BODY)), ("x-amz-checksum-type", "FULL_OBJECT")]),
    "crc32-damaged-big": (ETAG_DAMAGED, [
        ("x-amz-checksum-crc32", base64.b64encode(zlib.crc32(ETAG_BODY).to_bytes(4, "big")).decode()),
        ("x-amz-checksum-type", "FULL_OBJECT")]),
}

state = {"sent": 0, "requests": 0, "cut": set()}
lock = threading.Lock()


def listing(keys, truncated=False, token=None, encoded=True):
    contents = "".join(
        f"<Contents><Key>{key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
        f"<ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><Size>1</Size>"
        f"<StorageClass>STANDARD</StorageClass></Contents>"
        for key in keys
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>b</Name><KeyCount>{len(keys)}</KeyCount><MaxKeys>1000</MaxKeys>"
        + ("<EncodingType>url</EncodingType>" if encoded else "")
        + f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"
        + (f"<NextContinuationToken>{token}</NextContinuationToken>" if token else "")
        + contents
        + "</ListBucketResult>"
    ).encode()


BILLION_LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE ListBucketResult [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
    '<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
    '<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">'
    '<!ENTITY i "&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;"><!ENTITY j "&i;&i;&i;&i;&i;&i;&i;&i;&i;&i;">]>'
    "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>&j;</Key></Contents></ListBucketResult>"
).encode()
EXTERNAL = (
    '<?xml version="1.0"?><!DOCTYPE ListBucketResult [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
    "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>&x;</Key></Contents></ListBucketResult>"
).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=(), content_type="application/xml"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def chunked(self, chunk, count, pause=0.0, length=None, headers=()):
        """`count` copies of `chunk`, `pause` seconds apart; chunked unless `length` is given."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        sent = 0
        try:
            for _ in range(count):
                if length is None:
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                else:
                    self.wfile.write(chunk)
                self.wfile.flush()
                sent += len(chunk)
                with lock:
                    state["sent"] = sent
                if pause:
                    time.sleep(pause)
            if length is None:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def handle_any(self):
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if parts.path == "/__sent":
            with lock:
                return self.answer(200, str(state["sent"]).encode())
        if parts.path == "/__requests":
            with lock:
                return self.answer(200, str(state["requests"]).encode())
        with lock:
            state["requests"] += 1
        if parts.path == "/graphql":
            errors = [{"message": f"error {n}: \x1b[2Jcleared\nforged line \u202e{'x' * 600}"} for n in range(1, 8)]
            return self.answer(200, json.dumps({"data": None, "errors": errors}).encode(), [], "application/json")
        bucket = parts.path.strip("/").split("/", 1)[0]
        token = query.get("continuation-token", [""])[0]
        if bucket == "deep":
            return self.answer(200, DEEP)
        if bucket == "deep-error":
            return self.answer(400, DEEP)
        if bucket == "dtd":
            return self.answer(200, EXTERNAL if "external" in parts.query else BILLION_LAUGHS)
        if bucket == "repeat":
            return self.answer(200, listing([f"key-{token or 'first'}"], truncated=True, token="the-same-token"))
        if bucket == "endless":
            page = int(token[1:]) + 1 if token.startswith("t") else 1
            return self.answer(200, listing([f"key-{page:08d}"], truncated=True, token=f"t{page}"))
        if bucket == "huge":
            with lock:
                state["sent"] = 0
            entry = listing(["k" * 200] * 100).split(b"<Contents>", 1)[1].rsplit(b"</ListBucketResult>", 1)[0]
            head = listing([]).rsplit(b"</ListBucketResult>", 1)[0]
            return self.chunked(head + (b"<Contents>" + entry) * ((1 << 20) // len(entry)), 128)
        if bucket == "entities":
            keys = ["a&amp;b", "x&lt;y&gt;z&quot;q&apos;", "&#x41;&#233;&#x65E5;", "&amp;" * 3000 + "end"]
            return self.answer(200, listing(keys, encoded=False))
        if bucket == "encoded":
            return self.answer(200, listing(["a+b.txt", "a%2Bb.txt", "100%25.csv", "%ED%95%9C/x+y%0A"]))
        if bucket == "bad-percent":
            return self.answer(200, listing(["fine", "bad%ZZkey"]))
        if bucket == "bad-utf8":
            return self.answer(200, listing(["fine", "bad%FF%FEkey"]))
        if bucket == "control":
            return self.answer(200, listing(CONTROL_KEYS))
        if bucket == "slow":
            etag = ("ETag", '"0123456789abcdef0123456789abcdef"')
            return self.chunked(b"s" * 65536, 1024, pause=0.02, length=64 << 20, headers=[etag])
        if bucket == "escape-error":
            return self.answer(400, b"refused\x1b[2J\r\nInjected: line\x07", [], "text/plain")
        if bucket == "etag":
            key = parts.path.strip("/").split("/", 1)[-1]
            if key not in ETAG_ANSWERS:
                return self.answer(404, b"<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>")
            body, headers, *etag = ETAG_ANSWERS[key]
            headers = headers + [("ETag", f'"{etag[0] if etag else ETAG_MD5}"')]
            return self.answer(200, body, headers, "application/octet-stream")
        if bucket == "crc":
            key = parts.path.strip("/").split("/", 1)[-1]
            if key not in CRC_ANSWERS:
                return self.answer(404, b"<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>")
            body, checksums = CRC_ANSWERS[key]
            headers = [("ETag", f'"{ETAG_MD5}-2"')]
            if self.headers.get("x-amz-checksum-mode", "").upper() == "ENABLED":
                headers += checksums
            if key.startswith("crc64-range"):
                headers.append(("Content-Range", f"bytes 0-{len(body) - 1}/{len(CRC_BODY)}"))
                return self.answer(200 if key.endswith("-200") else 206, body, headers, "application/octet-stream")
            return self.answer(200, body, headers, "application/octet-stream")
        if bucket == "cut":
            with lock:
                first = parts.path not in state["cut"]
                state["cut"].add(parts.path)
            if not first:
                return self.answer(200, ETAG_BODY, [("ETag", f'"{ETAG_MD5}"')], "application/octet-stream")
            self.send_response(200)
            self.send_header("Content-Length", str(len(ETAG_BODY)))
            self.send_header("ETag", f'"{ETAG_MD5}"')
            self.end_headers()
            self.wfile.write(ETAG_BODY[: len(ETAG_BODY) // 2])
            self.wfile.flush()
            self.close_connection = True
            return None
        if bucket == "slow-chunked":
            return self.chunked(b"s" * 65536, 1024, pause=0.02)
        self.answer(404, b"<Error><Code>NoSuchBucket</Code><Message>no such bucket</Message></Error>")

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


if __name__ == "__main__":
    serve_until_stdin_closes(Handler)
