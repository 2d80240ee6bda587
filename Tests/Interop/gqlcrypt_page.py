#!/usr/bin/env python3
"""An independent reader of GQLStore's encrypted page format (Sources/GQLStore/Documentation.docc/Articles/
Encryption.md), on the `cryptography` package: decrypts one page of an encrypted database file as the article says.

Usage: gqlcrypt_page.py FILE PAGE     with the raw 32-byte key as hex on standard input.
       gqlcrypt_page.py FILE earlier  (same input)

PAGE: prints one line per key tried: "page key: ok <plaintext hex>" when the page decrypts under the file's page key
(HKDF-SHA256 of the key, salt = file id, info "gqlcrypt page key") or "page key: refused"; then the same for the raw
key itself ("raw key: …"), which must not decrypt a page.

earlier: rewrites every page of FILE (a closed database, no WAL) in the format of the development builds before the
per-file page key — the same layout, nonces and key checks, the raw key as the AES key — and prints "rewrote N pages".
"""
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

RESERVE = 32


def parts(data, page, size):
    """A page's offset range, associated data, nonce, encrypted bytes' start and end, and tag."""
    usable = size - RESERVE
    base = (page - 1) * size
    start = 24 if page == 1 else 0
    aad = data[:16] + page.to_bytes(4, "big") + (data[16:24] if page == 1 else b"")
    nonce, tag = data[base + usable:base + usable + 12], data[base + usable + 12:base + usable + 28]
    return base, aad, nonce, base + start, base + usable, tag


def rewrite_earlier(path, key, page_key, size):
    data = bytearray(open(path, "rb").read())
    pages = len(data) // size
    for page in range(1, pages + 1):
        base, aad, nonce, start, end, tag = parts(data, page, size)
        plaintext = AESGCM(page_key).decrypt(nonce, bytes(data[start:end]) + tag, aad)
        sealed = AESGCM(key).encrypt(nonce, plaintext, aad)
        data[start:end] = sealed[:-16]
        data[end + 12:end + 28] = sealed[-16:]
    open(path, "wb").write(data)
    print(f"rewrote {pages} pages")


def main():
    path = sys.argv[1]
    key = bytes.fromhex(sys.stdin.read().strip())
    with open(path, "rb") as handle:
        data = handle.read()
    file_id = data[:16]
    size = int.from_bytes(data[16:18], "big")
    size = 65536 if size == 1 else size
    page_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=file_id, info=b"gqlcrypt page key").derive(key)
    if sys.argv[2] == "earlier":
        rewrite_earlier(path, key, page_key, size)
        return
    page = int(sys.argv[2])
    _, aad, nonce, start, end, tag = parts(data, page, size)
    for label, candidate in (("page key", page_key), ("raw key", key)):
        try:
            plaintext = AESGCM(candidate).decrypt(nonce, data[start:end] + tag, aad)
            print(f"{label}: ok {plaintext.hex()}")
        except InvalidTag:
            print(f"{label}: refused")


if __name__ == "__main__":
    main()
