# One image with every binary of the platform; docker-compose.yml picks the process per service.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Every binary the workspace builds goes into /out/bin, whatever its name, so a new worker needs
# no line here: the executables at the top of target/release are exactly the workspace's bins
# (build scripts and dependencies live in subfolders; .d and .rlib files are not executable; and
# target/ starts empty, .dockerignore keeping the host's out of the context). The build then fails
# if a Procfile process names a binary that was not built.
RUN cargo build --release --workspace --bins \
    && mkdir -p /out/bin \
    && find target/release -maxdepth 1 -type f -executable -exec cp {} /out/bin/ \; \
    && for bin in $(sed -n 's|^[A-Za-z0-9_-]*:[[:space:]]*\./target/release/\([^[:space:]]*\).*|\1|p' Procfile); do \
         test -x "/out/bin/$bin" || { echo "Procfile names $bin, which the workspace did not build" >&2; exit 1; }; \
       done \
    && ls -l /out/bin

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/villa villa \
    && mkdir -p /var/lib/villa/storage && chown -R villa /var/lib/villa
COPY --from=build /out/bin/ /usr/local/bin/
USER villa
WORKDIR /var/lib/villa
EXPOSE 8080
# A worker or the scheduler with METRICS_PORT=9464 serves /metrics there (docs/operations.md).
EXPOSE 9464
CMD ["villa-api"]
