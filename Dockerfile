# pushq in a container: `docker build -t pushq .`, or `docker compose up` (docker-compose.yml).
#
# Two stages: the Swift toolchain image builds a release `pushq` with the Swift runtime
# linked in statically; the runtime image is Debian slim with only the C libraries pushq
# calls (libpq, libcurl with HTTP/2, OpenSSL) and the system CA roots (Apple's hosts).
# Both stages are Debian bookworm, so the libraries match the headers built against.
# The release link uses the toolchain's own lld with packed relocations (Package.swift, the
# `pushq` target), which the runtime stage's glibc 2.36 loads, and places the functions a worker
# runs first (scripts/function-order.txt).

ARG SWIFT_VERSION=6.3

FROM swift:${SWIFT_VERSION}-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq-dev libcurl4-openssl-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so editing a source file does not fetch them again.
# (Package.resolved is optional: the glob may match nothing.)
COPY Package.swift Package.resolved* ./
RUN swift package resolve
# Every target the manifest names must exist, tests and benchmarks included.
COPY Sources ./Sources
COPY Tests ./Tests
COPY bench ./bench
# The order the release link places the worker's functions in (Package.swift, the `pushq` target),
# and the build as make bench measures it: every function in a section of its own, so that the
# link can place the ones a worker runs next to each other.
COPY scripts/function-order.txt scripts/build-release ./scripts/
RUN install -m 0755 "$(scripts/build-release)" /usr/local/bin/pushq

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 libcurl4 libssl3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin pushq
COPY --from=build /usr/local/bin/pushq /usr/local/bin/pushq
USER pushq
# `pushq worker` stops claiming on SIGTERM, finishes or releases what it holds, and exits 0.
STOPSIGNAL SIGTERM
CMD ["pushq", "worker"]
