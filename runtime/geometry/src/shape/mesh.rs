//! Triangle meshes in world space, with Mitsuba's mesh conventions: vertex normals are
//! generated (angle-weighted) where the file has none unless `face_normals` is set, mirroring
//! transforms and `flip_normals` reverse the winding, and surfaces without texture coordinates
//! are parametrised by their barycentrics.

use std::collections::HashMap;
use std::f32::consts::PI;

use crate::error::GeometryError;
use crate::interaction::{shading_frame, Hit, SurfaceInteraction};
use crate::math::{Aabb, Ray, Transform, Vec2, Vec3};
use crate::sampling::{square_to_uniform_triangle, DiscreteDistribution, PositionSample, PositionSamples};
use crate::triangle::{intersect_triangle, RayShear, TriangleHit};

/// A mesh as a file or a generator describes it, in object space. Attributes are per vertex;
/// a zero vertex normal means "none given" and is replaced by a generated one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    pub positions: Vec<Vec3>,
    pub normals: Option<Vec<Vec3>>,
    pub uvs: Option<Vec<Vec2>>,
    pub triangles: Vec<[u32; 3]>,
}

impl MeshData {
    /// `v ← 1 − v`: Mitsuba's `flip_tex_coords`, which defaults to true for OBJ files and to
    /// false for PLY files. The loaders return texture coordinates as the file has them.
    pub fn flip_tex_coords(&mut self) {
        for uv in self.uvs.iter_mut().flatten() {
            uv.y = 1.0 - uv.y;
        }
    }
}

/// Mitsuba's per-mesh flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshOptions {
    /// Turn the surface around: reversed winding (so the geometric normal flips) and negated
    /// vertex normals.
    pub flip_normals: bool,
    /// Drop vertex normals and shade with the geometric normal (faceted look).
    pub face_normals: bool,
}

/// A triangle mesh in world space.
#[derive(Clone, Debug)]
pub struct TriangleMesh {
    positions: Vec<Vec3>,
    /// Unit vertex normals; `None` exactly when the mesh uses face normals.
    normals: Option<Vec<Vec3>>,
    uvs: Option<Vec<Vec2>>,
    triangles: Vec<[u32; 3]>,
    /// Triangle choice proportional to area, for area sampling.
    area_distribution: DiscreteDistribution,
    /// Set for the `rectangle` generator's meshes, which sample their parallelogram directly.
    parallelogram: Option<Parallelogram>,
    /// For a mesh with face normals, each triangle's normal and the first two axes of its
    /// shading frame, which are the same at every point of the triangle
    /// (`surface_interaction`'s values).
    face_frames: Option<Vec<[Vec3; 3]>>,
}

/// A mesh that is one parallelogram with positive area, sampled as Mitsuba samples its analytic
/// rectangle: `sample` maps affinely onto it and is its uv. That needs no triangle choice, no
/// interpolation and no normalisation, which as a mesh took most of an area light's sampling
/// time in the Cornell box.
#[derive(Clone, Copy, Debug)]
struct Parallelogram {
    /// The corner where uv is (0, 0).
    corner: Vec3,
    /// From it to the corners where uv is (1, 0) and (0, 1).
    edge_u: Vec3,
    edge_v: Vec3,
    normal: Vec3,
    pdf: f32,
}

