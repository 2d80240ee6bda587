# GraphQLite for Swift — common tasks. `make demo` and `make test` are the quick start.
SWIFT ?= swift
SWIFT_FLAGS ?=

.PHONY: build test test-core test-store demo bench format lint tsan clean

build:
	$(SWIFT) build $(SWIFT_FLAGS)

test:
	$(SWIFT) test $(SWIFT_FLAGS)

test-core:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLCoreTests

test-store:
	$(SWIFT) test $(SWIFT_FLAGS) --filter GQLStoreTests

demo:
	$(SWIFT) run $(SWIFT_FLAGS) gql-cli demo

bench:
	cd Benchmarks && $(SWIFT) run -c release StoreBench

format:
	$(SWIFT) format --in-place --recursive Sources Tests Benchmarks/Sources Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

tsan:
	$(SWIFT) test $(SWIFT_FLAGS) --sanitize=thread --scratch-path .build-tsan --filter GQLStoreTests

clean:
	rm -rf .build .build-* Benchmarks/.build
