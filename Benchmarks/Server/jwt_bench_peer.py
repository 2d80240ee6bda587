"""CryptoBench's Python side: verifies the tokens CryptoBench made, at Python's best, and reports how long it took.

Usage: jwt_bench_peer.py FILE MODE, where FILE is CryptoBench's JSON ({"alg", "secret" | "jwks", "issuer",
"audience", "tokens"}) and MODE is `pyjwt` (jwt.decode with the key object built once, issuer, audience and exp
required, as an API server runs it) or `raw` (the signature alone: cryptography's RSA verify or the standard
library's hmac, inputs split and decoded before the clock starts). Prints the seconds of the timed loop on the first
line, then the `sub` of every accepted token (pyjwt) or the index of every valid signature (raw), in order."""
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


def main() -> None:
    path, mode = sys.argv[1], sys.argv[2]
    with open(path) as file:
        spec = json.load(file)
    tokens = spec["tokens"]
    rsa = spec["alg"] == "RS256"
    key = jwt.PyJWK(json.loads(spec["jwks"])["keys"][0]).key if rsa else spec["secret"].encode()
    accepted = []
    if mode == "pyjwt":
        algorithms = [spec["alg"]]
        issuer, audience = spec["issuer"], spec["audience"]
        options = {"require": ["exp", "iss", "aud"]}
        started = time.perf_counter()
        for token in tokens:
            try:
                claims = jwt.decode(token, key, algorithms=algorithms, audience=audience, issuer=issuer, options=options)
                accepted.append(claims["sub"])
            except jwt.InvalidTokenError:
                pass
        seconds = time.perf_counter() - started
    else:
        split = []
        for token in tokens:
            head, _, signature = token.rpartition(".")
            split.append((head.encode(), b64url(signature)))
        started = time.perf_counter()
        if rsa:
            pkcs1, sha256 = padding.PKCS1v15(), hashes.SHA256()
            for index, (message, signature) in enumerate(split):
                try:
                    key.verify(signature, message, pkcs1, sha256)
                    accepted.append(str(index))
                except Exception:
                    pass
        else:
            for index, (message, signature) in enumerate(split):
                if hmac.compare_digest(hmac.new(key, message, hashlib.sha256).digest(), signature):
                    accepted.append(str(index))
        seconds = time.perf_counter() - started
    print(seconds)
    print("\n".join(accepted))


if __name__ == "__main__":
    main()
