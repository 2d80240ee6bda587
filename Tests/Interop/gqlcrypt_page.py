#!/usr/bin/env python3
"""An independent reader of GQLStore's encrypted page format (Sources/GQLStore/Documentation.docc/Articles/
Encryption.md), on the `cryptography` package: decrypts one page of an encrypted database file as the article says.

Usage: gqlcrypt_page.py FILE PAGE   with the raw 32-byte key as hex on standard input.

Prints one line per key tried: "page key: ok <plaintext hex>" when the page decrypts under the file's page key
(HKDF-SHA256 of the key, salt = file id, info "gqlcrypt page key") or "page key: refused"; then the same for the raw
key itself ("raw key: …"), which must not decrypt a page.
"""
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

RESERVE = 32


def main():
    path, page = sys.argv[1], int(sys.argv[2])
    key = bytes.fromhex(sys.stdin.read().strip())
    with open(path, "rb") as handle:
        data = handle.read()
    file_id, header = data[:16], data[16:24]
    size = int.from_bytes(data[16:18], "big")
    size = 65536 if size == 1 else size
    image = data[(page - 1) * size:page * size]
    usable = size - RESERVE
    start = 24 if page == 1 else 0
    nonce, tag = image[usable:usable + 12], image[usable + 12:usable + 28]
    aad = file_id + page.to_bytes(4, "big") + (header if page == 1 else b"")
    page_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=file_id, info=b"gqlcrypt page key").derive(key)
    for label, candidate in (("page key", page_key), ("raw key", key)):
        try:
            plaintext = AESGCM(candidate).decrypt(nonce, image[start:usable] + tag, aad)
            print(f"{label}: ok {plaintext.hex()}")
        except InvalidTag:
            print(f"{label}: refused")


if __name__ == "__main__":
    main()
