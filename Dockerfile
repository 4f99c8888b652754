# A Weir image: the `weir` binary and a default configuration on Debian's slim base
# (glibc, no shell tools beyond the base). Build: docker build -t weir .
# Run: docker run weir jobmanager | taskmanager | local wordcount ...
# Settings: conf/config.yaml, then the WEIR_PROPERTIES environment variable (one
# `key: value` per line), then `-D key=value` arguments.
#
# scripts/check-dockerfile.py runs these steps without Docker (CI has no daemon): the
# build stage may use only the paths /src and /out.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
ENV CARGO_TARGET_DIR=/src/target
RUN ./scripts/deps.sh
RUN cargo build --release --locked -p weir
RUN mkdir -p /out && cp "$CARGO_TARGET_DIR/release/weir" /out/weir && strip /out/weir

FROM debian:bookworm-slim
COPY --from=build /out/weir /opt/weir/bin/weir
COPY deploy/conf/config.yaml /opt/weir/conf/config.yaml
ENV WEIR_CONF_DIR=/opt/weir/conf
ENV PATH=/opt/weir/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /opt/weir
USER 9999:9999
# JobManager RPC, REST; TaskManager RPC and data ports as deploy/conf/config.yaml sets them.
EXPOSE 6123 8081 6122 6121
ENTRYPOINT ["weir"]
CMD ["jobmanager"]
