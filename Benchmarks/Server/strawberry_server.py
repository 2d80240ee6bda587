"""A Strawberry GraphQL server with the shape of GQLDevServer's default `Objects` model, for comparison.

It serves what the server benchmark (Benchmarks/Sources/ServerBench) uses, the AppSync @model way: getObjects,
listObjects (filter, limit, nextToken), createObjects, updateObjects, deleteObjects, and the onCreateObjects /
onUpdateObjects / onDeleteObjects subscriptions over graphql-transport-ws and graphql-ws.

Set up as Strawberry's users deploy it when speed matters: the ParserCache and ValidationCache extensions, uvicorn
with uvloop and httptools (`uvicorn[standard]`), and `--workers N` processes sharing one listening socket. Objects
live in an SQLite file (Python's sqlite3, WAL, synchronous=NORMAL, one connection per worker) so that every worker
sees every write, as GQLDevServer's do. Subscriptions are in-process queues: with more than one worker an event
reaches the subscribers of the worker that made the change only (a deployment would add a broker).

    .venv/bin/python Benchmarks/Server/strawberry_server.py --port 4100 --workers 2 --database /tmp/objects.sqlite

Prints `HTTP http://127.0.0.1:PORT/graphql` once listening (port 0 picks a free one). Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import os
import signal
import socket
import sqlite3
import sys
import tempfile
import time
from importlib.metadata import version
from typing import AsyncGenerator, Dict, List, Optional, Set

import strawberry
import uvicorn
import uvicorn.supervisors
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, ValidationCache
from strawberry.schema.config import StrawberryConfig
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL


def now_iso() -> str:
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@strawberry.type
class Objects:
    objectId: strawberry.ID
    text: Optional[str] = None
    number: Optional[int] = None
    double: Optional[float] = None
    boolean: Optional[bool] = None
    createdAt: Optional[str] = None
    updatedAt: Optional[str] = None
    version: int = strawberry.field(name="_version", default=1)
    deleted: Optional[bool] = strawberry.field(name="_deleted", default=None)
    lastChangedAt: float = strawberry.field(name="_lastChangedAt", default=0)


@strawberry.type
class ModelObjectsConnection:
    items: List[Optional[Objects]]
    nextToken: Optional[str] = None


@strawberry.input
class ModelStringInput:
    eq: Optional[str] = None
    ne: Optional[str] = None
    gt: Optional[str] = None
    ge: Optional[str] = None
    lt: Optional[str] = None
    le: Optional[str] = None
    contains: Optional[str] = None
    beginsWith: Optional[str] = None
    between: Optional[List[Optional[str]]] = None


@strawberry.input
class ModelIDInput(ModelStringInput):
    pass


@strawberry.input
class ModelIntInput:
    eq: Optional[int] = None
    ne: Optional[int] = None
    gt: Optional[int] = None
    ge: Optional[int] = None
    lt: Optional[int] = None
    le: Optional[int] = None
    between: Optional[List[Optional[int]]] = None


@strawberry.input
class ModelFloatInput:
    eq: Optional[float] = None
    ne: Optional[float] = None
    gt: Optional[float] = None
    ge: Optional[float] = None
    lt: Optional[float] = None
    le: Optional[float] = None
    between: Optional[List[Optional[float]]] = None


@strawberry.input
class ModelBooleanInput:
    eq: Optional[bool] = None
    ne: Optional[bool] = None


@strawberry.input
class ModelObjectsFilterInput:
    objectId: Optional[ModelIDInput] = None
    text: Optional[ModelStringInput] = None
    number: Optional[ModelIntInput] = None
    double: Optional[ModelFloatInput] = None
    boolean: Optional[ModelBooleanInput] = None
    createdAt: Optional[ModelStringInput] = None
    updatedAt: Optional[ModelStringInput] = None
    and_: Optional[List[Optional["ModelObjectsFilterInput"]]] = strawberry.field(name="and", default=None)
    or_: Optional[List[Optional["ModelObjectsFilterInput"]]] = strawberry.field(name="or", default=None)
    not_: Optional["ModelObjectsFilterInput"] = strawberry.field(name="not", default=None)


@strawberry.input
class CreateObjectsInput:
    objectId: Optional[strawberry.ID] = None
    text: Optional[str] = None
    number: Optional[int] = None
    double: Optional[float] = None
    boolean: Optional[bool] = None


@strawberry.input
class UpdateObjectsInput:
    objectId: strawberry.ID
    text: Optional[str] = strawberry.UNSET
    number: Optional[int] = strawberry.UNSET
    double: Optional[float] = strawberry.UNSET
    boolean: Optional[bool] = strawberry.UNSET
    version: Optional[int] = strawberry.field(name="_version", default=None)


@strawberry.input
class DeleteObjectsInput:
    objectId: strawberry.ID
    version: Optional[int] = strawberry.field(name="_version", default=None)


FIELDS = ("objectId", "text", "number", "double", "boolean", "createdAt", "updatedAt")


def matches_condition(value, condition) -> bool:
    for op in ("eq", "ne", "gt", "ge", "lt", "le", "contains", "beginsWith", "between"):
        operand = getattr(condition, op, None)
        if operand is None:
            continue
        if op == "eq" and not value == operand:
            return False
        if op == "ne" and not value != operand:
            return False
        if value is None and op not in ("eq", "ne"):
            return False
        if op == "gt" and not value > operand:
            return False
        if op == "ge" and not value >= operand:
            return False
        if op == "lt" and not value < operand:
            return False
        if op == "le" and not value <= operand:
            return False
        if op == "contains" and operand not in value:
            return False
        if op == "beginsWith" and not str(value).startswith(operand):
            return False
        if op == "between" and not (len(operand) == 2 and operand[0] <= value <= operand[1]):
            return False
    return True


def matches(item: Objects, flt: Optional[ModelObjectsFilterInput]) -> bool:
    if flt is None:
        return True
    for name in FIELDS:
        condition = getattr(flt, name)
        if condition is not None and not matches_condition(getattr(item, name), condition):
            return False
    if flt.and_ is not None and not all(matches(item, f) for f in flt.and_):
        return False
    if flt.or_ is not None and not any(matches(item, f) for f in flt.or_):
        return False
    if flt.not_ is not None and matches(item, flt.not_):
        return False
    return True


COLUMNS = ("objectId", "text", "number", "double", "boolean", "createdAt", "updatedAt", "version", "deleted",
           "lastChangedAt")
SCHEMA = """CREATE TABLE IF NOT EXISTS Objects (objectId TEXT PRIMARY KEY, text TEXT, number INTEGER, double REAL,
    boolean INTEGER, createdAt TEXT, updatedAt TEXT, version INTEGER, deleted INTEGER, lastChangedAt REAL)"""
# The file every worker opens; main() sets it before the workers start (they inherit the environment).
DATABASE_VARIABLE = "STRAWBERRY_BENCH_DATABASE"


def open_database(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(SCHEMA)
    return db


def to_object(row) -> Objects:
    values = dict(zip(COLUMNS, row))
    values["boolean"] = None if values["boolean"] is None else bool(values["boolean"])
    values["deleted"] = None if values["deleted"] is None else bool(values["deleted"])
    values["objectId"] = strawberry.ID(values["objectId"])
    return Objects(**values)


class Store:
    """The objects (an SQLite file shared by the workers), and this worker's subscriber queues."""

    def __init__(self) -> None:
        self._db: Optional[sqlite3.Connection] = None
        self.subscribers: Dict[str, Set[asyncio.Queue]] = {"create": set(), "update": set(), "delete": set()}
        self.counter = 0

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = open_database(os.environ[DATABASE_VARIABLE])
        return self._db

    def get(self, key: str) -> Optional[Objects]:
        row = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM Objects WHERE objectId = ?", (key,)).fetchone()
        return to_object(row) if row is not None else None

    def all(self) -> List[Objects]:
        return [to_object(row) for row in self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM Objects")]

    def insert(self, item: Objects) -> bool:
        try:
            self.db.execute(
                f"INSERT INTO Objects ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                tuple(getattr(item, name) for name in COLUMNS))
            return True
        except sqlite3.IntegrityError:
            return False

    def save(self, item: Objects) -> None:
        assignments = ", ".join(f"{name} = ?" for name in COLUMNS[1:])
        self.db.execute(
            f"UPDATE Objects SET {assignments} WHERE objectId = ?",
            tuple(getattr(item, name) for name in COLUMNS[1:]) + (str(item.objectId),))

    def publish(self, kind: str, item: Objects) -> None:
        for queue in self.subscribers[kind]:
            queue.put_nowait(item)

    async def listen(self, kind: str) -> AsyncGenerator[Objects, None]:
        queue: asyncio.Queue = asyncio.Queue()
        self.subscribers[kind].add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self.subscribers[kind].discard(queue)


STORE = Store()


def page(items: List[Objects], limit: Optional[int], next_token: Optional[str]) -> ModelObjectsConnection:
    start = int(base64.b64decode(next_token).decode()) if next_token else 0
    count = limit if limit is not None else 100
    chunk = items[start : start + count]
    end = start + len(chunk)
    token = base64.b64encode(str(end).encode()).decode() if end < len(items) else None
    return ModelObjectsConnection(items=chunk, nextToken=token)


@strawberry.type
class Query:
    @strawberry.field
    def getObjects(self, objectId: strawberry.ID) -> Optional[Objects]:
        return STORE.get(str(objectId))

    @strawberry.field
    def listObjects(
        self,
        filter: Optional[ModelObjectsFilterInput] = None,
        limit: Optional[int] = None,
        nextToken: Optional[str] = None,
    ) -> ModelObjectsConnection:
        items = [item for item in STORE.all() if not item.deleted and matches(item, filter)]
        return page(items, limit, nextToken)


@strawberry.type
class Mutation:
    @strawberry.mutation
    def createObjects(self, input: CreateObjectsInput) -> Optional[Objects]:
        STORE.counter += 1
        key = str(input.objectId) if input.objectId is not None else f"obj-{os.getpid()}-{STORE.counter}"
        stamp = now_iso()
        item = Objects(
            objectId=strawberry.ID(key), text=input.text, number=input.number, double=input.double,
            boolean=input.boolean, createdAt=stamp, updatedAt=stamp, lastChangedAt=time.time() * 1000)
        if not STORE.insert(item):
            raise ValueError(f"an object with objectId {key} exists")
        STORE.publish("create", item)
        return item

    @strawberry.mutation
    def updateObjects(self, input: UpdateObjectsInput) -> Optional[Objects]:
        item = STORE.get(str(input.objectId))
        if item is None or item.deleted:
            raise ValueError(f"no object with objectId {input.objectId}")
        if input.version is not None and input.version != item.version:
            raise ValueError("Conflict resolver rejects mutation.")
        for name in ("text", "number", "double", "boolean"):
            value = getattr(input, name)
            if value is not strawberry.UNSET:
                setattr(item, name, value)
        item.version += 1
        item.updatedAt = now_iso()
        item.lastChangedAt = time.time() * 1000
        STORE.save(item)
        STORE.publish("update", item)
        return item

    @strawberry.mutation
    def deleteObjects(self, input: DeleteObjectsInput) -> Optional[Objects]:
        item = STORE.get(str(input.objectId))
        if item is None or item.deleted:
            raise ValueError(f"no object with objectId {input.objectId}")
        item.deleted = True
        item.version += 1
        item.updatedAt = now_iso()
        STORE.save(item)
        STORE.publish("delete", item)
        return item


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def onCreateObjects(self) -> AsyncGenerator[Objects, None]:
        async for item in STORE.listen("create"):
            yield item

    @strawberry.subscription
    async def onUpdateObjects(self) -> AsyncGenerator[Objects, None]:
        async for item in STORE.listen("update"):
            yield item

    @strawberry.subscription
    async def onDeleteObjects(self) -> AsyncGenerator[Objects, None]:
        async for item in STORE.listen("delete"):
            yield item


# Parsed and validated documents cached, as GQLDevServer caches them (Strawberry's documented speed-ups).
schema = strawberry.Schema(
    query=Query, mutation=Mutation, subscription=Subscription, config=StrawberryConfig(auto_camel_case=False),
    extensions=[lambda: ParserCache(maxsize=1000), lambda: ValidationCache(maxsize=1000)])
# WebSocket clients outside a browser (the benchmark's WSClient) send an Origin of the server's own host.
LOOPBACK_ORIGINS = ("ws://127.0.0.1", "ws://localhost", "http://127.0.0.1", "http://localhost")
app = GraphQL(
    schema, subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL],
    allowed_origins=LOOPBACK_ORIGINS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4100)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    parser.add_argument("--database", help="the SQLite file (default: a new temporary file)")
    parser.add_argument("--print-schema", action="store_true", help="print the SDL and exit")
    args = parser.parse_args()
    if args.print_schema:
        print(schema.as_str())
        return
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("strawberry_server.py serves on loopback only")
    database = args.database or os.path.join(tempfile.mkdtemp(prefix="strawberry-bench-"), "objects.sqlite")
    os.environ[DATABASE_VARIABLE] = database
    open_database(database).close()  # the file, WAL and the table, before any worker opens it
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it: without it a keep-alive client waits for delayed ACKs (~40 ms a request).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((args.host, args.port))
    sock.set_inheritable(True)
    port = sock.getsockname()[1]
    print(f"config    strawberry-graphql {version('strawberry-graphql')} on uvicorn {version('uvicorn')} "
          f"(uvloop {version('uvloop')}, httptools {version('httptools')}), {args.workers} worker(s), "
          "ParserCache + ValidationCache, SQLite file (WAL)", flush=True)
    print(f"HTTP      http://{args.host}:{port}/graphql", flush=True)
    print(f"WebSocket ws://{args.host}:{port}/graphql", flush=True)
    # Workers import the app by name (uvicorn's rule for more than one): multiprocessing's spawn has already run
    # this script in each worker as its main module, so the name is `__main__` (a second import under another
    # name would define every Strawberry type twice). One process serves the object itself.
    app_reference = "__main__:app" if args.workers > 1 else app
    config = uvicorn.Config(
        app_reference, loop="uvloop", http="httptools", workers=args.workers, log_level="warning",
        access_log=False, lifespan="off", ws_ping_interval=None)
    if args.workers > 1:
        # The supervisor stops its workers on SIGINT / SIGTERM.
        uvicorn.supervisors.Multiprocess(config, sockets=[sock]).run()
        return
    server = uvicorn.Server(config)

    def stop(signum, frame):  # graceful on SIGINT and SIGTERM, whatever uvicorn installs
        server.should_exit = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
