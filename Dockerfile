# One image with every binary of the platform; docker-compose.yml picks the process per service.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --workspace --bins

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/villa villa \
    && mkdir -p /var/lib/villa/storage && chown -R villa /var/lib/villa
COPY --from=build /src/target/release/villa-api /src/target/release/worker-system \
     /src/target/release/worker-documents /src/target/release/worker-media \
     /src/target/release/scheduler /usr/local/bin/
USER villa
WORKDIR /var/lib/villa
EXPOSE 8080
CMD ["villa-api"]
