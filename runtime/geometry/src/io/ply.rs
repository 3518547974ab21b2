//! Stanford PLY in all three formats (`ascii`, `binary_little_endian`, `binary_big_endian`).
//!
//! The `vertex` element gives `x y z`, optionally `nx ny nz` and texture coordinates named
//! `u v`, `s t`, `texture_u texture_v` or `texture_s texture_t`, in any scalar types. The
//! `face` element gives a list property `vertex_indices` (or `vertex_index`) of any integer
//! types; polygons are triangulated as fans. Other properties and elements are read and
//! skipped. In ASCII files each record is one line. Data after the last element is an error,
//! like in Mitsuba.

use std::path::Path;

use super::{lines, read_file, show, words, LoadError, Location};
use crate::math::{Vec2, Vec3};
use crate::shape::MeshData;

pub fn load(path: &Path) -> Result<MeshData, LoadError> {
    parse(&read_file(path)?, path)
}

/// Parses a PLY file's bytes; `path` only names the file in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<MeshData, LoadError> {
    let fail = |location, message| LoadError::Malformed { path: path.to_owned(), location, message };
    let header = parse_header(bytes).map_err(|(location, message)| fail(location, message))?;
    let data = &bytes[header.data_offset..];
    let result = match header.format {
        Format::Ascii => read_elements(&header, AsciiValues::new(data, header.data_line)),
        Format::BinaryLittleEndian => read_elements(&header, BinaryValues::new(data, header.data_offset, false)),
        Format::BinaryBigEndian => read_elements(&header, BinaryValues::new(data, header.data_offset, true)),
    };
    result.map_err(|(location, message)| fail(location, message))
}

type Error = (Location, String);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Ascii,
    BinaryLittleEndian,
    BinaryBigEndian,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScalarType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

fn unknown_type(location: Location, word: &[u8]) -> Error {
    (location, format!("unknown property type `{}`", show(word)))
}

fn scalar_type(word: &[u8]) -> Option<ScalarType> {
    Some(match word {
        b"char" | b"int8" => ScalarType::I8,
        b"uchar" | b"uint8" => ScalarType::U8,
        b"short" | b"int16" => ScalarType::I16,
        b"ushort" | b"uint16" => ScalarType::U16,
        b"int" | b"int32" => ScalarType::I32,
        b"uint" | b"uint32" => ScalarType::U32,
        b"float" | b"float32" => ScalarType::F32,
        b"double" | b"float64" => ScalarType::F64,
        _ => return None,
    })
}

impl ScalarType {
    /// The PLY spelling, for messages.
    fn name(self) -> &'static str {
        match self {
            ScalarType::I8 => "char",
            ScalarType::U8 => "uchar",
            ScalarType::I16 => "short",
            ScalarType::U16 => "ushort",
            ScalarType::I32 => "int",
            ScalarType::U32 => "uint",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
        }
    }

    fn size(self) -> usize {
        match self {
            ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::F64 => 8,
        }
    }

    /// Whether an integer of this type can have the value `v`.
    fn holds(self, v: i64) -> bool {
        let (min, max) = match self {
            ScalarType::I8 => (i8::MIN as i64, i8::MAX as i64),
            ScalarType::U8 => (0, u8::MAX as i64),
            ScalarType::I16 => (i16::MIN as i64, i16::MAX as i64),
            ScalarType::U16 => (0, u16::MAX as i64),
            ScalarType::I32 => (i32::MIN as i64, i32::MAX as i64),
            ScalarType::U32 => (0, u32::MAX as i64),
            ScalarType::F32 | ScalarType::F64 => return false,
        };
        (min..=max).contains(&v)
    }

    fn is_integer(self) -> bool {
        !matches!(self, ScalarType::F32 | ScalarType::F64)
    }
}

#[derive(Clone, Copy, Debug)]
enum PropertyKind {
    Scalar(ScalarType),
    List { count: ScalarType, item: ScalarType },
}

