# GraphQLite for Swift — common tasks. `make demo` and `make test` are the quick start.
SWIFT ?= swift
SWIFT_FLAGS ?=

.PHONY: build test test-core test-store test-cli demo bench format lint tsan clean

build:
	$(SWIFT) build $(SWIFT_FLAGS)

test:
	$(SWIFT) test $(SWIFT_FLAGS)

test-core:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLCoreTests

test-store:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLStoreTests

test-cli:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLCLITests

demo:
	$(SWIFT) run $(SWIFT_FLAGS) gql-cli demo

bench:
	cd Benchmarks && SQLITE_ENABLE_PREUPDATE_HOOK=1 $(SWIFT) run -c release --disable-build-manifest-caching StoreBench

format:
	$(SWIFT) format --in-place --recursive Sources Tests Benchmarks/Sources Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

tsan:
	$(SWIFT) test $(SWIFT_FLAGS) --sanitize=thread --scratch-path .build-tsan --filter GQLStoreTests

clean:
	rm -rf .build .build-* Benchmarks/.build
