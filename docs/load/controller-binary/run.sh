#!/bin/bash
# The deployed hpa-controller binary on its own, against `hpa-harness sim`
# in another process, with `hpa-harness load --controller upstream` building
# HPAS HPAs x PODS pods (10,000 x 10 unless given). Every 5 s it samples the
# controller's CPU ticks, resident memory and reconciliation count (its
# /metrics), then its user and system ticks apart, into samples.txt;
# stats.py turns them into CPU per sync and peak memory. It also
# saves the controller's own account of its memory (/debug/memory) as
# memory.json, taken near the end of the measured window.
# Usage (from the repository, after `cargo build --release`; B=DIR runs the
# binaries in DIR instead of target/release):
#   [HPAS=100000 PODS=1 WARMUP=90s DURATION=60s] docs/load/controller-binary/run.sh [extra hpa-controller flags]
#   python3 docs/load/controller-binary/stats.py "$OUT/samples.txt" [--hpas HPAS]
set -u
B=${B:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"; cd "$OUT" || exit 1
echo "output in $OUT" >&2
"$B/hpa-harness" sim --listen 127.0.0.1:0 --kubeconfig k10 --force > sim.out 2>&1 &
SIM=$!; sleep 3
MURL=$(grep metrics-server: sim.out | awk '{print $2}')
"$B/hpa-controller" --kubeconfig k10 --horizontal-pod-autoscaler-sync-period=15s --kube-api-qps=0 \
  --bind-address 127.0.0.1:18258 "$@" > ctl.out 2>&1 &
CTL=$!; sleep 2
( while kill -0 $CTL 2>/dev/null; do
    n=$(curl -s 127.0.0.1:18258/metrics | grep '^horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_count' | awk '{s+=$2} END {print s+0}')
    echo "$(date +%s) $(awk '{print $14+$15}' /proc/$CTL/stat) $(grep VmRSS /proc/$CTL/status | awk '{print $2}') $(grep VmHWM /proc/$CTL/status | awk '{print $2}') $n $(awk '{print $14, $15}' /proc/$CTL/stat)" >> samples.txt
    sleep 5; done ) &
WARMUP=${WARMUP:-60s}; DURATION=${DURATION:-90s}
timeout 1800 "$B/hpa-harness" load --backend kubeconfig --kubeconfig k10 --metrics-url "$MURL" --controller upstream \
  --controller-metrics-url http://127.0.0.1:18258/metrics \
  --hpas "${HPAS:-10000}" --pods-per-hpa "${PODS:-10}" --sync-period 15s \
  --warmup "$WARMUP" --duration "$DURATION" --quiet --json load.json > load.out 2>&1 &
LOAD=$!
# The load deletes its HPAs when it ends, and the controller forgets them:
# its account is taken 5 s before the measured window ends (WARMUP and
# DURATION in seconds, "90s"), the load built.
until grep -qs "load built" load.out || ! kill -0 $LOAD 2>/dev/null; do sleep 1; done
echo "built $(date +%s)" >> samples.txt
sleep $(( ${WARMUP%s} + ${DURATION%s} - 5 ))
kill -0 $LOAD 2>/dev/null && curl -s 127.0.0.1:18258/debug/memory > memory.json
# When the load starts deleting its HPAs: stats.py tells the peak while
# they existed from the peak of their deletion.
until grep -qs "deleting the load" load.out || ! kill -0 $LOAD 2>/dev/null; do sleep 1; done
echo "deleting $(date +%s)" >> samples.txt
wait $LOAD
# The controller forgets the deleted HPAs (its peak then is part of the
# run): up to a minute for its account to show none.
for _ in $(seq 60); do
  curl -s 127.0.0.1:18258/debug/memory | grep -q '"hpas":0,' && break; sleep 1
done
echo "forgotten $(date +%s)" >> samples.txt
kill $CTL $SIM; wait 2>/dev/null
