#!/usr/bin/env bash
# Renders the Mitsuba 3 reference image of every test scene into tests/references/<scene>.exr
# (64x64 RGB float32), then checks them (check_references.py) and prints their channel means.
#
#   tests/references/make_references.sh [SPP]      # default 16384 samples per pixel, about 1 minute
#
# Needs Mitsuba 3 from ../shared/tools/mitsuba-peer.sh (installed here if missing); set
# DRS_PEER_TOOLS to use the tools from another directory. Renders go to a temporary directory
# and replace the references only when every render and check succeeded.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${DRS_PEER_TOOLS:-$root/../shared/tools}
spp=${1:-16384}
seed=0
# Every scene is rendered at 64x64; the Cornell box's own default is 256x256.
size=(-D resx=64 -D resy=64)

if [ ! -x "$tools/mitsuba-peer.sh" ] || [ ! -f "$tools/mitsuba-render.py" ]; then
  echo "make_references: no Mitsuba tools in $tools (set DRS_PEER_TOOLS)" >&2
  exit 1
fi
"$tools/mitsuba-peer.sh" >/dev/null
source <("$tools/mitsuba-peer.sh" --env)
echo "$("$MITSUBA_PY" -c 'import mitsuba, drjit; print("mitsuba", mitsuba.__version__, "drjit", drjit.__version__)'), $spp spp, seed $seed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

render() { # scene_name scene_file
  echo "$1: $("$MITSUBA_PY" "$tools/mitsuba-render.py" "$2" "$work/$1.exr" --spp "$spp" --seed "$seed" \
    --variant llvm_ad_rgb "${size[@]}")"
}
render white_furnace "$root/tests/scenes/white_furnace.xml"
render cornell_box "$root/lang-examples/cornell_box.xml"
render sphere_point "$root/tests/scenes/sphere_point.xml"
render directional_plane "$root/tests/scenes/directional_plane.xml"
render area_disk_direct "$root/tests/scenes/area_disk_direct.xml"
render bitmap_plane "$root/tests/scenes/bitmap_plane.xml"
render dielectric_sphere "$root/tests/scenes/dielectric_sphere.xml"
render thindielectric_sphere "$root/tests/scenes/thindielectric_sphere.xml"
render roughdielectric_sphere "$root/tests/scenes/roughdielectric_sphere.xml"
render plastic_sphere "$root/tests/scenes/plastic_sphere.xml"
render roughplastic_sphere "$root/tests/scenes/roughplastic_sphere.xml"
render conductor "$root/tests/scenes/conductor.xml"
render roughconductor "$root/tests/scenes/roughconductor.xml"
render twosided "$root/tests/scenes/twosided.xml"
render blendbsdf "$root/tests/scenes/blendbsdf.xml"
render mask "$root/tests/scenes/mask.xml"
render spot "$root/tests/scenes/spot.xml"
render envmap "$root/tests/scenes/envmap.xml"
render normalmap "$root/tests/scenes/normalmap.xml"
render bumpmap "$root/tests/scenes/bumpmap.xml"
render aov "$root/tests/scenes/aov.xml"

"$MITSUBA_PY" "$root/tests/references/check_references.py" "$work"
cp "$work"/*.exr "$root/tests/references/"
echo "references written to $root/tests/references/"
