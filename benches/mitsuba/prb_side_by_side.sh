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
# Time per iteration: Mitsuba's median over iterations 2..ITERS; drsc's is
# (time of ITERS iterations - time of 1 iteration) / (ITERS - 1), which leaves out loading and
# compiling. Peak memory: the maximum resident set size of each process (GNU time for drsc).
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

run_drsc() { # iterations -> prints "seconds peak_kib"
  local log=$out/prb_drsc_time.txt
  /usr/bin/time -f "%e %M" -o "$log" "$DRSC" optimize "$scene" -D "resx=$res" -D "resy=$res" -D max_depth=8 \
    --ref "$out/prb_target.exr" --param red.reflectance.value --iters "$1" --lr 0.05 --clamp 0,1 \
    --spp "$spp" -q -o "$out/prb_drsc_$1.json" ${DRSC_ARGS:-}
  cat "$log"
}
read -r one _ < <(run_drsc 1)
read -r all peak < <(run_drsc "$iters")
per=$(echo "($all - $one) / ($iters - 1)" | bc -l)
printf "drsc prb: %.3f s/iteration, peak %d MiB, red %s\n" "$per" "$((peak / 1024))" \
  "$(python3 -c "import json; print(json.load(open('$out/prb_drsc_$iters.json'))['params']['red.reflectance.value'])")"
