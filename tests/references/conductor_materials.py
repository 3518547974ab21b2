"""Prints the table of Mitsuba 3's conductor `material` presets as the RGB variants use them,
as the Rust constant `CONDUCTOR_MATERIALS` of runtime/render/src/materials.rs: (name, eta, k).

usage: $MITSUBA_PY tests/references/conductor_materials.py     (a few seconds; Mitsuba from
       ../shared/tools/mitsuba-peer.sh: `source <(../shared/tools/mitsuba-peer.sh --env)`)

Mitsuba ships the measured spectral data of each preset as two files, data/ior/NAME.eta.spd
and data/ior/NAME.k.spd, and in RGB mode turns each spectrum into one linear sRGB colour
when the BSDF is loaded. Rather than repeating that conversion, this script loads a
`conductor` with every preset found next to the installed Mitsuba (plus "none", the default:
no preset, eta 0 and k 1) in the variants `scalar_rgb` and `llvm_ad_rgb`, checks that both
agree, and prints the eta and k colours it reads back with `mi.traverse`, each f32 written
with the shortest digits that give it back exactly. Components the conversion makes
negative (a few near-zero k of insulators) Mitsuba clamps to 0; the table has what Mitsuba
renders with. Numbers printed with Mitsuba 3.9.1.
"""
import os

import numpy as np

import mitsuba as mi

VARIANTS = ["scalar_rgb", "llvm_ad_rgb"]


def preset_names():
    data = os.path.join(os.path.dirname(mi.__file__), "data", "ior")
    eta = {f[: -len(".eta.spd")] for f in os.listdir(data) if f.endswith(".eta.spd")}
    k = {f[: -len(".k.spd")] for f in os.listdir(data) if f.endswith(".k.spd")}
    assert eta == k, f"presets without both files: {sorted(eta ^ k)}"
    return ["none"] + sorted(eta)


def rgb(value):
    """A traversed texture value (a colour, or one float for "none") as three f32."""
    values = np.array(value, dtype=np.float32).reshape(-1)
    if values.size == 1:
        values = np.repeat(values, 3)
    assert values.size == 3, value
    return values


def preset(variant, name):
    mi.set_variant(variant)
    # Mitsuba warns when it clamps a negative (out of gamut) component to 0; the table has
    # the clamped values, as Mitsuba renders with.
    mi.set_log_level(mi.LogLevel.Error)
    params = mi.traverse(mi.load_dict({"type": "conductor", "material": name}))
    return rgb(params["eta.value"]), rgb(params["k.value"])


def literal(x):
    x = np.float32(x)
    if x != 0 and abs(x) < 1e-3:
        return np.format_float_scientific(x, unique=True, trim="-", exp_digits=1)
    return np.format_float_positional(x, unique=True, trim="0")


def triple(values):
    return "[" + ", ".join(literal(x) for x in values) + "]"


def main():
    print(f"// Printed by tests/references/conductor_materials.py (Mitsuba {mi.__version__}, {' and '.join(VARIANTS)}).")
    print("pub const CONDUCTOR_MATERIALS: [(&str, [f32; 3], [f32; 3]); %d] = [" % len(preset_names()))
    for name in preset_names():
        (eta, k), *others = [preset(variant, name) for variant in VARIANTS]
        for other_eta, other_k in others:
            assert np.array_equal(eta, other_eta) and np.array_equal(k, other_k), f"{name}: variants differ"
        print(f'    ("{name}", {triple(eta)}, {triple(k)}),')
    print("];")


if __name__ == "__main__":
    main()
