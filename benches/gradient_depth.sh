#!/usr/bin/env bash
# Gradient cost against path length: `drsc grad` on the Cornell box with path replay (`prb`),
# unbiased radiative backpropagation (`rb`) and its biased variant (`rb-biased`) at growing
# max_depth, with Russian roulette off so that paths run to max_depth unless they leave the
# box. Prints one line per (integrator, depth): wall time and peak resident memory of the
# whole command (scene loading and a kernel from the cache included: the depth-1 row is that
# fixed cost).
#
#   benches/gradient_depth.sh            # 64x64, 4 spp, depths 1 2 4 8 16 32 64
#
# Environment: RES (64), SPP (4), DEPTHS ("1 2 4 8 16 32 64"), INTEGRATORS ("prb rb-biased rb"),
# DRSC (a drsc binary instead of building the release one).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scene=$root/lang-examples/cornell_box.xml
res=${RES:-64}
spp=${SPP:-4}
depths=${DEPTHS:-1 2 4 8 16 32 64}
integrators=${INTEGRATORS:-prb rb-biased rb}
out=$root/target/gradient_depth
mkdir -p "$out"

if [ -z "${DRSC:-}" ]; then
  cargo build --release -p drsc --manifest-path "$root/Cargo.toml" >&2
  DRSC=$root/target/release/drsc
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
"$DRSC" render "$scene" -D "resx=$res" -D "resy=$res" --spp 256 -o "$out/target.exr" --quiet

grad() { # integrator depth: runs drsc grad under GNU time, which writes "seconds peak_KiB"
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$DRSC" grad "$scene" -D "resx=$res" -D "resy=$res" \
    -D "max_depth=$2" -D rr_depth=100000 -D red=0.5,0.5,0.5 --ref "$out/target.exr" \
    --param red.reflectance.value --spp "$spp" --integrator "$1" >/dev/null
}
printf "%-10s %6s %10s %10s\n" integrator depth seconds peak_MiB
for integrator in $integrators; do
  grad "$integrator" 2 # compiles the kernel into the cache
  for depth in $depths; do
    grad "$integrator" "$depth"
    read -r seconds peak < "$out/time.txt"
    printf "%-10s %6s %10s %10d\n" "$integrator" "$depth" "$seconds" "$((peak / 1024))"
  done
done
