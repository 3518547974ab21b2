"""Mitsuba 3 (llvm_ad_rgb) on one thread with Dr.Jit's LLVM code generation forced to a vector
width and, optionally, a CPU and feature set: how much of Mitsuba's speed comes from running 16
lanes of AVX-512 rather than the 4 lanes of 128-bit code that drs's Cranelift backend emits.

    python vector_width.py SCENE RES SPP REPEAT WIDTH [CPU FEATURES]

    # AVX2-level code (16 vector registers, VEX, FMA) four lanes wide, like Cranelift's:
    python vector_width.py lang-examples/cornell_box.xml 256 64 3 4 x86-64-v3 \\
        +sse4.2,+popcnt,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,+lzcnt,+movbe,-avx512f,-avx512vl,-avx512dq,-avx512bw

CPU and FEATURES default to what Dr.Jit detected. The target is set through Dr.Jit's C function
`jit_llvm_set_target` (not exposed in Python) before the scene is loaded: Mitsuba sizes its ray
tracing calls when it loads a scene, and crashes if the width changes afterwards. Embree picks
its own instruction set whatever this says. Prints one line per render; the first compiles.
"""

import ctypes
import os
import sys
import time

import drjit as dr
import mitsuba as mi

mi.set_variant("llvm_ad_rgb")
core = ctypes.CDLL(os.path.join(os.path.dirname(dr.__file__), "libdrjit-core.so"))
target_cpu = core._Z19jit_llvm_target_cpuv
target_cpu.restype = ctypes.c_char_p
target_features = core._Z24jit_llvm_target_featuresv
target_features.restype = ctypes.c_char_p
set_target = core._Z19jit_llvm_set_targetPKcS0_j
set_target.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32]

scene_path, res, spp, repeat, width = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cpu = sys.argv[6].encode() if len(sys.argv) > 6 else target_cpu()
features = sys.argv[7].encode() if len(sys.argv) > 7 else target_features()
dr.set_thread_count(1)
set_target(cpu, features, width)
scene = mi.load_file(scene_path, resx=res, resy=res, max_depth="8")
for i in range(repeat):
    start = time.perf_counter()
    image = mi.render(scene, spp=spp, seed=i)
    dr.eval(image)
    dr.sync_thread()
    wall = time.perf_counter() - start
    print(f"mitsuba {cpu.decode()} {width} lanes render: {wall:.4f} s, mean {dr.mean(image, axis=None)}", flush=True)
