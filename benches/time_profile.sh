#!/usr/bin/env bash
# Where a drsc command spends its time: samples it with perf's software clock, which works on
# virtual machines without hardware counters, and prints the share of time of each symbol and
# of each project function, inlined code attributed to the innermost function of this
# repository that contains it (compiled kernels count as "[JIT]").
#
#   benches/time_profile.sh DRSC ARGS...
#   # e.g., with line tables so that inlined functions can be told apart:
#   CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_TARGET_DIR=target/lines \
#     cargo build --release -p drsc
#   benches/time_profile.sh target/lines/release/drsc render lang-examples/cornell_box.xml \
#     -o /tmp/box.exr --spp 32 --threads 1 --quiet
#
# Environment: FREQ (samples per second, default 10000), TOP (rows per table, 25).
#
# Session 26 found by time what instruction counts had hidden (docs/benchmarks.md): area
# sampling was 12% of the time and 3% of the instructions.
set -euo pipefail

fail() { echo "time_profile: $*" >&2; exit 1; }
[ $# -ge 2 ] || fail "usage: benches/time_profile.sh DRSC ARGS..."
drsc=$(realpath "$1")
shift
[ -x "$drsc" ] || fail "not an executable: $drsc"
for tool in perf addr2line readelf python3; do
  command -v "$tool" >/dev/null || fail "needs $tool"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
perf record -q -e cpu-clock -F "${FREQ:-10000}" -o "$out/perf.data" "$drsc" "$@" >/dev/null
perf script -i "$out/perf.data" --show-mmap-events -F ip,sym,dso 2>/dev/null >"$out/samples.txt"
readelf -lW "$drsc" >"$out/segments.txt"

python3 - "$drsc" "$out" "${TOP:-25}" <<'EOF'
import collections, re, subprocess, sys

binary, out, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
# File offset -> virtual address, from the executable segments.
segments = []
for line in open(f"{out}/segments.txt"):
    fields = line.split()
    if fields[:1] == ["LOAD"] and "E" in fields[6:-1]:
        segments.append((int(fields[1], 16), int(fields[2], 16), int(fields[4], 16)))
mapping = None  # (start, page offset) of the binary's executable mapping
counts = collections.Counter()  # by address in the binary, or by name outside it
symbols = collections.Counter()
total = 0
for line in open(f"{out}/samples.txt"):
    if "PERF_RECORD_MMAP" in line:
        found = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+) .*r-xp (\S+)", line)
        if found and found.group(4) == binary:
            mapping = (int(found.group(1), 16), int(found.group(3), 16))
        continue
    sample = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s*\((.*)\)\s*$", line)
    if not sample:
        continue
    total += 1
    ip, symbol, dso = int(sample.group(1), 16), sample.group(2), sample.group(3)
    # Compiled kernels: perf names their object after the JIT map file or "[JIT]".
    if dso.startswith("[JIT]") or re.fullmatch(r"/tmp/perf-\d+\.map", dso):
        dso = symbol = "[JIT] compiled kernels"
    symbols[symbol if symbol and symbol != "[unknown]" else dso] += 1
    if dso == binary and mapping:
        offset = ip - mapping[0] + mapping[1]
        for file_offset, vaddr, size in segments:
            if file_offset <= offset < file_offset + size:
                counts[offset - file_offset + vaddr] += 1
                break
    else:
        counts[dso] += 1
if total == 0:
    sys.exit("time_profile: no samples")

addresses = [a for a in counts if isinstance(a, int)]
functions = collections.Counter()
if addresses:
    text = subprocess.run(["addr2line", "-f", "-C", "-i", "-a", "-e", binary] + [hex(a) for a in addresses],
                          capture_output=True, text=True, check=True).stdout
    for block in re.split(r"^(?=0x[0-9a-f]+$)", text, flags=re.M):
        lines = block.strip().split("\n")
        if len(lines) < 3:
            continue
        address = int(lines[0], 16)
        frames = list(zip(lines[1::2], lines[2::2]))  # innermost first
        ours = [(f, loc) for f, loc in frames if re.search(r"/(compiler|runtime|lang-examples)/", loc)]
        name, loc = ours[0] if ours else frames[-1]
        path = re.sub(r".*/(compiler|runtime|lang-examples)/", r"\1/", loc.split(":")[0])
        functions[f"{name}  ({path})"] += counts[address]
for name, n in counts.items():
    if not isinstance(name, int):
        functions[name] += n

for title, table in [("symbols (as linked)", symbols), ("innermost project function", functions)]:
    print(f"== {title}: share of {total} samples")
    for name, n in table.most_common(top):
        print(f"{100 * n / total:6.2f}%  {name}")
EOF
