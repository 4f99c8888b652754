#!/usr/bin/env python3
"""Flink's side of scripts/bench-state-vs-flink.sh: a streaming GROUP BY over KEYS keys
(`k = MOD(seq * 7919, KEYS)`, so every key recurs every KEYS rows) with COUNT(*) and
SUM(amount) into blackhole, on the state backend given (`hashmap` or `rocksdb`), in a
PyFlink local mini-cluster. Prints one line `RESULT {json}` with Flink's net job
runtime and the JVM's peak RSS. Python only submits the job.
"""
import argparse
import json
import os

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, required=True)
p.add_argument("--keys", type=int, required=True)
p.add_argument("--backend", choices=["hashmap", "rocksdb"], required=True)
p.add_argument("--localdir", required=True)
args = p.parse_args()

from pyflink.table import EnvironmentSettings, TableEnvironment  # noqa: E402

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
conf = t_env.get_config()
conf.set("parallelism.default", "1")
conf.set("state.backend.type", args.backend)
conf.set("state.backend.rocksdb.localdir", args.localdir)
t_env.execute_sql(f"""
    CREATE TEMPORARY TABLE orders (
      seq    BIGINT,
      k      AS MOD(seq * 7919, {args.keys}),
      amount AS CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100
    ) WITH (
      'connector' = 'datagen', 'number-of-rows' = '{args.rows}',
      'rows-per-second' = '100000000000', 'fields.seq.kind' = 'sequence',
      'fields.seq.start' = '1', 'fields.seq.end' = '{args.rows}'
    )""")
t_env.execute_sql("CREATE TEMPORARY TABLE sink (k BIGINT, cnt BIGINT, total DOUBLE) WITH ('connector' = 'blackhole')")
result = t_env.execute_sql("INSERT INTO sink SELECT k, COUNT(*), SUM(amount) FROM orders GROUP BY k")
client = result.get_job_client()
net_ms = client.get_job_execution_result().result().get_net_runtime()


def peak_rss_mb():
    best = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            if ppid != os.getpid() or b"java" not in open(f"/proc/{d}/cmdline", "rb").read():
                continue
            for line in open(f"/proc/{d}/status"):
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]) // 1024)
        except (OSError, ValueError):
            pass
    return best


print("RESULT " + json.dumps({"net_ms": net_ms, "peak_rss_mb": peak_rss_mb()}), flush=True)
