#!/usr/bin/env bash
# A/B timing of drsc builds on one machine: renders a scene with each build in turn for several
# rounds, reversing the order every other round, and prints each build's minimum and median
# render time (the timing line of `drsc render`: loading, compiling and writing the image are
# not in it) and their ratios to the first build's.
#
#   benches/ab_compare.sh BUILD_A BUILD_B [BUILD ...]      # each a drsc binary
#
# Environment: ROUNDS (renders per build, default 10), THREADS (1), SPP (16), RES (256),
# SCENE (lang-examples/cornell_box.xml, rendered with max_depth 8).
#
# Shared and virtual machines vary by 5-10% from run to run, more than most single changes
# gain, so compare medians and minima over many rounds, never one pair of runs. Instruction
# counts are no substitute: in session 20 a build with 5.6% fewer instructions rendered no
# faster (docs/benchmarks.md).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
scene=${SCENE:-$root/lang-examples/cornell_box.xml}
rounds=${ROUNDS:-10}
threads=${THREADS:-1}
spp=${SPP:-16}
res=${RES:-256}
fail() { echo "ab_compare: $*" >&2; exit 1; }
[ $# -ge 2 ] || fail "usage: benches/ab_compare.sh BUILD_A BUILD_B [BUILD ...]"
for build in "$@"; do [ -x "$build" ] || fail "not an executable: $build"; done
for n in "$rounds" "$threads" "$spp" "$res"; do
  [ "$n" -ge 1 ] 2>/dev/null || fail "ROUNDS, THREADS, SPP and RES must be positive integers (got '$n')"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
render() { # build seed
  "$1" render "$scene" -o "$out/image.exr" --spp "$spp" --seed "$2" --threads "$threads" \
    -D "resx=$res" -D "resy=$res" -D max_depth=8 --quiet | tail -n 1
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "scene: $scene, ${res}x${res}, $spp spp, $threads threads, $rounds rounds"
# One render each first, so that every build's kernel is in the kernel cache.
for build in "$@"; do render "$build" 0 >/dev/null || fail "$build render failed"; done
builds=("$@")
for round in $(seq "$rounds"); do
  order=("${builds[@]}")
  if [ $((round % 2)) = 0 ]; then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[i]}"); done
  fi
  for build in "${order[@]}"; do
    line=$(render "$build" "$round")
    [[ $line == "drsc render: "* ]] || fail "$build did not end with its timing line: $line"
    echo "$build $(cut -d' ' -f3 <<<"$line")" >>"$out/times"
  done
done

echo "== render seconds (ratio: to the first build)"
printf '%8s %10s %10s %8s %8s  %s\n' "rounds" "min" "median" "min" "median" "build"
first_min="" first_median=""
for build in "$@"; do
  read -r min median < <(awk -v b="$build" '$1 == b { print $2 }' "$out/times" | sort -g |
    awk '{ t[NR] = $1 } END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2; print t[1], m }')
  first_min=${first_min:-$min}
  first_median=${first_median:-$median}
  awk -v n="$rounds" -v a="$min" -v m="$median" -v fa="$first_min" -v fm="$first_median" -v b="$build" \
    'BEGIN { printf "%8d %10.4f %10.4f %8.3f %8.3f  %s\n", n, a, m, a / fa, m / fm, b }'
done
