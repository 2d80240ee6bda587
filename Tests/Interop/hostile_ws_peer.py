"""A hostile graphql-transport-ws server on raw asyncio sockets, for the client's hostile-server and fuzz tests
(Tests/GQLNetTests/HostileSocketServerTests.swift, ClientFuzzTests.swift, Tests/GQLCLITests/SignalTests.swift).
No WebSocket library: every byte it sends is chosen here, including the ones a library would refuse to send.

    .venv/bin/python Tests/Interop/hostile_ws_peer.py

Binds 127.0.0.1 on a free port, then prints `READY http://127.0.0.1:PORT/`. Loopback only. Exits when its standard
input closes (how the tests stop it). The request path picks the scenario; the WebSocket ones accept the upgrade
(choosing the first subprotocol offered), read `connection_init`, answer `connection_ack`, read the `subscribe`,
then:

- `/ping-flood`: stop reading and send WebSocket pings (control frames, 125-byte payloads) as fast as the socket
  takes them.
- `/protocol-ping-flood`: stop reading and send `{"type":"ping"}` messages as fast as the socket takes them.
- `/next-flood/N`: send N `next` messages (`{"data":{"n":i}}`, i from 0) for the subscription, then `complete`,
  at the pace the client reads them.
- `/binary-endless`: start a binary message and send 64 KiB continuation frames of it for ever.
- `/text-endless`: the same with a text message.
- `/frames/SEED/COUNT`: COUNT random frames from the seed (valid `next`s, random JSON, every framing fault), then
  close the TCP connection.

Refused upgrades (no 101):

- `/refuse-endless`: `503` with a chunked body that never ends.
- `/refuse-silent`: `503` head with a chunked body, then nothing.

`/hang` (any method): reads the request, logs `hang: METHOD received` on standard error, and never answers.

Plain HTTP `POST /answers/SEED`: the Nth request gets a random answer of seed SEED+N (status, headers, JSON or
broken JSON, truncated bodies).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import random
import socket
import struct
import sys
from peer_stdin import on_parent_gone

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
request_counts: dict[str, int] = {}


def frame(opcode: int, payload: bytes, fin: bool = True, rsv: int = 0, mask: bytes | None = None) -> bytes:
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    length = len(payload)
    mask_bit = 0x80 if mask is not None else 0
    if length < 126:
        header = bytes([first, mask_bit | length])
    elif length < 65536:
        header = bytes([first, mask_bit | 126]) + struct.pack("!H", length)
    else:
        header = bytes([first, mask_bit | 127]) + struct.pack("!Q", length)
    if mask is not None:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        header += mask
    return header + payload


def text(value) -> bytes:
    return frame(0x1, json.dumps(value).encode())


async def read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = b""
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    return method, path, headers, body


async def read_message(reader: asyncio.StreamReader) -> dict:
    """The next text message from the client (masked frames, no fragments from this client)."""
    while True:
        first, second = await reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", await reader.readexactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", await reader.readexactly(8))
        mask = await reader.readexactly(4) if second & 0x80 else b"\0\0\0\0"
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(await reader.readexactly(length)))
        if first & 0x0F == 0x1:
            return json.loads(payload)


async def flood(writer: asyncio.StreamWriter, chunk: bytes) -> None:
    """Writes `chunk` for ever, as fast as the client takes it; never reads again."""
    while True:
        writer.write(chunk)
        await writer.drain()


def random_frames(rng: random.Random, subscription: str, count: int) -> bytes:
    def random_json(depth: int = 0):
        kind = rng.randrange(8 if depth < 6 else 4)
        if kind == 0:
            return None
        if kind == 1:
            return rng.choice([True, False])
        if kind == 2:
            return rng.choice([0, -1, 2**53, 1e308, 3.5, -0.0])
        if kind == 3:
            return rng.choice(["", "x", "\u0000\u001b[31m", "é" * rng.randrange(50), "\ud7ff"])
        if kind in (4, 5):
            return [random_json(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(["data", "errors", "id", "type", "payload", "message", "n"]): random_json(depth + 1)
                for _ in range(rng.randrange(4))}

    out = bytearray()
    for _ in range(count):
        kind = rng.randrange(16)
        if kind < 5:  # a valid result
            out += text({"type": "next", "id": subscription, "payload": {"data": {"n": rng.randrange(1000)}}})
        elif kind == 5:  # a result of another shape
            out += text({"type": "next", "id": subscription, "payload": random_json()})
        elif kind == 6:  # a random message
            out += text(random_json())
        elif kind == 7:  # broken JSON or bytes
            out += frame(0x1, rng.choice([b"{", b"\xff\xfe", b"[" * 600 + b"]" * 600, b'{"type":"next"', b""]))
        elif kind == 8:  # framing faults
            out += rng.choice([
                frame(0x1, b"x", rsv=rng.randrange(1, 8)),
                frame(0x1, b"{}", mask=b"abcd"),
                frame(rng.choice([0x3, 0x7, 0xB, 0xF]), b"?"),
                frame(0x0, b"stray continuation"),
                frame(0x9, b"p" * 10, fin=False),
                frame(0x8, b"\x03"),
                bytes([0x81, 0x7F]) + struct.pack("!Q", 2**63 - 1),
            ])
        elif kind == 9:  # fragments, sometimes interleaved with a ping
            body = json.dumps({"type": "next", "id": subscription, "payload": {"data": {"n": 1}}}).encode()
            cut = rng.randrange(len(body))
            out += frame(0x1, body[:cut], fin=False)
            if rng.randrange(2):
                out += frame(0x9, b"mid")
            out += frame(0x0, body[cut:])
        elif kind == 10:
            out += frame(0x9, rng.randbytes(rng.randrange(126)) if rng.randrange(2) else b"")
        elif kind == 11:
            out += frame(0xA, b"unsolicited")
        elif kind == 12:
            out += frame(0x2, rng.randbytes(rng.randrange(64)))
        elif kind == 13:
            out += text({"type": rng.choice(["ping", "pong", "complete", "error", "connection_ack", "ka"]),
                         "id": rng.choice([subscription, "other", 5]), "payload": random_json()})
        elif kind == 14:
            out += frame(0x8, struct.pack("!H", rng.choice([1000, 1001, 1011, 4400, 4401, 4403, 4499, 0, 999]))
                         + b"bye" * rng.randrange(3))
        else:
            out += rng.randbytes(rng.randrange(1, 16))  # raw garbage where a frame header should be
    return bytes(out)


def random_answer(rng: random.Random) -> bytes:
    status = rng.choice([200, 200, 200, 400, 401, 500, 502, 204])
    bodies = [
        json.dumps({"data": {"n": rng.randrange(100)}}).encode(),
        json.dumps({"data": None, "errors": [{"message": "bad", "locations": "nowhere"}]}).encode(),
        json.dumps({"errors": "not a list"}).encode(),
        json.dumps([{"data": {}}]).encode(),
        b"{" * rng.randrange(1, 3000),
        b"[" * 2000 + b"]" * 2000,
        b"<html>no</html>",
        b"\xff\xfe\x00",
        b"",
        json.dumps({"data": {"s": "\u0000\u001b]0;title\u0007"}}).encode(),
        b'{"data": 1e999999}',
        b'{"data": {"a": 1, "a": 2}}',
    ]
    body = rng.choice(bodies)
    headers = [f"HTTP/1.1 {status} X", "Content-Type: application/json"]
    shape = rng.randrange(4)
    if shape == 0:
        headers.append(f"Content-Length: {len(body)}")
        wire = body
    elif shape == 1:  # claims more than it sends, then closes
        headers.append(f"Content-Length: {len(body) + 100}")
        wire = body
    elif shape == 2:
        headers.append("Transfer-Encoding: chunked")
        wire = (f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n") if body else b"0\r\n\r\n"
    else:
        headers.append("Content-Encoding: gzip")
        headers.append(f"Content-Length: {len(body)}")
        wire = body  # not gzip at all
    headers.append("Connection: close")
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + wire


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        method, path, headers, _ = await read_head(reader)
        if method == "POST" and path.startswith("/answers/"):
            seed = int(path.split("/")[2])
            number = request_counts.get(path, 0)
            request_counts[path] = number + 1
            writer.write(random_answer(random.Random(seed + number)))
            await writer.drain()
            return
        if path == "/hang":
            print(f"hang: {method} received", file=sys.stderr, flush=True)
            await asyncio.sleep(3600)
            return
        if path.startswith("/refuse-"):
            writer.write(b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n")
            await writer.drain()
            if path == "/refuse-endless":
                await flood(writer, b"400\r\n" + b"z" * 1024 + b"\r\n")
            await asyncio.sleep(3600)
            return
        key = headers.get("sec-websocket-key", "")
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        offered = headers.get("sec-websocket-protocol", "")
        chosen = offered.split(",")[0].strip()
        writer.write(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Accept: {accept}\r\n" + (f"Sec-WebSocket-Protocol: {chosen}\r\n" if chosen else "")
                + "\r\n"
            ).encode()
        )
        await read_message(reader)  # connection_init
        writer.write(text({"type": "connection_ack"}))
        await writer.drain()
        while True:
            message = await read_message(reader)
            if message.get("type") == "subscribe":
                break
        subscription = message["id"]
        if path == "/ping-flood":
            await flood(writer, frame(0x9, b"p" * 125) * 256)
        elif path == "/protocol-ping-flood":
            await flood(writer, text({"type": "ping"}) * 1024)
        elif path.startswith("/next-flood/"):
            count = int(path.split("/")[2])
            batch = bytearray()
            for n in range(count):
                batch += text({"type": "next", "id": subscription, "payload": {"data": {"n": n}}})
                if len(batch) > 65536:
                    writer.write(bytes(batch))
                    batch.clear()
                    await writer.drain()
            writer.write(bytes(batch) + text({"type": "complete", "id": subscription}))
            await writer.drain()
            await asyncio.sleep(3600)
        elif path in ("/binary-endless", "/text-endless"):
            opcode = 0x2 if path == "/binary-endless" else 0x1
            writer.write(frame(opcode, b"a" * 65536, fin=False))
            await flood(writer, frame(0x0, b"a" * 65536, fin=False))
        elif path.startswith("/frames/"):
            _, _, seed, count = path.split("/")
            writer.write(random_frames(random.Random(int(seed)), subscription, int(count)))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError, KeyError, json.JSONDecodeError,
            asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main() -> None:
    stop = asyncio.get_running_loop().create_future()

    on_parent_gone(lambda: stop.done() or stop.set_result(None))
    # A small receive buffer and stream limit: a flood's answers the server never reads fill the client's socket
    # in a fraction of a second, not after megabytes.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    server = await asyncio.start_server(handle, sock=listener, limit=4096)
    port = server.sockets[0].getsockname()[1]
    print(f"READY http://127.0.0.1:{port}/", flush=True)
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main())
