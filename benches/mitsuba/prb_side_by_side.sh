#!/usr/bin/env bash
# Side-by-side gradient benchmark: the red-wall optimisation of lang-examples/inverse (Cornell
# box, path replay backpropagation, max_depth 8, L2 loss, Adam) with Mitsuba 3's `prb`
# (llvm_ad_rgb) and `drsc optimize` on this machine in one run.
#
#   benches/mitsuba/prb_side_by_side.sh      # 256x256, 16 spp per pass, 12 iterations
#
# Environment: RES (default 256), SPP (16), ITERS (12, at least 3), DRSC (a drsc binary instead
# of building the release one), DRSC_ARGS (more arguments of `drsc optimize`, e.g. `--backend
# llvm --lanes 16`), DRS_PEER_TOOLS (Mitsuba tools, default ../shared/tools).
# Time per iteration: the median over iterations 2..ITERS for both (drsc reports each
# iteration's seconds in its JSON; loading and compiling come before the first). Peak memory:
# the maximum resident set size of each process (GNU time for drsc).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${DRS_PEER_TOOLS:-$root/../shared/tools}
scene=$root/lang-examples/cornell_box.xml
res=${RES:-256}
spp=${SPP:-16}
iters=${ITERS:-12}
out=$root/target/side_by_side
mkdir -p "$out"
[ "$iters" -ge 3 ] 2>/dev/null || { echo "prb_side_by_side: ITERS must be at least 3" >&2; exit 1; }

if [ -z "${DRSC:-}" ]; then
  cargo build --release -p drsc --manifest-path "$root/Cargo.toml" >&2
  DRSC=$root/target/release/drsc
fi
"$tools/mitsuba-peer.sh" >/dev/null
source <("$tools/mitsuba-peer.sh" --env)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
"$MITSUBA_PY" "$root/benches/mitsuba/prb_iterations.py" "$scene" "$out/prb_target.exr" "$iters" "$res" "$spp"

log=$out/prb_drsc_time.txt
/usr/bin/time -f "%M" -o "$log" "$DRSC" optimize "$scene" -D "resx=$res" -D "resy=$res" -D max_depth=8 \
  --ref "$out/prb_target.exr" --param red.reflectance.value --iters "$iters" --lr 0.05 --clamp 0,1 \
  --spp "$spp" -q -o "$out/prb_drsc.json" ${DRSC_ARGS:-}
python3 - "$out/prb_drsc.json" "$(cat "$log")" <<'PY'
import json, statistics, sys
result = json.load(open(sys.argv[1]))
times, peak_kib = result["seconds"], int(sys.argv[2])
print(f"drsc prb: first {times[0]:.3f} s, median {statistics.median(times[1:]):.3f} s/iteration "
      f"(mean {statistics.mean(times[1:]):.3f}), peak {peak_kib // 1024} MiB, "
      f"red {result['params']['red.reflectance.value']}")
PY
