#!/usr/bin/env bash
# Drives a Weir cluster with Flink's own command line (the apache-flink package from
# PyPI, installed into $HOME/.cache/weir-anchors/flink-venv when missing; needs java):
# `flink list`, `flink savepoint`, `flink stop --drain`, `flink cancel` against Weir's
# REST API, each checked for Flink's success line. Prints one line per command.
set -euo pipefail
source "$(dirname "$0")/bench-common.sh"
venv="${FLINK_VENV:-$HOME/.cache/weir-anchors/flink-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pyflink' 2>/dev/null; then
  python3 -m venv "$venv" && "$venv/bin/pip" install -q "apache-flink>=2.0"
fi
export FLINK_HOME
FLINK_HOME=$("$venv/bin/python" -c 'import pyflink, os; print(os.path.dirname(pyflink.__file__))')
flink="$FLINK_HOME/bin/flink"
rest=$rest_port; rpc=$rpc_port
"$weir" jobmanager -D rest.port=$rest -D jobmanager.rpc.port=$rpc -D cluster.dir="$work/c" >"$work/jm.log" 2>&1 & pids+=($!)
"$weir" taskmanager -D jobmanager.rpc.port=$rpc -D taskmanager.numberOfTaskSlots=4 -D cluster.dir="$work/c" >"$work/tm.log" 2>&1 & pids+=($!)
export FLINK_CONF_DIR="$work/conf"; mkdir -p "$FLINK_CONF_DIR"
printf 'rest:\n  address: 127.0.0.1\n  port: %s\n' "$rest" >"$FLINK_CONF_DIR/config.yaml"
for _ in $(seq 100); do curl -sf "127.0.0.1:$rest/overview" | grep -q '"slots-total":4' && break; sleep 0.1; done
submit() { "$weir" run -d -m "127.0.0.1:$rest" -p 2 keyed-sum --arg rate_per_sec=2000 --arg records=100000000 | awk '/JobID/{print $NF}'; }
check() { # name, expected text, command...
  local name=$1 expected=$2; shift 2
  local out; out=$("$@" 2>&1 || true)
  if grep -qF "$expected" <<<"$out"; then echo "ok   $name: $(grep -F "$expected" <<<"$out" | head -1)";
  else echo "FAIL $name"; echo "$out" | grep -v '^\s*at ' | tail -20; exit 1; fi
}
a=$(submit); b=$(submit); sleep 1
check "flink list" "$a" "$flink" list
check "flink savepoint" "Savepoint completed. Path: file:$work/sp/savepoint-" "$flink" savepoint "$a" "$work/sp"
check "flink stop --drain" "Savepoint completed. Path: file:$work/sp/savepoint-" "$flink" stop --drain --savepointPath "$work/sp" "$a"
check "flink cancel" "Cancelled job $b." "$flink" cancel "$b"
curl -s "127.0.0.1:$rest/jobs/overview" | python3 -c 'import json,sys; print("jobs:", {j["jid"][:8]: j["state"] for j in json.load(sys.stdin)["jobs"]})'
