"""Checks the Mitsuba 3 reference images against what is known about their scenes, and prints
their per-channel means (the numbers tests/references/README.md lists).

usage: $MITSUBA_PY check_references.py REFERENCE_DIR
Exits 1 and says which check failed when a reference is missing, too large for the repository,
not a 64x64 RGB float image, negative or not finite, or off the analytic answer of
white_furnace (sphere = albedo, background = 1) or directional_plane (every pixel
rho / pi * E * cos(theta)).
"""
import math
import os
import sys

import mitsuba as mi
import numpy as np

mi.set_variant("scalar_rgb")

SCENES = [
    "white_furnace",
    "cornell_box",
    "sphere_point",
    "directional_plane",
    "area_disk_direct",
    "bitmap_plane",
    "dielectric_sphere",
    "thindielectric_sphere",
    "roughdielectric_sphere",
    "plastic_sphere",
    "roughplastic_sphere",
    "conductor",
    "roughconductor",
    "twosided",
    "blendbsdf",
    "mask",
    "spot",
    "envmap",
    "normalmap",
    "bumpmap",
    "aov",
]
MAX_BYTES = 200_000
# The aov scene's channels: depth, position, uv, geometric and shading normals, albedo.
AOV_CHANNELS = 15
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)


def white_furnace(image):
    """Pixels whose whole footprint lies inside the sphere's silhouette must be the albedo (0.5);
    pixels whose whole footprint lies outside it the environment (1)."""
    height, width, _ = image.shape
    # The scene: a unit sphere seen from distance 4, fov 40 degrees along x (square film).
    tan_half_fov = math.tan(math.radians(40 / 2))
    tan_silhouette = math.tan(math.asin(1 / 4))
    # Pixel centres on the image plane at distance 1, and a pixel's half diagonal there.
    pixel = 2 * tan_half_fov / width
    coords = (np.arange(width) + 0.5) * pixel - tan_half_fov
    radius = np.hypot(coords[None, :], coords[:, None])
    margin = pixel * math.sqrt(0.5)
    inside = image[radius < tan_silhouette - margin]
    outside = image[radius > tan_silhouette + margin]
    check(inside.size > 0 and outside.size > 0, "white_furnace: no pixels fully inside or outside the sphere")
    sphere_mean = inside.mean()
    check(abs(sphere_mean - 0.5) < 1e-3, f"white_furnace: sphere mean {sphere_mean:.5f}, expected 0.5")
    check(np.abs(inside - 0.5).max() < 0.02, f"white_furnace: a sphere pixel is {np.abs(inside - 0.5).max():.4f} off 0.5")
    check(np.abs(outside - 1).max() < 1e-6, "white_furnace: background is not 1")
    print(f"  sphere pixels ({len(inside)}): mean {sphere_mean:.5f}, worst {np.abs(inside - 0.5).max():.5f} off; "
          f"background ({len(outside)}): {outside.min():.6f}..{outside.max():.6f}")


def directional_plane(image):
    """Every pixel sees the plane: rho / pi * E * cos(theta) with rho = (0.8, 0.5, 0.2), E = 3,
    theta = 60 degrees."""
    expected = np.array([0.8, 0.5, 0.2]) / math.pi * 3 * 0.5
    worst = np.abs(image / expected - 1).max()
    check(worst < 1e-4, f"directional_plane: a pixel is {worst:.2e} (relative) off {expected}")
    print(f"  every pixel within {worst:.1e} (relative) of {np.round(expected, 6)}")


def main(directory):
    for scene in SCENES:
        path = os.path.join(directory, scene + ".exr")
        if not os.path.exists(path):
            check(False, f"{path}: missing")
            continue
        size = os.path.getsize(path)
        check(size < MAX_BYTES, f"{path}: {size} bytes, more than {MAX_BYTES}")
        bitmap = mi.Bitmap(path)
        image = np.array(bitmap, dtype=np.float64)
        channels = AOV_CHANNELS if scene == "aov" else 3
        shape_ok = image.shape == (64, 64, channels) and bitmap.component_format() == mi.Struct.Type.Float32
        check(shape_ok, f"{path}: {image.shape} {bitmap.component_format()}, expected 64x64x{channels} float32")
        # AOVs (positions, normals) may be negative; radiance may not.
        non_negative = scene == "aov" or (image >= 0).all()
        check(bool(np.isfinite(image).all() and non_negative), f"{path}: negative or non-finite pixels")
        means = ", ".join(f"{m:.5f}" for m in image.reshape(-1, image.shape[-1]).mean(axis=0))
        print(f"{scene}: {size / 1000:.1f} KB, channel means (R, G, B) = ({means})")
        if scene == "white_furnace":
            white_furnace(image)
        elif scene == "directional_plane":
            directional_plane(image)
    for failure in failures:
        print("check failed:", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