#[derive(Debug)]
struct Property {
    name: String,
    kind: PropertyKind,
}

#[derive(Debug)]
struct Element {
    name: String,
    count: usize,
    properties: Vec<Property>,
}

impl Element {
    fn scalar(&self, name: &str) -> Option<usize> {
        self.properties.iter().position(|p| p.name == name && matches!(p.kind, PropertyKind::Scalar(_)))
    }
}

struct Header {
    format: Format,
    elements: Vec<Element>,
    /// Where the data starts: byte offset and (for ASCII) line number.
    data_offset: usize,
    data_line: usize,
}

fn parse_header(bytes: &[u8]) -> Result<Header, Error> {
    let mut format = None;
    let mut elements: Vec<Element> = Vec::new();
    let mut last_line = 1;
    for (line, offset, text) in lines(bytes, 1) {
        last_line = line;
        let at = |column| Location::Text { line, column };
        if line == 1 {
            if text != b"ply" {
                return Err((at(1), "not a PLY file: the first line must be `ply`".into()));
            }
            continue;
        }
        let mut words = words(text);
        let Some((_, keyword)) = words.next() else { continue };
        let mut next = |what: &str| {
            words.next().ok_or_else(|| (at(text.len() + 1), format!("`{}` line without {what}", show(keyword))))
        };
        match keyword {
            b"comment" | b"obj_info" => {}
            b"format" => {
                let (column, name) = next("a format")?;
                format = Some(match name {
                    b"ascii" => Format::Ascii,
                    b"binary_little_endian" => Format::BinaryLittleEndian,
                    b"binary_big_endian" => Format::BinaryBigEndian,
                    _ => return Err((at(column), format!("unknown PLY format `{}`", show(name)))),
                });
                let (column, version) = next("a version")?;
                if version != b"1.0" {
                    return Err((at(column), format!("unsupported PLY version `{}` (only 1.0)", show(version))));
                }
            }
            b"element" => {
                let (_, name) = next("a name")?;
                let (column, count) = next("a count")?;
                let count = std::str::from_utf8(count)
                    .ok()
                    .and_then(|c| c.parse().ok())
                    .ok_or_else(|| (at(column), format!("`{}` is not an element count", show(count))))?;
                elements.push(Element {
                    name: String::from_utf8_lossy(name).into_owned(),
                    count,
                    properties: Vec::new(),
                });
            }
            b"property" => {
                let (column, word) = next("a type")?;
                let kind = if word == b"list" {
                    let (column, count) = next("a count type")?;
                    let count = scalar_type(count).ok_or_else(|| unknown_type(at(column), count))?;
                    if !count.is_integer() {
                        return Err((at(column), "a list's count type must be an integer type".into()));
                    }
                    let (column, item) = next("an item type")?;
                    PropertyKind::List { count, item: scalar_type(item).ok_or_else(|| unknown_type(at(column), item))? }
                } else {
                    PropertyKind::Scalar(scalar_type(word).ok_or_else(|| unknown_type(at(column), word))?)
                };
                let (_, name) = next("a name")?;
                let Some(element) = elements.last_mut() else {
                    return Err((at(1), "property before the first element".into()));
                };
                element.properties.push(Property { name: String::from_utf8_lossy(name).into_owned(), kind });
            }
            b"end_header" => {
                let format = format.ok_or_else(|| (at(1), "no `format` line before `end_header`".into()))?;
                // The data starts after this line's line break (`\n` or `\r\n`).
                let data_offset =
                    bytes[offset..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |p| offset + p + 1);
                return check_elements(Header { format, elements, data_offset, data_line: line + 1 }, line);
            }
            _ => return Err((at(1), format!("unknown header keyword `{}`", show(keyword)))),
        }
    }
    Err((Location::Text { line: last_line, column: 1 }, "the header has no `end_header` line".into()))
}

