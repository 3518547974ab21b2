#!/usr/bin/env bash
# Thread-scaling benchmark: the Cornell box (lang-examples/cornell_box.xml, path max_depth 8)
# rendered by Mitsuba 3 (llvm_ad_rgb, Dr.Jit limited with dr.set_thread_count) and by
# `drsc render --threads` at each thread count, in one run. It shows whether the gap between the
# two renderers is per core or comes from how they use more cores.
#
#   benches/mitsuba/thread_scaling.sh            # 256x256, 64 spp, threads 1 2 4 ... nproc
#
# Environment: THREADS (list, default powers of two up to nproc, and nproc), RES (256), SPP (64),
# REPEAT (renders per thread count and renderer, default 3; the best counts), DRSC (a drsc binary
# instead of building the release one), DRSC_ARGS (more arguments of `drsc render`, e.g.
# `--backend llvm --lanes 16` with a DRSC built with `--features llvm`), DRS_PEER_TOOLS (Mitsuba
# tools, default ../shared/tools), MITSUBA_PY (a Python that imports mitsuba; when set, the peer
# tools are not used).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${DRS_PEER_TOOLS:-$root/../shared/tools}
scene=$root/lang-examples/cornell_box.xml
res=${RES:-256}
spp=${SPP:-64}
repeat=${REPEAT:-3}
cores=$(nproc)
default_threads() {
  local t=1
  while [ "$t" -lt "$cores" ]; do printf '%s ' "$t"; t=$((t * 2)); done
  echo "$cores"
}
read -r -a threads <<<"${THREADS:-$(default_threads)}"
fail() { echo "thread_scaling: $*" >&2; exit 1; }
[ "$repeat" -ge 1 ] 2>/dev/null || fail "REPEAT must be a positive integer (got '$repeat')"

cd "$root"
if [ -z "${DRSC:-}" ]; then
  cargo build --release --quiet -p drsc || fail "cargo build --release -p drsc failed"
  DRSC=$root/target/release/drsc
fi
if [ -z "${MITSUBA_PY:-}" ]; then
  "$tools/mitsuba-peer.sh" >/dev/null || fail "installing Mitsuba 3 with $tools/mitsuba-peer.sh failed"
  source <("$tools/mitsuba-peer.sh" --env)
fi
out=$root/target/side_by_side
mkdir -p "$out"

echo "machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "drs commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "scene: lang-examples/cornell_box.xml, ${res}x${res}, $spp spp, max_depth 8, best of $repeat${DRSC_ARGS:+, drsc $DRSC_ARGS}"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# drsc first (its kernel cache warm after the first render), then Mitsuba in one process.
"$DRSC" render "$scene" -o "$out/scaling_drs.exr" --spp 1 --threads 1 -D "resx=$res" -D "resy=$res" \
  -D max_depth=8 --quiet ${DRSC_ARGS:-} >/dev/null || fail "drsc render failed"
for t in "${threads[@]}"; do
  for run in $(seq "$repeat"); do
    line=$("$DRSC" render "$scene" -o "$out/scaling_drs.exr" --spp "$spp" --seed "$((run - 1))" --threads "$t" \
      -D "resx=$res" -D "resy=$res" -D max_depth=8 --quiet ${DRSC_ARGS:-} | tail -n 1)
    [[ $line == "drsc render: "* ]] || fail "drsc render did not end with its timing line: $line"
    echo "drsc threads $t render: $(cut -d' ' -f3 <<<"$line") s" | tee -a "$log"
  done
done
"$MITSUBA_PY" "$root/benches/mitsuba/mitsuba_threads.py" "$scene" "$res" "$spp" "$repeat" "${threads[@]}" |
  tee -a "$log"

echo "== result (best of $repeat; speed-up: over the same renderer at the first thread count)"
awk '$2 == "threads" && $4 == "render:" {
       name = $1; t = $3; s = $5
       if (!((name, t) in best) || s < best[name, t]) best[name, t] = s
       if (!(t in seen)) { seen[t] = 1; order[n++] = t }
     }
     END {
       printf "%8s %12s %12s %10s %12s %12s\n", "threads", "mitsuba s", "drs s", "drs/mits", "mits speedup", "drs speedup"
       for (i = 0; i < n; i++) {
         t = order[i]; m = best["mitsuba", t]; d = best["drsc", t]
         printf "%8d %12.4f %12.4f %10.2f %12.2f %12.2f\n", t, m, d, d / m, best["mitsuba", order[0]] / m, best["drsc", order[0]] / d
       }
     }' "$log"
