"""A small Strawberry GraphQL server for GQLServer's interoperability tests (Tests/GQLNetTests/StrawberryInteropTests).

An independent server with a schema of its own: queries (one with a failing field, one with a large answer),
mutations with input objects, subscriptions (a counter, and an event stream fed by a mutation) over
graphql-transport-ws and graphql-ws, query batching (StrawberryConfig.batching_config) and gzip (Starlette's
GZipMiddleware, which compresses any answer of 64 bytes or more when the request accepts gzip).

    .venv/bin/python Tests/Interop/strawberry_peer.py
    .venv/bin/python Tests/Interop/strawberry_peer.py --print-schema   # the SDL Strawberry declares, then exit

Binds 127.0.0.1 on a free port, then prints `READY http://127.0.0.1:PORT/graphql`. Loopback only. Exits on
SIGTERM or SIGINT, and when its standard input closes (how the tests stop it), so a test process that dies does
not leave it behind.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import sys
from typing import AsyncGenerator, List, Optional, Set

import strawberry
import uvicorn
from starlette.middleware.gzip import GZipMiddleware
from strawberry.asgi import GraphQL
from strawberry.schema.config import StrawberryConfig
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL
from peer_stdin import on_parent_gone


class Events:
    """The subscribers of the `events` stream, each a queue, and what the HTTP layer has seen."""

    def __init__(self) -> None:
        self.queues: Set[asyncio.Queue] = set()
        self.gzipped = 0
        self.identity = 0
        self.accept_encodings: List[str] = []

    def publish(self, message: str) -> int:
        for queue in self.queues:
            queue.put_nowait(message)
        return len(self.queues)

    async def listen(self) -> AsyncGenerator[str, None]:
        queue: asyncio.Queue = asyncio.Queue()
        self.queues.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self.queues.discard(queue)


EVENTS = Events()


@strawberry.type
class Person:
    id: strawberry.ID
    name: str
    age: int
    tags: List[str]


PEOPLE = [
    Person(id=strawberry.ID("1"), name="Ada", age=36, tags=["math", "engines"]),
    Person(id=strawberry.ID("2"), name="Grace", age=85, tags=["cobol"]),
    Person(id=strawberry.ID("3"), name="Edsger", age=72, tags=[]),
]


@strawberry.type
class HTTPStats:
    """What the peer's HTTP layer answered so far (requests for `httpStats` itself included)."""

    gzipped: int
    identity: int
    last_accept_encoding: Optional[str]


@strawberry.input
class EchoInput:
    text: str
    times: int = 1
    tags: Optional[List[str]] = None


@strawberry.type
class Echo:
    text: str
    tags: List[str]


@strawberry.type
class Query:
    @strawberry.field
    def hello(self, name: str = "world") -> str:
        return f"Hello, {name}!"

    @strawberry.field
    def people(self, min_age: int = 0) -> List[Person]:
        return [person for person in PEOPLE if person.age >= min_age]

    @strawberry.field
    def person(self, id: strawberry.ID) -> Optional[Person]:
        return next((person for person in PEOPLE if person.id == id), None)

    @strawberry.field
    def boom(self) -> Optional[str]:
        raise ValueError("boom: this field always fails")

    @strawberry.field
    def big(self, size: int) -> str:
        """A string of `size` characters, repetitive enough to compress well."""
        pattern = "GraphQLite-Strawberry-"
        return (pattern * (size // len(pattern) + 1))[:size]

    @strawberry.field
    def listeners(self) -> int:
        """How many `events` subscriptions are live: tests wait for theirs before publishing."""
        return len(EVENTS.queues)

    @strawberry.field
    def http_stats(self) -> HTTPStats:
        return HTTPStats(
            gzipped=EVENTS.gzipped, identity=EVENTS.identity,
            last_accept_encoding=EVENTS.accept_encodings[-1] if EVENTS.accept_encodings else None)


@strawberry.type
class Mutation:
    @strawberry.mutation
    def echo(self, input: EchoInput) -> Echo:
        return Echo(text=" ".join([input.text] * input.times), tags=list(reversed(input.tags or [])))

    @strawberry.mutation
    def add(self, a: int, b: int) -> int:
        return a + b

    @strawberry.mutation
    def publish(self, message: str) -> int:
        """Sends `message` to every `events` subscription; returns how many there were."""
        return EVENTS.publish(message)


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def count(self, to: int) -> AsyncGenerator[int, None]:
        for value in range(1, to + 1):
            yield value

    @strawberry.subscription
    async def events(self) -> AsyncGenerator[str, None]:
        async for message in EVENTS.listen():
            yield message


schema = strawberry.Schema(
    query=Query, mutation=Mutation, subscription=Subscription,
    config=StrawberryConfig(batching_config={"max_operations": 20}))
def recording(app):
    """An ASGI wrapper counting which HTTP answers left gzip-encoded, so tests can see compression happened, and
    logging the `Origin` headers of WebSocket handshakes."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "websocket":  # evidence for origin troubles, on standard error
            origins = [value.decode("latin-1") for name, value in scope.get("headers") or [] if name == b"origin"]
            print(f"websocket handshake Origin headers: {origins}", file=sys.stderr, flush=True)
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        accept = dict(scope.get("headers") or []).get(b"accept-encoding", b"").decode("latin-1")

        async def send_recorded(message):
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                if headers.get(b"content-encoding") == b"gzip":
                    EVENTS.gzipped += 1
                else:
                    EVENTS.identity += 1
                EVENTS.accept_encodings.append(accept)
            await send(message)

        await app(scope, receive, send_recorded)

    return wrapped


def make_app():
    # Strawberry's defaults otherwise, its WebSocket origin check included (no `allowed_origins`: a handshake
    # without Origin, or from the same origin, is accepted; any other origin gets 403).
    graphql = GraphQL(schema, subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL])
    return recording(GZipMiddleware(graphql, minimum_size=64))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 (the default) picks a free port")
    parser.add_argument("--print-schema", action="store_true", help="print the schema's SDL and exit")
    args = parser.parse_args()
    if args.print_schema:
        print(schema.as_str())
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        make_app(), log_level="warning", access_log=False, lifespan="off",
        ws_ping_interval=None)
    server = uvicorn.Server(config)

    def stop(signum=None, frame=None):
        server.should_exit = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    async def serve():
        on_parent_gone(stop)
        sock.listen(128)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            print(f"READY http://127.0.0.1:{port}/graphql", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