/// Checks that the declared elements have what a mesh needs.
fn check_elements(header: Header, end_line: usize) -> Result<Header, Error> {
    let at = Location::Text { line: end_line, column: 1 };
    let position = |name: &str| header.elements.iter().position(|e| e.name == name);
    let Some(vertex) = position("vertex") else { return Err((at, "no `vertex` element".into())) };
    let Some(face) = position("face") else { return Err((at, "no `face` element".into())) };
    if face < vertex {
        return Err((at, "the `face` element must come after the `vertex` element".into()));
    }
    for axis in ["x", "y", "z"] {
        if header.elements[vertex].scalar(axis).is_none() {
            return Err((at, format!("the `vertex` element has no scalar property `{axis}`")));
        }
    }
    match face_indices(&header.elements[face]) {
        Some((_, PropertyKind::List { item, .. })) if item.is_integer() => {}
        Some(_) => return Err((at, "`vertex_indices` must be a list of integers".into())),
        None => return Err((at, "the `face` element has no `vertex_indices` list".into())),
    }
    Ok(header)
}

fn face_indices(face: &Element) -> Option<(usize, PropertyKind)> {
    face.properties
        .iter()
        .position(|p| p.name == "vertex_indices" || p.name == "vertex_index")
        .map(|i| (i, face.properties[i].kind))
}

/// A source of the values of records, ASCII or binary.
trait Values {
    /// Moves to the next record.
    fn begin_record(&mut self, element: &str) -> Result<(), Error>;
    /// The next value, as f64 (exact for every PLY type).
    fn read(&mut self, ty: ScalarType, property: &str) -> Result<f64, Error>;
    /// Checks that the record has no more values.
    fn end_record(&mut self) -> Result<(), Error>;
    /// Where the value read last is.
    fn last_value(&self) -> Location;
    /// Checks that nothing follows the last element.
    fn finish(&mut self) -> Result<(), Error>;
}

fn read_elements(header: &Header, mut values: impl Values) -> Result<MeshData, Error> {
    let mut mesh = MeshData::default();
    for element in &header.elements {
        // Records without properties hold no data; skipping them needs no loop.
        if element.properties.is_empty() {
            continue;
        }
        match element.name.as_str() {
            "vertex" => read_vertices(element, &mut values, &mut mesh)?,
            "face" => read_faces(element, &mut values, &mut mesh)?,
            _ => {
                for _ in 0..element.count {
                    read_record(element, &mut values, |_, _| Ok(()))?;
                }
            }
        }
    }
    values.finish()?;
    Ok(mesh)
}

/// Reads one record, passing each scalar value (and each list item) to `use_value` with its
/// property index; an error message from `use_value` is reported at that value.
fn read_record<V: Values>(
    element: &Element,
    values: &mut V,
    mut use_value: impl FnMut(usize, f64) -> Result<(), String>,
) -> Result<(), Error> {
    values.begin_record(&element.name)?;
    for (index, property) in element.properties.iter().enumerate() {
        match property.kind {
            PropertyKind::Scalar(ty) => {
                let value = values.read(ty, &property.name)?;
                use_value(index, value).map_err(|message| (values.last_value(), message))?;
            }
            PropertyKind::List { count, item } => {
                let n = values.read(count, &property.name)?;
                if n < 0.0 {
                    return Err((values.last_value(), format!("negative list length {n}")));
                }
                for _ in 0..n as usize {
                    let value = values.read(item, &property.name)?;
                    use_value(index, value).map_err(|message| (values.last_value(), message))?;
                }
            }
        }
    }
    values.end_record()
}

