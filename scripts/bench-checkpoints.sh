#!/usr/bin/env bash
# Checkpoint figures of Weir, side by side in one run:
#  1. throughput of orders-per-minute (ORDERS orders, 10K users) at p=1 and p=2 without
#     checkpoints and with a checkpoint every second (exactly-once), alternating runs;
#  2. a keyed job with KEYS keys (keyed-sum, checkpoints every second to a directory):
#     the latest completed checkpoint's state size, end-to-end duration and the
#     largest synchronous (task-thread pause) and asynchronous parts over its subtasks.
# usage: bench-checkpoints.sh [runs=3] [orders=5000000] [keys=1000000]
set -euo pipefail
runs="${1:-3}"; orders="${2:-5000000}"; keys="${3:-1000000}"
source "$(dirname "$0")/bench-common.sh"
rate() { # p, extra -D...
  local p=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$weir" local orders-per-minute -p "$p" --arg orders="$orders" --arg users=10000 --arg output=discard "$@" >/dev/null
  t1=$(date +%s.%N)
  python3 -c "print(f'{$orders / ($t1 - $t0) / 1e6:.2f}')"
}
for p in 1 2; do
  plain=(); ckpt=()
  for _ in $(seq "$runs"); do
    plain+=("$(rate "$p")")
    ckpt+=("$(rate "$p" -D execution.checkpointing.interval=1s -D execution.checkpointing.dir="$work/chk")")
  done
  python3 - "$p" "${plain[*]}" "${ckpt[*]}" <<'PY'
import statistics, sys
p, plain, ckpt = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
a, b = statistics.median(plain), statistics.median(ckpt)
print(f"orders-per-minute p={p}: no checkpoints {plain} M/s (median {a:.2f}); checkpoint every 1 s {ckpt} M/s (median {b:.2f}); with/without {b / a:.3f}")
PY
done

"$weir" jobmanager -D rest.port=$rest_port -D jobmanager.rpc.port=$rpc_port -D cluster.dir="$work/c" \
  -D execution.checkpointing.interval=1s -D execution.checkpointing.dir="$work/chk2" >"$work/jm.log" 2>&1 & pids+=($!)
WEIR_LOG=info,weir_taskmanager::checkpointing=debug "$weir" taskmanager -D jobmanager.rpc.port=$rpc_port \
  -D taskmanager.numberOfTaskSlots=1 -D cluster.dir="$work/c" >"$work/tm.log" 2>&1 & pids+=($!)
WEIR_SCRIPTS="$PWD/scripts" python3 - "$rest_port" "$keys" "$work/tm.log" <<'PY'
import os, re, sys
sys.path.insert(0, os.environ["WEIR_SCRIPTS"])
from weir_rest import Rest, wait
rest, keys, tm_log = Rest(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
get = rest.get
rest.wait_slots(1)
# Enough records that (nearly) every key is in state, then a slow trickle so the job
# keeps running while checkpoints are taken.
jid = rest.submit({"program": "keyed-sum", "parallelism": 1,
                   "args": {"keys": str(keys), "records": str(keys * 20), "rate_per_sec": str(keys * 4)}})
wait(lambda: get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 4)
latest = get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]
# The TaskManager logs each acknowledgement with its synchronous part (the task
# thread's pause) and asynchronous part (writing the state file).
line = re.compile(r"checkpoint (\d+) of attempt \S+ \(job \S+\): (\d+) bytes, sync (\d+) ms, async (\d+) ms")
acks = [m for m in map(line.search, open(tm_log, errors="replace")) if m and int(m.group(1)) == latest["id"]]
sync = max((int(m.group(3)) for m in acks), default=-1)
asyn = max((int(m.group(4)) for m in acks), default=-1)
print(f"keyed-sum, {keys} keys: checkpoint {latest['id']}: state {latest['state_size'] / 1e6:.1f} MB, "
      f"end-to-end {latest['end_to_end_duration']} ms, largest sync part (task pause) {sync} ms, "
      f"largest async part {asyn} ms")
PY
