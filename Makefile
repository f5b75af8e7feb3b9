# pushq — the two commands: `make run` and `make test`. See README.md.
SHELL := /bin/bash

.PHONY: run test deps build release bench bench-client pg-start pg-stop clean

## run: install what is missing, build, start PostgreSQL and the mock APNs, send samples, show status
run: deps
	scripts/run-demo

## test: install what is missing, build, start a throwaway PostgreSQL, run every test, stop it
test: deps
	scripts/test

deps:
	@scripts/install-deps

build: deps
	swift build

release: deps
	swift build -c release

## bench-client: APNsSender alone vs the libcurl floor and h2load, against the mock
bench-client: deps
	scripts/bench-client

pg-start: deps
	@scripts/pg-local start

pg-stop:
	@scripts/pg-local stop

clean:
	scripts/pg-local destroy
	rm -rf .build bench/bin
