"""Mitsuba 3's side of benches/mitsuba/prb_side_by_side.sh: the red-wall optimisation of
lang-examples/inverse with Mitsuba's `prb` integrator (llvm_ad_rgb), timed per iteration.

    python prb_iterations.py SCENE TARGET.exr ITERS RES SPP

Renders the target (red wall (0.1, 0.45, 0.6), 256 spp) into TARGET.exr for drsc, then runs
ITERS iterations of render + L2 loss + backward + Adam step from the scene's own colour. Prints
the first iteration's time (tracing and compiling included), the median of the others, and the
peak resident memory of the process. MI_LLVM_WIDTH, MI_LLVM_CPU and MI_LLVM_FEATURES force
Dr.Jit's code generation (llvm_target.py).
"""

import resource
import statistics
import sys
import time

import drjit as dr
import mitsuba as mi

from llvm_target import set_llvm_target_from_env

mi.set_variant("llvm_ad_rgb")
target_description = set_llvm_target_from_env()
scene_path, target_path, iters, res, spp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
scene = mi.load_file(scene_path, resx=res, resy=res, max_depth="8", integrator="prb")
params = mi.traverse(scene)
key = "red.reflectance.value"
initial = mi.Color3f(params[key])
params[key] = mi.Color3f(0.1, 0.45, 0.6)
params.update()
target = mi.render(scene, params, spp=256, seed=12345)
mi.util.write_bitmap(target_path, target)
params[key] = initial
params.update()

opt = mi.ad.Adam(lr=0.05)
opt[key] = params[key]
params.update(opt)
times = []
for it in range(iters):
    start = time.perf_counter()
    image = mi.render(scene, params, spp=spp, seed=2 * it, seed_grad=2 * it + 1)
    loss = dr.mean(dr.square(image - target))
    dr.backward(loss)
    opt.step()
    opt[key] = dr.clip(opt[key], 0.0, 1.0)
    params.update(opt)
    dr.eval(params[key])
    dr.sync_thread()
    times.append(time.perf_counter() - start)
peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"mitsuba prb: first {times[0]:.3f} s, median {statistics.median(times[1:]):.3f} s/iteration, "
      f"peak {peak_mib:.0f} MiB, red {list(params[key])} ({target_description})")
