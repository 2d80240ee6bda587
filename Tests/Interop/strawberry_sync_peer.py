"""A Strawberry GraphQL server at its defaults for GQLSync's interoperability tests (Tests/GQLSyncTests/
StrawberrySyncTests): an independent server that records the `createNote` mutations it applied, in order, and
answers an AppSync-style delta query over rows of its own (`syncRows(limit, nextToken, lastSync)`: `items`,
`nextToken`, `startedAt`; a `lastSync` of milliseconds, a Float here: Strawberry knows no AWSTimestamp).

    .venv/bin/python Tests/Interop/strawberry_sync_peer.py [--batching]

Strawberry's defaults, query batching included: off, so a JSON array is answered 400 "Batching is not enabled";
`--batching` turns it on (StrawberryConfig.batching_config). `notes` lists the applied `n`s, `posts` counts the
POST requests the server answered; `seedRows(count)` makes rows 1…count, `editRow(n, title, deleted)` changes one. Binds 127.0.0.1 on a free port, then prints `READY http://127.0.0.1:PORT/graphql`.
Loopback only. Exits when its standard input closes (how the tests stop it).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from typing import Dict, List, Optional

import strawberry
import uvicorn
from strawberry.asgi import GraphQL
from strawberry.schema.config import StrawberryConfig

NOTES: List[int] = []
POSTS = [0]


def now() -> float:
    """Whole milliseconds (as a Float: GraphQL's Int has 32 bits), so the cursor is an integer."""
    return float(int(time.time() * 1000))


class Row:
    def __init__(self, n: int) -> None:
        self.n = n
        self.title = f"row {n}"
        self.version = 1
        self.deleted = False
        self.changed = now()


ROWS: Dict[int, Row] = {}


@strawberry.input
class CreateNoteInput:
    n: int
    id: strawberry.ID | None = None


@strawberry.type
class Note:
    id: strawberry.ID
    n: int


@strawberry.type
class SyncedRow:
    id: strawberry.ID
    n: int
    title: str
    version: int = strawberry.field(name="_version")
    deleted: bool = strawberry.field(name="_deleted")


@strawberry.type
class RowPage:
    items: List[SyncedRow]
    next_token: Optional[str]
    started_at: float


@strawberry.type
class Query:
    @strawberry.field
    def sync_rows(self, limit: int = 100, next_token: Optional[str] = None,
                  last_sync: Optional[float] = None) -> RowPage:
        started = now()
        # A row changed in the millisecond of the cursor comes again rather than not at all.
        rows = [r for r in sorted(ROWS.values(), key=lambda r: r.n) if last_sync is None or r.changed >= last_sync]
        # A base pull (no lastSync) leaves tombstones out; a delta brings them.
        if last_sync is None:
            rows = [r for r in rows if not r.deleted]
        offset = int(next_token or 0)
        page = rows[offset:offset + limit]
        more = offset + limit < len(rows)
        return RowPage(
            items=[SyncedRow(id=strawberry.ID(f"row-{r.n}"), n=r.n, title=r.title, version=r.version,
                             deleted=r.deleted) for r in page],
            next_token=str(offset + limit) if more else None, started_at=started)

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

    @strawberry.mutation
    def seed_rows(self, count: int) -> int:
        for n in range(1, count + 1):
            ROWS[n] = Row(n)
        return len(ROWS)

    @strawberry.mutation
    def edit_row(self, n: int, title: Optional[str] = None, deleted: bool = False) -> int:
        row = ROWS[n]
        if title is not None:
            row.title = title
        row.deleted = deleted
        row.version += 1
        row.changed = now()
        return row.version


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
