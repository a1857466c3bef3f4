#!/bin/bash
# An HPA controller on a genuine control plane (etcd, kube-apiserver and
# kube-controller-manager from their binaries, `hpa-harness control-plane`),
# measured from outside by `hpa-harness load --controller upstream`: HPAS
# HPAs x 1 pod of the load's mix, 15 s period, DURATION measured WARMUP
# after the load is built.
#   CONTROLLER=upstream  kube-controller-manager's own HPA controller, at
#                        the manager's client budget (MANAGER_QPS/BURST,
#                        upstream's 20/30 unless given); syncs counted from
#                        the fake metrics server's request log.
#   CONTROLLER=binary    the shipped hpa-controller at its defaults (20 QPS,
#                        burst 30 per clientset), the manager's HPA
#                        controller off; syncs counted from its /debug/syncs.
#                        The manager's budget then only makes the pods.
# Every 5 s it samples the controller's CPU ticks, resident memory and
# reconciliations (its /metrics; the manager's through its secure port, as
# the admin) into samples.txt (the format stats.py reads), and the API
# server's, etcd's and the harness's (fake metrics server and fake node)
# CPU ticks and resident memory, with the load average, into plane.txt;
# it marks when the load was built, and keeps the API server's request and
# watch-event counters at the start and the end of the measured window
# (api-start.txt, api-end.txt).
# Usage (from the repository, after `cargo build --release`; K8S=DIR of
# etcd, kube-apiserver and kube-controller-manager, default
# $KUBEBUILDER_ASSETS):
#   CONTROLLER=upstream HPAS=600 WARMUP=120s OUT=/tmp/kcm docs/load/controller-binary/control-plane.sh
#   CONTROLLER=binary HPAS=3000 WARMUP=240s MANAGER_QPS=200 MANAGER_BURST=300 OUT=/tmp/cp3k \
#     docs/load/controller-binary/control-plane.sh [extra hpa-controller flags]
#   python3 docs/load/controller-binary/stats.py "$OUT/samples.txt" --built 240
set -u
B=${B:-$(cd "$(dirname "$0")/../../.." && pwd)/target/release}
K8S=${K8S:-${KUBEBUILDER_ASSETS:-}}
OUT=${OUT:-$(mktemp -d)}
CONTROLLER=${CONTROLLER:-binary}
HPAS=${HPAS:-3000}
WARMUP=${WARMUP:-240s}
DURATION=${DURATION:-60s}
PORT=${PORT:-18372}
mkdir -p "$OUT"; cd "$OUT" || exit 1
echo "output in $OUT" >&2
case $CONTROLLER in
  upstream) CP_CONTROLLER=upstream ;;
  binary) CP_CONTROLLER=none ;;
  *) echo "CONTROLLER must be upstream or binary, not $CONTROLLER" >&2; exit 2 ;;
esac
"$B/hpa-harness" control-plane --control-plane-bin "$K8S" --controller "$CP_CONTROLLER" \
  --controller-manager-qps "${MANAGER_QPS:-20}" --controller-manager-burst "${MANAGER_BURST:-30}" \
  --kubeconfig k --force > cp.out 2>&1 &
CP=$!
until grep -qs "control plane running" cp.out || ! kill -0 $CP 2>/dev/null; do sleep 1; done
kill -0 $CP 2>/dev/null || { cat cp.out >&2; exit 1; }
MURL=$(grep metrics-server: cp.out | awk '{print $2}')
# The control plane's processes, by their executable.
child() { for p in $(ps -o pid= --ppid $CP); do
  [ "$(basename "$(readlink /proc/$p/exe)")" = "$1" ] && echo $p; done; }
