"""Writes tests/scenes/textures/sky_32x16.exr, the environment map of tests/scenes/envmap.xml.

A 32x16 latitude-longitude map (Mitsuba's convention: row 0 on the pole at +y, the last row on
the pole at -y): a sky that brightens from blue at the zenith to pale at the horizon, a dim
brown ground below it, and a small, very bright sun (3x2 texels, about 400 times the sky) so
that importance sampling matters. Run with the Python of ../shared/tools/mitsuba-peer.sh:

    python tests/scenes/textures/make_envmap.py
"""

import math
import os

import mitsuba as mi

mi.set_variant("scalar_rgb")

WIDTH, HEIGHT = 32, 16
SUN = {(4, 19): 1.0, (4, 20): 1.0, (4, 21): 0.6, (5, 19): 0.6, (5, 20): 0.8, (5, 21): 0.4}


def texel(y, x):
    theta = math.pi * y / (HEIGHT - 1)
    if theta < math.pi / 2:
        t = theta / (math.pi / 2)
        rgb = [0.25 + 0.55 * t, 0.45 + 0.4 * t, 0.95 - 0.05 * t]
    else:
        rgb = [0.12, 0.08, 0.05]
    sun = SUN.get((y, x), 0.0)
    return [c + sun * s for c, s in zip(rgb, (400.0, 360.0, 300.0))]


data = [texel(y, x) for y in range(HEIGHT) for x in range(WIDTH)]
bitmap = mi.Bitmap(mi.TensorXf([c for t in data for c in t], (HEIGHT, WIDTH, 3)), mi.Bitmap.PixelFormat.RGB)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sky_32x16.exr")
bitmap.write(path)
print("wrote", path)
