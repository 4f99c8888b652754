#!/usr/bin/env bash
# Full against incremental checkpoints of RocksDB state, side by side in one run:
# rolling-sum (a ValueState per key, no timers) over KEYS keys at RATE records/s, p=1,
# on a JobManager and a TaskManager with `state.backend.type: rocksdb`, checkpointing
# every second, once with full (canonical) checkpoints and once with
# `execution.checkpointing.incremental: true`. For checkpoints 4 to 8 of each run:
# median state size (everything a checkpoint refers to), checkpointed size (what it
# stored), end-to-end duration and the task's pause (the synchronous part).
# usage: bench-incremental.sh [keys=1000000] [rate=100000]
set -euo pipefail
keys="${1:-1000000}"; rate="${2:-100000}"
source "$(dirname "$0")/bench-common.sh"
WEIR_SCRIPTS="$PWD/scripts" python3 - "$weir" "$work" "$rest_port" "$rpc_port" "$keys" "$rate" <<'PY'
import os, re, statistics, subprocess, sys
sys.path.insert(0, os.environ["WEIR_SCRIPTS"])
from weir_rest import Rest, wait
weir, work, rest_port, rpc_port, keys, rate = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
line = re.compile(r"checkpoint (\d+) of attempt \S+ \(job \S+\): (\d+) bytes, sync (\d+) ms, async (\d+) ms")

def run(incremental):
    d = os.path.join(work, "incremental" if incremental else "full")
    os.makedirs(d)
    common = ["-D", "state.backend.type=rocksdb", "-D", f"state.backend.rocksdb.localdir={d}/local"]
    jm = subprocess.Popen([weir, "jobmanager", "-D", f"rest.port={rest_port}", "-D", f"jobmanager.rpc.port={rpc_port}",
                           "-D", "execution.checkpointing.interval=1s", "-D", f"execution.checkpointing.dir={d}/chk",
                           "-D", f"execution.checkpointing.incremental={str(incremental).lower()}"] + common,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = open(f"{d}/tm.log", "w")
    tm = subprocess.Popen([weir, "taskmanager", "-D", f"jobmanager.rpc.port={rpc_port}",
                           "-D", "taskmanager.numberOfTaskSlots=1"] + common,
                          stdout=log, stderr=log, env=dict(os.environ, WEIR_LOG="info,weir_taskmanager::checkpointing=debug"))
    try:
        rest = Rest(rest_port)
        rest.wait_slots(1)
        jid = rest.submit({"program": "rolling-sum", "parallelism": 1,
                           "args": {"keys": str(keys), "records": str(keys * 1000), "rate_per_sec": str(rate),
                                    "output": "discard"}})
        wait(lambda: rest.get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 8, timeout=600)
        history = {c["id"]: c for c in rest.get(f"/jobs/{jid}/checkpoints")["history"] if c["status"] == "COMPLETED"}
        chosen = [history[i] for i in range(4, 9) if i in history]
        log.flush()
        pauses = {int(m.group(1)): int(m.group(3)) for m in map(line.search, open(f"{d}/tm.log", errors="replace")) if m}
        return {
            "state": statistics.median(c["state_size"] for c in chosen) / 1e6,
            "stored": statistics.median(c["checkpointed_size"] for c in chosen) / 1e6,
            "duration": statistics.median(c["end_to_end_duration"] for c in chosen),
            "pause": statistics.median(pauses.get(c["id"], -1) for c in chosen),
        }
    finally:
        for p in (tm, jm):
            p.kill()
            p.wait()

full, incr = run(False), run(True)
for name, r in (("full", full), ("incremental", incr)):
    print(f"rolling-sum {keys} keys at {rate} records/s, RocksDB, {name} checkpoints (4-8, median): "
          f"state {r['state']:.1f} MB, stored {r['stored']:.1f} MB, end-to-end {r['duration']} ms, "
          f"task pause {r['pause']} ms")
print(f"incremental/full stored bytes {incr['stored'] / full['stored']:.3f}, "
      f"end-to-end {incr['duration'] / max(full['duration'], 1):.3f}")
PY
