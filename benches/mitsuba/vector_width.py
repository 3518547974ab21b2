"""Mitsuba 3 (llvm_ad_rgb) rendering a scene on one thread with Dr.Jit's LLVM code generation
forced to a vector width and, optionally, a CPU and feature set (see llvm_target.py): how much
of Mitsuba's speed comes from running 16 lanes of AVX-512 rather than the 4 lanes of 128-bit
code that drs's Cranelift backend emits.

    python vector_width.py SCENE RES SPP REPEAT WIDTH [CPU FEATURES]

    # AVX2-level code (16 vector registers, VEX, FMA) four lanes wide, like Cranelift's:
    python vector_width.py lang-examples/cornell_box.xml 256 64 3 4 x86-64-v3 \\
        +sse4.2,+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,+movbe,-avx512f,-avx512vl,-avx512dq,-avx512bw

Prints one line per render; the first compiles the kernel.
"""

import sys
import time

import drjit as dr
import mitsuba as mi

from llvm_target import set_llvm_target

mi.set_variant("llvm_ad_rgb")
scene_path, res, spp, repeat, width = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cpu = set_llvm_target(width, *sys.argv[6:8])
dr.set_thread_count(1)
scene = mi.load_file(scene_path, resx=res, resy=res, max_depth="8")
for i in range(repeat):
    start = time.perf_counter()
    image = mi.render(scene, spp=spp, seed=i)
    dr.eval(image)
    dr.sync_thread()
    wall = time.perf_counter() - start
    print(f"mitsuba {cpu} {width} lanes render: {wall:.4f} s, mean {dr.mean(image, axis=None)}", flush=True)
