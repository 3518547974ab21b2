//! Wavefront OBJ: `v`, `vt`, `vn` and `f` lines; everything else (groups, materials,
//! smoothing groups, lines, comments) is ignored, as in Mitsuba. Face corners are `p`, `p/t`,
//! `p//n` or `p/t/n` with 1-based indices, negative ones counting back from the last element
//! defined so far. Polygons are triangulated as fans around their first corner (Mitsuba's
//! rule). Corners with the same `(p, t, n)` triple share a vertex. A corner without a texture
//! coordinate or normal, in a file that has them elsewhere, gets uv (0, 0) or a generated
//! normal.

use std::collections::HashMap;
use std::path::Path;

use super::{lines, read_file, show, words, LoadError, Location};
use crate::math::{Vec2, Vec3};
use crate::shape::MeshData;

pub fn load(path: &Path) -> Result<MeshData, LoadError> {
    parse(&read_file(path)?, path)
}

/// Parses OBJ text; `path` only names the file in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<MeshData, LoadError> {
    let mut parser = Parser::default();
    for (line, _, text) in lines(bytes, 1) {
        // A `#` starts a comment anywhere on the line.
        let text = &text[..text.iter().position(|&b| b == b'#').unwrap_or(text.len())];
        let mut words = words(text);
        let Some((_, keyword)) = words.next() else { continue };
        let at = |column| Location::Text { line, column };
        let result = match keyword {
            b"v" => parse_numbers::<3, 3>(&mut words, text.len(), at).map(|v| parser.positions.push(Vec3::from(v))),
            b"vt" => parse_numbers::<1, 2>(&mut words, text.len(), at).map(|v| parser.uvs.push(Vec2::from(v))),
            b"vn" => parse_numbers::<3, 3>(&mut words, text.len(), at).map(|v| parser.normals.push(Vec3::from(v))),
            b"f" => parser.face(words, text.len(), at),
            _ => Ok(()),
        };
        result.map_err(|(location, message)| LoadError::Malformed { path: path.to_owned(), location, message })?;
    }
    Ok(parser.finish())
}

type Error = (Location, String);

/// Reads `MIN..=N` numbers (missing ones are 0) and ignores what follows, e.g. the `w` of
/// `v x y z w` or vertex colours.
fn parse_numbers<'a, const MIN: usize, const N: usize>(
    words: &mut impl Iterator<Item = (usize, &'a [u8])>,
    line_length: usize,
    at: impl Fn(usize) -> Location,
) -> Result<[f32; N], Error> {
    let mut values = [0.0f32; N];
    for (i, value) in values.iter_mut().enumerate() {
        let Some((column, word)) = words.next() else {
            if i < MIN {
                return Err((at(line_length + 1), format!("expected {MIN} numbers, found {i}")));
            }
            break;
        };
        *value = std::str::from_utf8(word)
            .ok()
            .and_then(|s| s.parse::<f32>().ok())
            .ok_or_else(|| (at(column), format!("expected a number, found `{}`", show(word))))?;
        if !value.is_finite() {
            return Err((at(column), format!("`{}` is not a finite number", show(word))));
        }
    }
    Ok(values)
}

/// Index of a corner's `(position, texture coordinate, normal)`, `NONE` where absent.
type CornerKey = (u32, u32, u32);
const NONE: u32 = u32::MAX;

#[derive(Default)]
struct Parser {
    positions: Vec<Vec3>,
    uvs: Vec<Vec2>,
    normals: Vec<Vec3>,
    /// The distinct corners, in order of first use: the mesh's vertices.
    vertices: Vec<CornerKey>,
    vertex_of_corner: HashMap<CornerKey, u32>,
    triangles: Vec<[u32; 3]>,
}

impl Parser {
    fn face<'a>(
        &mut self,
        words: impl Iterator<Item = (usize, &'a [u8])>,
        line_length: usize,
        at: impl Fn(usize) -> Location,
    ) -> Result<(), Error> {
        let mut corners = Vec::new();
        for (column, word) in words {
            let key = self.corner(word).map_err(|message| (at(column), message))?;
            let next = self.vertices.len() as u32;
            let vertex = *self.vertex_of_corner.entry(key).or_insert(next);
            if vertex == next {
                self.vertices.push(key);
            }
            corners.push(vertex);
        }
        if corners.len() < 3 {
            return Err((at(line_length + 1), format!("a face needs at least 3 corners, found {}", corners.len())));
        }
        for i in 1..corners.len() - 1 {
            self.triangles.push([corners[0], corners[i], corners[i + 1]]);
        }
        Ok(())
    }

    /// Resolves `p`, `p/t`, `p//n` or `p/t/n` against the elements defined so far.
    fn corner(&self, word: &[u8]) -> Result<CornerKey, String> {
        let mut parts = word.split(|&b| b == b'/');
        let position = parts.next().unwrap_or_default();
        let uv = parts.next().unwrap_or_default();
        let normal = parts.next().unwrap_or_default();
        if parts.next().is_some() {
            return Err(format!("`{}` is not a face corner (p, p/t, p//n or p/t/n)", show(word)));
        }
        if position.is_empty() {
            return Err(format!("`{}` has no position index", show(word)));
        }
        Ok((
            resolve(position, self.positions.len(), "vertex position")?,
            if uv.is_empty() { NONE } else { resolve(uv, self.uvs.len(), "texture coordinate")? },
            if normal.is_empty() { NONE } else { resolve(normal, self.normals.len(), "normal")? },
        ))
    }

    fn finish(self) -> MeshData {
        let has_uvs = self.vertices.iter().any(|v| v.1 != NONE);
        let has_normals = self.vertices.iter().any(|v| v.2 != NONE);
        MeshData {
            positions: self.vertices.iter().map(|v| self.positions[v.0 as usize]).collect(),
            uvs: has_uvs.then(|| self.vertices.iter().map(|v| lookup(&self.uvs, v.1, Vec2::ZERO)).collect()),
            // A zero normal is generated when the mesh is built.
            normals: has_normals
                .then(|| self.vertices.iter().map(|v| lookup(&self.normals, v.2, Vec3::ZERO)).collect()),
            triangles: self.triangles,
        }
    }
}

fn lookup<T: Copy>(values: &[T], index: u32, missing: T) -> T {
    if index == NONE {
        missing
    } else {
        values[index as usize]
    }
}

/// A 1-based (or negative, relative) OBJ index as a 0-based index below `count`.
fn resolve(word: &[u8], count: usize, what: &str) -> Result<u32, String> {
    let index: i64 = std::str::from_utf8(word)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("`{}` is not a {what} index", show(word)))?;
    let resolved = match index {
        0 => return Err(format!("{what} index 0 is invalid (OBJ indices start at 1)")),
        i if i > 0 => i - 1,
        i => count as i64 + i,
    };
    if resolved < 0 || resolved >= count as i64 {
        return Err(format!("{what} index {index} is out of range: {count} defined so far"));
    }
    Ok(resolved as u32)
}
