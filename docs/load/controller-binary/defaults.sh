#!/bin/bash
# The deployed hpa-controller binary at its defaults (--kube-api-qps 20,
# --kube-api-burst 30 per clientset, 5 workers) against `hpa-harness sim
# --generated-pod-names` in another process, with `hpa-harness load
# --controller upstream` building HPAS HPAs x 1 pod of the load's mix and
# counting every HPA's syncs from the controller's /debug/syncs. Every 5 s
# it samples the controller's CPU ticks, resident memory and
# reconciliations into samples.txt, and marks when the load was built;
# stats.py --built WARMUP turns the measured minute into CPU per sync.
# Usage (from the repository, after `cargo build --release`; B=DIR runs the
# binaries in DIR instead of target/release):
#   HPAS=3000 WARMUP=240s docs/load/controller-binary/defaults.sh [extra hpa-controller flags]
#   LOAD_FLAGS=--refuse-external-lists ... (the fake metrics server as KEDA's adapter)
#   SIM_FLAGS="--pod-creation-delay 2s" ... (a slower cluster)
#   python3 docs/load/controller-binary/stats.py "$OUT/samples.txt" --built 240
set -u
B=${B:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release}
OUT=${OUT:-$(mktemp -d)}
HPAS=${HPAS:-3000}
WARMUP=${WARMUP:-240s}
PORT=${PORT:-18371}
mkdir -p "$OUT"; cd "$OUT" || exit 1
echo "output in $OUT" >&2
# shellcheck disable=SC2086
"$B/hpa-harness" sim --generated-pod-names ${SIM_FLAGS:-} --listen 127.0.0.1:0 --kubeconfig k --force > sim.out 2>&1 &
SIM=$!; sleep 3
MURL=$(grep metrics-server: sim.out | awk '{print $2}')
"$B/hpa-controller" --kubeconfig k --bind-address "127.0.0.1:$PORT" "$@" > ctl.out 2>&1 &
CTL=$!; sleep 2
( while kill -0 $CTL 2>/dev/null; do
    n=$(curl -s "127.0.0.1:$PORT/metrics" | grep '^horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_count' | awk '{s+=$2} END {print s+0}')
    echo "$(date +%s) $(awk '{print $14+$15}' /proc/$CTL/stat) $(grep VmRSS /proc/$CTL/status | awk '{print $2}') $(grep VmHWM /proc/$CTL/status | awk '{print $2}') $n $(awk '{print $14, $15}' /proc/$CTL/stat)" >> samples.txt
    sleep 5; done ) &
# shellcheck disable=SC2086
RUST_LOG=warn,hpa_harness=info timeout 1800 "$B/hpa-harness" load --backend kubeconfig --kubeconfig k \
  --metrics-url "$MURL" --controller upstream --controller-metrics-url "http://127.0.0.1:$PORT/metrics" ${LOAD_FLAGS:-} \
  --hpas "$HPAS" --pods-per-hpa 1 --sync-period 15s --warmup "$WARMUP" --duration 60s --quiet --json load.json > load.out 2>&1 &
LOAD=$!
# The measured minute starts WARMUP after the load is built: mark it.
until grep -qs "load built" load.out || ! kill -0 $LOAD 2>/dev/null; do sleep 1; done
echo "built $(date +%s)" >> samples.txt
wait $LOAD
kill $CTL $SIM; wait 2>/dev/null
