#!/usr/bin/env bash
# Keyed state beside real Apache Flink 2.3, in the same run, one job after the other: a
# streaming GROUP BY over KEYS keys (COUNT, SUM; every key recurs every KEYS rows) from
# datagen into blackhole at p=1, on BACKEND (hashmap or rocksdb) for both. Weir runs
# `weir sql -f` (its wall time, start-up included); Flink a PyFlink mini-cluster
# (scripts/flink/keyed_state.py; its net job time, JVM and cluster start-up excluded;
# the venv of ../shared/bench/flink/run-bench.sh). Prints rows/s of both, the ratio and
# both peak RSS.
#
#   scripts/bench-state-vs-flink.sh [KEYS=1000000] [ROWS=10000000] [BACKEND=rocksdb] [REPEATS=1]
set -euo pipefail
KEYS=${1:-1000000}; ROWS=${2:-10000000}; BACKEND=${3:-rocksdb}; REPEATS=${4:-1}
source "$(dirname "$0")/bench-common.sh"
venv="${FLINK_VENV:-$HOME/.cache/weir-anchors/flink-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pyflink' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q apache-flink==2.3.0
fi
cat >"$work/q.sql" <<SQL
CREATE TEMPORARY TABLE orders (
  seq BIGINT,
  k AS MOD(seq * 7919, $KEYS),
  amount AS CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100
) WITH ('connector' = 'datagen', 'number-of-rows' = '$ROWS', 'rows-per-second' = '100000000000',
  'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', 'fields.seq.end' = '$ROWS');
CREATE TEMPORARY TABLE sink (k BIGINT, cnt BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');
SET 'table.dml-sync' = 'true';
INSERT INTO sink SELECT k, COUNT(*), SUM(amount) FROM orders GROUP BY k;
SQL
python3 - "$weir" "$work" "$venv/bin/python" "$(dirname "$0")/flink/keyed_state.py" "$KEYS" "$ROWS" "$BACKEND" "$REPEATS" <<'PY'
import json, os, statistics, subprocess, sys, time
weir, work, flink_py, flink_job, keys, rows, backend, repeats = sys.argv[1:]
keys, rows, repeats = int(keys), int(rows), int(repeats)
def weir_measured():
    args = [weir, "sql", "-f", f"{work}/q.sql", "-D", f"state.backend.type={backend}",
            "-D", f"state.backend.rocksdb.localdir={work}/weir-rocksdb", "-D", "parallelism.default=1"]
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.monotonic() - t0
    if status != 0:
        sys.exit(f"weir exited with {status}")
    return rows / elapsed, usage.ru_maxrss / 1024
def flink_measured():
    out = subprocess.run([flink_py, flink_job, "--rows", str(rows), "--keys", str(keys), "--backend", backend,
                          "--localdir", f"{work}/flink-rocksdb"], capture_output=True, text=True)
    line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
    if line is None:
        sys.exit(f"flink failed: {out.stderr[-2000:]}")
    r = json.loads(line[len("RESULT "):])
    return rows / (r["net_ms"] / 1000), r["peak_rss_mb"]
w, f = [], []
for i in range(repeats):
    w.append(weir_measured())
    f.append(flink_measured())
    print(f"run {i + 1}: weir {w[-1][0] / 1e6:.3f} M rows/s, peak RSS {w[-1][1]:.0f} MiB; "
          f"flink {f[-1][0] / 1e6:.3f} M rows/s, peak RSS {f[-1][1]:.0f} MiB", flush=True)
wr, fr = statistics.median(x for x, _ in w), statistics.median(x for x, _ in f)
print(f"GROUP BY over {keys} keys, {rows} rows, {backend}, p=1: weir {wr / 1e6:.3f} M rows/s (wall, start-up "
      f"included), flink {fr / 1e6:.3f} M rows/s (net); weir/flink {wr / fr:.2f}x; peak RSS weir "
      f"{max(m for _, m in w):.0f} MiB, flink {max(m for _, m in f):.0f} MiB")
PY
