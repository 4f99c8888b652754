#!/usr/bin/env bash
# The cost of default internal TLS (issue 26): `weir bench-cluster` throughput and
# start-up, and `weir start-cluster --taskmanagers 2` until both TaskManagers
# registered (its "Cluster ready in N ms", certificates included), each with internal
# mutual TLS on (the default: a cluster CA made for the run) and off
# (`-D security.ssl.internal.enabled=false`), alternating on and off so both see the
# same machine; the median of each.
# usage: bench-internal-tls.sh [rounds=3] [records=20000000]
set -euo pipefail
rounds="${1:-3}"; records="${2:-20000000}"
source "$(dirname "$0")/bench-common.sh"
for _ in $(seq "$rounds"); do
  for tls in on off; do
    opt=(); [ "$tls" = off ] && opt=(-D security.ssl.internal.enabled=false)
    out=$("$weir" bench-cluster --records "$records" "${opt[@]}")
    startup=$(sed -n 's/^cluster start-up.*: \([0-9]*\) ms$/\1/p' <<<"$out")
    rate=$(sed -n 's/.*cluster (2 TaskManagers, TCP) \([0-9.]*\) M records\/s.*/\1/p' <<<"$out")
    printf 'bench-cluster\t%s\tstartup_ms\t%s\n' "$tls" "$startup" >>"$work/runs.tsv"
    printf 'bench-cluster\t%s\tM_records_per_s\t%s\n' "$tls" "$rate" >>"$work/runs.tsv"
    dir="$work/cluster-$tls"
    args=(-D "cluster.dir=$dir" -D jobmanager.rpc.port=0 -D rest.port=0 "${opt[@]}")
    out=$("$weir" start-cluster --taskmanagers 2 "${args[@]}")
    "$weir" stop-cluster "${args[@]}" >/dev/null
    ready=$(sed -n 's/^Cluster ready in \([0-9]*\) ms.*/\1/p' <<<"$out")
    printf 'start-cluster\t%s\tready_ms\t%s\n' "$tls" "$ready" >>"$work/runs.tsv"
  done
done
python3 - "$work/runs.tsv" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    command, tls, figure, value = line.split()
    runs[(command, figure, tls)].append(float(value))
for command, figure in sorted({(c, f) for c, f, _ in runs}):
    on, off = runs[(command, figure, "on")], runs[(command, figure, "off")]
    print(f"{command} {figure}: TLS on {on} median {statistics.median(on):g}; "
          f"off {off} median {statistics.median(off):g}; on/off {statistics.median(on) / statistics.median(off):.3f}")
PY
