//! The types of checked `.drs` programs.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    F32,
    I32,
    U32,
    Bool,
}

impl Scalar {
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::Bool => "bool",
        }
    }

    pub fn is_numeric(self) -> bool {
        self != Scalar::Bool
    }

    pub fn is_integer(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32)
    }

    /// Prefix of the vector type names: `vec3`, `ivec3`, `uvec3`, `bvec3`.
    fn vector_prefix(self) -> &'static str {
        match self {
            Scalar::F32 => "",
            Scalar::I32 => "i",
            Scalar::U32 => "u",
            Scalar::Bool => "b",
        }
    }
}

/// The plugin kinds; each has one interface and a reference type naming its instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PluginKind {
    Bsdf,
    Emitter,
    Texture,
    Medium,
    Phase,
    Integrator,
}

impl PluginKind {
    pub const ALL: [PluginKind; 6] = [
        PluginKind::Bsdf,
        PluginKind::Emitter,
        PluginKind::Texture,
        PluginKind::Medium,
        PluginKind::Phase,
        PluginKind::Integrator,
    ];

    /// The contextual word that declares a plugin of this kind.
    pub fn keyword(self) -> &'static str {
        match self {
            PluginKind::Bsdf => "bsdf",
            PluginKind::Emitter => "emitter",
            PluginKind::Texture => "texture",
            PluginKind::Medium => "medium",
            PluginKind::Phase => "phase",
            PluginKind::Integrator => "integrator",
        }
    }

    /// The name of the type whose values refer to instances of this kind.
    pub fn type_name(self) -> &'static str {
        match self {
            PluginKind::Bsdf => "Bsdf",
            PluginKind::Emitter => "Emitter",
            PluginKind::Texture => "Texture",
            PluginKind::Medium => "Medium",
            PluginKind::Phase => "PhaseFunction",
            PluginKind::Integrator => "Integrator",
        }
    }

    pub fn from_keyword(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.keyword() == word)
    }
}

pub type StructId = usize;
pub type ExternId = usize;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(Scalar),
    Vector(Scalar, u8),
    /// Square f32 matrix of size 3 or 4, column-major.
    Matrix(u8),
    Color,
    /// `()` is the empty tuple.
    Tuple(Vec<Type>),
    Array(Box<Type>, u32),
    Struct(StructId),
    Extern(ExternId),
    /// A reference to a plugin instance of a kind (not `Texture`, which is [`Type::Texture`]).
    Plugin(PluginKind),
    /// `Texture<f32>` or `Texture<Color>`.
    Texture(Box<Type>),
    /// `Tensor`: the type of a plugin param holding an array of f32 with a shape (an image);
    /// its values exist only inside the runtime's buffers, read through `.at(i)`/`.shape(i)`.
    Tensor,
    /// The type of an expression that never produces a value (a block that always returns).
    Never,
    /// Stands for a type that could not be determined because of an earlier error; it is
    /// compatible with everything so that one mistake gives one diagnostic.
    Error,
}

impl Type {
    pub const F32: Type = Type::Scalar(Scalar::F32);
    pub const I32: Type = Type::Scalar(Scalar::I32);
    pub const U32: Type = Type::Scalar(Scalar::U32);
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);

    pub fn unit() -> Type {
        Type::Tuple(Vec::new())
    }

    pub fn is_unit(&self) -> bool {
        matches!(self, Type::Tuple(v) if v.is_empty())
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Type::Error)
    }

    /// Error or Never: fits wherever a value is expected.
    pub fn is_wildcard(&self) -> bool {
        matches!(self, Type::Error | Type::Never)
    }

    /// The scalar of a scalar or vector type.
    pub fn element_scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) | Type::Vector(s, _) => Some(*s),
            Type::Color | Type::Matrix(_) => Some(Scalar::F32),
            _ => None,
        }
    }

    /// f32, float vectors, Color and matrices: the types the float math built-ins accept.
    pub fn is_float_valued(&self) -> bool {
        matches!(self, Type::Scalar(Scalar::F32) | Type::Vector(Scalar::F32, _) | Type::Color | Type::Matrix(_))
    }

    pub fn is_integer_valued(&self) -> bool {
        matches!(self, Type::Scalar(s) | Type::Vector(s, _) if s.is_integer())
    }

    /// Whether two types are compatible, treating Error and Never as wildcards.
    pub fn fits(&self, expected: &Type) -> bool {
        if self.is_wildcard() || expected.is_error() {
            return true;
        }
        match (self, expected) {
            (Type::Tuple(a), Type::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.fits(y)),
            (Type::Array(a, n), Type::Array(b, m)) => n == m && a.fits(b),
            (Type::Texture(a), Type::Texture(b)) => a.fits(b),
            _ => self == expected,
        }
    }
}

/// Names needed to print struct and extern types.
pub trait TypeNames {
    fn struct_name(&self, id: StructId) -> &str;
    fn extern_name(&self, id: ExternId) -> &str;
}

/// A type together with the names needed to print it, as the user writes it.
pub struct Display<'a, N: TypeNames + ?Sized> {
    pub ty: &'a Type,
    pub names: &'a N,
}

impl<N: TypeNames + ?Sized> fmt::Display for Display<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |ty: &Type| Display { ty, names: self.names }.to_string();
        match self.ty {
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Vector(s, n) => write!(f, "{}vec{n}", s.vector_prefix()),
            Type::Matrix(n) => write!(f, "mat{n}"),
            Type::Color => f.write_str("Color"),
            Type::Tuple(elems) if elems.len() == 1 => write!(f, "({},)", show(&elems[0])),
            Type::Tuple(elems) => write!(f, "({})", elems.iter().map(show).collect::<Vec<_>>().join(", ")),
            Type::Array(elem, n) => write!(f, "[{}; {n}]", show(elem)),
            Type::Struct(id) => f.write_str(self.names.struct_name(*id)),
            Type::Extern(id) => f.write_str(self.names.extern_name(*id)),
            Type::Plugin(kind) => f.write_str(kind.type_name()),
            Type::Texture(t) => write!(f, "Texture<{}>", show(t)),
            Type::Tensor => f.write_str("Tensor"),
            Type::Never => f.write_str("!"),
            Type::Error => f.write_str("{error}"),
        }
    }
}

/// Parses the name of a built-in value type (`f32`, `vec3`, `bvec2`, `mat4`, `Color`).
pub fn builtin_type(name: &str) -> Option<Type> {
    let scalar = match name {
        "f32" => return Some(Type::F32),
        "i32" => return Some(Type::I32),
        "u32" => return Some(Type::U32),
        "bool" => return Some(Type::BOOL),
        "Color" => return Some(Type::Color),
        "mat3" => return Some(Type::Matrix(3)),
        "mat4" => return Some(Type::Matrix(4)),
        _ => name,
    };
    let (elem, rest) = match scalar.as_bytes().first()? {
        b'i' => (Scalar::I32, &scalar[1..]),
        b'u' => (Scalar::U32, &scalar[1..]),
        b'b' => (Scalar::Bool, &scalar[1..]),
        _ => (Scalar::F32, scalar),
    };
    match rest {
        "vec2" => Some(Type::Vector(elem, 2)),
        "vec3" => Some(Type::Vector(elem, 3)),
        "vec4" => Some(Type::Vector(elem, 4)),
        _ => None,
    }
}
