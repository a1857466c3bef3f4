#!/usr/bin/env python3
"""Where a load run's controller CPU goes, from a perf profile with call
stacks: each sample is counted once, under the first part its stack
passes through (outermost frame first), as a share of the controller's
samples (the disagreement checker's thread is left out: the load report's
CPU per sync leaves it out too).

Usage, on the load process during its measured minute:

    perf record -F 499 --call-graph dwarf,16384 -p PID -o perf.data -- sleep 30
    perf script -i perf.data -F tid,ip,sym | python3 docs/load/perf-shares.py
"""

import collections
import sys

# (part, a frame that marks it), tried in order on a sample's stack.
PARTS = [
    ("reconcile: the HPA decoded from the cache's text", "reconcile::load_hpa"),
    ("reconcile: metrics (shared lists decoded, each HPA's pods picked)", "MetricsClient::fetch"),
    ("reconcile: the core's decision", "hpa_core::decide::decision::decide"),
    ("reconcile: the outcome kept (decision log, metrics)", "reconcile::apply"),
    ("reconcile: the rest (pod cache, history, selectors, scale)", "reconcile::reconcile"),
    ("the load's observer (outside the reconcile)", "ReconcileObserver"),
    ("work queue: timers and adds", "WorkQueue"),
    ("watches (caches fed from the API server)", "watch"),
    ("runtime: workers parked and woken, IO driver, timers", "tokio::runtime"),
]
CHECKER = "Tally::check"


def samples(lines):
    """Each sample's frames, innermost first."""
    frames = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield frames
            frames = []
        elif line[0] in " \t":
            parts = line.strip().split(" ", 1)
            frames.append(parts[1] if len(parts) > 1 else parts[0])
    if frames:
        yield frames


def main():
    counts = collections.Counter()
    total = 0
    for frames in samples(sys.stdin):
        if any(CHECKER in f for f in frames):
            continue
        total += 1
        outermost_first = list(reversed(frames))
        part = next(
            (name for name, mark in PARTS if any(mark in f for f in outermost_first)),
            "other (kernel, allocator, threads outside the runtime)",
        )
        counts[part] += 1
    if total == 0:
        sys.exit("no controller samples in the input")
    print(f"{total} controller samples")
    print("| part | share of the controller's samples |")
    print("| --- | --- |")
    for name, _ in PARTS + [("other (kernel, allocator, threads outside the runtime)", "")]:
        if counts[name]:
            print(f"| {name} | {100 * counts[name] / total:.1f} % |")


if __name__ == "__main__":
    main()