impl TriangleMesh {
    /// Validates `data`, maps it to world space (normals with the inverse transpose) and applies
    /// the options.
    pub fn new(data: MeshData, to_world: &Transform, options: MeshOptions) -> Result<TriangleMesh, GeometryError> {
        validate(&data)?;
        let MeshData { positions, normals, uvs, mut triangles } = data;
        let positions: Vec<Vec3> = positions.into_iter().map(|p| to_world.point(p)).collect();
        // A mirroring transform turns the surface inside out; flip_normals turns it back.
        if (to_world.determinant() < 0.0) != options.flip_normals {
            for tri in &mut triangles {
                tri.swap(0, 2);
            }
        }
        let normals = if options.face_normals {
            None
        } else {
            let sign = if options.flip_normals { -1.0 } else { 1.0 };
            let given = normals.map(|ns| ns.into_iter().map(|n| (to_world.normal(n) * sign).normalize_or_zero()));
            let mut normals: Vec<Vec3> = match given {
                Some(ns) => ns.collect(),
                None => vec![Vec3::ZERO; positions.len()],
            };
            if normals.contains(&Vec3::ZERO) {
                fill_missing_normals(&positions, &triangles, &mut normals);
            }
            Some(normals)
        };
        let area_distribution = DiscreteDistribution::new(triangles.iter().map(|t| {
            let [p0, p1, p2] = t.map(|i| positions[i as usize]);
            0.5 * (p1 - p0).cross(p2 - p0).length()
        }));
        let mut mesh = TriangleMesh {
            positions,
            normals,
            uvs,
            triangles,
            area_distribution,
            parallelogram: None,
            face_frames: None,
        };
        if mesh.normals.is_none() {
            // Computed by `surface_interaction` itself, so that they are its bits.
            let frames = (0..mesh.triangles.len() as u32).map(|prim_index| {
                let hit = Hit { t: 0.0, shape_index: 0, prim_index, prim_uv: Vec2::ZERO };
                let si = mesh.surface_interaction(&Ray::new(Vec3::ZERO, Vec3::Z), &hit);
                [si.n, si.sh_frame.s, si.sh_frame.t]
            });
            mesh.face_frames = Some(frames.collect());
        }
        Ok(mesh)
    }

    /// Marks this mesh, made by the `rectangle` generator (whose vertices 0, 1 and 2 are the
    /// corners with uv (0, 0), (1, 0) and (0, 1)), as the parallelogram it is, so that area
    /// sampling maps onto it directly. A rectangle without area keeps the mesh's zero-density
    /// sampling.
    pub(crate) fn sampled_as_rectangle(mut self) -> TriangleMesh {
        let area = self.surface_area();
        if area > 0.0 {
            let [corner, corner_u, corner_v] = [0, 1, 2].map(|i| self.positions[i]);
            let [p0, p1, p2] = self.triangle_positions(0);
            self.parallelogram = Some(Parallelogram {
                corner,
                edge_u: corner_u - corner,
                edge_v: corner_v - corner,
                normal: (p1 - p0).cross(p2 - p0).normalize(),
                pdf: 1.0 / area,
            });
        }
        self
    }

    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Unit vertex normals, `None` for a mesh with face normals.
    pub fn normals(&self) -> Option<&[Vec3]> {
        self.normals.as_deref()
    }

    /// Each triangle's normal and shading frame's first two axes, for a mesh with face
    /// normals (see the field).
    pub(crate) fn face_frames(&self) -> Option<&[[Vec3; 3]]> {
        self.face_frames.as_deref()
    }

    pub fn uvs(&self) -> Option<&[Vec2]> {
        self.uvs.as_deref()
    }

    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    pub fn triangle_positions(&self, triangle: usize) -> [Vec3; 3] {
        self.triangles[triangle].map(|i| self.positions[i as usize])
    }

    pub fn bounds(&self) -> Aabb {
        Aabb::from_points(&self.positions)
    }

    pub fn surface_area(&self) -> f32 {
        self.area_distribution.total() as f32
    }

    pub(crate) fn intersect_triangle(&self, triangle: usize, shear: &RayShear, maxt: f32) -> Option<TriangleHit> {
        intersect_triangle(shear, &self.triangle_positions(triangle), maxt)
    }

