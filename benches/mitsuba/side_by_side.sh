#!/usr/bin/env bash
# Side-by-side render benchmark: the Cornell box (lang-examples/cornell_box.xml) rendered by
# Mitsuba 3 (llvm_ad_rgb) and by `drsc render` (release build) on this machine in one run.
#
#   benches/mitsuba/side_by_side.sh          # 256x256, 64 spp, path max_depth 8, 3 runs each
#   SCENE=tests/scenes/roughplastic_sphere.xml MAX_DEPTH=12 benches/mitsuba/side_by_side.sh
#
# Environment: SCENE (a scene with the `resx`, `resy` and `max_depth` defaults of the bundled
# scenes; default the Cornell box), MAX_DEPTH (8), RES (square film, default 256), SPP (64),
# REPEAT (runs per renderer, at least 2; default 3), THREADS (drsc's --threads, default nproc:
# Dr.Jit also uses every core), DRSC (a drsc binary to measure instead of building the release
# one), DRSC_ARGS (more arguments of `drsc render`, e.g. `--backend llvm --lanes 16` with a DRSC
# built with `--features llvm`), DRS_PEER_TOOLS (Mitsuba tools, default ../shared/tools). Mitsuba's first run includes
# tracing and compiling its kernel (or loading it from Dr.Jit's cache); drsc reports its
# compilation apart from its render time. Each renderer's first run is reported on its own;
# the steady time is the best of the other runs. Images go to target/side_by_side/.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tools=${DRS_PEER_TOOLS:-$root/../shared/tools}
scene=$(realpath "${SCENE:-$root/lang-examples/cornell_box.xml}")
max_depth=${MAX_DEPTH:-8}
res=${RES:-256}
spp=${SPP:-64}
repeat=${REPEAT:-3}
threads=${THREADS:-$(nproc)}
definitions=(-D "resx=$res" -D "resy=$res" -D "max_depth=$max_depth")
out=$root/target/side_by_side

fail() { echo "side_by_side: $*" >&2; exit 1; }
[ "$repeat" -ge 2 ] 2>/dev/null || fail "REPEAT must be an integer of at least 2 (got '$repeat')"
[ -x "$tools/mitsuba-peer.sh" ] && [ -f "$tools/mitsuba-render.py" ] ||
  fail "no Mitsuba tools in $tools (set DRS_PEER_TOOLS)"

# drsc first, so that a missing renderer stops the run before anything is timed.
cd "$root"
if [ -n "${DRSC:-}" ]; then
  drsc() { "$DRSC" "$@"; }
else
  cargo build --release --quiet -p drsc || fail "cargo build --release -p drsc failed"
  drsc() { cargo run --release --quiet -p drsc -- "$@"; }
fi
drsc render --help >/dev/null 2>&1 ||
  fail "'drsc render' is not available yet (this drsc has no render command); nothing was measured"

"$tools/mitsuba-peer.sh" >/dev/null || fail "installing Mitsuba 3 with $tools/mitsuba-peer.sh failed"
source <("$tools/mitsuba-peer.sh" --env)
mkdir -p "$out"

# Prints the first time and the best of the others from lines 'NAME render: X s, ...'.
first_and_best() {
  awk -v name="$1" '$1 == name && $2 == "render:" { t[n++] = $3 }
    END { if (n < 2) exit 1; best = t[1]; for (i = 2; i < n; i++) if (t[i] < best) best = t[i]; print t[0], best }'
}
msamples() { awk -v t="$1" -v n="$((res * res * spp))" 'BEGIN { printf "%.3f", n / t / 1e6 }'; }

echo "== machine"
echo "cores: $(nproc), cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), drs commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "$("$MITSUBA_PY" -c 'import mitsuba, drjit; print("mitsuba", mitsuba.__version__, "drjit", drjit.__version__)')"
echo "scene: ${scene#"$root"/}, ${res}x${res}, $spp spp, path max_depth $max_depth, $repeat runs each"

echo "== mitsuba (llvm_ad_rgb)"
mitsuba_log=$("$MITSUBA_PY" "$tools/mitsuba-render.py" "$scene" "$out/mitsuba.exr" --spp "$spp" \
  --variant llvm_ad_rgb --repeat "$repeat" "${definitions[@]}") || fail "the Mitsuba render failed"
echo "$mitsuba_log"
read -r mitsuba_first mitsuba_best < <(first_and_best mitsuba <<<"$mitsuba_log") ||
  fail "no timing lines in Mitsuba's output"

echo "== drsc render (release, $threads threads${DRSC_ARGS:+, $DRSC_ARGS})"
drsc_log=""
for run in $(seq "$repeat"); do
  log=$(drsc render "$scene" -o "$out/drs.exr" --spp "$spp" --seed "$((run - 1))" --threads "$threads" \
    --quiet "${definitions[@]}" ${DRSC_ARGS:-}) || fail "drsc render failed (run $run)"
  line=$(tail -n 1 <<<"$log")
  [[ $line == "drsc render: "* ]] || fail "drsc render did not end with its timing line; it printed: $line"
  echo "$line"
  drsc_log+=$line$'\n'
done
read -r drs_first drs_best < <(first_and_best drsc <<<"$drsc_log") || fail "no timing lines in drsc's output"

echo "== same picture? (per-channel image means)"
"$MITSUBA_PY" - "$out/mitsuba.exr" "$out/drs.exr" <<'EOF'
import sys, numpy as np, mitsuba as mi
mi.set_variant("scalar_rgb")
mitsuba, drs = (np.array(mi.Bitmap(p), dtype=np.float64)[..., :3].reshape(-1, 3).mean(0) for p in sys.argv[1:])
print("mitsuba", np.round(mitsuba, 5), " drs", np.round(drs, 5), " drs/mitsuba - 1:", np.round(drs / mitsuba - 1, 4))
EOF

echo "== result"
printf '%-8s first run %8.4f s   steady (best of %d) %8.4f s   %s Msamples/s\n' \
  mitsuba "$mitsuba_first" "$((repeat - 1))" "$mitsuba_best" "$(msamples "$mitsuba_best")" \
  drs "$drs_first" "$((repeat - 1))" "$drs_best" "$(msamples "$drs_best")"
awk -v d="$drs_best" -v m="$mitsuba_best" \
  'BEGIN { printf "drs time / mitsuba time: %.3f (%s)\n", d / m, d < m ? "drs faster" : "mitsuba faster" }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
