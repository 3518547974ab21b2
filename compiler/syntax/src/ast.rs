//! The abstract syntax tree of one `.drs` file.
//!
//! Every node carries the [`Span`] of its source text. Expressions also carry a [`NodeId`],
//! unique within their file, under which later stages record facts about them (types,
//! resolutions). Parentheses are not kept: the pretty printer puts them back where precedence
//! needs them.

pub use drs_diagnostics::Span;
use std::fmt;

/// Identifies an expression within its file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

impl fmt::Debug for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.name, self.span)
    }
}

/// `a`, `a::b`, `Frame::to_local`.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub segments: Vec<Ident>,
    pub span: Span,
}

impl Path {
    pub fn last(&self) -> &Ident {
        self.segments.last().expect("a path has at least one segment")
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str("::")?;
            }
            f.write_str(&s.name)?;
        }
        Ok(())
    }
}

/// A parsed file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SourceUnit {
    pub items: Vec<Item>,
}

/// `@name` or `@name(arg, ...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: Ident,
    pub args: Vec<AttrArg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrArg {
    Path(Path),
    Int(u64, Span),
}

impl AttrArg {
    pub fn span(&self) -> Span {
        match self {
            AttrArg::Path(path) => path.span,
            AttrArg::Int(_, span) => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub attrs: Vec<Attribute>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Import(Import),
    Fn(FnDecl),
    Struct(StructDecl),
    Const(ConstDecl),
    Plugin(PluginDecl),
    Interface(InterfaceDecl),
    Impl(ImplDecl),
    /// `extern type Sampler;`: an opaque handle type whose operations the runtime provides.
    ExternType(Ident),
}

/// `import math;`, `import math::*;`, `import math::{PI, INV_PI};`, optionally `pub` (re-export).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub is_pub: bool,
    pub module: Path,
    pub names: ImportNames,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ImportNames {
    /// The module itself, used as a qualifier: `math::PI`.
    Module,
    /// Every item of the module.
    Glob(Span),
    /// The listed items.
    List(Vec<Ident>),
}

/// A function. `body` is `None` for interface methods and runtime-provided (`extern`) functions.
#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub is_extern: bool,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub attrs: Vec<Attribute>,
    pub name: Ident,
    /// `None` only for the receiver `self` of a method.
    pub ty: Option<TypeExpr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDecl {
    pub name: Ident,
    pub fields: Vec<FieldDecl>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub value: Expr,
}

/// `bsdf Diffuse { param ...; fn ... }`. The kind is a contextual word checked by `sema`.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginDecl {
    pub kind: Ident,
    pub name: Ident,
    pub params: Vec<PluginParam>,
    pub methods: Vec<Method>,
}

/// `param reflectance: Texture<Color> = 0.5;`
#[derive(Clone, Debug, PartialEq)]
pub struct PluginParam {
    pub attrs: Vec<Attribute>,
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
    pub span: Span,
}

/// A function inside a plugin, interface or `impl`, with its attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    pub attrs: Vec<Attribute>,
    pub decl: FnDecl,
}

/// `interface bsdf { fn eval(...) -> Color; ... }`: the methods every plugin of a kind has.
#[derive(Clone, Debug, PartialEq)]
pub struct InterfaceDecl {
    pub kind: Ident,
    pub methods: Vec<Method>,
}

/// `impl Frame { fn to_local(self, v: vec3) -> vec3 { ... } }`
#[derive(Clone, Debug, PartialEq)]
pub struct ImplDecl {
    pub ty: Ident,
    pub methods: Vec<Method>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// `f32`, `vec3`, `Frame`, `math::Frame`, `Texture<Color>`.
    Named { path: Path, args: Vec<TypeExpr> },
    /// `(f32, vec3)`; `()` is the unit type.
    Tuple(Vec<TypeExpr>),
    /// `[f32; 4]`, `[vec3; N]`.
    Array { elem: Box<TypeExpr>, len: ArrayLen },
}

/// The length of an array type or repeat expression: a literal or a named integer constant.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayLen {
    Literal(u64, Span),
    Const(Path),
}

impl ArrayLen {
    pub fn span(&self) -> Span {
        match self {
            ArrayLen::Literal(_, span) => *span,
            ArrayLen::Const(path) => path.span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The value of the block, when its last expression has no semicolon.
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let p[: T] = e;` (immutable) or `var p[: T] [= e];` (mutable).
    Let {
        mutable: bool,
        pattern: Pattern,
        ty: Option<TypeExpr>,
        init: Option<Expr>,
    },
    /// `place = e;` or `place op= e;`
    Assign {
        target: Expr,
        op: Option<BinOp>,
        value: Expr,
    },
    /// An expression evaluated for its effect; `semi` is false for block-like expressions
    /// (`if`, loops, blocks) written without a semicolon.
    Expr {
        expr: Expr,
        semi: bool,
    },
    Break,
    Continue,
    Return(Option<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    Bind(Ident),
    Wildcard,
    Tuple(Vec<Pattern>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Lit),
    /// A variable, constant, parameter or function name, possibly qualified.
    Path(Path),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    MethodCall {
        receiver: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    /// A struct field or a vector swizzle (`v.xy`, `c.r`).
    Field(Box<Expr>, Ident),
    /// `t.0`
    TupleIndex(Box<Expr>, u32, Span),
    Index(Box<Expr>, Box<Expr>),
    /// `(a, b)`; `()` is the unit value.
    Tuple(Vec<Expr>),
    Array(Vec<Expr>),
    /// `[e; N]`
    ArrayRepeat(Box<Expr>, ArrayLen),
    /// `Name { field: value, ... }`
    StructLit {
        path: Path,
        fields: Vec<FieldInit>,
    },
    Block(Block),
    If {
        cond: Box<Expr>,
        then: Block,
        els: Option<Box<Expr>>,
    },
    Loop {
        attrs: Vec<Attribute>,
        body: Block,
    },
    While {
        attrs: Vec<Attribute>,
        cond: Box<Expr>,
        body: Block,
    },
    For {
        attrs: Vec<Attribute>,
        var: Ident,
        start: Box<Expr>,
        end: Box<Expr>,
        body: Block,
    },
    /// `fwd_diff(f)` / `bwd_diff(f)`: the generated derivative of a function; it must be called.
    Derivative {
        mode: DiffMode,
        target: Path,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// An integer literal; `suffix` is `u` for `u32`, `i` for `i32`, or none.
    Int {
        value: u64,
        suffix: Option<IntSuffix>,
    },
    /// A float literal as written (kept as text so printing reproduces it exactly).
    Float(String),
    Bool(bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntSuffix {
    I32,
    U32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffMode {
    Fwd,
    Bwd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    /// `!`: logical not on bools, bitwise not on integers.
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }

    /// Binding strength, higher binds tighter; the grammar and the printer agree on it.
    pub fn precedence(self) -> u8 {
        use BinOp::*;
        match self {
            Or => 1,
            And => 2,
            Eq | Ne | Lt | Le | Gt | Ge => 3,
            BitOr => 4,
            BitXor => 5,
            BitAnd => 6,
            Shl | Shr => 7,
            Add | Sub => 8,
            Mul | Div | Rem => 9,
        }
    }

    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

impl UnOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
        }
    }
}

impl Expr {
    /// Block-like expressions end a statement without a semicolon.
    pub fn is_block_like(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Block(_)
                | ExprKind::If { .. }
                | ExprKind::Loop { .. }
                | ExprKind::While { .. }
                | ExprKind::For { .. }
        )
    }
}