    /// Mitsuba `Mesh::compute_surface_interaction`: the point from the barycentrics, the face
    /// normal, interpolated vertex normals, uv partials by the change of variables from
    /// barycentrics to texture coordinates, and the shading frame along dp/du.
    pub(crate) fn surface_interaction(&self, ray: &Ray, hit: &Hit) -> SurfaceInteraction {
        let tri = self.triangles[hit.prim_index as usize];
        let [p0, p1, p2] = tri.map(|i| self.positions[i as usize]);
        let (b1, b2) = (hit.prim_uv.x, hit.prim_uv.y);
        let b0 = 1.0 - b1 - b2;
        let e1 = p1 - p0;
        let e2 = p2 - p0;
        let n = e1.cross(e2).normalize();
        let shading_n = match &self.normals {
            Some(ns) => {
                let [n0, n1, n2] = tri.map(|i| ns[i as usize]);
                (n0 * b0 + n1 * b1 + n2 * b2).normalize()
            }
            None => n,
        };
        let (uv, dp_du, dp_dv) = match &self.uvs {
            Some(uvs) => {
                let [uv0, uv1, uv2] = tri.map(|i| uvs[i as usize]);
                let duv1 = uv1 - uv0;
                let duv2 = uv2 - uv0;
                let det = duv1.x * duv2.y - duv1.y * duv2.x;
                let inv_det = if det != 0.0 { 1.0 / det } else { 0.0 };
                (
                    uv0 * b0 + uv1 * b1 + uv2 * b2,
                    (e1 * duv2.y - e2 * duv1.y) * inv_det,
                    (e2 * duv1.x - e1 * duv2.x) * inv_det,
                )
            }
            None => (Vec2::new(b1, b2), e1, e2),
        };
        // Mitsuba's frame: its first axis follows dp/du (normal maps and anisotropic BSDFs
        // depend on it).
        let sh_frame = shading_frame(shading_n, dp_du);
        SurfaceInteraction {
            t: hit.t,
            p: p0 * b0 + p1 * b1 + p2 * b2,
            n,
            uv,
            sh_frame,
            dp_du,
            dp_dv,
            wi: sh_frame.to_local(-ray.d),
            shape_index: hit.shape_index,
            prim_index: hit.prim_index,
        }
    }

    /// [`Self::sample_position`] for the lanes in `lanes` (see `Shape::sample_positions`); a
    /// parallelogram's for every lane at once in vector instructions, each lane with the
    /// one-lane arithmetic (the same bits).
    // Index loops, which the compiler vectorises.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn sample_positions<const L: usize>(
        &self,
        u: &[f32; L],
        v: &[f32; L],
        lanes: u32,
    ) -> PositionSamples<L> {
        let Some(rect) = &self.parallelogram else {
            return PositionSamples::by_lane(u, v, lanes, |sample| self.sample_position(sample));
        };
        let mut p = [[0.0; L]; 3];
        for axis in 0..3 {
            let (corner, edge_u, edge_v) = (rect.corner[axis], rect.edge_u[axis], rect.edge_v[axis]);
            for lane in 0..L {
                p[axis][lane] = corner + edge_u * u[lane] + edge_v * v[lane];
            }
        }
        let n = [rect.normal.x, rect.normal.y, rect.normal.z].map(|c| [c; L]);
        PositionSamples { p, n, uv: [*u, *v], pdf: [rect.pdf; L] }
    }

    /// Mitsuba `Mesh::sample_position`: `sample.y` picks a triangle by area and is reused with
    /// `sample.x` to pick a point uniformly in it. A mesh without area gives `pdf = 0`. A
    /// rectangle maps `sample` onto itself instead, as Mitsuba's analytic rectangle does.
    pub(crate) fn sample_position(&self, sample: Vec2) -> PositionSample {
        if let Some(rect) = &self.parallelogram {
            let p = rect.corner + rect.edge_u * sample.x + rect.edge_v * sample.y;
            return PositionSample { p, n: rect.normal, uv: sample, pdf: rect.pdf };
        }
        let Some((triangle, reused)) = self.area_distribution.sample_reuse(sample.y) else {
            return PositionSample { p: Vec3::ZERO, n: Vec3::Z, uv: Vec2::ZERO, pdf: 0.0 };
        };
        let tri = self.triangles[triangle];
        let [p0, p1, p2] = tri.map(|i| self.positions[i as usize]);
        let b = square_to_uniform_triangle(Vec2::new(sample.x, reused));
        let b0 = 1.0 - b.x - b.y;
        let uv = match &self.uvs {
            Some(uvs) => {
                let [uv0, uv1, uv2] = tri.map(|i| uvs[i as usize]);
                uv0 * b0 + uv1 * b.x + uv2 * b.y
            }
            None => b,
        };
        let n = match &self.normals {
            Some(ns) => {
                let [n0, n1, n2] = tri.map(|i| ns[i as usize]);
                (n0 * b0 + n1 * b.x + n2 * b.y).normalize()
            }
            None => (p1 - p0).cross(p2 - p0).normalize(),
        };
        PositionSample { p: p0 + (p1 - p0) * b.x + (p2 - p0) * b.y, n, uv, pdf: 1.0 / self.surface_area() }
    }
}