fn read_vertices(element: &Element, values: &mut impl Values, mesh: &mut MeshData) -> Result<(), Error> {
    let all = |names: [&str; 3]| {
        let found = names.map(|n| element.scalar(n));
        found.iter().all(Option::is_some).then(|| found.map(Option::unwrap_or_default))
    };
    let position = all(["x", "y", "z"]).unwrap_or_default();
    let normal = all(["nx", "ny", "nz"]);
    let uv = [("u", "v"), ("s", "t"), ("texture_u", "texture_v"), ("texture_s", "texture_t")]
        .iter()
        .find_map(|&(u, v)| Some([element.scalar(u)?, element.scalar(v)?]));
    // Counts come from the file: reserve no more than a bounded amount up front.
    let capacity = element.count.min(1 << 20);
    let mut positions = Vec::with_capacity(capacity);
    let mut normals = normal.map(|_| Vec::with_capacity(capacity));
    let mut uvs = uv.map(|_| Vec::with_capacity(capacity));
    let mut record = vec![0.0f32; element.properties.len()];
    for _ in 0..element.count {
        read_record(element, values, |index, value| {
            record[index] = value as f32;
            if position.contains(&index) && !record[index].is_finite() {
                return Err(format!("vertex coordinate {value} is not a finite f32"));
            }
            Ok(())
        })?;
        positions.push(Vec3::from(position.map(|i| record[i])));
        if let (Some(normals), Some(n)) = (&mut normals, normal) {
            normals.push(Vec3::from(n.map(|i| record[i])));
        }
        if let (Some(uvs), Some(uv)) = (&mut uvs, uv) {
            uvs.push(Vec2::from(uv.map(|i| record[i])));
        }
    }
    mesh.positions = positions;
    mesh.normals = normals;
    mesh.uvs = uvs;
    Ok(())
}

fn read_faces(element: &Element, values: &mut impl Values, mesh: &mut MeshData) -> Result<(), Error> {
    let (indices_property, _) = face_indices(element).unwrap_or((usize::MAX, PropertyKind::Scalar(ScalarType::U8)));
    let vertex_count = mesh.positions.len();
    let mut polygon: Vec<u32> = Vec::new();
    mesh.triangles.reserve(element.count.min(1 << 20));
    for _ in 0..element.count {
        polygon.clear();
        read_record(element, values, |property, value| {
            if property == indices_property {
                if value < 0.0 || value >= vertex_count as f64 {
                    return Err(format!("vertex index {value} is out of range: the mesh has {vertex_count} vertices"));
                }
                polygon.push(value as u32);
            }
            Ok(())
        })?;
        if polygon.len() < 3 {
            return Err((values.last_value(), format!("a face needs at least 3 vertices, found {}", polygon.len())));
        }
        for i in 1..polygon.len() - 1 {
            mesh.triangles.push([polygon[0], polygon[i], polygon[i + 1]]);
        }
    }
    Ok(())
}

/// ASCII data: one record per line, blank lines skipped.
struct AsciiValues<'a> {
    data: &'a [u8],
    /// Start of the next unread line.
    offset: usize,
    /// Number of the next unread line.
    next_line: usize,
    /// The current record's line, its words and how many were read.
    line: usize,
    line_length: usize,
    words: Vec<(usize, &'a [u8])>,
    read: usize,
}

impl<'a> AsciiValues<'a> {
    fn new(data: &'a [u8], first_line: usize) -> AsciiValues<'a> {
        AsciiValues {
            data,
            offset: 0,
            next_line: first_line,
            line: first_line,
            line_length: 0,
            words: Vec::new(),
            read: 0,
        }
    }

    /// Moves to the next non-blank line; false at the end of the data.
    fn next_nonblank_line(&mut self) -> bool {
        while self.offset < self.data.len() {
            let rest = &self.data[self.offset..];
            let length = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let text = &rest[..length];
            self.offset += length + 1;
            self.line = self.next_line;
            self.next_line += 1;
            self.line_length = text.len();
            self.words.clear();
            self.words.extend(words(text));
            self.read = 0;
            if !self.words.is_empty() {
                return true;
            }
        }
        false
    }

    fn at(&self, column: usize) -> Location {
        Location::Text { line: self.line, column }
    }
}

impl Values for AsciiValues<'_> {
    fn begin_record(&mut self, element: &str) -> Result<(), Error> {
        if self.next_nonblank_line() {
            Ok(())
        } else {
            Err((self.at(self.line_length + 1), format!("the file ends before the last `{element}` record")))
        }
    }

