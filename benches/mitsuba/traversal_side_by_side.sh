#!/usr/bin/env bash
# Side-by-side ray traversal benchmark on the Cornell box (lang-examples/cornell_box.xml): the
# same 65,536 diffuse-bounce rays (closest hit) and 65,536 shadow rays (any hit), traced by drs's
# BVH (criterion, `cargo bench -p drs-benches --bench render -- traversal`) and by Mitsuba 3's
# llvm_ad_rgb variant, which uses Embree, on one thread each.
#
#   benches/mitsuba/traversal_side_by_side.sh
#
# Environment: DRS_PEER_TOOLS (Mitsuba tools, default ../shared/tools). Mitsuba's time includes
# Dr.Jit reading the rays from memory and writing the results (it traces 16 copies of the rays
# in one launch); drs's is the traversal alone, so the comparison slightly favours drs.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${DRS_PEER_TOOLS:-$root/../shared/tools}
rays=$root/target/side_by_side/rays
mkdir -p "$rays"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "== drs (criterion; time per 65,536 rays)"
cd "$root"
DRS_DUMP_RAYS=$rays cargo bench --quiet -p drs-benches --bench render -- traversal 2>&1 |
  grep -E "^cornell box|^traversal_cornell_box|time:" | grep -v "%"
"$tools/mitsuba-peer.sh" >/dev/null
source <("$tools/mitsuba-peer.sh" --env)
echo "== mitsuba"
"$MITSUBA_PY" "$root/benches/mitsuba/traversal_rays.py" "$root/lang-examples/cornell_box.xml" "$rays"
