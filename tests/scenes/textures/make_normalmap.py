"""Writes tests/scenes/textures/bumps_32x32.png, the normal map of tests/scenes/normalmap.xml,
and tests/scenes/textures/heights_32x32.png, the height map of tests/scenes/bumpmap.xml.

Tangent-space normals of a height field of 2 x 2 smooth bumps, h(u, v) = 0.15 sin(2 pi 2u)
sin(2 pi 2v) over the unit square, encoded as 8-bit colours c = (n + 1) / 2 (to be read with
`raw` true); the heights are 0.5 + 0.5 sin(2 pi 2u) sin(2 pi 2v), 8-bit grey. Run with the Python of ../shared/tools/mitsuba-peer.sh:

    python tests/scenes/textures/make_normalmap.py
"""

import math
import os

import mitsuba as mi
import numpy as np

mi.set_variant("scalar_rgb")

SIZE = 32
AMPLITUDE = 0.15
FREQUENCY = 2.0

pixels = np.zeros((SIZE, SIZE, 3), dtype=np.uint8)
for y in range(SIZE):
    for x in range(SIZE):
        u, v = (x + 0.5) / SIZE, (y + 0.5) / SIZE
        k = 2 * math.pi * FREQUENCY
        dh_du = AMPLITUDE * k * math.cos(k * u) * math.sin(k * v)
        dh_dv = AMPLITUDE * k * math.sin(k * u) * math.cos(k * v)
        n = np.array([-dh_du, -dh_dv, 1.0])
        n /= np.linalg.norm(n)
        pixels[y, x] = np.round((n + 1) / 2 * 255)
directory = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(directory, "bumps_32x32.png")
mi.Bitmap(pixels, mi.Bitmap.PixelFormat.RGB).write(path)
print("wrote", path)

heights = np.zeros((SIZE, SIZE, 1), dtype=np.uint8)
for y in range(SIZE):
    for x in range(SIZE):
        u, v = (x + 0.5) / SIZE, (y + 0.5) / SIZE
        k = 2 * math.pi * FREQUENCY
        heights[y, x] = round((0.5 + 0.5 * math.sin(k * u) * math.sin(k * v)) * 255)
path = os.path.join(directory, "heights_32x32.png")
mi.Bitmap(heights, mi.Bitmap.PixelFormat.Y).write(path)
print("wrote", path)