    fn read(&mut self, ty: ScalarType, property: &str) -> Result<f64, Error> {
        let Some(&(column, word)) = self.words.get(self.read) else {
            return Err((self.at(self.line_length + 1), format!("the record ends before property `{property}`")));
        };
        self.read += 1;
        let text = std::str::from_utf8(word).ok();
        let value = if ty.is_integer() {
            text.and_then(|t| t.parse::<i64>().ok()).filter(|&v| ty.holds(v)).map(|v| v as f64)
        } else {
            text.and_then(|t| t.parse::<f64>().ok())
        };
        value
            .ok_or_else(|| (self.at(column), format!("`{}` is not a {} value for `{property}`", show(word), ty.name())))
    }

    fn end_record(&mut self) -> Result<(), Error> {
        match self.words.get(self.read) {
            Some(&(column, word)) => {
                Err((self.at(column), format!("unexpected `{}` after the end of the record", show(word))))
            }
            None => Ok(()),
        }
    }

    fn last_value(&self) -> Location {
        self.at(self.words.get(self.read.saturating_sub(1)).map_or(1, |w| w.0))
    }

    fn finish(&mut self) -> Result<(), Error> {
        if self.next_nonblank_line() {
            Err((self.at(self.words[0].0), "unexpected data after the last element".into()))
        } else {
            Ok(())
        }
    }
}

/// Binary data in either byte order.
struct BinaryValues<'a> {
    data: &'a [u8],
    /// File offset of `data[0]`, for messages.
    base: usize,
    position: usize,
    last: usize,
    big_endian: bool,
}

impl<'a> BinaryValues<'a> {
    fn new(data: &'a [u8], base: usize, big_endian: bool) -> BinaryValues<'a> {
        BinaryValues { data, base, position: 0, last: 0, big_endian }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut bytes = [0; N];
        bytes.copy_from_slice(&self.data[self.position..self.position + N]);
        if self.big_endian {
            bytes.reverse();
        }
        self.position += N;
        bytes
    }
}

impl Values for BinaryValues<'_> {
    fn begin_record(&mut self, _element: &str) -> Result<(), Error> {
        Ok(())
    }

    fn read(&mut self, ty: ScalarType, property: &str) -> Result<f64, Error> {
        if self.data.len() - self.position < ty.size() {
            return Err((
                Location::Byte(self.base + self.position),
                format!("the file ends inside property `{property}`"),
            ));
        }
        self.last = self.position;
        // `take` returns little-endian bytes.
        Ok(match ty {
            ScalarType::I8 => i8::from_le_bytes(self.take()) as f64,
            ScalarType::U8 => u8::from_le_bytes(self.take()) as f64,
            ScalarType::I16 => i16::from_le_bytes(self.take()) as f64,
            ScalarType::U16 => u16::from_le_bytes(self.take()) as f64,
            ScalarType::I32 => i32::from_le_bytes(self.take()) as f64,
            ScalarType::U32 => u32::from_le_bytes(self.take()) as f64,
            ScalarType::F32 => f32::from_le_bytes(self.take()) as f64,
            ScalarType::F64 => f64::from_le_bytes(self.take()),
        })
    }

    fn end_record(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn last_value(&self) -> Location {
        Location::Byte(self.base + self.last)
    }

    fn finish(&mut self) -> Result<(), Error> {
        let left = self.data.len() - self.position;
        if left > 0 {
            return Err((
                Location::Byte(self.base + self.position),
                format!("{left} bytes of unexpected data after the last element"),
            ));
        }
        Ok(())
    }
}
