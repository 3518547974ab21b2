#!/usr/bin/env bash
# The side-by-side benchmarks on a machine without network access, with Mitsuba from an
# archive made by offline_bundle.sh: the Cornell box render at one thread and at all cores
# (thread_scaling.sh), an A/B of the drsc builds when there are several (ab_compare.sh), and
# the path replay optimisation of prb_side_by_side.sh, time per iteration and peak memory.
#
#   benches/mitsuba/offline_run.sh ARCHIVE DRSC [DRSC ...]
#
# The first build runs side by side with Mitsuba. Path replay per iteration is (time of ITERS
# iterations - time of 1) / (ITERS - 1), and its peak memory the maximum resident set of the
# ITERS run (read with wait4: the lent machines have no GNU time). drsc finds its stdlib through
# the path it was built in, so DRS_STDLIB defaults to this checkout's stdlib/. Environment:
# MI_DIR (where the archive is unpacked, default /tmp/mi), ITERS (12), SPP (the render's samples
# per pixel, default 64; path replay takes 16 per pass), PRB_ROUNDS (path replay runs of each
# build, in alternating order, default 2).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
archive=${1:?usage: benches/mitsuba/offline_run.sh ARCHIVE DRSC [DRSC ...]}
shift
[ $# -ge 1 ] || { echo "offline_run: name at least one drsc build" >&2; exit 1; }
mi=${MI_DIR:-/tmp/mi}
iters=${ITERS:-12}
export DRS_STDLIB=${DRS_STDLIB:-$root/stdlib}

stamp=$(stat -c '%s %Y' "$archive")
if [ "$(cat "$mi/.unpacked" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$mi" && mkdir -p "$mi" && tar -C "$mi" -xJf "$archive" && echo "$stamp" >"$mi/.unpacked"
fi
export PYTHONPATH=$mi/site LD_LIBRARY_PATH=$mi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export DRJIT_LIBLLVM_PATH=$mi/lib/libLLVM.so.19.1 HOME=$mi/home
mkdir -p "$HOME"
python3 -c 'import mitsuba as mi; mi.set_variant("llvm_ad_rgb"); print("mitsuba", mi.__version__, "llvm_ad_rgb ok")'

echo "== render side by side: $1"
THREADS="1 $(nproc)" REPEAT=3 DRSC=$1 MITSUBA_PY=python3 "$root/benches/mitsuba/thread_scaling.sh"
if [ $# -ge 2 ]; then
  echo "== A/B, $(nproc) threads"
  ROUNDS=8 THREADS=$(nproc) SPP=${SPP:-64} "$root/benches/ab_compare.sh" "$@"
  echo "== A/B, 1 thread"
  ROUNDS=4 THREADS=1 SPP=16 "$root/benches/ab_compare.sh" "$@"
fi

echo "== path replay, 256x256, 16 spp per pass, $iters iterations, $(nproc) threads"
out=$root/target/side_by_side
mkdir -p "$out"
python3 "$root/benches/mitsuba/prb_iterations.py" "$root/lang-examples/cornell_box.xml" "$out/prb_target.exr" \
  "$iters" 256 16
# Rounds in alternating order: the lent machines drift, so a build that always runs first can
# look faster or slower than it is.
builds=("$@")
for round in $(seq "${PRB_ROUNDS:-2}"); do
  order=("${builds[@]}")
  if [ $((round % 2)) = 0 ]; then
    for i in "${!builds[@]}"; do order[i]=${builds[$((${#builds[@]} - 1 - i))]}; done
  fi
  for drsc in "${order[@]}"; do
    python3 - "$drsc" "$iters" "$root/lang-examples/cornell_box.xml" "$out" <<'EOF'
import json, os, sys, time

drsc, iters, scene, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def optimize(n):
    """Seconds and peak resident MiB of `drsc optimize` with n iterations."""
    cmd = [drsc, "optimize", scene, "-D", "resx=256", "-D", "resy=256", "-D", "max_depth=8",
           "--ref", f"{out}/prb_target.exr", "--param", "red.reflectance.value", "--iters", str(n),
           "--lr", "0.05", "--clamp", "0,1", "--spp", "16", "-q", "-o", f"{out}/prb_drsc_{n}.json"]
    start = time.perf_counter()
    _, status, usage = os.wait4(os.posix_spawnp(drsc, cmd, os.environ), 0)
    if status != 0:
        sys.exit(f"offline_run: {drsc} optimize failed")
    return time.perf_counter() - start, usage.ru_maxrss / 1024
(one, _), (all_iters, peak) = optimize(1), optimize(iters)
red = json.load(open(f"{out}/prb_drsc_{iters}.json"))["params"]["red.reflectance.value"]
print(f"drsc prb ({drsc}): {(all_iters - one) / (iters - 1):.3f} s/iteration, peak {peak:.1f} MiB, red {red}")
EOF
  done
done
