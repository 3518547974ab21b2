//! `<transform>`: a sequence of operations, each applied after the ones before it (so each
//! new matrix multiplies the accumulated one from the left, as in Mitsuba).

use roxmltree::Node;

use super::source::SourceFile;
use super::values::{parse_float, parse_floats};
use super::Loader;
use crate::desc::ObjectId;
use crate::math::{LookAtError, Transform};

impl Loader<'_> {
    /// The composed transform, or `None` after reporting what is wrong with it.
    pub(super) fn transform(&mut self, file: &SourceFile, node: Node, object: ObjectId) -> Option<Transform> {
        let mut transform = Transform::IDENTITY;
        let mut ok = true;
        for child in node.children() {
            if child.is_text() && !child.text().unwrap_or("").trim().is_empty() {
                self.unexpected_text(file, child, object);
                ok = false;
            }
            if !child.is_element() {
                continue;
            }
            match self.operation(file, child, object) {
                Some(step) => transform = step * transform,
                None => ok = false,
            }
        }
        if ok && !transform.is_finite() {
            self.error(object, file.location(node.range().start), "the <transform> overflows (non-finite entries)");
            return None;
        }
        ok.then_some(transform)
    }

    fn operation(&mut self, file: &SourceFile, node: Node, object: ObjectId) -> Option<Transform> {
        let location = file.location(node.range().start);
        let tag = node.tag_name().name();
        let xyz: &[(&str, bool)] = &[("value", false), ("x", false), ("y", false), ("z", false)];
        let spec: &[(&str, bool)] = match tag {
            "translate" | "scale" => xyz,
            "rotate" => &[("value", false), ("x", false), ("y", false), ("z", false), ("angle", true)],
            "matrix" => &[("value", true)],
            "lookat" => &[("origin", true), ("target", true), ("up", false)],
            _ => {
                let message = format!("unexpected <{tag}> in <transform>");
                let hint = "expected <translate>, <rotate>, <scale>, <matrix> or <lookat>".to_owned();
                self.error_with_hint(object, location, message, hint);
                return None;
            }
        };
        let attrs = self.attributes(file, node, spec, object);
        let leaf = self.no_children(file, node, object);
        if !attrs.ok || !leaf {
            return None;
        }
        match tag {
            "translate" => self.xyz(file, node, &attrs, Some(0.0), object).map(Transform::translate),
            "scale" => self.xyz(file, node, &attrs, Some(1.0), object).map(Transform::scale),
            "rotate" => {
                let axis = self.xyz(file, node, &attrs, Some(0.0), object);
                let angle_attr = attrs.get("angle")?;
                let angle =
                    parse_float(&angle_attr.value).map_err(|m| self.error(object, angle_attr.location.clone(), m));
                let (axis, angle) = (axis?, angle.ok()?);
                let rotation = Transform::rotate(axis, angle);
                if rotation.is_none() {
                    self.error(object, location, "the rotation axis is zero");
                }
                rotation
            }
            "matrix" => {
                let value = attrs.get("value")?;
                let rows = match super::values::tokens(&value.value).len() {
                    9 => parse_floats::<9>(&value.value).map(|m| {
                        let mut rows = Transform::IDENTITY.rows();
                        for (i, x) in m.into_iter().enumerate() {
                            rows[i / 3][i % 3] = x;
                        }
                        rows
                    }),
                    16 => parse_floats::<16>(&value.value).map(|m| {
                        let mut rows = [[0.0; 4]; 4];
                        for (i, x) in m.into_iter().enumerate() {
                            rows[i / 4][i % 4] = x;
                        }
                        rows
                    }),
                    n => Err(format!("a <matrix> needs 16 numbers (or 9 for 3x3), found {n}")),
                };
                rows.map(Transform::from_rows).map_err(|m| self.error(object, value.location.clone(), m)).ok()
            }
            _ => {
                let mut point = |name: &str| -> Option<Option<[f64; 3]>> {
                    let Some(attr) = attrs.get(name) else { return Some(None) };
                    parse_floats::<3>(&attr.value)
                        .map(Some)
                        .map_err(|m| self.error(object, attr.location.clone(), m))
                        .ok()
                };
                let (origin, target, up) = (point("origin"), point("target"), point("up"));
                let (origin, target, up) = (origin??, target??, up?.unwrap_or([0.0; 3]));
                match Transform::look_at(origin, target, up) {
                    Ok(t) => Some(t),
                    Err(LookAtError::TargetAtOrigin) => {
                        self.error(object, location, "<lookat> target and origin are the same point");
                        None
                    }
                    Err(LookAtError::UpParallelToDirection) => {
                        self.error(object, location, "<lookat> up is parallel to the viewing direction");
                        None
                    }
                }
            }
        }
    }
}
