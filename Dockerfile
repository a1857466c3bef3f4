# hpa-harness: the HPA controller (and the rest of the CLI) as a static musl
# binary in a scratch image. Build from the repository root:
#   docker build -t hpa-harness:dev .
# Run as the HPA controller (see deploy/):
#   docker run hpa-harness:dev controller --kubeconfig /kubeconfig
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p hpa-harness --bin hpa-harness \
 && cp target/release/hpa-harness /hpa-harness

FROM scratch
COPY --from=build /hpa-harness /hpa-harness
# Non-root, as distroless "nonroot".
USER 65532:65532
# /metrics, /healthz, /readyz, /debug/decisions (with --bind-address=0.0.0.0:10257).
EXPOSE 10257
ENTRYPOINT ["/hpa-harness"]
CMD ["controller", "--bind-address=0.0.0.0:10257"]
