#!/usr/bin/env bash
# Keyed state on the heap and on RocksDB side by side, in one run: keyed-sum (RECORDS
# records over KEYS keys, p=1, one process with `weir local`) with
# `state.backend.type: hashmap` and `rocksdb`, alternating runs; records/s (wall clock,
# start-up and the final output included) and the process's peak RSS. Optional
# checkpoints every second (CHECKPOINTS=1) into the work directory.
# usage: bench-state.sh [runs=3] [keys=1000000] [records=10000000] [cache_entries=65536]
set -euo pipefail
runs="${1:-3}"; keys="${2:-1000000}"; records="${3:-10000000}"; cache="${4:-65536}"
source "$(dirname "$0")/bench-common.sh"
python3 - "$weir" "$work" "$runs" "$keys" "$records" "$cache" "${CHECKPOINTS:-0}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
weir, work, runs, keys, records, cache, checkpoints = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
def run(backend):
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    args = [weir, "local", "keyed-sum", "-p", "1", "--arg", f"keys={keys}", "--arg", f"records={records}",
            "--arg", f"output={out}", "-D", f"state.backend.type={backend}",
            "-D", f"state.backend.rocksdb.localdir={work}/rocksdb",
            "-D", f"state.backend.rocksdb.weir.cache-entries={cache}"]
    if checkpoints:
        args += ["-D", "execution.checkpointing.interval=1s", "-D", f"execution.checkpointing.dir={work}/chk"]
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.monotonic() - t0
    if status != 0:
        sys.exit(f"{backend}: weir exited with {status}")
    return records / elapsed / 1e6, usage.ru_maxrss / 1024
results = {"hashmap": [], "rocksdb": []}
for _ in range(runs):
    for backend in results:
        results[backend].append(run(backend))
for backend, rs in results.items():
    rates = [round(r, 2) for r, _ in rs]
    rss = max(m for _, m in rs)
    print(f"keyed-sum {keys} keys, {records} records, {backend}: {rates} M records/s "
          f"(median {statistics.median(rates):.2f}), peak RSS {rss:.0f} MiB")
h = statistics.median(r for r, _ in results["hashmap"])
r = statistics.median(r for r, _ in results["rocksdb"])
print(f"rocksdb/hashmap throughput: {r / h:.3f} (cache {cache} entries per subtask)")
PY
