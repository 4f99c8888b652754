#!/usr/bin/env bash
# The JobManager's memory for one submitted job, by parallelism (issue 26): for each P a
# fresh JobManager with no TaskManager (start-cluster --taskmanagers 0) takes
# `keyed-sum` at parallelism P (a source and a keyed sum joined by an all-to-all edge:
# 2P subtasks, P*P channels), and once the job is RUNNING (its ExecutionGraph built,
# its subtasks waiting for slots) the JobManager's peak RSS (VmHWM) is read. The
# submission limits are raised to let every P in. Prints one line per P and the
# JobManager's RSS with no job, for the difference.
#
# usage: scripts/bench-submission-memory.sh [P ...]    (default 128 1024 8192 32768)
# WEIR_BIN picks the binary (default: the release build, built if missing);
# WEIR_MODE=BATCH submits the job in BATCH mode (every edge blocking, one pipelined
# region per subtask; adaptive parallelism off so that P holds).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weir-target}"
weir="${WEIR_BIN:-}"
if [ -z "$weir" ]; then
  cargo build -q --release -p weir --bin weir
  weir="$CARGO_TARGET_DIR/release/weir"
fi
sizes=("$@")
config=""
if [ "${WEIR_MODE:-STREAMING}" = BATCH ]; then
  config=',"config":{"execution.runtime-mode":"BATCH","execution.batch.adaptive.auto-parallelism.enabled":"false"}'
fi
if [ ${#sizes[@]} -eq 0 ]; then sizes=(128 1024 8192 32768); fi

vm_hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

# Starts a JobManager in $dir; sets rest and pid.
start() {
  dir="$(mktemp -d)"
  "$weir" start-cluster --taskmanagers 0 -D "cluster.dir=$dir" -D rest.port=0 \
    -D jobmanager.rpc.port=0 -D security.ssl.internal.enabled=false \
    -D jobmanager.submission.max-subtasks=1000000 \
    -D jobmanager.submission.max-exchange-channels=2000000000 >/dev/null
  rest="127.0.0.1:$(sed -n 's/^rest_port=//p' "$dir/jobmanager.address")"
  pid="$(cat "$dir/jobmanager.pid")"
}

stop() {
  "$weir" stop-cluster -D "cluster.dir=$dir" >/dev/null
  rm -rf "$dir"
}

start
idle_kib=$(vm_hwm_kib "$pid")
stop
echo "JobManager without a job: peak RSS $((idle_kib / 1024)) MiB"
printf '%8s %10s %14s %14s %16s %14s\n' P subtasks channels "to RUNNING ms" "peak RSS MiB" "bytes/subtask"
for p in "${sizes[@]}"; do
  start
  t0=$(date +%s%N)
  answer=$(curl -s -X POST -H 'Content-Type: application/json' \
    -d "{\"program\":\"keyed-sum\",\"parallelism\":$p$config}" "http://$rest/jobs" || true)
  jid=$(sed -nE 's/.*"jobid":"([0-9a-f]+)".*/\1/p' <<<"$answer")
  if [ -z "$jid" ]; then
    stop
    echo "P=$p: the submission was not accepted: ${answer:-no answer}" >&2
    exit 1
  fi
  state=""
  # Bounded: a graph that takes longer than 10 minutes to build is a finding itself.
  for _ in $(seq 1 6000); do
    state=$(curl -s "http://$rest/jobs/$jid" | sed -nE 's/.*"state":"([A-Z]+)".*/\1/p' || true)
    if [ "$state" = RUNNING ] || [ "$state" = FAILED ]; then break; fi
    sleep 0.1
  done
  t1=$(date +%s%N)
  kib=$(vm_hwm_kib "$pid")
  stop
  if [ "$state" != RUNNING ]; then
    echo "P=$p: the job is $state, not RUNNING" >&2
    exit 1
  fi
  subtasks=$((2 * p))
  printf '%8d %10d %14d %14d %16d %14d\n' "$p" "$subtasks" $((p * p)) $(((t1 - t0) / 1000000)) \
    $((kib / 1024)) $(((kib - idle_kib) * 1024 / subtasks))
done
