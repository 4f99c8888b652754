#!/usr/bin/env python3
"""The cost of metrics in CPU time, which a shared machine disturbs less than wall time.

usage: bench-metrics-cpu.py WEIR CASE RECORDS ROUNDS
  e.g. bench-metrics-cpu.py ~/.cache/weir-target/release/weir bench-chain 20000000 7

Runs `WEIR bench --only CASE` with metrics collection on and off, alternating, ROUNDS
times each, and prints the process CPU time (user + system) of every run, the medians
and how much more CPU collection costs (on/off - 1).
"""
import resource
import statistics
import subprocess
import sys

if len(sys.argv) != 5:
    sys.exit(__doc__)
weir, case, records, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cpu = {"true": [], "false": []}
for _ in range(rounds):
    for collection in ("true", "false"):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [weir, "bench", "--only", case, "--records", records, "--runs", "1",
             "--metrics-collection", collection],
            check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        cpu[collection].append(round(used, 3))
on, off = statistics.median(cpu["true"]), statistics.median(cpu["false"])
print(f"{case}: CPU s on {cpu['true']} median {on}; off {cpu['false']} median {off}; "
      f"on/off - 1 = {100 * (on / off - 1):+.1f} %")
