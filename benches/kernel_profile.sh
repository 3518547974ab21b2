#!/usr/bin/env bash
# Where a drsc command's compiled kernels spend their instructions, instruction by instruction:
# runs the command under callgrind (exact dynamic counts) or, with MODE=time, under perf's
# software clock (time samples), and maps the counts onto each kernel's machine code, which
# drs-cranelift writes out under DRS_PERF_MAP=1 (`/tmp/perf-<pid>.map` for the names,
# `/tmp/drs-jit-<pid>-<base>.bin` for the bytes). For each kernel function it prints:
#
# - its share of the kernel instructions (or samples) and the classes that tell code generation
#   problems apart: vector loads and stores on the stack (spills and reloads), general-register
#   stack traffic, blends (masked `if`s), lane inserts and extracts (gathers, scalarised
#   operations), divisions and square roots;
# - the most frequent mnemonics and the hottest instructions (offset in the function);
# - the stack slots loaded most, with how often each is stored: a slot stored once per kernel
#   call and loaded at every iteration holds a loop-invariant value (a hoisted constant).
#
#   benches/kernel_profile.sh DRSC ARGS...
#   # e.g. the Cornell box kernel, counted over a 1-spp render (about two minutes):
#   benches/kernel_profile.sh target/release/drsc render lang-examples/cornell_box.xml \
#     -o /tmp/box.exr --spp 1 --threads 1 --quiet
#
# Environment: MODE (`count`, the default, or `time`), TOP (rows per table, default 20).
# Time samples land on the instruction after the one that stalled (skid): read them with the
# counts. x86-64 only (the disassembly); every kernel drs-cranelift's loader maps: Cranelift's,
# and drs-llvm's objects, which it loads too.
set -euo pipefail

fail() { echo "kernel_profile: $*" >&2; exit 1; }
[ $# -ge 2 ] || fail "usage: benches/kernel_profile.sh DRSC ARGS..."
drsc=$(realpath "$1")
shift
[ -x "$drsc" ] || fail "not an executable: $drsc"
[ "$(uname -m)" = x86_64 ] || fail "x86-64 only"
mode=${MODE:-count}
tools=(objdump python3)
case "$mode" in
  count) tools+=(valgrind) ;;
  time) tools+=(perf) ;;
  *) fail "MODE is count or time, not $mode" ;;
esac
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || fail "needs $tool"
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ "$mode" = count ]; then
  DRS_PERF_MAP=1 valgrind -q --tool=callgrind --dump-instr=yes --callgrind-out-file="$out/callgrind.%p" \
    "$drsc" "$@" >/dev/null
  pid=$(basename "$out"/callgrind.* | cut -d. -f2)
else
  DRS_PERF_MAP=1 perf record -q -e cpu-clock -F "${FREQ:-10000}" -o "$out/perf.data" "$drsc" "$@" >/dev/null
  perf script -i "$out/perf.data" -F pid,ip 2>/dev/null >"$out/samples.txt"
  pid=$(awk 'NR == 1 { print $1 }' "$out/samples.txt")
fi
tmp=${TMPDIR:-/tmp}
[ -f "$tmp/perf-$pid.map" ] || fail "no kernel was loaded (no $tmp/perf-$pid.map)"

python3 - "$mode" "$out" "$tmp" "$pid" "${TOP:-20}" <<'EOF'
import collections, glob, os, re, subprocess, sys

mode, out, tmp, pid, top = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])

# Each loaded module's code: (base, bytes file, length).
blobs = []
for path in glob.glob(f"{tmp}/drs-jit-{pid}-*.bin"):
    base = int(path.rsplit("-", 1)[1].removesuffix(".bin"), 16)
    blobs.append((base, path, os.path.getsize(path)))
functions = []  # (start, size, name)
for line in open(f"{tmp}/perf-{pid}.map"):
    start, size, name = line.rstrip("\n").split(" ", 2)
    functions.append((int(start, 16), int(size, 16), name))

counts = collections.Counter()
if mode == "count":
    # Callgrind's instruction-level costs, with its relative-address compression undone.
    address, after_call = 0, False
    for line in open(glob.glob(f"{out}/callgrind.*")[0]):
        if line.startswith("calls="):
            after_call = True
            continue
        m = re.match(r"^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+\S+\s+(\d+)$", line)
        if not m:
            continue
        a = m.group(1)
        address = int(a, 16) if a.startswith("0x") else address + int(a) if a[0] in "+-" else address
        if after_call:  # the cost of a call, not of the instruction
            after_call = False
            continue
        counts[address] += int(m.group(2))
