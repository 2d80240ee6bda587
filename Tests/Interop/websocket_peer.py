"""A plain RFC 6455 WebSocket server (the `websockets` library, default settings) for GQLNet's transport tests
(Tests/GQLNetTests/WebSocketChannelTests.swift): what GQLServer's WebSocket client must cope with below GraphQL.

    .venv/bin/python Tests/Interop/websocket_peer.py

Binds 127.0.0.1 on a free port, then prints `READY http://127.0.0.1:PORT/`. Loopback only. Exits when its standard
input closes (how the tests stop it). The request path picks the scenario:

- `/headers`: answers with one text message, the JSON list of the handshake's header names and values.
- `/fragments`: pings (payload `are-you-there`) and waits for the pong, then sends `héllo, wörld` in three
  fragments, then closes with 4321 `bye` and reports on standard error whether the client answered the close.
- `/size/N`: sends one text message of N bytes, then echoes what it receives.
- `/echo`: echoes every text message.
- `/no-subprotocol`: accepts the upgrade without choosing a subprotocol.
- `/status/N`: refuses the upgrade with HTTP status N and a short body.
- `/hostile-subscriptions`: a graphql-transport-ws server for GQLSync's live-sync tests
  (Tests/GQLSyncTests/LiveAttackTests.swift): acknowledges `connection_init`, answers `ping` with `pong`, and answers
  every `subscribe` with the payloads of HOSTILE_EVENTS as `next` messages, then `complete`.
"""

from __future__ import annotations

import asyncio
import http
import json
import sys

from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response
from peer_stdin import on_parent_gone


# The payloads of /hostile-subscriptions' `next` messages, in order: a good item first and last, every wrong shape
# in between.
HOSTILE_EVENTS = [
    {"data": {"onCreateNote": {"id": "first", "title": "good"}}},
    {"data": {"onCreateNote": 5}},
    {"data": None},
    {"data": {"onCreateNote": {"id": "x"}, "onUpdateNote": {"id": "y"}}},
    {"errors": [{"message": "boom"}]},
    {"data": {"onCreateNote": {"id": "gone", "_deleted": "yes"}}},
    {"data": {"onCreateNote": {"id": "v", "_version": "7"}}},
    {"data": {"onCreateNote": {"title": "no key"}}},
    {"data": {"onCreateNote": {"id": {"nested": True}}}},
    {"data": {"onCreateNote": [{"id": "list"}]}},
    {"data": {"onCreateNote": {"id": "last", "title": "good"}}},
]


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def select_subprotocol(connection, offered):
    if connection.request.path.startswith("/no-subprotocol") or not offered:
        return None
    return offered[0]


def process_request(connection, request):
    if request.path.startswith("/status/"):
        status = http.HTTPStatus(int(request.path.split("/")[2]))
        body = f"refused with {status.value}\n".encode()
        return Response(status.value, status.phrase, Headers([("Content-Length", str(len(body)))]), body)
    return None


async def handler(connection) -> None:
    path = connection.request.path
    if path == "/headers":
        await connection.send(json.dumps([[name, value] for name, value in connection.request.headers.raw_items()]))
        await connection.wait_closed()
    elif path == "/fragments":
        pong = await connection.ping(b"are-you-there")
        await pong
        await connection.send(["hél", "lo, w", "örld"])
        await connection.close(4321, "bye")
        log(f"fragments: close answered with {connection.protocol.close_rcvd.code if connection.protocol.close_rcvd else None}")
    elif path == "/hostile-subscriptions":
        async for message in connection:
            frame = json.loads(message)
            if frame.get("type") == "connection_init":
                await connection.send(json.dumps({"type": "connection_ack"}))
            elif frame.get("type") == "ping":
                await connection.send(json.dumps({"type": "pong"}))
            elif frame.get("type") == "subscribe":
                for payload in HOSTILE_EVENTS:
                    await connection.send(json.dumps({"type": "next", "id": frame["id"], "payload": payload}))
                await connection.send(json.dumps({"type": "complete", "id": frame["id"]}))
    elif path.startswith("/size/"):
        await connection.send("x" * int(path.split("/")[2]))
        async for message in connection:
            await connection.send(message)
    else:
        async for message in connection:
            await connection.send(message)


async def main() -> None:
    stop = asyncio.get_running_loop().create_future()

    on_parent_gone(lambda: stop.done() or stop.set_result(None))
    async with serve(
        handler, "127.0.0.1", 0, select_subprotocol=select_subprotocol, process_request=process_request
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"READY http://127.0.0.1:{port}/", flush=True)
        await stop


if __name__ == "__main__":
    asyncio.run(main())
