# GraphQLite for Swift — common tasks. `make demo` and `make test` are the quick start.
SWIFT ?= swift
SWIFT_FLAGS ?=

.PHONY: build venv test test-serial test-parallel test-core test-store test-cli test-devserver fuzz fuzz-client test-interop demo serve bench bench-store bench-encryption bench-callgrind bench-callgrind-values bench-server bench-net bench-storage bench-crypto bench-sync bench-cache bench-codegen bench-codegen-compile format lint check-imports tsan clean

build:
	$(SWIFT) build $(SWIFT_FLAGS)

# The Python test peers (gql, graphql-core, Strawberry) in .venv; quiet when already installed.
venv:
	bash Tests/Interop/setup-venv.sh

# The test targets side by side, TEST_JOBS processes at a time (default 2, CI's cores), each process running one
# target's tests one at a time (scripts/test-shards.sh); then the tests that change process-wide environment
# variables, alone (setenv races the environment copy every child process start makes). Measured on CI's kind of
# machine (2 cores, 1,165 tests): 156 s side by side against 287 s one at a time (`make test-serial`), no test
# failing on timing.
# Not Swift Testing's parallelism inside one process (`swift test` without --no-parallel): there every test shares
# the process's two cooperative threads, and a test busy on them (SQLite loads, fuzzing, crypto, big JSON) holds
# back the clients and servers of every other. Measured that way before this change (1,152 tests, 83 s), 21 tests
# (41 cases) failed on timing: clients whose 5 s timeout ran out with the answer still arriving (GQLSync's
# PullAttackTests and HostileAnswerTests), GQLServices' stall, trickle and token tests, GQLNet's hostile and
# oversized WebSocket tests, GQLCache's 10 MB answer, the dev server's idle-timeout, unread-answers and
# subscription-event tests. Separate processes share only the two cores: a busy test slows another, it never
# stops it. In-process servers run on event loops of their own (eventLoopThreads), no test blocks
# a cooperative thread (GQLTestSupport's onThread), and process-wide settings (GQLDate.custom, GQLDebug.level) are
# changed only by tests of one target, in its own process.
# The location tests start the test bundle directly on Linux, as test-shards.sh does: `swift test --skip-build`
# spent 12 s of CI planning a build before their 0.1 s of tests.
TEST_JOBS ?= 2
test: venv
	$(SWIFT) build $(SWIFT_FLAGS) --build-tests
	bin=$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path) && bash scripts/test-shards.sh $(TEST_JOBS) "$$bin" && \
	bundle=$$(find "$$bin" -maxdepth 1 -name '*PackageTests.xctest' | head -1) && \
	if [ "$$(uname -s)" = Linux ] && [ -n "$$bundle" ]; then \
	    GQL_LOCATION_TESTS=1 "$$bundle" --testing-library swift-testing --filter LocationTests; \
	else GQL_LOCATION_TESTS=1 $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter LocationTests; fi

# One test at a time in one process (what `make test` ran until the targets went side by side).
test-serial: venv
	$(SWIFT) test $(SWIFT_FLAGS) --no-parallel
	GQL_LOCATION_TESTS=1 $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter LocationTests

# The old name of `make test`.
test-parallel: test

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

bench: bench-store bench-encryption bench-server bench-net bench-storage bench-crypto bench-sync bench-cache bench-codegen

bench-store:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching StoreBench

# EncryptionBench: StoreBench's workloads on an encrypted vs a plain GQLStore file, interleaved (goal ≤ 1.15×), then the
# peer, SQLCipher 4 (PyPI sqlcipher3) encrypted vs its own plain, same workloads.
bench-encryption: venv
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching StoreBench --only gqlstore,encrypted --no-observers
	.venv/bin/python Benchmarks/sqlcipher-peer.py

# StoreBench's workloads in instructions per row under valgrind's callgrind (steadier than time; ROWS=20000).
bench-callgrind:
	bash Benchmarks/callgrind-store.sh

# NetBench's queries and SyncBench's drain and pull in instructions per operation under callgrind, every thread
# (client and in-process server); DIRS="before after" counts other builds' binaries side by side.
bench-callgrind-values:
	bash Benchmarks/callgrind-values.sh $(DIRS)

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

# GQLCodegen (`gql-cli codegen`, and in-process) vs ariadne-codegen 0.19.0 (its own .venv-codegen: it needs an older
# graphql-core than .venv's) on GitHub's schema (../shared/corpus) and 200 operations, then the generated Swift's
# lines and `swift build` seconds beside Swift written by hand for 10 of them (Benchmarks/Codegen/README.md).
bench-codegen:
	bash Tests/Interop/setup-venv.sh .venv-codegen Benchmarks/Codegen/requirements.txt ariadne_codegen
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) build -c release --disable-build-manifest-caching --product gql-cli
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching CodegenBench

# CodegenBench's second part alone: `swift build` seconds of the generated Swift for the 200 operations (the module
# afresh, and after one operation edited) beside the hand-written 10, debug and release, in a scratch package under
# Benchmarks/.build-codegen. The first run builds GQLNet's dependencies there, untimed (about 3 min debug, 6 min
# release); `CodegenBench --only-compile --profile` prints where the compile time goes.
bench-codegen-compile:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) build -c release --disable-build-manifest-caching --product CodegenBench
	cd Benchmarks && .build/release/CodegenBench --only-compile --compile-rounds 3

# The Swift the formatter keeps to .swift-format's rules: sources, tests, benchmarks, the plugin and both manifests,
# but not the generated Swift under Tests/GQLCodegenTests/Generated, which GoldenTests compares byte for byte with
# what the generator writes (the generator's layout, not the formatter's: formatting it would fail GoldenTests).
SWIFT_FORMAT_FILES = $(shell find Sources Tests Benchmarks/Sources Plugins -name '*.swift' \
	-not -path 'Tests/GQLCodegenTests/Generated/*' | sort) $(wildcard Benchmarks/*.swift) Package.swift

format:
	$(SWIFT) format --in-place --parallel $(SWIFT_FORMAT_FILES)

# The layering (scripts/check-imports.py: every import declared by its target, no layer importing one above it), then
# the formatter's rules over SWIFT_FORMAT_FILES (the whole tree but the generated Swift), every finding an error.
lint: check-imports
	$(SWIFT) format lint --strict --parallel $(SWIFT_FORMAT_FILES)

check-imports:
	python3 scripts/check-imports.py

# Third-party false positives are suppressed in Tests/tsan-suppressions.txt, each with its reason.
tsan:
	TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/tsan-suppressions.txt" $(SWIFT) test $(SWIFT_FLAGS) --sanitize=thread \
		--scratch-path .build-tsan \
		--filter "GQLWaitersTests|GQLWaiterTests|GQLStoreTests|GQLServerWebSocketTests|GQLServerHTTPTests|SocketStateMachineTests|WebSocketChannelTests|FlappingServerTests|GQLSyncTests|GQLCacheTests|GQLServicesTests|AuthorizationTests|SocketAuthorizationRetryTests|ServerOpenIDConnectTests"

clean:
	rm -rf .build .build-* Benchmarks/.build