else:
    for line in open(f"{out}/samples.txt"):
        counts[int(line.split()[1], 16)] += 1

def disassemble(base, path):
    text = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", f"--adjust-vma={base:#x}", path],
                          capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)", line)
        if m and m.group(2):
            yield int(m.group(1), 16), m.group(2)

instructions = {}
for base, path, _ in blobs:
    instructions.update(disassemble(base, path))
# Each instruction's length: the distance to the next one.
addresses = sorted(instructions)
len_of = {a: b - a for a, b in zip(addresses, addresses[1:])}
if addresses:
    len_of[addresses[-1]] = 1

VECTOR = r"%[xy]mm\d+"
CLASSES = [
    ("vector stack loads", lambda op, args: "mov" in op and re.search(rf"\(%rsp\),{VECTOR}$", args)),
    ("vector stack stores", lambda op, args: "mov" in op and re.search(rf"^{VECTOR},.*\(%rsp\)$", args)),
    ("other stack loads and stores", lambda op, args: "mov" in op and "(%rsp)" in args),
    ("blends", lambda op, args: "blendv" in op),
    ("lane inserts and extracts", lambda op, args: re.match(r"v?(pinsr|pextr|insertps|extractps)", op)),
    ("divisions and square roots", lambda op, args: re.match(r"v?(div|sqrt)[ps]s", op)),
]
unit = "instructions" if mode == "count" else "samples"
total = sum(n for a, n in counts.items() if any(s <= a < s + z for s, z, _ in functions))
print(f"== compiled kernels: {total:,} {unit}")
for start, size, name in sorted(functions, key=lambda f: -sum(counts[a] for a in range(f[0], f[0] + f[1]))):
    rows = [(a, instructions.get(a, "?"), counts[a]) for a in range(start, start + size) if counts[a]]
    n = sum(c for _, _, c in rows)
    if n == 0 or n < total / 100:
        continue
    print(f"\n== {name}: {n:,} {unit} ({100 * n / total:.1f}%), {size:,} bytes of code")
    classes = collections.Counter()
    mnemonics = collections.Counter()
    loads, stores = collections.Counter(), collections.Counter()
    for a, ins, c in rows:
        op, _, args = ins.partition(" ")
        args = args.strip()
        mnemonics[op] += c
        for label, test in CLASSES:
            if test(op, args):
                classes[label] += c
                break
        slot = re.search(r"(0x[0-9a-f]+)\(%rsp\)", args)
        if slot and "mov" in op:
            (loads if args.startswith(slot.group(0)) else stores)[slot.group(1)] += c
    for label, _ in CLASSES:
        print(f"  {100 * classes[label] / n:5.1f}%  {label}")
    print("  mnemonics: " + ", ".join(f"{op} {100 * c / n:.1f}%" for op, c in mnemonics.most_common(top)))
    if mode == "count":
        # Straight runs of code: consecutive instructions executed equally often.
        blocks = []
        for a, ins, c in rows:
            if blocks and blocks[-1][2] == c and blocks[-1][3] == a:
                first, length, _, _ = blocks[-1]
                blocks[-1] = (first, length + 1, c, a + len_of[a])
            else:
                blocks.append((a, 1, c, a + len_of[a]))
        print("  hottest straight runs of code (offset, instructions, executions, share):")
        for first, length, c, _ in sorted(blocks, key=lambda b: -b[1] * b[2])[:top]:
            print(f"    {first - start:#7x}  {length:4}  {c:>11,}  {100 * length * c / n:5.2f}%")
    else:
        print("  hottest instructions (offset, share, instruction):")
        for a, ins, c in sorted(rows, key=lambda r: -r[2])[:top]:
            print(f"    {a - start:#7x}  {100 * c / n:5.2f}%  {ins}")
    print(f"  stack slots loaded most (slot, loads, stores):")
    for slot, c in loads.most_common(min(top, 10)):
        print(f"    {slot}(%rsp)  {c:,}  {stores[slot]:,}")
EOF
rm -f "$tmp/perf-$pid.map" "$tmp"/drs-jit-"$pid"-*.bin
