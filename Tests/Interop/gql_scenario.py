"""Interoperability scenario: the Python `gql` client library against a running `gql-cli serve`.

    .venv/bin/python Tests/Interop/gql_scenario.py \
        --http http://127.0.0.1:4000/graphql --ws ws://127.0.0.1:4000/graphql --api-key K

Steps, one line `ok <transport> <what>` each on standard output:
  HTTP (AIOHTTPTransport): createObjects, updateObjects, listObjects with a filter, listObjects pages,
  getObjects; graphql-core's build_client_schema on the result of get_introspection_query();
  WebSocket, for each of graphql-transport-ws and graphql-ws (WebsocketsTransport) and AppSync real-time
  (AppSyncWebsocketsTransport + AppSyncApiKeyAuthentication): subscribe to onCreateObjects and
  onUpdateObjects, trigger the mutation, see the event arrive.

Exit status 0 when every step passed; 1 with `FAIL <step>: <why>` on standard error otherwise; 2 for bad
arguments. Every wait is bounded (--timeout seconds per step). Only loopback URLs are accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from typing import Any, Awaitable, Callable, Dict, List, Optional
from urllib.parse import urlparse

from gql import Client, GraphQLRequest
from gql.transport.aiohttp import AIOHTTPTransport
from gql.transport.appsync_auth import AppSyncApiKeyAuthentication
from gql.transport.appsync_websockets import AppSyncWebsocketsTransport
from gql.transport.websockets import WebsocketsTransport
from graphql import build_client_schema, get_introspection_query

FIELDS = "objectId text number double boolean createdAt updatedAt _version"

CREATE = f"""
mutation Create($input: CreateObjectsInput!) {{ createObjects(input: $input) {{ {FIELDS} }} }}
"""
UPDATE = f"""
mutation Update($input: UpdateObjectsInput!) {{ updateObjects(input: $input) {{ {FIELDS} }} }}
"""
LIST = f"""
query List($filter: ModelObjectsFilterInput, $limit: Int, $nextToken: String) {{
  listObjects(filter: $filter, limit: $limit, nextToken: $nextToken) {{ items {{ {FIELDS} }} nextToken }}
}}
"""
GET = f"query Get($objectId: ID!) {{ getObjects(objectId: $objectId) {{ {FIELDS} }} }}"
ON_CREATE = f"subscription OnCreate {{ onCreateObjects {{ {FIELDS} }} }}"
ON_UPDATE = f"subscription OnUpdate {{ onUpdateObjects {{ {FIELDS} }} }}"

ALL_STEPS = ("http", "introspection", "graphql-transport-ws", "graphql-ws", "appsync")


class StepFailed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise StepFailed(message)


def request(text: str, **variables: Any) -> GraphQLRequest:
    return GraphQLRequest(text, variable_values=variables or None)


class Scenario:
    def __init__(self, http: str, ws: str, api_key: Optional[str], timeout: float) -> None:
        self.http = http
        self.ws = ws
        self.api_key = api_key
        self.timeout = timeout
        self.prefix = f"interop-{uuid.uuid4().hex[:8]}"
        self.counter = 0
        self.passed = 0

    # MARK: plumbing

    def headers(self) -> Dict[str, str]:
        return {"x-api-key": self.api_key} if self.api_key else {}

    def http_client(self) -> Client:
        transport = AIOHTTPTransport(url=self.http, headers=self.headers(), timeout=int(self.timeout))
        return Client(transport=transport, execute_timeout=self.timeout)

    def next_id(self) -> str:
        self.counter += 1
        return f"{self.prefix}-{self.counter}"

    async def step(self, name: str, body: Callable[[], Awaitable[str]]) -> None:
        try:
            detail = await asyncio.wait_for(body(), timeout=self.timeout)
        except StepFailed as error:
            raise StepFailed(f"{name}: {error}") from None
        except asyncio.TimeoutError:
            raise StepFailed(f"{name}: no answer within {self.timeout:g} s") from None
        except Exception as error:  # a transport or server error: report it as this step's failure
            raise StepFailed(f"{name}: {type(error).__name__}: {error}") from None
        self.passed += 1
        print(f"ok {name}" + (f" ({detail})" if detail else ""), flush=True)

    # MARK: HTTP

    async def run_http(self) -> None:
        async with self.http_client() as session:
            created: List[Dict[str, Any]] = []

            async def create() -> str:
                for number, text in ((1, "one"), (2, "two"), (3, "three")):
                    key = self.next_id()
                    result = await session.execute(
                        request(CREATE, input={"objectId": key, "text": text, "number": number, "boolean": True}))
                    item = result["createObjects"]
                    check(item is not None, f"createObjects returned null for {key}")
                    check(item["objectId"] == key and item["text"] == text and item["number"] == number,
                          f"createObjects returned {item}")
                    check(bool(item["createdAt"]) and bool(item["updatedAt"]), f"no timestamps in {item}")
                    created.append(item)
                return f"{len(created)} objects"

            await self.step("http createObjects", create)
            target = created[1]
            since = max(item["updatedAt"] for item in created)

            async def update() -> str:
                await asyncio.sleep(0.01)  # timestamps have millisecond resolution
                result = await session.execute(
                    request(UPDATE, input={"objectId": target["objectId"], "number": 20, "double": 2.5}))
                item = result["updateObjects"]
                check(item is not None, "updateObjects returned null")
                check(item["number"] == 20 and item["double"] == 2.5, f"updateObjects returned {item}")
                check(item["text"] == "two", f"updateObjects changed a field it was not given: {item}")
                check(item["updatedAt"] > since, f"updatedAt did not move past {since}: {item}")
                return f"{item['objectId']} number 2 -> 20"

            await self.step("http updateObjects", update)

            async def list_filtered() -> str:
                flt = {"objectId": {"beginsWith": self.prefix}, "updatedAt": {"gt": since}}
                result = await session.execute(request(LIST, filter=flt))
                keys = [item["objectId"] for item in result["listObjects"]["items"]]
                check(keys == [target["objectId"]], f"filter {flt} gave {keys}, expected [{target['objectId']}]")
                flt = {"objectId": {"beginsWith": self.prefix}, "number": {"ge": 3}}
                result = await session.execute(request(LIST, filter=flt))
                keys = sorted(item["objectId"] for item in result["listObjects"]["items"])
                check(keys == sorted([created[1]["objectId"], created[2]["objectId"]]),
                      f"filter {flt} gave {keys}")
                return "updatedAt gt, number ge"

            await self.step("http listObjects filter", list_filtered)

            async def list_pages() -> str:
                flt = {"objectId": {"beginsWith": self.prefix}}
                keys: List[str] = []
                token: Optional[str] = None
                pages = 0
                while True:
                    result = await session.execute(request(LIST, filter=flt, limit=2, nextToken=token))
                    connection = result["listObjects"]
                    check(len(connection["items"]) <= 2, f"limit 2 gave {len(connection['items'])} items")
                    keys += [item["objectId"] for item in connection["items"]]
                    pages += 1
                    token = connection["nextToken"]
                    check(pages <= 5, "nextToken never ends")
                    if not token:
                        break
                check(sorted(keys) == sorted(item["objectId"] for item in created), f"pages gave {keys}")
                return f"{len(keys)} objects in {pages} pages of 2"

            await self.step("http listObjects pages", list_pages)

            async def get() -> str:
                result = await session.execute(request(GET, objectId=target["objectId"]))
                item = result["getObjects"]
                check(item is not None and item["number"] == 20, f"getObjects returned {item}")
                result = await session.execute(request(GET, objectId=f"{self.prefix}-missing"))
                check(result["getObjects"] is None, f"getObjects of a missing key returned {result}")
                return target["objectId"]

            await self.step("http getObjects", get)

    async def run_introspection(self) -> None:
        async def introspect() -> str:
            async with self.http_client() as session:
                result = await session.execute(GraphQLRequest(get_introspection_query(descriptions=True)))
            schema = build_client_schema(result)
            check(schema.query_type is not None and "listObjects" in schema.query_type.fields,
                  "no Query.listObjects in the schema")
            check(schema.mutation_type is not None and "createObjects" in schema.mutation_type.fields,
                  "no Mutation.createObjects in the schema")
            check(schema.subscription_type is not None and "onUpdateObjects" in schema.subscription_type.fields,
                  "no Subscription.onUpdateObjects in the schema")
            return f"{len(schema.type_map)} types"

        await self.step("introspection build_client_schema", introspect)

    # MARK: WebSocket

    async def watch(
        self, name: str, subscriber: Any, subscription: str, field: str,
        trigger: Callable[[], Awaitable[str]],
    ) -> None:
        """Subscribes with `subscriber`, calls `trigger` (which returns the objectId it wrote) every 0.25 s
        until an event for one of those objectIds arrives: a server may start delivering a moment after the
        subscribe message, and the protocols other than AppSync's do not say when."""

        async def body() -> str:
            written: List[str] = []
            arrived: asyncio.Future = asyncio.get_running_loop().create_future()

            async def listen() -> None:
                async for result in subscriber.subscribe(GraphQLRequest(subscription)):
                    item = result.get(field)
                    if item is not None and item.get("objectId") in written and not arrived.done():
                        arrived.set_result(item)
                        return

            listener = asyncio.create_task(listen())
            started = time.monotonic()
            try:
                while not arrived.done():
                    if listener.done():
                        listener.result()  # raises the subscription's error
                        raise StepFailed("the subscription ended without the event")
                    written.append(await trigger())
                    await asyncio.wait({arrived, listener}, timeout=0.25, return_when=asyncio.FIRST_COMPLETED)
            finally:
                listener.cancel()
                await asyncio.gather(listener, return_exceptions=True)
            item = arrived.result()
            latency = (time.monotonic() - started) * 1000
            return f"{item['objectId']} after {len(written)} write(s), {latency:.0f} ms"

        await self.step(name, body)

    async def run_websocket(self, label: str, transport: Any, writer: Any = None) -> None:
        """`writer` is the session the mutations go through: `None` for the same socket (where the protocol
        carries queries and mutations too), HTTP for AppSync's real-time endpoint."""
        async with Client(transport=transport, execute_timeout=self.timeout) as session:
            writer = writer or session
            updated_key = self.next_id()

            async def create() -> str:
                key = self.next_id()
                result = await writer.execute(request(CREATE, input={"objectId": key, "text": label}))
                check(result["createObjects"] is not None, "createObjects returned null")
                return key

            async def update() -> str:
                if not getattr(update, "created", False):
                    await writer.execute(request(CREATE, input={"objectId": updated_key, "number": 0}))
                    update.created = True  # type: ignore[attr-defined]
                update.number = getattr(update, "number", 0) + 1  # type: ignore[attr-defined]
                result = await writer.execute(
                    request(UPDATE, input={"objectId": updated_key, "number": update.number}))  # type: ignore
                check(result["updateObjects"] is not None, "updateObjects returned null")
                return updated_key

            await self.watch(f"{label} onCreateObjects", session, ON_CREATE, "onCreateObjects", create)
            await self.watch(f"{label} onUpdateObjects", session, ON_UPDATE, "onUpdateObjects", update)

    def websockets_transport(self, subprotocol: str) -> WebsocketsTransport:
        return WebsocketsTransport(
            url=self.ws, headers=self.headers(), subprotocols=[subprotocol],
            init_payload=self.headers(), connect_timeout=self.timeout, ack_timeout=self.timeout,
            close_timeout=self.timeout)

    async def run_websocket_protocol(self, subprotocol: str) -> None:
        await self.run_websocket(subprotocol, self.websockets_transport(subprotocol))

    async def run_appsync(self) -> None:
        check(self.api_key is not None, "the AppSync transport needs --api-key")
        # The transport turns an https://…appsync-api… URL into the wss://…appsync-realtime-api… one and adds
        # ?header=<base64 auth>&payload=e30=; given ws:// it only appends the query.
        auth = AppSyncApiKeyAuthentication(host=urlparse(self.http).netloc, api_key=self.api_key or "")
        transport = AppSyncWebsocketsTransport(
            url=self.ws, auth=auth, connect_timeout=int(self.timeout), ack_timeout=int(self.timeout),
            close_timeout=int(self.timeout))
        async with self.http_client() as writer:
            await self.run_websocket("appsync", transport, writer)

    async def run(self, steps: List[str]) -> None:
        if "http" in steps:
            await self.run_http()
        if "introspection" in steps:
            await self.run_introspection()
        if "graphql-transport-ws" in steps:
            await self.run_websocket_protocol(WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL)
        if "graphql-ws" in steps:
            await self.run_websocket_protocol(WebsocketsTransport.APOLLO_SUBPROTOCOL)
        if "appsync" in steps:
            await self.run_appsync()


