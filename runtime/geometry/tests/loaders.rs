//! OBJ and PLY loaders: the files in `tests/data`, binary PLYs written here in every integer
//! type and both byte orders, and malformed input reported at the exact line and column or
//! byte offset.

use std::path::{Path, PathBuf};

use drs_geometry::io::{obj, ply, LoadError, Location};
use drs_geometry::math::{Vec2, Vec3};
use drs_geometry::MeshData;

fn data_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// The unit quad of the data files: positions, +z normals, uv = xy, two triangles.
fn assert_unit_quad(mesh: &MeshData) {
    let corners = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
    assert_eq!(mesh.positions, corners);
    assert_eq!(mesh.normals.as_deref(), Some(&[Vec3::Z; 4][..]));
    let uvs: Vec<Vec2> = corners.iter().map(|p| p.truncate()).collect();
    assert_eq!(mesh.uvs.as_deref(), Some(&uvs[..]));
    assert_eq!(mesh.triangles, [[0, 1, 2], [0, 2, 3]]);
}

fn text_error(result: Result<MeshData, LoadError>) -> (usize, usize, String) {
    match result {
        Err(LoadError::Malformed { location: Location::Text { line, column }, message, .. }) => (line, column, message),
        other => panic!("expected a text error, got {other:?}"),
    }
}

fn byte_error(result: Result<MeshData, LoadError>) -> (usize, String) {
    match result {
        Err(LoadError::Malformed { location: Location::Byte(offset), message, .. }) => (offset, message),
        other => panic!("expected a binary error, got {other:?}"),
    }
}

#[test]
fn obj_quad_with_all_attributes() {
    assert_unit_quad(&obj::load(&data_file("quad.obj")).unwrap());
}

