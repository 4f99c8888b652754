#!/usr/bin/env bash
# Recovery time of Weir after a TaskManager SIGKILL, the same scenario as the Flink
# anchor ../shared/bench/flink/recovery/run-recovery.sh: a stateful keyed job
# (keyed-sum: generator at 50K rows/s -> sum per key -> sink, p=1, checkpoint every 1 s)
# on one of two TaskManagers (one slot each, the second a ready spare), heartbeat
# interval 500 ms / timeout 3 s. Prints, from the kill: when the JobManager noted the
# failure (/exceptions), when it restored the checkpoint (/checkpoints
# latest.restored.restore_timestamp), and when every task ran again with its restored
# state (RUNNING is reported after the restore), plus the restored state's size.
# usage: bench-recovery.sh [fixed-delay-0|exponential-delay] [keys] [rows/s]
#        (default: exponential-delay, 10000 keys, 50000 rows/s; with a million keys use a
#        higher rate, e.g. 1000000, so that the state holds nearly every key)
set -euo pipefail
strategy="${1:-exponential-delay}"
keys="${2:-10000}"
rate="${3:-50000}"
source "$(dirname "$0")/bench-common.sh"
common=(-D heartbeat.interval=500ms -D heartbeat.timeout=3s -D cluster.dir="$work/cluster")
jm=("${common[@]}" -D rest.port=$rest_port -D jobmanager.rpc.port=$rpc_port
    -D execution.checkpointing.interval=1s -D execution.checkpointing.dir="$work/chk")
if [ "$strategy" = fixed-delay-0 ]; then
  jm+=(-D restart-strategy.type=fixed-delay -D restart-strategy.fixed-delay.attempts=10 -D restart-strategy.fixed-delay.delay=0s)
fi
tm=("${common[@]}" -D jobmanager.rpc.port=$rpc_port -D taskmanager.numberOfTaskSlots=1)
"$weir" jobmanager "${jm[@]}" >"$work/jm.log" 2>&1 & pids+=($!)
"$weir" taskmanager "${tm[@]}" >"$work/tm1.log" 2>&1 & victim=$!; pids+=($victim)
WEIR_SCRIPTS="$PWD/scripts" python3 - "$weir" "$rest_port" "$keys" "$victim" "$strategy" "$rate" "${tm[@]}" <<'PY'
import os, signal, subprocess, sys, time
sys.path.insert(0, os.environ["WEIR_SCRIPTS"])
from weir_rest import Rest, wait
weir, port, keys, victim, strategy, rate, tm_args = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7:]
rest = Rest(port)
get = rest.get
rest.wait_slots(1)
jid = rest.submit({"program": "keyed-sum", "parallelism": 1,
                   "args": {"keys": keys, "records": "1000000000000", "rate_per_sec": rate}})
def all_running():
    j = get(f"/jobs/{jid}")
    return j["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in j["vertices"])
wait(all_running)
wait(lambda: get(f"/jobs/{jid}/checkpoints")["counts"]["completed"] >= 3, 120)
spare = subprocess.Popen([weir, "taskmanager", *tm_args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
rest.wait_slots(2)
time.sleep(2)
size = get(f"/jobs/{jid}/checkpoints")["latest"]["completed"]["state_size"]
t0 = time.time()
os.kill(victim, signal.SIGKILL)
wait(lambda: get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"])
running = wait(lambda: all_running() and time.time())
fail_ts = get(f"/jobs/{jid}/exceptions")["exceptionHistory"]["entries"][0]["timestamp"] / 1000
rest_ts = get(f"/jobs/{jid}/checkpoints")["latest"]["restored"]["restore_timestamp"] / 1000
print(f"weir recovery ({strategy}, {keys} keys, restored state {size} bytes): failure noted +{fail_ts - t0:.3f} s; "
      f"state restored +{rest_ts - t0:.3f} s; all tasks running with restored state +{running - t0:.3f} s")
spare.kill()
PY