def loopback(url: str) -> bool:
    return urlparse(url).hostname in ("127.0.0.1", "localhost", "::1")


def main() -> int:
    parser = argparse.ArgumentParser(description="Runs the gql interoperability scenario against a server.")
    parser.add_argument("--http", required=True, help="http://127.0.0.1:PORT/graphql")
    parser.add_argument("--ws", required=True, help="ws://127.0.0.1:PORT/graphql")
    parser.add_argument("--api-key", help="sent as x-api-key, in connection_init and in the AppSync header")
    parser.add_argument("--timeout", type=float, default=10, help="seconds each step may take (default 10)")
    parser.add_argument("--steps", default=",".join(ALL_STEPS), help="comma-separated subset of " + ",".join(ALL_STEPS))
    args = parser.parse_args()
    steps = [step for step in args.steps.split(",") if step]
    unknown = [step for step in steps if step not in ALL_STEPS]
    if unknown:
        parser.error(f"unknown steps {unknown}")
    if not (loopback(args.http) and loopback(args.ws)):
        parser.error("only loopback servers (127.0.0.1, localhost, ::1) are targets")

    scenario = Scenario(args.http, args.ws, args.api_key, args.timeout)
    try:
        asyncio.run(scenario.run(steps))
    except StepFailed as error:
        print(f"FAIL {error}", file=sys.stderr, flush=True)
        return 1
    print(f"{scenario.passed} steps passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
