# hpa-controller: the HPA controller (crate `hpa-controller`, without the
# test harness) as a static musl binary in a scratch image. Build from the
# repository root:
#   docker build -t hpa-harness:dev .
# Run as the HPA controller (see deploy/):
#   docker run hpa-harness:dev --kubeconfig /kubeconfig
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p hpa-controller --bin hpa-controller \
 && cp target/release/hpa-controller /hpa-controller

FROM scratch
COPY --from=build /hpa-controller /hpa-controller
# Non-root, as distroless "nonroot".
USER 65532:65532
# /metrics, /healthz, /readyz, /debug/decisions (with --bind-address=0.0.0.0:10257).
EXPOSE 10257
ENTRYPOINT ["/hpa-controller"]
CMD ["--bind-address=0.0.0.0:10257"]
