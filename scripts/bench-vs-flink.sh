#!/usr/bin/env bash
# Weir beside real Apache Flink 2.3 on the same workloads, in the same run, one job after
# the other (../shared/bench/flink/ holds Flink's side; its first run sets up PyFlink).
#
#   scripts/bench-vs-flink.sh [ROWS] [REPEATS] [JOBS]
#
# ROWS orders (default 5000000), REPEATS runs of each side (default 2), JOBS a comma
# list of window,window_tvf,batch (default all three). Per job it prints every run and a
# line with the medians: Weir's wall time of the whole process (start, planning and
# shutdown included) and its user CPU, Flink's net job time (its JVM and cluster start
# excluded), rows/s of both and the ratio, and both peak RSS. The batch job reads the
# 5M-row CSV Flink's harness generates (`~/.cache/weir-bench-data/orders_5m`), so it
# always runs 5M rows. Flink's batch plan (a hash window aggregate over ~5M groups)
# fails with "Hash window aggregate map OOM" at its default managed memory, so Flink's
# batch side runs from a copy of the harness that sets `taskmanager.memory.managed.size`
# to 1g (FLINK_BATCH_MANAGED, as its verify mode does). Before every run of either side
# the batch job's CSV is read once into the page cache, so that both compute from memory
# (a cold 218 MB file costs ~0.6-0.9 s of disk reads here, and which side found it cold
# depended on what ran before it).
set -euo pipefail
ROWS=${1:-5000000}
REPEATS=${2:-2}
JOBS=${3:-window,window_tvf,batch}
source "$(dirname "$0")/bench-common.sh"
flink_dir=$(cd ../shared/bench/flink 2>/dev/null && pwd || true)
[ -n "$flink_dir" ] && [ -x "$flink_dir/run-bench.sh" ] || { echo "no ../shared/bench/flink/run-bench.sh" >&2; exit 1; }
data="$HOME/.cache/weir-bench-data/orders_5m"

# The harness copy for Flink's batch side, with its managed memory raised.
flink_batch_dir() {
  local dir="$work/flink-batch"
  if [ ! -d "$dir" ]; then
    cp -r "$flink_dir" "$dir"
    python3 - "$dir/jobs/bench.py" "${FLINK_BATCH_MANAGED:-1g}" <<'PY'
import sys
path, size = sys.argv[1], sys.argv[2]
text = open(path).read()
anchor = 'conf.set("table.local-time-zone", "UTC")\n'
if anchor not in text:
    sys.exit(f"{path}: cannot find where to set the managed memory")
text = text.replace(anchor, anchor + f'if batch:\n    conf.set("taskmanager.memory.managed.size", "{size}")\n', 1)
open(path, "w").write(text)
PY
  fi
  echo "$dir"
}

tvf_sql() {
  cat <<EOF
CREATE TEMPORARY TABLE orders (
  seq BIGINT,
  order_id AS seq,
  user_id AS CAST(MOD(seq * 7919, 10000) AS INT),
  amount AS CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100,
  ts AS CAST(TO_TIMESTAMP_LTZ(1700000000000 + seq * 10, 3) AS TIMESTAMP(3)),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'number-of-rows' = '$1', 'rows-per-second' = '100000000000',
  'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', 'fields.seq.end' = '$1');
CREATE TEMPORARY TABLE sink (wstart TIMESTAMP(3), user_id INT, cnt BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');
SET 'table.dml-sync' = 'true';
INSERT INTO sink SELECT window_start AS wstart, user_id, COUNT(*) AS cnt, SUM(amount) AS total
FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, user_id;
EOF
}

batch_sql() {
  cat <<EOF
SET 'execution.runtime-mode' = 'batch';
CREATE TEMPORARY TABLE orders (order_id BIGINT, user_id INT, amount DOUBLE, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '$data', 'format' = 'csv');
CREATE TEMPORARY TABLE sink (wstart TIMESTAMP(3), user_id INT, cnt BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');
SET 'table.dml-sync' = 'true';
INSERT INTO sink SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE) AS wstart, user_id, COUNT(*) AS cnt, SUM(amount) AS total
FROM orders GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE), user_id;
EOF
}

# One Weir run: prints "wall_s user_s rss_mb".
weir_run() {
  /usr/bin/time -f "%e %U %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    echo "weir failed: $*" >&2; tail -20 "$work/err" >&2; exit 1; }
  awk '{printf "%s %s %.0f\n", $1, $2, $3 / 1024}' "$work/time"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for job in ${JOBS//,/ }; do
  rows=$ROWS
  case $job in
    window) cmd=("$weir" local orders-per-minute -p 1 --arg "orders=$ROWS" --arg users=10000 --arg output=discard) ;;
    window_tvf) tvf_sql "$ROWS" >"$work/tvf.sql"; cmd=("$weir" sql -f "$work/tvf.sql") ;;
    batch)
      rows=5000000
      if [ ! -s "$data/orders.csv" ]; then
        (cd "$flink_dir" && JOB=batch ./run-bench.sh 5000000 1 1 >/dev/null)
      fi
      batch_sql >"$work/batch.sql"; cmd=("$weir" sql -f "$work/batch.sql") ;;
    *) echo "unknown job $job (window, window_tvf, batch)" >&2; exit 1 ;;
  esac
  : >"$work/weir.runs"; : >"$work/flink.runs"
  warm() { [ "$job" != batch ] || cat "$data/orders.csv" >/dev/null; }
  for i in $(seq 1 "$REPEATS"); do
    warm
    r=$(weir_run "${cmd[@]}"); echo "$r" >>"$work/weir.runs"
    echo "weir  $job run $i: wall_s user_s rss_mb = $r"
    fdir=$flink_dir; [ "$job" = batch ] && fdir=$(flink_batch_dir)
    warm
    (cd "$fdir" && JOB=$job TS_STEP_MS=10 ./run-bench.sh "$rows" 1 1) | grep '^run=' | tee -a "$work/flink.runs" | sed "s/^/flink $job /"
  done
  w_wall=$(cut -d' ' -f1 "$work/weir.runs" | median)
  w_user=$(cut -d' ' -f2 "$work/weir.runs" | median)
  w_rss=$(cut -d' ' -f3 "$work/weir.runs" | median)
  f_net=$(grep -o 'net_s=[0-9.]*' "$work/flink.runs" | cut -d= -f2 | median)
  f_rss=$(grep -o 'peak_rss_mb=[0-9.]*' "$work/flink.runs" | cut -d= -f2 | median)
  awk -v j="$job" -v r="$rows" -v ww="$w_wall" -v wu="$w_user" -v wr="$w_rss" -v fn="$f_net" -v fr="$f_rss" 'BEGIN {
    printf "median %s rows=%d: weir wall_s=%.2f user_s=%.2f rows_per_s=%.0f rss_mb=%d | flink net_s=%.2f rows_per_s=%.0f rss_mb=%d | ratio %.1fx\n",
      j, r, ww, wu, r / ww, wr, fn, r / fn, fr, fn / ww }'
done
