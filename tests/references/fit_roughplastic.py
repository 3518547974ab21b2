"""Fits the internal diffuse reflectance of Mitsuba 3's `roughplastic` and prints the .drs
functions that stdlib/bsdfs/roughplastic.drs evaluates instead of Mitsuba's load-time
precomputation.

usage: $MITSUBA_PY fit_roughplastic.py      (about a minute; Mitsuba from ../shared/tools/mitsuba-peer.sh)

Mitsuba computes, when a roughplastic is loaded, the fraction of light diffusely scattered by
the base that the rough interface reflects back inside:
    r_int = mean over 64 cosines mu = linspace(0, 1, 64) of 2 mu R(mu),
with R(mu) the single-scattering reflectance of the microfacet interface seen from inside
(relative index 1 / eta), integrated by Gauss-Legendre quadrature over the visible normals
(mitsuba.eval_reflectance). A .drs plugin has no load-time step, so this script samples
exactly that quantity on a Chebyshev grid over alpha in [0, 1] and 1 / eta in [1/3, 1]
(eta from 1 to 3), fits a tensor Chebyshev series of degree 8 x 8 by least squares, and
writes it in the power basis (its f32 evaluation is checked here too). It prints the
largest error on random points off the grid: 1.0e-3 (GGX) and 1.8e-3 (Beckmann) with
Mitsuba 3.9.1.
"""
import numpy as np
from numpy.polynomial import chebyshev as cheb

import mitsuba as mi

mi.set_variant("llvm_ad_rgb")

DEGREE = 8
GRID = 22
INV_ETA_MIN = 1.0 / 3.0
MU = np.maximum(1e-6, np.linspace(0, 1, 64)).astype(np.float32)
WI = mi.Vector3f(mi.Float(np.sqrt(1 - MU**2)), mi.Float(0 * MU), mi.Float(MU))
DISTRIBUTIONS = {"ggx": mi.MicrofacetType.GGX, "beckmann": mi.MicrofacetType.Beckmann}


def internal_reflectance(kind, alpha, inv_eta):
    """Mitsuba's m_internal_reflectance (roughplastic.cpp, parameters_changed)."""
    alpha = max(alpha, 1e-4)
    reflectance = np.array(mi.eval_reflectance(kind, alpha, alpha, WI, inv_eta))
    return np.mean(reflectance * MU) * 2


def to_unit(alpha, inv_eta):
    """The fit's variables s, y in [-1, 1]."""
    return 2 * alpha - 1, 2 * (inv_eta - INV_ETA_MIN) / (1 - INV_ETA_MIN) - 1


def eval_f32(power, s, y):
    """Horner evaluation in f32, as the .drs code does it."""
    s, y = np.float32(s), np.float32(y)
    total = np.float32(0)
    for k in range(DEGREE, -1, -1):
        inner = np.float32(0)
        for l in range(DEGREE, -1, -1):
            inner = np.float32(inner * y + power[k, l])
        total = np.float32(total * s + inner)
    return total


def drs_function(name, power):
    """The fit as a .drs function of s and y (poly8 evaluates a polynomial of degree 8)."""
    lines = [f"fn {name}(s: f32, y: f32) -> f32 {{"]
    for k in range(DEGREE + 1):
        terms = [f"{power[k, l]:.8e}" for l in range(DEGREE + 1)]
        lines.append(f"    let p{k} = poly8(y, [")
        lines.append("        " + ", ".join(terms[:5]) + ",")
        lines.append("        " + ", ".join(terms[5:]) + ",")
        lines.append("    ]);")
    lines.append("    poly8(s, [" + ", ".join(f"p{k}" for k in range(DEGREE + 1)) + "])")
    lines.append("}")
    return "\n".join(lines)


def main():
    nodes = (np.cos(np.pi * (np.arange(GRID) + 0.5) / GRID) + 1) / 2
    alphas = nodes
    inv_etas = INV_ETA_MIN + nodes * (1 - INV_ETA_MIN)
    rng = np.random.default_rng(1)
    check_alpha = rng.uniform(0, 1, 150)
    check_inv_eta = rng.uniform(INV_ETA_MIN, 1, 150)
    # Chebyshev T_i(s) = sum_k to_power[i, k] s^k.
    to_power = np.zeros((DEGREE + 1, DEGREE + 1))
    for i in range(DEGREE + 1):
        p = cheb.cheb2poly(np.eye(DEGREE + 1)[i])
        to_power[i, : len(p)] = p
    for name, kind in DISTRIBUTIONS.items():
        values = np.array([[internal_reflectance(kind, a, x) for x in inv_etas] for a in alphas])
        s, y = np.meshgrid(*to_unit(alphas, inv_etas), indexing="ij")
        design = cheb.chebvander2d(s.ravel(), y.ravel(), [DEGREE, DEGREE])
        coefficients, *_ = np.linalg.lstsq(design, values.ravel(), rcond=None)
        power = (to_power.T @ coefficients.reshape(DEGREE + 1, DEGREE + 1) @ to_power).astype(np.float32)
        errors = [
            abs(eval_f32(power, *to_unit(a, x)) - internal_reflectance(kind, a, x))
            for a, x in zip(check_alpha, check_inv_eta)
        ]
        print(f"// {name}: largest error at 150 random points {max(errors):.1e}")
        print(drs_function(f"internal_reflectance_{name}", power))
        print()


if __name__ == "__main__":
    main()
