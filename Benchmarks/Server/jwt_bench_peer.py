"""CryptoBench's Python side: verifies the tokens CryptoBench made, at Python's best, in one warm process.

Usage: jwt_bench_peer.py MODE, where MODE is `pyjwt` (jwt.decode with the key object built once, issuer, audience
and exp required, as an API server runs it) or `raw` (the signature alone: cryptography's RSA verify or the standard
library's hmac, inputs split and decoded before the clock starts). CryptoBench starts one process per mode and keeps
it for its whole run, so that every timed loop runs in a warm interpreter, as a server's would.

Each line on standard input is the path of a CryptoBench JSON file ({"alg", "secret" | "jwks", "issuer",
"audience", "tokens"}); the file is read and its key built once, before any clock starts. For each line the peer
runs the timed loop over the file's tokens and writes one line of JSON: {"seconds": the loop's seconds, "accepted":
the `sub` of every accepted token (pyjwt) or the index of every valid signature (raw), in order}. It ends at the
end of its standard input.
"""
import base64
import hashlib
import hmac
import json
import sys
import time

import jwt
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Spec:
    """One CryptoBench file: its tokens and the key object built once."""

    def __init__(self, path: str) -> None:
        with open(path) as file:
            spec = json.load(file)
        self.tokens = spec["tokens"]
        self.algorithm = spec["alg"]
        self.rsa = self.algorithm == "RS256"
        self.key = jwt.PyJWK(json.loads(spec["jwks"])["keys"][0]).key if self.rsa else spec["secret"].encode()
        self.issuer, self.audience = spec["issuer"], spec["audience"]
        self.split = []
        for token in self.tokens:
            head, _, signature = token.rpartition(".")
            self.split.append((head.encode(), b64url(signature)))


def pyjwt(spec: Spec):
    accepted = []
    key, algorithms, issuer, audience = spec.key, [spec.algorithm], spec.issuer, spec.audience
    options = {"require": ["exp", "iss", "aud"]}
    started = time.perf_counter()
    for token in spec.tokens:
        try:
            claims = jwt.decode(token, key, algorithms=algorithms, audience=audience, issuer=issuer, options=options)
            accepted.append(claims["sub"])
        except jwt.InvalidTokenError:
            pass
    return time.perf_counter() - started, accepted


def raw(spec: Spec):
    accepted = []
    key = spec.key
    started = time.perf_counter()
    if spec.rsa:
        pkcs1, sha256 = padding.PKCS1v15(), hashes.SHA256()
        for index, (message, signature) in enumerate(spec.split):
            try:
                key.verify(signature, message, pkcs1, sha256)
                accepted.append(str(index))
            except Exception:
                pass
    else:
        for index, (message, signature) in enumerate(spec.split):
            if hmac.compare_digest(hmac.new(key, message, hashlib.sha256).digest(), signature):
                accepted.append(str(index))
    return time.perf_counter() - started, accepted


def main() -> None:
    run = {"pyjwt": pyjwt, "raw": raw}[sys.argv[1]]
    specs = {}
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        if path not in specs:
            specs[path] = Spec(path)
        seconds, accepted = run(specs[path])
        sys.stdout.write(json.dumps({"seconds": seconds, "accepted": accepted}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
