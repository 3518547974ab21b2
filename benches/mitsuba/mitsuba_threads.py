"""Mitsuba 3's side of benches/mitsuba/thread_scaling.sh: renders a scene with Dr.Jit limited to
each given number of worker threads and prints one line per timed render.

    python mitsuba_threads.py SCENE RES SPP REPEAT THREADS...

Prints 'mitsuba threads T render: WALL s, user U s' per render; the first render of the first
thread count includes tracing and compiling the kernel (or loading it from Dr.Jit's cache).
"""

import resource
import sys
import time

import drjit as dr
import mitsuba as mi

mi.set_variant("llvm_ad_rgb")
scene_path, res, spp, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
scene = mi.load_file(scene_path, resx=res, resy=res, max_depth="8")
for threads in map(int, sys.argv[5:]):
    dr.set_thread_count(threads)
    for i in range(repeat):
        user = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        start = time.perf_counter()
        image = mi.render(scene, spp=spp, seed=i)
        dr.eval(image)
        dr.sync_thread()
        wall = time.perf_counter() - start
        user = resource.getrusage(resource.RUSAGE_SELF).ru_utime - user
        print(f"mitsuba threads {threads} render: {wall:.4f} s, user {user:.3f} s", flush=True)
