#!/usr/bin/env bash
# Renders the target images of the inverse-rendering examples with Mitsuba 3 (see README.md
# here): the Cornell box of lang-examples/cornell_box.xml at 64x64 with the red wall painted
# blue-green (red_wall_target.exr), and textured_floor.xml at 96x96 with the floor's texture
# textures/target_32.png (texture_target.exr), 4096 samples per pixel each. drs recovers the
# colour and the texture from these images alone.
#
#   lang-examples/inverse/make_target.sh
#
# Needs Mitsuba 3 from ../shared/tools/mitsuba-peer.sh (installed if missing); set
# DRS_PEER_TOOLS to use the tools from another directory.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${DRS_PEER_TOOLS:-$root/../shared/tools}
"$tools/mitsuba-peer.sh" >/dev/null
source <("$tools/mitsuba-peer.sh" --env)
"$MITSUBA_PY" "$tools/mitsuba-render.py" "$root/lang-examples/cornell_box.xml" \
  "$root/lang-examples/inverse/red_wall_target.exr" --spp 4096 --seed 0 --variant llvm_ad_rgb \
  -D resx=64 -D resy=64 -D max_depth=4 -D "red=0.1, 0.45, 0.6"
"$MITSUBA_PY" "$tools/mitsuba-render.py" "$root/lang-examples/inverse/textured_floor.xml" \
  "$root/lang-examples/inverse/texture_target.exr" --spp 4096 --seed 0 --variant llvm_ad_rgb \
  -D texture=textures/target_32.png