# The admin's client certificate, for the manager's and the API server's /metrics.
python3 -c '
import base64, json
u = json.load(open("k"))["users"][0]["user"]
open("admin.crt", "wb").write(base64.b64decode(u["client-certificate-data"]))
open("admin.key", "wb").write(base64.b64decode(u["client-key-data"]))'
API=$(child kube-apiserver); ETCD=$(child etcd); KCM=$(child kube-controller-manager)
if [ "$CONTROLLER" = binary ]; then
  "$B/hpa-controller" --kubeconfig k --bind-address "127.0.0.1:$PORT" "$@" > ctl.out 2>&1 &
  CTL=$!; sleep 2
  METRICS=(curl -s "http://127.0.0.1:$PORT/metrics")
  LOAD_COUNT=(--controller-metrics-url "http://127.0.0.1:$PORT/metrics")
else
  CTL=$KCM
  # The manager's /metrics on its secure port, as the admin (system:masters).
  KPORT=$(tr '\0' '\n' < /proc/$KCM/cmdline | sed -n 's/^--secure-port=//p')
  METRICS=(curl -sk --cert admin.crt --key admin.key "https://127.0.0.1:$KPORT/metrics")
  LOAD_COUNT=()
fi
ticks() { awk '{print $14+$15}' /proc/$1/stat 2>/dev/null || echo 0; }
rss() { awk '/VmRSS/ {print $2}' /proc/$1/status 2>/dev/null || echo 0; }
( while kill -0 $CTL 2>/dev/null; do
    n=$("${METRICS[@]}" | grep '^horizontal_pod_autoscaler_controller_reconciliation_duration_seconds_count' | awk '{s+=$2} END {print s+0}')
    echo "$(date +%s) $(ticks $CTL) $(rss $CTL) $(awk '/VmHWM/ {print $2}' /proc/$CTL/status) $n $(awk '{print $14, $15}' /proc/$CTL/stat)" >> samples.txt
    echo "$(date +%s) $(ticks $API) $(rss $API) $(ticks $ETCD) $(rss $ETCD) $(ticks $CP) $(rss $CP) $(cut -d' ' -f1 /proc/loadavg)" >> plane.txt
    sleep 5; done ) &
SAMPLER=$!
RUST_LOG=warn,hpa_harness=info timeout 3600 "$B/hpa-harness" load --backend kubeconfig --kubeconfig k \
  --metrics-url "$MURL" --controller upstream "${LOAD_COUNT[@]}" \
  --hpas "$HPAS" --pods-per-hpa 1 --sync-period 15s --warmup "$WARMUP" --duration "$DURATION" \
  --quiet --json load.json > load.out 2>&1 &
LOAD=$!
# The measured window starts WARMUP after the load is built: mark it.
until grep -qs "load built" load.out || ! kill -0 $LOAD 2>/dev/null; do sleep 1; done
echo "built $(date +%s)" >> samples.txt
echo "built $(date +%s)" >> plane.txt
# The API server's own counters (requests by verb and resource, watch
# events by kind) at the start and the end of the measured window.
SERVER=$(grep api-server: cp.out | awk '{print $2}')
api_metrics() { curl -sk --cert admin.crt --key admin.key "$SERVER/metrics" | grep -E '^apiserver_(request_total|watch_events_total|watch_events_sizes_sum)' > "$1"; }
sleep "${WARMUP%s}"; api_metrics api-start.txt; echo "window $(date +%s)" >> plane.txt
# PERF=1: the controller's CPU sampled by perf over the window (perf.data;
# `perf report -i perf.data --no-children --sort dso,symbol`).
[ -n "${PERF:-}" ] && perf record -F 999 -g -p "$CTL" -o perf.data -- sleep $(( ${DURATION%s} - 2 )) > perf.out 2>&1 &
# (2 s early: the window's end, found within a second, must not take in
# the load's deletion of its namespaces.)
sleep $(( ${DURATION%s} - 2 )); api_metrics api-end.txt; echo "window-end $(date +%s)" >> plane.txt
wait $LOAD
echo "load exit $?" >> load.out
[ "$CONTROLLER" = binary ] && kill $CTL
kill $SAMPLER $CP; wait 2>/dev/null
