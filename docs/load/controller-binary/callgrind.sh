#!/bin/bash
# Instructions per sync of the deployed hpa-controller binary, counted by
# valgrind's callgrind: stable on a shared machine, where CPU seconds are
# not. By default 1,000 HPAs x 10 pods (10 namespaces of 1,000 pods: each
# namespace's metrics lists are as long as at 10,000 HPAs), no client rate
# limit, against `hpa-harness sim` in another process. HPAS, PODS,
# SIM_FLAGS (e.g. --generated-pod-names) and CTL_FLAGS (the controller's,
# default --kube-api-qps=0; "" for its defaults) change that.
# The counters are zeroed two minutes in (past the first status writes) and
# dumped 90 s later; the syncs between come from the controller's /metrics.
# Only user-space instructions are counted (the kernel's are not).
# Usage (from the repository, after `cargo build --release`):
#   docs/load/controller-binary/callgrind.sh        # prints "syncs N Ir M per-sync K"
#   callgrind_annotate --inclusive=yes "$OUT/cg.out.1" | less   # where they went
set -u
B=${B:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"; cd "$OUT" || exit 1
echo "output in $OUT" >&2
HPAS=${HPAS:-1000}
PODS=${PODS:-10}
PORT=${PORT:-18259}
# shellcheck disable=SC2086
"$B/hpa-harness" sim ${SIM_FLAGS:-} --listen 127.0.0.1:0 --kubeconfig k10 --force > sim.out 2>&1 &
SIM=$!; sleep 3
MURL=$(grep metrics-server: sim.out | awk '{print $2}')
# shellcheck disable=SC2086
valgrind --tool=callgrind --callgrind-out-file=cg.out --dump-instr=no \
  "$B/hpa-controller" --kubeconfig k10 --horizontal-pod-autoscaler-sync-period=15s ${CTL_FLAGS---kube-api-qps=0} \
  --bind-address "127.0.0.1:$PORT" > ctl.out 2>&1 &
CTL=$!
count() { curl -s "127.0.0.1:$PORT/metrics" | grep '^horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_count' | awk '{s+=$2} END {print s+0}'; }
timeout 400 "$B/hpa-harness" load --backend kubeconfig --kubeconfig k10 --metrics-url "$MURL" --controller upstream \
  --hpas "$HPAS" --pods-per-hpa "$PODS" --sync-period 15s --warmup 60s --duration 150s --quiet > load.out 2>&1 &
LOAD=$!
sleep 120
callgrind_control -z $CTL >/dev/null; a=$(count)
sleep 90
callgrind_control -d $CTL >/dev/null; b=$(count)
sleep 2
ir=$(callgrind_annotate cg.out.1 2>/dev/null | grep "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
echo "syncs $((b-a)) Ir $ir per-sync $((ir/(b-a)))"
kill $LOAD $CTL $SIM 2>/dev/null; wait 2>/dev/null
