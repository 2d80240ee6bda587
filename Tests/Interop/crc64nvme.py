"""CRC-64/NVME from its definition (reflected polynomial 0xAD93D23594C93659, all-ones start and end), table by
table, as S3 writes it: eight bytes, most significant first, in base64. Written here so that the Python checks
depend on no code of the project's (botocore computes it only with the AWS CRT, which the pinned venv does not
have)."""
import base64

_TABLE = []
for _byte in range(256):
    _crc = _byte
    for _ in range(8):
        _crc = (_crc >> 1) ^ 0x9A6C9329AC4BC9B5 if _crc & 1 else _crc >> 1
    _TABLE.append(_crc)


def crc64nvme(data):
    crc = 0xFFFFFFFFFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return base64.b64encode((crc ^ 0xFFFFFFFFFFFFFFFF).to_bytes(8, "big")).decode()
