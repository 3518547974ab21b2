//! How `.drs` values are flattened into IR scalars, and back.
//!
//! The IR has only scalars, so every value of a `.drs` type is a sequence of them:
//!
//! | Type | Scalars |
//! |---|---|
//! | `f32`, `i32`, `u32`, `bool` | one |
//! | `vecN`, `ivecN`, `uvecN`, `bvecN` | `N`, `x` first |
//! | `Color` | 3 `f32` (`r`, `g`, `b`) |
//! | `mat3`, `mat4` | 9 / 16 `f32`, column-major: column 0 first, each column `x` first |
//! | tuples, structs, arrays | the concatenation of their parts (struct fields in declaration order) |
//! | extern types, plugin references, `Texture<T>` | one `u32` handle |
//! | `()`, `Tensor` | none (a tensor param lives in buffers of its own) |
//!
//! [`Layout`] is that description as a tree, with the component names used for IR parameter
//! names (`wo.x`, `si.p.y`, `m[1].z`), and the conversion of host values ([`HostValue`]) to and
//! from the 32-bit patterns the interpreter and the backends exchange.

use drs_ir::Ty;
use drs_sema::types::{Scalar, Type};
use drs_sema::Program;
use std::fmt;

/// The IR type of a scalar of a `.drs` type.
pub fn scalar_ty(s: Scalar) -> Ty {
    match s {
        Scalar::F32 => Ty::F32,
        Scalar::I32 => Ty::I32,
        Scalar::U32 => Ty::U32,
        Scalar::Bool => Ty::Bool,
    }
}

/// Appends the IR types of the scalars of `ty` to `out`.
pub fn flatten_into(program: &Program, ty: &Type, out: &mut Vec<Ty>) {
    match ty {
        Type::Scalar(s) => out.push(scalar_ty(*s)),
        Type::Vector(s, n) => out.extend(std::iter::repeat_n(scalar_ty(*s), *n as usize)),
        Type::Color => out.extend([Ty::F32; 3]),
        Type::Matrix(n) => out.extend(std::iter::repeat_n(Ty::F32, (*n as usize) * (*n as usize))),
        Type::Tuple(elems) => elems.iter().for_each(|t| flatten_into(program, t, out)),
        Type::Array(elem, n) => {
            let mut one = Vec::new();
            flatten_into(program, elem, &mut one);
            for _ in 0..*n {
                out.extend_from_slice(&one);
            }
        }
        Type::Struct(s) => program.structs[*s].fields.iter().for_each(|(_, t)| flatten_into(program, t, out)),
        Type::Extern(_) | Type::Plugin(_) | Type::Texture(_) => out.push(Ty::U32),
        // Never and Error have no values to represent; a Tensor is never a value.
        Type::Tensor | Type::Never | Type::Error => {}
    }
}

/// The IR types of the scalars of `ty`, in order.
pub fn flat_types(program: &Program, ty: &Type) -> Vec<Ty> {
    let mut out = Vec::new();
    flatten_into(program, ty, &mut out);
    out
}

/// The number of scalars of `ty`.
pub fn flat_len(program: &Program, ty: &Type) -> usize {
    match ty {
        Type::Scalar(_) | Type::Extern(_) | Type::Plugin(_) | Type::Texture(_) => 1,
        Type::Vector(_, n) => *n as usize,
        Type::Color => 3,
        Type::Matrix(n) => (*n as usize) * (*n as usize),
        Type::Tuple(elems) => elems.iter().map(|t| flat_len(program, t)).sum(),
        Type::Array(elem, n) => flat_len(program, elem) * *n as usize,
        Type::Struct(s) => program.structs[*s].fields.iter().map(|(_, t)| flat_len(program, t)).sum(),
        Type::Tensor | Type::Never | Type::Error => 0,
    }
}

/// The component letters of vectors and colours, in flattening order.
pub const VECTOR_COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];
pub const COLOR_CHANNELS: [&str; 3] = ["r", "g", "b"];

/// The shape of a `.drs` value as the IR sees it: which scalars, in which order, named how.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    Scalar(Ty),
    /// `vecN`, `ivecN`, `uvecN`, `bvecN`.
    Vector(Ty, u8),
    Color,
    /// `matN`, column-major.
    Matrix(u8),
    /// A tuple; `()` is the empty tuple.
    Tuple(Vec<Layout>),
    Array(Box<Layout>, u32),
    Struct {
        name: String,
        fields: Vec<(String, Layout)>,
    },
    /// An extern handle, a plugin reference or a texture: one u32. The string is the type's name.
    Handle(String),
    /// A `Tensor` param: no scalars; its data and shape are in buffers of their own
    /// ([`crate::ParamLayout::buffers`]).
    Tensor,
}