fn validate(data: &MeshData) -> Result<(), GeometryError> {
    let vertex_count = data.positions.len();
    let check_count = |attribute, found| {
        if found == vertex_count {
            Ok(())
        } else {
            Err(GeometryError::AttributeCount { attribute, expected: vertex_count, found })
        }
    };
    if let Some(normals) = &data.normals {
        check_count("normals", normals.len())?;
    }
    if let Some(uvs) = &data.uvs {
        check_count("uvs", uvs.len())?;
    }
    let non_finite = |attribute, index: Option<usize>| match index {
        Some(vertex) => Err(GeometryError::NonFiniteVertex { vertex, attribute }),
        None => Ok(()),
    };
    non_finite("position", data.positions.iter().position(|p| !p.is_finite()))?;
    non_finite("normal", data.normals.iter().flatten().position(|n| !n.is_finite()))?;
    non_finite("uv", data.uvs.iter().flatten().position(|uv| !uv.is_finite()))?;
    for (triangle, tri) in data.triangles.iter().enumerate() {
        if let Some(&index) = tri.iter().find(|&&i| i as usize >= vertex_count) {
            return Err(GeometryError::IndexOutOfRange { triangle, index, vertex_count });
        }
    }
    Ok(())
}

/// Replaces zero normals by angle-weighted averages of the face normals around the vertex
/// (Thürmer and Wüthrich 1998, as Mitsuba's `compute_normals`). Vertices at the same position
/// share one normal, so seams in the texture coordinates do not become creases.
fn fill_missing_normals(positions: &[Vec3], triangles: &[[u32; 3]], normals: &mut [Vec3]) {
    let mut group_of_position: HashMap<[u32; 3], usize> = HashMap::new();
    let groups: Vec<usize> = positions
        .iter()
        .map(|p| {
            let next = group_of_position.len();
            *group_of_position.entry(p.to_array().map(f32::to_bits)).or_insert(next)
        })
        .collect();
    let mut sums = vec![Vec3::ZERO; group_of_position.len()];
    for tri in triangles {
        let p = tri.map(|i| positions[i as usize]);
        let Some(face_normal) = (p[1] - p[0]).cross(p[2] - p[0]).try_normalize() else { continue };
        for k in 0..3 {
            let to_next = (p[(k + 1) % 3] - p[k]).normalize_or_zero();
            let to_prev = (p[(k + 2) % 3] - p[k]).normalize_or_zero();
            sums[groups[tri[k] as usize]] += face_normal * unit_angle(to_next, to_prev);
        }
    }
    for (normal, group) in normals.iter_mut().zip(&groups) {
        if *normal == Vec3::ZERO {
            // A vertex on no proper triangle gets an arbitrary normal, as in Mitsuba.
            *normal = sums[*group].try_normalize().unwrap_or(Vec3::X);
        }
    }
}

/// The angle between two unit vectors, accurate also near 0 and π.
fn unit_angle(a: Vec3, b: Vec3) -> f32 {
    if a.dot(b) < 0.0 {
        PI - 2.0 * ((a + b).length() * 0.5).min(1.0).asin()
    } else {
        2.0 * ((a - b).length() * 0.5).min(1.0).asin()
    }
}
