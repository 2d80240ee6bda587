"""A Strawberry GraphQL server at its defaults for GQLCache's tests against an independent server
(Tests/GQLCacheTests/StrawberryFeatureTests and ServerIdTests, Tests/GQLSyncTests/StrawberryCacheSyncTests).

People who can be renamed (`rename(id, name)`; an empty name is refused with a GraphQL error), an interface
(`Node`) and a union (`Thing`) over people and robots, ids no cache key should trip on (quotes, dots, colons,
Unicode), an object that references itself (`Person.me`), a subscription fed by the renames (`renamed`, over
graphql-transport-ws and graphql-ws, Strawberry's defaults), and an AppSync-style delta query of the people for
GQLSync (`syncPeople(limit, nextToken, lastSync)`: `items`, `nextToken`, `startedAt`, the rows with `_version` and
`_deleted`). `listeners` counts the live `renamed` subscriptions; `hold(on: true)` keeps renames waiting, unanswered,
until `hold(on: false)`.

    .venv/bin/python Tests/Interop/strawberry_cache_peer.py

Binds 127.0.0.1 on a free port, then prints `READY http://127.0.0.1:PORT/graphql`. Loopback only. Exits when its
standard input closes (how the tests stop it).
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Annotated, AsyncGenerator, Dict, List, Optional, Set, Union

import strawberry
import uvicorn
from strawberry.asgi import GraphQL
from peer_stdin import on_parent_gone

HELD = [False]
LISTENERS: Set[asyncio.Queue] = set()


def now() -> float:
    """Whole milliseconds, as a Float (GraphQL's Int has 32 bits)."""
    return float(int(time.time() * 1000))


@strawberry.interface
class Node:
    id: strawberry.ID


@strawberry.type
class Person(Node):
    name: str
    age: int
    version: int = strawberry.field(name="_version", default=1)
    deleted: bool = strawberry.field(name="_deleted", default=False)
    changed: strawberry.Private[float] = 0.0

    @strawberry.field
    def me(self) -> "Person":
        """The person again: an object whose field references itself."""
        return self


@strawberry.type
class Robot(Node):
    model: str


Thing = Annotated[Union[Person, Robot], strawberry.union("Thing")]

# Ids with a quote, a dot, a colon and Unicode beside plain ones.
PEOPLE: Dict[str, Person] = {
    person.id: person
    for person in [
        Person(id=strawberry.ID("1"), name="Ada", age=36, changed=now()),
        Person(id=strawberry.ID("2"), name="Grace", age=85, changed=now()),
        Person(id=strawberry.ID('say "hi"'), name="Quote", age=1, changed=now()),
        Person(id=strawberry.ID("a.b"), name="Dot", age=2, changed=now()),
        Person(id=strawberry.ID("x:y"), name="Colon", age=3, changed=now()),
        Person(id=strawberry.ID("ünï©ødé 🎉"), name="Unicode", age=4, changed=now()),
    ]
}
ROBOTS: Dict[str, Robot] = {"r1": Robot(id=strawberry.ID("r1"), model="R2")}


@strawberry.type
class PersonPage:
    items: List[Person]
    next_token: Optional[str]
    started_at: float


@strawberry.type
class Query:
    @strawberry.field
    def person(self, id: strawberry.ID) -> Optional[Person]:
        return PEOPLE.get(id)

    @strawberry.field
    def people(self) -> List[Person]:
        return list(PEOPLE.values())

    @strawberry.field
    def node(self, id: strawberry.ID) -> Optional[Node]:
        return PEOPLE.get(id) or ROBOTS.get(id)

    @strawberry.field
    def things(self) -> List[Thing]:
        return [PEOPLE["1"], ROBOTS["r1"], PEOPLE["2"]]

    @strawberry.field
    def sync_people(self, limit: int = 100, next_token: Optional[str] = None,
                    last_sync: Optional[float] = None) -> PersonPage:
        started = now()
        rows = [p for p in PEOPLE.values() if last_sync is None or p.changed >= last_sync]
        offset = int(next_token or 0)
        more = offset + limit < len(rows)
        return PersonPage(items=rows[offset:offset + limit], next_token=str(offset + limit) if more else None,
                          started_at=started)

    @strawberry.field
    def listeners(self) -> int:
        return len(LISTENERS)


@strawberry.type
class Mutation:
    @strawberry.mutation
    async def rename(self, id: strawberry.ID, name: str) -> Person:
        while HELD[0]:
            await asyncio.sleep(0.01)
        if not name:
            raise ValueError("a name cannot be empty")
        person = PEOPLE[id]
        person.name = name
        person.version += 1
        person.changed = now()
        for queue in LISTENERS:
            queue.put_nowait(person)
        return person

    @strawberry.mutation
    def hold(self, on: bool) -> bool:
        """While on, renames wait (without an answer) until it is turned off."""
        HELD[0] = on
        return on


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def renamed(self) -> AsyncGenerator[Person, None]:
        queue: asyncio.Queue = asyncio.Queue()
        LISTENERS.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            LISTENERS.discard(queue)


def make_app():
    return GraphQL(strawberry.Schema(query=Query, mutation=Mutation, subscription=Subscription))


def main() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(), log_level="warning", lifespan="off", ws_ping_interval=None))

    async def serve():
        on_parent_gone(lambda: setattr(server, "should_exit", True))
        print(f"READY http://127.0.0.1:{port}/graphql", flush=True)
        await server.serve(sockets=[listener])

    asyncio.run(serve())


if __name__ == "__main__":
    main()