impl Layout {
    /// The layout of a checked type (Never and Error give the empty tuple).
    pub fn of(program: &Program, ty: &Type) -> Layout {
        match ty {
            Type::Scalar(s) => Layout::Scalar(scalar_ty(*s)),
            Type::Vector(s, n) => Layout::Vector(scalar_ty(*s), *n),
            Type::Color => Layout::Color,
            Type::Matrix(n) => Layout::Matrix(*n),
            Type::Tuple(elems) => Layout::Tuple(elems.iter().map(|t| Layout::of(program, t)).collect()),
            Type::Array(elem, n) => Layout::Array(Box::new(Layout::of(program, elem)), *n),
            Type::Struct(s) => {
                let def = &program.structs[*s];
                Layout::Struct {
                    name: def.name.clone(),
                    fields: def.fields.iter().map(|(n, t)| (n.clone(), Layout::of(program, t))).collect(),
                }
            }
            Type::Extern(_) | Type::Plugin(_) | Type::Texture(_) => Layout::Handle(program.show(ty)),
            Type::Tensor => Layout::Tensor,
            Type::Never | Type::Error => Layout::Tuple(Vec::new()),
        }
    }

    /// The number of scalars.
    pub fn len(&self) -> usize {
        match self {
            Layout::Scalar(_) | Layout::Handle(_) => 1,
            Layout::Vector(_, n) => *n as usize,
            Layout::Color => 3,
            Layout::Matrix(n) => (*n as usize) * (*n as usize),
            Layout::Tuple(elems) => elems.iter().map(Layout::len).sum(),
            Layout::Array(elem, n) => elem.len() * *n as usize,
            Layout::Struct { fields, .. } => fields.iter().map(|(_, l)| l.len()).sum(),
            Layout::Tensor => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The IR types of the scalars, in order.
    pub fn scalar_types(&self) -> Vec<Ty> {
        let mut out = Vec::new();
        self.visit_scalars("", &mut |_, ty| out.push(ty));
        out
    }

    /// The names of the scalars, each `base` followed by its path: `wo.x`, `si.p.y`, `m[1].z`,
    /// `c.r`, `t.0`, `a[2]`. A scalar or handle is `base` itself.
    pub fn component_names(&self, base: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.visit_scalars(base, &mut |name, _| out.push(name.to_string()));
        out
    }

    fn visit_scalars(&self, base: &str, f: &mut dyn FnMut(&str, Ty)) {
        match self {
            Layout::Scalar(ty) => f(base, *ty),
            Layout::Handle(_) => f(base, Ty::U32),
            Layout::Vector(ty, n) => {
                for c in &VECTOR_COMPONENTS[..*n as usize] {
                    f(&format!("{base}.{c}"), *ty);
                }
            }
            Layout::Color => {
                for c in COLOR_CHANNELS {
                    f(&format!("{base}.{c}"), Ty::F32);
                }
            }
            Layout::Matrix(n) => {
                for col in 0..*n {
                    for c in &VECTOR_COMPONENTS[..*n as usize] {
                        f(&format!("{base}[{col}].{c}"), Ty::F32);
                    }
                }
            }
            Layout::Tuple(elems) => {
                for (i, l) in elems.iter().enumerate() {
                    l.visit_scalars(&format!("{base}.{i}"), f);
                }
            }
            Layout::Array(elem, n) => {
                for i in 0..*n {
                    elem.visit_scalars(&format!("{base}[{i}]"), f);
                }
            }
            Layout::Struct { fields, .. } => {
                for (name, l) in fields {
                    l.visit_scalars(&format!("{base}.{name}"), f);
                }
            }
            Layout::Tensor => {}
        }
    }

    /// The 32-bit patterns of a host value of this layout, in IR order.
    pub fn flatten(&self, value: &HostValue) -> Result<Vec<u32>, String> {
        let mut out = Vec::with_capacity(self.len());
        self.flatten_into(value, &mut out)?;
        Ok(out)
    }

    fn flatten_into(&self, value: &HostValue, out: &mut Vec<u32>) -> Result<(), String> {
        let mismatch = || format!("expected {}, found `{value}`", self.describe());
        match (self, value) {
            (Layout::Scalar(ty), v) => out.push(scalar_bits(*ty, v).ok_or_else(mismatch)?),
            (Layout::Handle(_), HostValue::Handle(h) | HostValue::U32(h)) => out.push(*h),
            (Layout::Vector(ty, n), HostValue::List(items)) if items.len() == *n as usize => {
                for item in items {
                    out.push(scalar_bits(*ty, item).ok_or_else(mismatch)?);
                }
            }
            (Layout::Color, HostValue::List(items)) if items.len() == 3 => {
                for item in items {
                    out.push(scalar_bits(Ty::F32, item).ok_or_else(mismatch)?);
                }
            }
            (Layout::Matrix(n), HostValue::List(cols)) if cols.len() == *n as usize => {
                let column = Layout::Vector(Ty::F32, *n);
                for col in cols {
                    column.flatten_into(col, out)?;
                }
            }
            (Layout::Tuple(elems), HostValue::Tuple(items)) if elems.len() == items.len() => {
                for (l, v) in elems.iter().zip(items) {
                    l.flatten_into(v, out)?;
                }
            }
            (Layout::Array(elem, n), HostValue::List(items)) if items.len() == *n as usize => {
                for v in items {
                    elem.flatten_into(v, out)?;
                }
            }
            (Layout::Struct { fields, .. }, HostValue::Struct(_, given)) => {
                for (name, l) in fields {
                    let v = given
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| v)
                        .ok_or_else(|| format!("missing field `{name}` in `{value}`"))?;
                    l.flatten_into(v, out)?;
                }
                if let Some((extra, _)) = given.iter().find(|(n, _)| !fields.iter().any(|(f, _)| f == n)) {
                    return Err(format!("`{}` has no field `{extra}`", self.describe()));
                }
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }

    /// The host value made of IR scalars (the first [`Layout::len`] of `bits`).
    pub fn unflatten(&self, bits: &[u32]) -> HostValue {
        let mut pos = 0;
        self.unflatten_at(bits, &mut pos)
    }

    fn unflatten_at(&self, bits: &[u32], pos: &mut usize) -> HostValue {
        let mut next = || {
            let b = bits.get(*pos).copied().unwrap_or(0);
            *pos += 1;
            b
        };
        match self {
            Layout::Scalar(ty) => scalar_value(*ty, next()),
            Layout::Handle(_) => HostValue::Handle(next()),
            Layout::Vector(ty, n) => HostValue::List((0..*n).map(|_| scalar_value(*ty, next())).collect()),
            Layout::Color => HostValue::List((0..3).map(|_| scalar_value(Ty::F32, next())).collect()),
            Layout::Matrix(n) => {
                let column = Layout::Vector(Ty::F32, *n);
                HostValue::List((0..*n).map(|_| column.unflatten_at(bits, pos)).collect())
            }
            Layout::Tuple(elems) => HostValue::Tuple(elems.iter().map(|l| l.unflatten_at(bits, pos)).collect()),
            Layout::Array(elem, n) => HostValue::List((0..*n).map(|_| elem.unflatten_at(bits, pos)).collect()),
            Layout::Struct { name, fields } => HostValue::Struct(
                name.clone(),
                fields.iter().map(|(f, l)| (f.clone(), l.unflatten_at(bits, pos))).collect(),
            ),
            Layout::Tensor => HostValue::Tuple(Vec::new()),
        }
    }

    /// The type this layout was made from, as `.drs` writes it.
    pub fn describe(&self) -> String {
        let prefix = |ty: &Ty| match ty {
            Ty::F32 => "",
            Ty::I32 => "i",
            Ty::U32 => "u",
            Ty::Bool => "b",
        };
        match self {
            Layout::Scalar(ty) => ty.name().to_string(),
            Layout::Vector(ty, n) => format!("{}vec{n}", prefix(ty)),
            Layout::Color => "Color".into(),
            Layout::Matrix(n) => format!("mat{n}"),
            Layout::Tuple(elems) if elems.len() == 1 => format!("({},)", elems[0].describe()),
            Layout::Tuple(elems) => format!("({})", elems.iter().map(Layout::describe).collect::<Vec<_>>().join(", ")),
            Layout::Array(elem, n) => format!("[{}; {n}]", elem.describe()),
            Layout::Struct { name, .. } | Layout::Handle(name) => name.clone(),
            Layout::Tensor => "Tensor".into(),
        }
    }

    /// Parses a host value of this layout from `.drs`-like text: literals (`1.0`, `-2`, `3u`,
    /// `true`, `inf`, `nan`), constructors (`vec3(1.0, 2.0, 3.0)`, `vec3(0.5)`, `Color(..)`,
    /// `mat3(c0, c1, c2)`, `mat3(1.0)`), lists `[a, b]` (vectors, colours, arrays, matrices as
    /// columns), tuples `(a, b)` and struct literals `Name { field: value }`. A float literal
    /// where a vector or `Color` is expected is splatted, as in `.drs`.
    pub fn parse(&self, text: &str) -> Result<HostValue, String> {
        let mut p = ValueParser { text, pos: 0 };
        let v = p.value(self)?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(format!("unexpected `{}` after the value", &text[p.pos..]));
        }
        Ok(v)
    }
}

fn scalar_bits(ty: Ty, v: &HostValue) -> Option<u32> {
    match (ty, v) {
        (Ty::F32, HostValue::F32(x)) => Some(x.to_bits()),
        (Ty::I32, HostValue::I32(x)) => Some(*x as u32),
        (Ty::U32, HostValue::U32(x)) => Some(*x),
        (Ty::Bool, HostValue::Bool(b)) => Some(*b as u32),
        _ => None,
    }
}

fn scalar_value(ty: Ty, bits: u32) -> HostValue {
    match ty {
        Ty::F32 => HostValue::F32(f32::from_bits(bits)),
        Ty::I32 => HostValue::I32(bits as i32),
        Ty::U32 => HostValue::U32(bits),
        Ty::Bool => HostValue::Bool(bits != 0),
    }
}

/// A value on the host side of a call: what `drsc eval` parses and prints.
#[derive(Clone, Debug, PartialEq)]
pub enum HostValue {
    F32(f32),
    I32(i32),
    U32(u32),
    Bool(bool),
    /// An extern handle, plugin reference or texture.
    Handle(u32),
    /// A vector, colour or array; a matrix is a list of columns.
    List(Vec<HostValue>),
    Tuple(Vec<HostValue>),
    Struct(String, Vec<(String, HostValue)>),
}

/// Prints values as `.drs`-like text: `1.5`, `-2`, `3`, `true`, `[1.0, 2.0, 3.0]`, `(a, b)`,
/// `Name { field: value }`, handles as `#7`. Floats print the shortest text that reads back to
/// the same f32 (`1.0`, `0.1`, `NaN`, `inf`).
impl fmt::Display for HostValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, items: &[HostValue]| -> fmt::Result {
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            Ok(())
        };
        match self {
            HostValue::F32(x) => write!(f, "{x:?}"),
            HostValue::I32(x) => write!(f, "{x}"),
            HostValue::U32(x) => write!(f, "{x}"),
            HostValue::Bool(b) => write!(f, "{b}"),
            HostValue::Handle(h) => write!(f, "#{h}"),
            HostValue::List(items) => {
                f.write_str("[")?;
                list(f, items)?;
                f.write_str("]")
            }
            HostValue::Tuple(items) => {
                f.write_str("(")?;
                list(f, items)?;
                if items.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            HostValue::Struct(name, fields) => {
                write!(f, "{name} {{")?;
                for (i, (n, v)) in fields.iter().enumerate() {
                    write!(f, "{} {n}: {v}", if i > 0 { "," } else { "" })?;
                }
                f.write_str(if fields.is_empty() { "}" } else { " }" })
            }
        }
    }
}

/// Splits a call `f(a, b(c, d), [e])` into the callee and its argument texts (split at the
/// top-level commas), for `drsc eval`.
pub fn split_call(text: &str) -> Result<(String, Vec<String>), String> {
    let text = text.trim();
    let open = text.find('(').ok_or_else(|| format!("expected a call `f(..)`, found `{text}`"))?;
    if !text.ends_with(')') {
        return Err(format!("expected a call `f(..)` ending with `)`, found `{text}`"));
    }
    let name = text[..open].trim().to_string();
    if name.is_empty() {
        return Err("the call has no function name".into());
    }
    let inner = &text[open + 1..text.len() - 1];
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced brackets in `{text}`"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced brackets in `{text}`"));
    }
    let last = inner[start..].trim();
    // An empty last part is a trailing comma (`f(a, b,)`) or no arguments at all.
    if !last.is_empty() {
        args.push(last.to_string());
    }
    Ok((name, args))
}

