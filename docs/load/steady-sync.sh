#!/bin/bash
# Instructions per steady sync at 10 pods (controller/benches/steady_sync.rs),
# counted by valgrind's callgrind on the controller's thread only, from the
# entry of the measured rounds to their exit: the same count in every run
# of one build, where CPU seconds on this shared machine move by a fifth.
# Usage (from the repository):
#   docs/load/steady-sync.sh            # prints "syncs N Ir M per-sync K"
#   STEADY_SYNC_OBSERVER=1 docs/load/steady-sync.sh   # with the load's observer
#   callgrind_annotate --inclusive=yes "$OUT"/cg.out.*-01 | less   # where they went
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
echo "output in $OUT" >&2
export STEADY_SYNC_ROUNDS=${STEADY_SYNC_ROUNDS:-10}
bench=$(cargo bench -p hpa-controller --bench steady_sync --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "steady_sync" and m.get("executable"):
        print(m["executable"])')
valgrind --tool=callgrind --separate-threads=yes --dump-instr=no \
  --zero-before='steady_sync::measured' --dump-after='steady_sync::measured' \
  --callgrind-out-file="$OUT/cg.out" "$bench" > "$OUT/bench.out" 2> "$OUT/valgrind.out"
syncs=$(grep -o '[0-9]* syncs' "$OUT/bench.out" | awk '{print $1}')
# The dump on leaving `measured`, of the main thread (thread 1): the
# controller's. Part 1 is that dump; the last part is the program's end.
main=$(ls "$OUT"/cg.out.1-01 2>/dev/null || ls "$OUT"/cg.out*-01 | head -1)
ir=$(callgrind_annotate "$main" 2>/dev/null | grep "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
echo "syncs $syncs Ir $ir per-sync $((ir / syncs))"
