#!/usr/bin/env bash
# Checkpoint duration under backpressure, aligned vs unaligned, on one job: keyed-sum
# at p=2 with a slow Sum (work_us CPU per record) behind an unthrottled generator, on
# one TaskManager (4 slots, 4 KiB segments), checkpoint every 1 s, 10 ms buffer timeout.
# After a 3 s warm-up, prints over the next N completed checkpoints the average and
# maximum end-to-end duration and persisted in-flight data, and the generator's
# back-pressure ratio.
# usage: bench-unaligned.sh [aligned|unaligned|timeout] [work_us] [checkpoints]
#   (default: unaligned 20 10; "timeout" = unaligned with a 100 ms aligned-checkpoint timeout)
set -euo pipefail
mode="${1:-unaligned}"
work_us="${2:-20}"
n="${3:-10}"
source "$(dirname "$0")/bench-common.sh"
common=(-D cluster.dir="$work/cluster" -D heartbeat.interval=500ms -D heartbeat.timeout=5s)
jm=("${common[@]}" -D rest.port=$rest_port -D jobmanager.rpc.port=$rpc_port
    -D execution.checkpointing.interval=1s -D execution.checkpointing.dir="$work/chk"
    -D execution.buffer-timeout.interval=10ms)
case "$mode" in
  aligned) ;;
  unaligned) jm+=(-D execution.checkpointing.unaligned.enabled=true) ;;
  timeout) jm+=(-D execution.checkpointing.unaligned.enabled=true
                -D execution.checkpointing.aligned-checkpoint-timeout=100ms) ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
tm=("${common[@]}" -D jobmanager.rpc.port=$rpc_port -D taskmanager.numberOfTaskSlots=4
    -D taskmanager.memory.segment-size=4kb)
"$weir" jobmanager "${jm[@]}" >"$work/jm.log" 2>&1 & pids+=($!)
"$weir" taskmanager "${tm[@]}" >"$work/tm.log" 2>&1 & pids+=($!)
WEIR_SCRIPTS="$PWD/scripts" python3 - "$rest_port" "$mode" "$work_us" "$n" <<'PY'
import os, sys, time
sys.path.insert(0, os.environ["WEIR_SCRIPTS"])
from weir_rest import Rest, wait
port, mode, work_us, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rest = Rest(port)
get = rest.get
rest.wait_slots(4)
jid = rest.submit({"program": "keyed-sum", "parallelism": 2,
                   "args": {"keys": "1000", "records": "1000000000000", "work_us": work_us}})
wait(lambda: get(f"/jobs/{jid}")["state"] == "RUNNING")
time.sleep(3)
start = get(f"/jobs/{jid}/checkpoints")["counts"]["completed"]
vid = get(f"/jobs/{jid}")["vertices"][0]["id"]
ratios = []
def sample_until_done():
    ratios.append(max(s["ratio"] for s in get(f"/jobs/{jid}/vertices/{vid}/backpressure")["subtasks"]))
    time.sleep(0.2)
    return get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= start + n
wait(sample_until_done, 300)
bp = sum(ratios) / max(len(ratios), 1)
hist = [h for h in get(f"/jobs/{jid}/checkpoints")["history"] if h["status"] == "COMPLETED"][:n]
d = [h["end_to_end_duration"] for h in hist]
p = [h["persisted_data"] for h in hist]
print(f"weir checkpoints ({mode}, work_us={work_us}, {len(d)} checkpoints, generator back-pressure avg {bp:.2f}): "
      f"end-to-end avg {sum(d)/len(d):.0f} ms max {max(d)} ms; persisted_data avg {sum(p)/len(p):.0f} B "
      f"max {max(p)} B; type {hist[0]['checkpoint_type']}")
PY