struct ValueParser<'t> {
    text: &'t str,
    pos: usize,
}

impl ValueParser<'_> {
    fn skip_ws(&mut self) {
        while self.text[self.pos..].starts_with(char::is_whitespace) {
            self.pos += self.text[self.pos..].chars().next().map_or(1, char::len_utf8);
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{c}` at `{}`", self.rest()))
        }
    }

    fn rest(&self) -> &str {
        let r = &self.text[self.pos..];
        if r.is_empty() {
            "the end"
        } else {
            r
        }
    }

    /// A word: letters, digits, `_`, `.`, `+`/`-` inside numbers.
    fn word(&mut self) -> &str {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() {
            let c = bytes[self.pos] as char;
            let exponent_sign = (c == '+' || c == '-')
                && self.pos > start
                && matches!(bytes[self.pos - 1], b'e' | b'E')
                && (bytes[start].is_ascii_digit() || bytes[start] == b'-');
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || exponent_sign || (c == '-' && self.pos == start) {
                self.pos += 1;
            } else {
                break;
            }
        }
        &self.text[start..self.pos]
    }

    /// Comma-separated values of the given layouts between `open` and `close`.
    fn items(&mut self, close: char, layouts: &[&Layout]) -> Result<Vec<HostValue>, String> {
        let mut out = Vec::new();
        for (i, l) in layouts.iter().enumerate() {
            if i > 0 {
                self.expect(',')?;
            }
            out.push(self.value(l)?);
        }
        self.eat(',');
        self.expect(close)?;
        Ok(out)
    }

    fn value(&mut self, layout: &Layout) -> Result<HostValue, String> {
        match layout {
            Layout::Scalar(ty) => {
                let at = self.rest().to_string();
                // `f32(2)`-style conversions are not values; literals only.
                let w = self.word().to_string();
                parse_scalar(*ty, &w).ok_or_else(|| format!("expected a {} literal at `{at}`", ty.name()))
            }
            Layout::Handle(name) => {
                self.eat('#');
                let w = self.word().to_string();
                w.trim_end_matches('u')
                    .parse::<u32>()
                    .map(HostValue::Handle)
                    .map_err(|_| format!("expected a `{name}` handle number, found `{w}`"))
            }
            Layout::Vector(ty, n) => self.components(layout, *ty, *n as usize),
            Layout::Color => self.components(layout, Ty::F32, 3),
            Layout::Tensor => Err("a tensor is not written as text".into()),
            Layout::Matrix(n) => {
                let column = Layout::Vector(Ty::F32, *n);
                let save = self.pos;
                let w = self.word().to_string();
                if w == layout.describe() {
                    self.expect('(')?;
                    let save_args = self.pos;
                    if let Ok(HostValue::F32(s)) = self.value(&Layout::Scalar(Ty::F32)) {
                        if self.eat(')') {
                            let cols = (0..*n)
                                .map(|c| {
                                    HostValue::List(
                                        (0..*n).map(|r| HostValue::F32(if c == r { s } else { 0.0 })).collect(),
                                    )
                                })
                                .collect();
                            return Ok(HostValue::List(cols));
                        }
                    }
                    self.pos = save_args;
                    let cols: Vec<&Layout> = (0..*n).map(|_| &column).collect();
                    return Ok(HostValue::List(self.items(')', &cols)?));
                }
                self.pos = save;
                self.expect('[')?;
                let cols: Vec<&Layout> = (0..*n).map(|_| &column).collect();
                Ok(HostValue::List(self.items(']', &cols)?))
            }
            Layout::Tuple(elems) => {
                self.expect('(')?;
                let refs: Vec<&Layout> = elems.iter().collect();
                Ok(HostValue::Tuple(self.items(')', &refs)?))
            }
            Layout::Array(elem, n) => {
                self.expect('[')?;
                let refs: Vec<&Layout> = (0..*n).map(|_| &**elem).collect();
                Ok(HostValue::List(self.items(']', &refs)?))
            }
            Layout::Struct { name, fields } => {
                let w = self.word().to_string();
                if !w.is_empty() && w != *name && !name.ends_with(&format!("::{w}")) {
                    return Err(format!("expected a `{name}` literal, found `{w}`"));
                }
                self.expect('{')?;
                let mut given: Vec<(String, HostValue)> = Vec::new();
                while !self.eat('}') {
                    if !given.is_empty() {
                        self.expect(',')?;
                        if self.eat('}') {
                            break;
                        }
                    }
                    let field = self.word().to_string();
                    let Some((_, l)) = fields.iter().find(|(f, _)| *f == field) else {
                        return Err(format!("`{name}` has no field `{field}`"));
                    };
                    self.expect(':')?;
                    given.push((field, self.value(l)?));
                }
                let mut ordered = Vec::new();
                for (f, _) in fields {
                    let v = given
                        .iter()
                        .find(|(g, _)| g == f)
                        .map(|(_, v)| v.clone())
                        .ok_or_else(|| format!("missing field `{f}` in the `{name}` literal"))?;
                    ordered.push((f.clone(), v));
                }
                Ok(HostValue::Struct(name.clone(), ordered))
            }
        }
    }

    /// A vector or colour: `[a, b, c]`, `vec3(a, b, c)` (parts may be smaller vectors), a
    /// splat `vec3(s)` or a bare float literal (splat).
    fn components(&mut self, layout: &Layout, ty: Ty, n: usize) -> Result<HostValue, String> {
        let scalar = Layout::Scalar(ty);
        if self.eat('[') {
            let refs: Vec<&Layout> = (0..n).map(|_| &scalar).collect();
            return Ok(HostValue::List(self.items(']', &refs)?));
        }
        let save = self.pos;
        let w = self.word().to_string();
        if let Some(v) = parse_scalar(ty, &w) {
            if ty == Ty::F32 {
                return Ok(HostValue::List(vec![v; n]));
            }
            return Err(format!("expected {}, found `{w}`", layout.describe()));
        }
        if w != layout.describe() {
            self.pos = save;
            return Err(format!("expected {} at `{}`", layout.describe(), self.rest()));
        }
        self.expect('(')?;
        let mut parts: Vec<HostValue> = Vec::new();
        while !self.eat(')') {
            if !parts.is_empty() {
                self.expect(',')?;
            }
            let save = self.pos;
            let w = self.word().to_string();
            if let Some(v) = parse_scalar(ty, &w) {
                parts.push(v);
                continue;
            }
            // A nested vector constructor: `vec4(vec3(..), 1.0)`.
            self.pos = save;
            let sizes = [2u8, 3, 4];
            let nested = sizes.iter().find(|&&k| {
                let name = Layout::Vector(ty, k).describe();
                self.text[self.pos..].trim_start().starts_with(&format!("{name}("))
            });
            match nested {
                Some(&k) => match self.components(&Layout::Vector(ty, k), ty, k as usize)? {
                    HostValue::List(items) => parts.extend(items),
                    _ => unreachable!("components gives a list"),
                },
                None => return Err(format!("expected a {} component at `{}`", ty.name(), self.rest())),
            }
        }
        match parts.len() {
            1 => Ok(HostValue::List(vec![parts[0].clone(); n])),
            k if k == n => Ok(HostValue::List(parts)),
            k => Err(format!("{} needs {n} components, {k} given", layout.describe())),
        }
    }
}

fn parse_scalar(ty: Ty, w: &str) -> Option<HostValue> {
    let w = w.replace('_', "");
    match ty {
        Ty::Bool => match w.as_str() {
            "true" => Some(HostValue::Bool(true)),
            "false" => Some(HostValue::Bool(false)),
            _ => None,
        },
        Ty::F32 => {
            let lower = w.to_ascii_lowercase();
            match lower.as_str() {
                "inf" | "+inf" | "infinity" => return Some(HostValue::F32(f32::INFINITY)),
                "-inf" | "-infinity" => return Some(HostValue::F32(f32::NEG_INFINITY)),
                "nan" => return Some(HostValue::F32(f32::NAN)),
                _ => {}
            }
            if !w.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                return None;
            }
            w.parse::<f32>().ok().map(HostValue::F32)
        }
        Ty::I32 => parse_int(w.strip_suffix('i').unwrap_or(&w)).and_then(|v| i32::try_from(v).ok()).map(HostValue::I32),
        Ty::U32 => parse_int(w.strip_suffix('u').unwrap_or(&w)).and_then(|v| u32::try_from(v).ok()).map(HostValue::U32),
    }
}

fn parse_int(w: &str) -> Option<i64> {
    let (neg, digits) = match w.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, w),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(bin) = digits.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if neg { -value } else { value })
}
