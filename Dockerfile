# One image with the platform's processes: the binaries the Procfile runs, and no other (not the
# fake PMS, not the benchmarks); docker-compose.yml picks the process per service.
# The web console (console/), built from its lock file; the API serves it at /console. Vite needs
# Node 20.19 or later, newer than Debian bookworm's nodejs, hence Node's own image for this stage.
FROM node:20-bookworm-slim AS console
WORKDIR /console
COPY console/package.json console/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY console/ ./
RUN npm run build

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# The binaries are read from the Procfile, so a new worker needs no line here: cargo builds just
# those, and the build fails if a Procfile process names a binary that was not built. They are
# copied by name into image-bin (emptied first, whatever the build context held), which alone
# goes into the runtime image.
RUN bins=$(sed -n 's|^[A-Za-z0-9_-]*:[[:space:]]*\./target/release/\([^[:space:]]*\).*|\1|p' Procfile) \
    && test -n "$bins" \
    && cargo build --release $(for bin in $bins; do printf -- '--bin=%s ' "$bin"; done) \
    && rm -rf image-bin && mkdir image-bin \
    && for bin in $bins; do \
         test -x "target/release/$bin" || { echo "Procfile names $bin, which the workspace did not build" >&2; exit 1; }; \
         cp "target/release/$bin" image-bin/; \
       done \
    && ls -l image-bin

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/villa villa \
    && mkdir -p /var/lib/villa/storage && chown -R villa /var/lib/villa
COPY --from=build /src/image-bin/ /usr/local/bin/
COPY --from=console /console/dist/ /usr/local/share/villa/console/
ENV CONSOLE_DIR=/usr/local/share/villa/console
USER villa
WORKDIR /var/lib/villa
EXPOSE 8080
# A worker or the scheduler with METRICS_PORT=9464 serves /metrics there (docs/operations.md).
EXPOSE 9464
CMD ["villa-api"]
