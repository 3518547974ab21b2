"""Trace rays from files with Mitsuba 3 (Embree in the llvm variants) and print the time per ray.

usage: $MITSUBA_PY traversal_rays.py SCENE.xml DIR [--threads N] [--copies K] [--variant V]
DIR holds bounce.f32 (closest hits, `Scene::ray_intersect_preliminary`) and shadow.f32 (any hit,
`Scene::ray_test`), seven little-endian f32 per ray: origin, direction, maxt, as written by
`DRS_DUMP_RAYS=DIR cargo bench -p drs-benches --bench render`. The rays are repeated K times
(default 16) so that one launch is large enough to time; the best of six launches is reported.
"""
import argparse, time
import numpy as np
import mitsuba as mi
import drjit as dr

ap = argparse.ArgumentParser()
ap.add_argument("scene"); ap.add_argument("dir")
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--copies", type=int, default=16)
ap.add_argument("--variant", default="llvm_ad_rgb")
a = ap.parse_args()
mi.set_variant(a.variant)
dr.set_thread_count(a.threads)
scene = mi.load_file(a.scene)

for name, closest in [("bounce", True), ("shadow", False)]:
    rays = np.fromfile(f"{a.dir}/{name}.f32", dtype="<f4").reshape(-1, 7)
    columns = np.tile(rays, (a.copies, 1)).T.copy()
    ray = mi.Ray3f(o=mi.Point3f(*map(mi.Float, columns[0:3])), d=mi.Vector3f(*map(mi.Float, columns[3:6])))
    ray.maxt = mi.Float(columns[6])
    dr.eval(ray)
    best = float("inf")
    for _ in range(6):
        start = time.perf_counter()
        found = scene.ray_intersect_preliminary(ray).is_valid() if closest else scene.ray_test(ray)
        count = dr.count(found)[0]
        best = min(best, time.perf_counter() - start)
    kind = "closest hit" if closest else "any hit"
    print(f"mitsuba {name} ({kind}): {count // a.copies} of {len(rays)} hit, "
          f"{best * 1e9 / (len(rays) * a.copies):.1f} ns/ray ({a.threads} thread(s), {a.variant})")
