"""Prints Mitsuba 3's internal diffuse reflectance r_int of `roughplastic` for the cases of the
test `roughplastic_internal_reflectance_is_mitsubas` (tests/tests/bsdf_dielectric.rs).

usage: $MITSUBA_PY roughplastic_internal_reflectance.py   (Mitsuba from ../shared/tools/mitsuba-peer.sh)

Mitsuba computes it when a roughplastic is loaded (roughplastic.cpp, parameters_changed):
    r_int = mean over 64 cosines mu = linspace(0, 1, 64) (the first at 1e-6) of 2 mu R(mu),
with R(mu) the reflectance of the microfacet interface seen from inside (relative index
1 / eta), integrated over the visible normals (mitsuba.eval_reflectance). The cases cover
both distributions, smooth and very rough interfaces (alpha 0.05 to 1.5) and indices from
0.8 to 4 (int_ior, with ext_ior 1).
"""
import numpy as np

import mitsuba as mi

mi.set_variant("llvm_ad_rgb")

MU = np.maximum(1e-6, np.linspace(0, 1, 64)).astype(np.float32)
WI = mi.Vector3f(mi.Float(np.sqrt(1 - MU**2)), mi.Float(0 * MU), mi.Float(MU))
DISTRIBUTIONS = [(0, mi.MicrofacetType.Beckmann), (1, mi.MicrofacetType.GGX)]
CASES = [(0.2, 1.6), (0.05, 1.5), (1.5, 1.5), (0.3, 4.0), (0.4, 0.8)]

for index, kind in DISTRIBUTIONS:
    for alpha, eta in CASES:
        alpha = max(alpha, 1e-4)
        reflectance = np.array(mi.eval_reflectance(kind, alpha, alpha, WI, 1.0 / eta))
        print(f"({index}, {alpha}, {eta}, {np.mean(reflectance * MU) * 2}),")