#[test]
fn obj_polygon_with_relative_indices_becomes_a_fan() {
    let mesh = obj::load(&data_file("pentagon_relative.obj")).unwrap();
    assert_eq!(mesh.positions.len(), 5);
    assert_eq!(mesh.triangles, [[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
    assert!(mesh.normals.is_none() && mesh.uvs.is_none());
}

#[test]
fn obj_corners_without_attributes_get_placeholders() {
    let mesh = obj::load(&data_file("partial_attributes.obj")).unwrap();
    // Corners (1), (2), (3) from the first face, then (2, t1), (4, t1), (3, n1): six vertices.
    assert_eq!(mesh.positions, [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y]);
    assert_eq!(mesh.triangles, [[0, 1, 2], [3, 4, 5]]);
    let uvs = mesh.uvs.unwrap();
    assert_eq!(uvs, [Vec2::ZERO, Vec2::ZERO, Vec2::ZERO, Vec2::new(0.5, 0.25), Vec2::new(0.5, 0.25), Vec2::ZERO]);
    // Missing normals are zero, which the mesh replaces by generated ones.
    let normals = mesh.normals.unwrap();
    assert_eq!(normals[5], Vec3::new(0.0, 0.0, 2.0));
    assert!(normals[..5].iter().all(|n| *n == Vec3::ZERO));
}

#[test]
fn obj_tex_coords_flip_on_request() {
    let mut mesh = obj::load(&data_file("quad.obj")).unwrap();
    mesh.flip_tex_coords();
    assert_eq!(mesh.uvs.unwrap()[1], Vec2::new(1.0, 1.0));
}

#[test]
fn obj_errors_point_at_the_line_and_column() {
    let bad = obj::load(&data_file("bad_index.obj"));
    let message = bad.as_ref().unwrap_err().to_string();
    assert!(
        message.ends_with("bad_index.obj:6:7: vertex position index 7 is out of range: 3 defined so far"),
        "{message}"
    );
    let parse = |text: &str| text_error(obj::parse(text.as_bytes(), Path::new("inline.obj")));
    let cases: [(&str, (usize, usize), &str); 9] = [
        ("v 1 2\n", (1, 6), "expected 3 numbers, found 2"),
        ("v 0 0 0\nv 1 x 3\n", (2, 5), "expected a number, found `x`"),
        ("v 0 0 inf\n", (1, 7), "`inf` is not a finite number"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", (4, 3), "vertex position index 0 is invalid (OBJ indices start at 1)"),
        ("v 0 0 0\nv 1 0 0\nf 1 2\n", (3, 6), "a face needs at least 3 corners, found 2"),
        ("v 0 0 0\n  f 1/1/1/1 1 1\n", (2, 5), "`1/1/1/1` is not a face corner (p, p/t, p//n or p/t/n)"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n", (4, 3), "vertex position index -4 is out of range: 3 defined so far"),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/1 2/2 3/1\n",
            (5, 7),
            "texture coordinate index 2 is out of range: 1 defined so far",
        ),
        ("v 0 0 0\r\nv 1 0 0\r\nf 1 2 x\r\n", (3, 7), "`x` is not a vertex position index"),
    ];
    for (text, (line, column), message) in cases {
        assert_eq!(parse(text), (line, column, message.to_string()), "for {text:?}");
    }
}

#[test]
fn missing_files_are_io_errors_with_the_path() {
    let error = obj::load(Path::new("/nonexistent/mesh.obj")).unwrap_err();
    assert!(matches!(error, LoadError::Io { .. }));
    assert!(error.to_string().starts_with("/nonexistent/mesh.obj: "));
    assert_eq!(error.location(), None);
    assert!(matches!(ply::load(Path::new("/nonexistent/mesh.ply")), Err(LoadError::Io { .. })));
}

#[test]
fn ply_ascii_quad_skips_extra_properties_and_elements() {
    assert_unit_quad(&ply::load(&data_file("quad_ascii.ply")).unwrap());
}

#[test]
fn ply_binary_quads_in_both_byte_orders() {
    assert_unit_quad(&ply::load(&data_file("quad_le.ply")).unwrap());
    assert_unit_quad(&ply::load(&data_file("quad_be.ply")).unwrap());
}

#[test]
fn ply_truncated_big_endian_file_reports_the_offset() {
    // 336 header bytes, 4 vertices of 44 bytes, one face of 18 bytes, then the second face's
    // count (2 bytes), two indices and half of the third, which starts at byte 540.
    let (offset, message) = byte_error(ply::load(&data_file("truncated_be.ply")));
    assert_eq!((offset, message.as_str()), (540, "the file ends inside property `vertex_index`"));
}

const TYPES: [(&str, usize); 6] = [("char", 1), ("uchar", 1), ("short", 2), ("ushort", 2), ("int", 4), ("uint", 4)];

/// `value` as the PLY integer type `ty` in the given byte order.
fn encode_integer(ty: &str, value: i64, big_endian: bool) -> Vec<u8> {
    let mut bytes = match ty {
        "char" => (value as i8).to_le_bytes().to_vec(),
        "uchar" => (value as u8).to_le_bytes().to_vec(),
        "short" => (value as i16).to_le_bytes().to_vec(),
        "ushort" => (value as u16).to_le_bytes().to_vec(),
        "int" => (value as i32).to_le_bytes().to_vec(),
        "uint" => (value as u32).to_le_bytes().to_vec(),
        _ => unreachable!(),
    };
    if big_endian {
        bytes.reverse();
    }
    bytes
}

/// A binary PLY with `positions` (float x y z, texture_u texture_v = x y) and `polygons`,
/// whose index lists use the given count and index types.
fn binary_ply(
    big_endian: bool,
    count_type: &str,
    index_type: &str,
    positions: &[Vec3],
    polygons: &[&[i64]],
) -> Vec<u8> {
    let format = if big_endian { "binary_big_endian" } else { "binary_little_endian" };
    let mut bytes = format!(
        "ply\r\nformat {format} 1.0\r\nelement vertex {}\r\nproperty float x\r\nproperty float y\r\nproperty float z\r\n\
         property float texture_u\r\nproperty float texture_v\r\nelement face {}\r\n\
         property list {count_type} {index_type} vertex_indices\r\nend_header\r\n",
        positions.len(),
        polygons.len()
    )
    .into_bytes();
    for p in positions {
        for value in [p.x, p.y, p.z, p.x, p.y] {
            let mut b = value.to_le_bytes();
            if big_endian {
                b.reverse();
            }
            bytes.extend(b);
        }
    }
    for polygon in polygons {
        bytes.extend(encode_integer(count_type, polygon.len() as i64, big_endian));
        for &index in *polygon {
            bytes.extend(encode_integer(index_type, index, big_endian));
        }
    }
    bytes
}

#[test]
fn ply_binary_faces_in_every_integer_type_and_byte_order() {
    let positions = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y, Vec3::new(0.5, 2.0, 0.0)];
    let polygons: [&[i64]; 2] = [&[0, 1, 2], &[0, 2, 4, 3]];
    for big_endian in [false, true] {
        for (count_type, _) in TYPES {
            for (index_type, _) in TYPES {
                let bytes = binary_ply(big_endian, count_type, index_type, &positions, &polygons);
                let mesh = ply::parse(&bytes, Path::new("generated.ply")).unwrap();
                assert_eq!(mesh.positions, positions);
                assert_eq!(mesh.uvs.as_ref().unwrap()[4], Vec2::new(0.5, 2.0));
                assert!(mesh.normals.is_none());
                assert_eq!(mesh.triangles, [[0, 1, 2], [0, 2, 4], [0, 4, 3]], "{count_type} {index_type}");
            }
        }
    }
}

#[test]
fn ply_binary_errors_report_byte_offsets() {
    let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let header_length = |bytes: &[u8]| bytes.windows(12).position(|w| w == b"end_header\r\n").unwrap() + 12;
    // Index 3 of 3 vertices: the third index of the face, after 3 vertices of 20 bytes and a
    // 1-byte count and two 4-byte indices.
    let bytes = binary_ply(false, "uchar", "int", &positions, &[&[0, 1, 3]]);
    let start = header_length(&bytes);
    let (offset, message) = byte_error(ply::parse(&bytes, Path::new("a.ply")));
    assert_eq!(offset, start + 60 + 1 + 8);
    assert_eq!(message, "vertex index 3 is out of range: the mesh has 3 vertices");
    // A negative index in a signed type.
    let bytes = binary_ply(true, "uchar", "short", &positions, &[&[0, -1, 2]]);
    assert_eq!(byte_error(ply::parse(&bytes, Path::new("a.ply"))).0, header_length(&bytes) + 60 + 1 + 2);
    // A negative list length.
    let mut bytes = binary_ply(false, "char", "int", &positions, &[&[0, 1, 2]]);
    let count_at = header_length(&bytes) + 60;
    bytes[count_at] = 0xFF;
    assert_eq!(byte_error(ply::parse(&bytes, Path::new("a.ply"))), (count_at, "negative list length -1".to_string()));
    // A face with two corners.
    let bytes = binary_ply(false, "uchar", "int", &positions, &[&[0, 1]]);
    assert_eq!(
        byte_error(ply::parse(&bytes, Path::new("a.ply"))),
        (header_length(&bytes) + 60 + 1 + 4, "a face needs at least 3 vertices, found 2".to_string())
    );
    // Bytes after the last element.
    let mut bytes = binary_ply(false, "uchar", "int", &positions, &[&[0, 1, 2]]);
    let end = bytes.len();
    bytes.extend([0, 0, 0]);
    assert_eq!(
        byte_error(ply::parse(&bytes, Path::new("a.ply"))),
        (end, "3 bytes of unexpected data after the last element".to_string())
    );
    // A position that is NaN.
    let mut bytes = binary_ply(false, "uchar", "int", &positions, &[&[0, 1, 2]]);
    let y_of_second = header_length(&bytes) + 20 + 4;
    bytes[y_of_second..y_of_second + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert_eq!(byte_error(ply::parse(&bytes, Path::new("a.ply"))).0, y_of_second);
}

#[test]
fn ply_header_and_ascii_errors_point_at_the_line_and_column() {
    const HEAD: &str =
        "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n\
                        element face 1\nproperty list uchar int vertex_indices\nend_header\n";
    let parse = |text: &str| text_error(ply::parse(text.as_bytes(), Path::new("inline.ply")));
    let cases: [(String, (usize, usize), &str); 12] = [
        ("plyx\n".into(), (1, 1), "not a PLY file: the first line must be `ply`"),
        ("ply\nformat binary 1.0\n".into(), (2, 8), "unknown PLY format `binary`"),
        ("ply\nformat ascii 2.0\n".into(), (2, 14), "unsupported PLY version `2.0` (only 1.0)"),
        (
            "ply\nformat ascii 1.0\nelement vertex 3\nproperty float128 x\n".into(),
            (4, 10),
            "unknown property type `float128`",
        ),
        ("ply\nformat ascii 1.0\nproperty float x\n".into(), (3, 1), "property before the first element"),
        ("ply\nformat ascii 1.0\nelement vertex lots\n".into(), (3, 16), "`lots` is not an element count"),
        ("ply\nformat ascii 1.0\nelement vertex 0\n".into(), (4, 1), "the header has no `end_header` line"),
        ("ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nend_header\n".into(), (5, 1), "no `face` element"),
        (format!("{HEAD}0 0 0\n1 0\n"), (11, 4), "the record ends before property `z`"),
        (format!("{HEAD}0 0 0\n1 0 zero\n"), (11, 5), "`zero` is not a float value for `z`"),
        (
            format!("{HEAD}0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n"),
            (13, 7),
            "vertex index 3 is out of range: the mesh has 3 vertices",
        ),
        (format!("{HEAD}0 0 0\n1 0 0\n0 1 0 4\n"), (12, 7), "unexpected `4` after the end of the record"),
    ];
    for (text, (line, column), message) in cases {
        assert_eq!(parse(&text), (line, column, message.to_string()), "for {text:?}");
    }
    // Running out of records, and data after the last one.
    assert_eq!(parse(&format!("{HEAD}0 0 0\n1 0 0\n")).2, "the file ends before the last `vertex` record");
    assert_eq!(
        parse(&format!("{HEAD}0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n\n9\n")),
        (15, 1, "unexpected data after the last element".into())
    );
    // An index list of floats cannot be indices.
    let float_indices = HEAD.replace("uchar int", "uchar float");
    assert_eq!(parse(&float_indices), (9, 1, "`vertex_indices` must be a list of integers".into()));
    // Values must fit their integer type.
    assert_eq!(parse(&format!("{HEAD}0 0 0\n1 0 0\n0 1 0\n300 0 1 2\n")).1, 1);
}

mod robustness {
    use super::*;
    use proptest::prelude::*;

    fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
        for &(at, value) in edits {
            let len = bytes.len();
            bytes[at % len] = value;
        }
        bytes.truncate(bytes.len() - cut % bytes.len());
        bytes
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Damaged files give errors, never panics (nor endless loops or huge allocations).
        #[test]
        fn damaged_files_never_panic(
            file in 0usize..5,
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
            cut in any::<usize>(),
        ) {
            let name = ["quad_le.ply", "quad_be.ply", "quad_ascii.ply", "quad.obj", "partial_attributes.obj"][file];
            let bytes = mutate(std::fs::read(data_file(name)).unwrap(), &edits, cut);
            let parsed = if name.ends_with(".ply") {
                ply::parse(&bytes, Path::new(name))
            } else {
                obj::parse(&bytes, Path::new(name))
            };
            // What parses must also build (or be rejected) without panicking.
            if let Ok(data) = parsed {
                let options = drs_geometry::MeshOptions::default();
                if let Ok(mesh) = drs_geometry::TriangleMesh::new(data, &drs_geometry::Transform::IDENTITY, options) {
                    let geometry = drs_geometry::Geometry::new(vec![mesh.into()]).unwrap();
                    let ray = drs_geometry::Ray::new(Vec3::new(0.5, 0.5, 1.0), -Vec3::Z);
                    if let Some(hit) = geometry.intersect(&ray) {
                        geometry.surface_interaction(&ray, &hit);
                    }
                }
            }
        }
    }
}
