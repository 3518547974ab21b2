"""Mitsuba 3's path replay gradients of the Cornell box, the reference of the test
`prb_gradients_agree_with_mitsubas` (runtime/render/tests/gradients.rs).

    $MITSUBA_PY tests/references/cornell_gradients.py lang-examples/cornell_box.xml \
        tests/references/cornell_gradients.json [SEEDS]

Renders lang-examples/cornell_box.xml at 32x32, 64 spp, max_depth 8 (Russian roulette from
depth 5) with Mitsuba's `prb` integrator (llvm_ad_rgb) and differentiates the linear loss
sum_i a_i image_i, whose weights are the test's `weights` image: over the image's values in
row-major order (pixel, then channel), a_i = (1 + ((7 i) mod 5) / 4) / n for n values. A
linear loss makes the gradient an expectation over the render's noise alone, so the test can
compare means. Each of SEEDS runs (default 512) uses its own primal and gradient seeds;
the JSON holds, for each parameter, the mean gradient per component and its standard error.
"""

import json
import statistics
import sys

import drjit as dr
import mitsuba as mi

mi.set_variant("llvm_ad_rgb")

KEYS = ["red.reflectance.value", "white.reflectance.value", "light_source.emitter.radiance.value"]
RES, SPP, MAX_DEPTH = 32, 64, 8

scene_path, out_path = sys.argv[1], sys.argv[2]
seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 512
scene = mi.load_file(scene_path, resx=RES, resy=RES, max_depth=str(MAX_DEPTH), integrator="prb")
params = mi.traverse(scene)
n = RES * RES * 3
weights = mi.TensorXf(dr.llvm.ad.Float([(1.0 + ((i * 7) % 5) * 0.25) / n for i in range(n)]), shape=(RES, RES, 3))
for key in KEYS:
    dr.enable_grad(params[key])
params.update()

samples = {key: [] for key in KEYS}
for run in range(seeds):
    image = mi.render(scene, params, spp=SPP, seed=2 * run, seed_grad=2 * run + 1)
    dr.backward(dr.sum(image * weights, axis=None))
    for key in KEYS:
        grad = dr.grad(params[key])
        samples[key].append([grad[c][0] for c in range(3)])
        dr.set_grad(params[key], 0)


def mean_and_stderr(values):
    return statistics.fmean(values), statistics.stdev(values) / len(values) ** 0.5


summaries = {key: [mean_and_stderr([g[c] for g in samples[key]]) for c in range(3)] for key in KEYS}
result = {
    "renderer": f"mitsuba {mi.__version__}, drjit {dr.__version__}, llvm_ad_rgb, prb",
    "scene": "lang-examples/cornell_box.xml",
    "resolution": RES,
    "spp": SPP,
    "max_depth": MAX_DEPTH,
    "runs": seeds,
    "gradients": {
        key: {"mean": [m for m, _ in summaries[key]], "stderr": [s for _, s in summaries[key]]} for key in KEYS
    },
}
with open(out_path, "w") as f:
    json.dump(result, f, indent=1)
    f.write("\n")
for key, g in result["gradients"].items():
    print(key, [f"{m:.6g} ± {s:.2g}" for m, s in zip(g["mean"], g["stderr"])])
