#!/usr/bin/env bash
# Packs Mitsuba 3.9.1 and Dr.Jit 1.5.0 into one archive for a machine without network access
# (the lent GPU machines, whose 16 cores the side-by-side benchmarks measure too), small
# enough to travel with the working tree (under 64 MiB with a compressed drsc):
#
#   benches/mitsuba/offline_bundle.sh target/peer_bundle/peer.tar.xz     # here, with network
#   benches/mitsuba/offline_run.sh target/peer_bundle/peer.tar.xz DRSC...  # there
#
# It holds site/ (the two Python packages with only the llvm_ad_rgb variant and the plugins the
# Cornell box benchmarks load, stripped) and lib/ (Debian's libLLVM.so.19.1, which Dr.Jit's LLVM
# backend loads, with the libraries it needs that an Ubuntu image may lack).
#
# Environment: PY_VERSION (the target machine's Python, default 3.12), WHEELS (a directory of
# already downloaded wheels, default: download them with pip).
set -euo pipefail

archive=${1:?usage: benches/mitsuba/offline_bundle.sh OUT.tar.xz}
py_version=${PY_VERSION:-3.12}
tag=cpython-${py_version/./}
variant=llvm_ad_rgb
plugins="area cube diffuse gaussian hdrfilm independent merge path perspective rectangle srgb"
syslib=/usr/lib/x86_64-linux-gnu
# libLLVM and what it needs beyond the C++ runtime (libatomic for Dr.Jit's thread pool).
libs="libLLVM.so.19.1 libz3.so.4 libxml2.so.2 libicuuc.so.72 libicudata.so.72 libedit.so.2 libbsd.so.0 libmd.so.0
      libffi.so.8 libtinfo.so.6 libatomic.so.1"
fail() { echo "offline_bundle: $*" >&2; exit 1; }
for l in $libs; do [ -e "$syslib/$l" ] || fail "$syslib/$l is missing (apt-get install libllvm19)"; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wheels=${WHEELS:-$work/wheels}
if [ -z "${WHEELS:-}" ]; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$py_version" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$wheels" mitsuba==3.9.1 drjit==1.5.0 || fail "pip could not download the wheels"
fi
src=$work/src stage=$work/stage
mkdir -p "$src" "$stage/site/mitsuba/plugins" "$stage/site/drjit" "$stage/lib"
for w in "$wheels"/mitsuba-3.9.1-*.whl "$wheels"/drjit-1.5.0-*.whl; do
  [ -e "$w" ] || fail "no wheel matches $w"
  python3 -m zipfile -e "$w" "$src"
done

# Python sources (no tests), the shared libraries, one variant, the extension and alias modules.
(cd "$src" && find drjit mitsuba -name '*.py' -not -path '*/python/test/*') | while read -r f; do
  mkdir -p "$stage/site/$(dirname "$f")" && cp "$src/$f" "$stage/site/$f"
done
cp "$src"/drjit/lib*.so "$src/drjit/_drjit_ext.$tag-x86_64-linux-gnu.so" "$stage/site/drjit/"
cp "$src"/mitsuba/lib*.so "$stage/site/mitsuba/"
for m in $variant mitsuba_ext mitsuba_alias; do cp "$src/mitsuba/$m.$tag-x86_64-linux-gnu.so" "$stage/site/mitsuba/"; done
for p in $plugins; do cp "$src/mitsuba/plugins/$p.so" "$stage/site/mitsuba/plugins/"; done
for d in "$src"/mitsuba-*.dist-info "$src"/drjit-*.dist-info; do
  mkdir -p "$stage/site/$(basename "$d")" && cp "$d/METADATA" "$stage/site/$(basename "$d")/"
done
find "$stage/site" -name '*.so' -exec strip --strip-unneeded {} +
for l in $libs; do cp -L "$syslib/$l" "$stage/lib/$l"; done
chmod -R u+w,a+rX "$stage"

mkdir -p "$(dirname "$archive")"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -cf - site lib |
  xz -T1 --x86 --lzma2=preset=9,dict=192MiB >"$archive.tmp"
mv "$archive.tmp" "$archive"
echo "offline_bundle: $archive, $(du -h "$archive" | cut -f1) (Python $py_version)"
