"""A Strawberry GraphQL server at its defaults for GQLSync's interoperability tests (Tests/GQLSyncTests/
StrawberrySyncTests): an independent server that records the `createNote` mutations it applied, in order.

    .venv/bin/python Tests/Interop/strawberry_sync_peer.py [--batching]

Strawberry's defaults, query batching included: off, so a JSON array is answered 400 "Batching is not enabled";
`--batching` turns it on (StrawberryConfig.batching_config). `notes` lists the applied `n`s, `posts` counts the
POST requests the server answered. Binds 127.0.0.1 on a free port, then prints `READY http://127.0.0.1:PORT/graphql`.
Loopback only. Exits when its standard input closes (how the tests stop it).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from typing import List

import strawberry
import uvicorn
from strawberry.asgi import GraphQL
from strawberry.schema.config import StrawberryConfig

NOTES: List[int] = []
POSTS = [0]


@strawberry.input
class CreateNoteInput:
    n: int
    id: strawberry.ID | None = None


@strawberry.type
class Note:
    id: strawberry.ID
    n: int


@strawberry.type
class Query:
    @strawberry.field
    def notes(self) -> List[int]:
        return NOTES

    @strawberry.field
    def posts(self) -> int:
        return POSTS[0]


@strawberry.type
class Mutation:
    @strawberry.mutation
    def create_note(self, input: CreateNoteInput) -> Note:
        NOTES.append(input.n)
        return Note(id=strawberry.ID(input.id or f"note-{input.n}"), n=input.n)


def make_app(batching: bool):
    config = StrawberryConfig(batching_config={"max_operations": 50}) if batching else StrawberryConfig()
    graphql = GraphQL(strawberry.Schema(query=Query, mutation=Mutation, config=config))

    async def counting(scope, receive, send):
        if scope["type"] == "http" and scope.get("method") == "POST":
            POSTS[0] += 1
        await graphql(scope, receive, send)

    return counting


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batching", action="store_true")
    options = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(options.batching), log_level="warning", lifespan="off"))

    async def serve():
        loop = asyncio.get_running_loop()
        loop.add_reader(sys.stdin.fileno(), lambda: sys.stdin.read(1) or setattr(server, "should_exit", True))
        print(f"READY http://127.0.0.1:{port}/graphql", flush=True)
        await server.serve(sockets=[listener])

    asyncio.run(serve())


if __name__ == "__main__":
    main()
