#!/usr/bin/env bash
# The cost of metrics: `weir bench` on one binary with metrics collection on (the
# default: per-operator record counters, task counters published at most every 10 ms)
# and off (`--metrics-collection false`: neither), alternating on and off runs so that
# both see the same machine; per case, the median of each and off/on - 1 (how much
# slower collection makes the case).
# usage: bench-metrics.sh [rounds=5] [records=5000000]
set -euo pipefail
rounds="${1:-5}"; records="${2:-5000000}"
source "$(dirname "$0")/bench-common.sh"
for _ in $(seq "$rounds"); do
  for collection in true false; do
    "$weir" bench --records "$records" --runs 1 --metrics-collection "$collection" |
      grep 'M records/s' | sed "s/^/$collection\t/" >>"$work/runs.tsv"
  done
done
python3 - "$work/runs.tsv" <<'PY'
import collections, re, statistics, sys
rates = collections.defaultdict(lambda: {"true": [], "false": []})
for line in open(sys.argv[1]):
    collection, rest = line.rstrip("\n").split("\t", 1)
    case, rate = re.match(r"(.*): ([0-9.]+) M records/s", rest).groups()
    rates[case][collection].append(float(rate))
for case, by in rates.items():
    on, off = statistics.median(by["true"]), statistics.median(by["false"])
    print(f"{case}\n  on  {by['true']} M/s, median {on:.2f}\n  off {by['false']} M/s, median {off:.2f}\n"
          f"  metrics cost: {100 * (off / on - 1):+.1f} % (on is slower by this share of its time)")
PY
