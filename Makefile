# GraphQLite for Swift — common tasks. `make demo` and `make test` are the quick start.
SWIFT ?= swift
SWIFT_FLAGS ?=

.PHONY: build venv test test-parallel test-core test-store test-cli test-devserver fuzz fuzz-client test-interop demo serve bench bench-store bench-callgrind bench-server bench-net bench-storage bench-crypto bench-sync bench-cache format lint check-imports tsan clean

build:
	$(SWIFT) build $(SWIFT_FLAGS)

# The Python test peers (gql, graphql-core, Strawberry) in .venv; quiet when already installed.
venv:
	bash Tests/Interop/setup-venv.sh

# One test at a time: a parallel run on a loaded 2-core machine has seen WebSocket handshakes of in-process dev
# servers miss their 10 s timeout (every suite shares Swift concurrency's two cooperative threads with tests that
# block on threads, files and child processes). `make test-parallel` runs the suites side by side, in about 60 % of
# the time.
test: venv
	$(SWIFT) test $(SWIFT_FLAGS) --no-parallel
	# Tests that change process-wide environment variables, alone (setenv races the environment copy every child
	# process start makes in a parallel run).
	GQL_LOCATION_TESTS=1 $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter LocationTests

test-parallel: venv
	$(SWIFT) test $(SWIFT_FLAGS)
	GQL_LOCATION_TESTS=1 $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter LocationTests

test-core:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLCoreTests

test-store:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLStoreTests

test-devserver:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLDevServerTests

# Seeded hostile documents and variables against GQLDevServer (FuzzTests), then seeded random WebSocket frames and
# HTTP answers into the GQLNet client (ClientFuzzTests), each for GQL_FUZZ_SECONDS (default 60); each prints its seed,
# and GQL_FUZZ_SEED replays a run. `make fuzz-client` runs the client target alone.
fuzz: venv
	GQL_FUZZ_SECONDS=$${GQL_FUZZ_SECONDS:-60} $(SWIFT) test $(SWIFT_FLAGS) --filter FuzzTests

fuzz-client: venv
	GQL_FUZZ_SECONDS=$${GQL_FUZZ_SECONDS:-60} $(SWIFT) test $(SWIFT_FLAGS) --filter ClientFuzzTests

test-cli: venv
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLCLITests

# gql-cli serve against the Python gql client library (HTTP, graphql-transport-ws, graphql-ws, AppSync).
test-interop: venv
	$(SWIFT) test $(SWIFT_FLAGS) --filter ServeInteropTests

demo:
	$(SWIFT) run $(SWIFT_FLAGS) gql-cli demo

serve:
	$(SWIFT) run $(SWIFT_FLAGS) gql-cli serve

bench: bench-store bench-server bench-net bench-storage bench-crypto bench-sync bench-cache

bench-store:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching StoreBench

# StoreBench's workloads in instructions per row under valgrind's callgrind (steadier than time; ROWS=20000).
bench-callgrind:
	bash Benchmarks/callgrind-store.sh

# GQLDevServer vs a Strawberry GraphQL server (Benchmarks/Server), loopback only.
bench-server: venv
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching ServerBench

# The GQLNet client (GQLServer, GQLQuery) vs raw AsyncHTTPClient / WSClient, on an in-process GQLDevServer.
bench-net:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching NetBench

# GQLStorage vs botocore (SigV4 signatures/s) and boto3's transfer manager (256 MiB up and down) on moto.
bench-storage: venv
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching StorageBench

# JWT verifications/s (HS256, RS256) and their signature-only floor: GQLCrypto vs PyJWT / cryptography, same tokens.
bench-crypto: venv
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching CryptoBench

# GQLSync: enqueue inside a write, drain vs a mutation loop (single and batched), pull vs pages inserted by hand.
bench-sync:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching SyncBench

# GQLCache on a 1,000-post feed: write and read vs parsing and rows by hand, 1,000 watchers and one change.
bench-cache:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching CacheBench

format:
	$(SWIFT) format --in-place --recursive Sources Tests Benchmarks/Sources Package.swift

# The layering (scripts/check-imports.py: every import declared by its target, no layer importing one above it), then
# the formatter's rules.
lint: check-imports
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

check-imports:
	python3 scripts/check-imports.py

# Third-party false positives are suppressed in Tests/tsan-suppressions.txt, each with its reason.
tsan:
	TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/tsan-suppressions.txt" $(SWIFT) test $(SWIFT_FLAGS) --sanitize=thread \
		--scratch-path .build-tsan \
		--filter "GQLWaitersTests|GQLWaiterTests|GQLStoreTests|GQLServerWebSocketTests|GQLServerHTTPTests|SocketStateMachineTests|WebSocketChannelTests|FlappingServerTests|GQLSyncTests|GQLCacheTests|GQLServicesTests|AuthorizationTests|SocketAuthorizationRetryTests|ServerOpenIDConnectTests"

clean:
	rm -rf .build .build-* Benchmarks/.build
