//! The checked program: every module's AST plus the tables of items, signatures and the facts
//! the checker established about each function body (types of expressions, what names refer
//! to). Later stages (IR lowering) read these tables and never re-resolve names.

use crate::types::{ExternId, PluginKind, StructId, Type, TypeNames};
use drs_diagnostics::{FileId, Span};
use drs_syntax::ast::{self, NodeId};
use std::collections::HashMap;
use std::path::PathBuf;

pub type ModuleId = usize;
pub type FnId = usize;
pub type ConstId = usize;
pub type PluginId = usize;
pub type LocalId = usize;

pub struct Module {
    /// Dotted module path as imported (`bsdfs::diffuse`), or the file stem for root files.
    pub name: String,
    pub file: FileId,
    pub path: PathBuf,
    /// Part of the standard library (does not get the implicit prelude).
    pub is_stdlib: bool,
    pub ast: ast::SourceUnit,
}

/// A named top-level item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemRef {
    Fn(FnId),
    Struct(StructId),
    Const(ConstId),
    Plugin(PluginId),
    Extern(ExternId),
}

pub struct StructDef {
    pub name: String,
    pub module: ModuleId,
    pub span: Span,
    pub fields: Vec<(String, Type)>,
    /// Methods and associated functions from `impl` blocks.
    pub methods: HashMap<String, FnId>,
}

pub struct ExternDef {
    pub name: String,
    pub module: ModuleId,
    pub span: Span,
    pub methods: HashMap<String, FnId>,
}

/// Where a function is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnOwner {
    Free,
    Struct(StructId),
    Extern(ExternId),
    Plugin(PluginId),
    Interface(PluginKind),
}

#[derive(Clone, Debug)]
pub struct ParamDef {
    pub name: String,
    pub ty: Type,
    pub no_diff: bool,
    pub span: Span,
}

/// The parts of a function needed to call it.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub params: Vec<Type>,
    pub ret: Type,
}

pub struct FnDef {
    pub name: String,
    pub module: ModuleId,
    pub owner: FnOwner,
    /// The first parameter is the receiver `self`.
    pub has_self: bool,
    pub is_extern: bool,
    pub params: Vec<ParamDef>,
    pub ret: Type,
    pub span: Span,
    /// Span of the name, for diagnostics.
    pub name_span: Span,
    pub custom_fwd: Option<FnId>,
    pub custom_bwd: Option<FnId>,
    /// `@no_diff` on an `extern fn`: its results carry no derivatives (random numbers, ray
    /// hits), so derivatives never call a host derivative of it.
    pub no_diff: bool,
    /// Where the declaration is: item index in the module, and method index for methods.
    pub decl: (usize, Option<usize>),
    /// Facts about the body, filled by the checker (empty for functions without a body).
    pub body: BodyInfo,
}

impl FnDef {
    pub fn signature(&self) -> Signature {
        Signature { params: self.params.iter().map(|p| p.ty.clone()).collect(), ret: self.ret.clone() }
    }
}

pub struct ConstDef {
    pub name: String,
    pub module: ModuleId,
    pub ty: Type,
    pub span: Span,
    pub item: usize,
    pub body: BodyInfo,
}

pub struct PluginParamDef {
    pub name: String,
    pub ty: Type,
    pub no_diff: bool,
    pub span: Span,
    /// `@choice(a, b, ..)`: the words a scene file may give for this `u32` param; the value
    /// is the word's position in the list.
    pub choices: Vec<String>,
    /// `@derived(..)`: a `Tensor` param the runtime computes from the instance's other params.
    pub derived: Option<Derivation>,
}

/// How the runtime computes a `@derived` `Tensor` param from the instance's other params
/// (spec/plugins.md § Derived tensors). Derived data carries no derivatives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Derivation {
    /// `@derived(distribution_2d, SOURCE, ROWS[, mis_compensated])`: the sampling table of the
    /// discrete distribution over the texels of the `Tensor` param `source`, each texel
    /// weighted by its luminance (less the mean luminance when `mis_compensated`) times the row
    /// weight `rows`.
    Distribution2d { source: String, rows: RowWeight, mis_compensated: bool },
    /// `@derived(tabulate, METHOD, N)`: the values of the plugin's method `METHOD(x: f32) ->
    /// f32` for the instance at `count` equally spaced x from 0 to 1, a table the plugin
    /// interpolates instead of evaluating the method (Mitsuba's precomputed tables).
    /// `@derived(mean, METHOD, N)` (`mean`): their mean instead, a tensor of one value (a
    /// constant of the instance that a model defines by such an average, as Mitsuba's
    /// `roughplastic` does its internal reflectance).
    Tabulate { method: String, count: u32, mean: bool },
}

impl Derivation {
    /// The fewest and the most points of a `tabulate` or `mean` derivation.
    pub const TABULATE_COUNTS: (u32, u32) = (2, 1 << 16);
}

/// The weight of each row of a [`Derivation::Distribution2d`] source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowWeight {
    /// Every row weighs 1 (an image on a plane).
    Uniform,
    /// Row y of h weighs sin(pi y / (h - 1)): the solid angle of a latitude-longitude map
    /// whose first and last rows lie on the poles (Mitsuba's `envmap`).
    SinTheta,
}

impl RowWeight {
    /// The words `@derived` takes for each weighting.
    pub const WORDS: [(&'static str, RowWeight); 2] =
        [("uniform", RowWeight::Uniform), ("sin_theta", RowWeight::SinTheta)];
}

pub struct PluginDef {
    pub kind: PluginKind,
    pub name: String,
    pub module: ModuleId,
    pub span: Span,
    pub item: usize,
    pub params: Vec<PluginParamDef>,
    pub methods: HashMap<String, FnId>,
    /// Facts about the parameter default expressions.
    pub defaults: BodyInfo,
}

pub struct InterfaceDef {
    pub module: ModuleId,
    pub span: Span,
    /// Methods in declaration order.
    pub methods: Vec<FnId>,
}

/// What a name in an expression refers to.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    Local(LocalId),
    Fn(FnId),
    Const(ConstId),
    /// A parameter of the plugin whose method is being checked.
    PluginParam(PluginId, usize),
    Builtin(String),
    /// A built-in type used as a constructor or conversion (`vec3(..)`, `f32(i)`).
    Constructor(Type),
}

#[derive(Clone, Debug)]
pub struct LocalDef {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    pub span: Span,
}

/// The methods of a `Tensor` param (spec/types.md § Tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorMethod {
    /// `t.shape(i) -> u32`: the size of dimension `i` (height, width, channels).
    Shape,
    /// `t.at(i) -> f32`: element `i` of the flat data, the index clamped to the last element.
    At,
}

impl TensorMethod {
    pub const ALL: [TensorMethod; 2] = [TensorMethod::Shape, TensorMethod::At];

    pub fn name(self) -> &'static str {
        match self {
            TensorMethod::Shape => "shape",
            TensorMethod::At => "at",
        }
    }

    pub fn result(self) -> Type {
        match self {
            TensorMethod::Shape => Type::U32,
            TensorMethod::At => Type::F32,
        }
    }
}

/// Facts about the expressions of one body, keyed by node id.
#[derive(Default)]
pub struct BodyInfo {
    pub locals: Vec<LocalDef>,
    pub expr_types: HashMap<NodeId, Type>,
    pub resolutions: HashMap<NodeId, Resolution>,
    /// Method calls resolved to a function (struct, extern or plugin-interface methods).
    pub method_targets: HashMap<NodeId, FnId>,
    /// Method calls on a `Tensor` param (whose receiver resolves to the param).
    pub tensor_methods: HashMap<NodeId, TensorMethod>,
}

#[derive(Default)]
pub struct Program {
    pub modules: Vec<Module>,
    pub structs: Vec<StructDef>,
    pub externs: Vec<ExternDef>,
    pub functions: Vec<FnDef>,
    pub consts: Vec<ConstDef>,
    pub plugins: Vec<PluginDef>,
    pub interfaces: HashMap<PluginKind, InterfaceDef>,
    /// The named items of each module.
    pub module_items: Vec<HashMap<String, ItemRef>>,
}

impl Program {
    pub fn show(&self, ty: &Type) -> String {
        crate::types::Display { ty, names: self }.to_string()
    }

    /// The AST of a function's declaration.
    pub fn fn_decl(&self, id: FnId) -> &ast::FnDecl {
        let f = &self.functions[id];
        let item = &self.modules[f.module].ast.items[f.decl.0];
        match (&item.kind, f.decl.1) {
            (ast::ItemKind::Fn(decl), None) => decl,
            (ast::ItemKind::Plugin(p), Some(m)) => &p.methods[m].decl,
            (ast::ItemKind::Interface(i), Some(m)) => &i.methods[m].decl,
            (ast::ItemKind::Impl(i), Some(m)) => &i.methods[m].decl,
            _ => unreachable!("function table points at a non-function item"),
        }
    }

    /// A function's name as users write it in paths (`Frame::to_local`, `Diffuse::eval`).
    pub fn fn_path(&self, id: FnId) -> String {
        let f = &self.functions[id];
        match f.owner {
            FnOwner::Free => f.name.clone(),
            FnOwner::Struct(s) => format!("{}::{}", self.structs[s].name, f.name),
            FnOwner::Extern(e) => format!("{}::{}", self.externs[e].name, f.name),
            FnOwner::Plugin(p) => format!("{}::{}", self.plugins[p].name, f.name),
            FnOwner::Interface(k) => format!("{}::{}", k.type_name(), f.name),
        }
    }

    pub fn module_of_file(&self, file: FileId) -> Option<ModuleId> {
        self.modules.iter().position(|m| m.file == file)
    }
}

impl TypeNames for Program {
    fn struct_name(&self, id: StructId) -> &str {
        &self.structs[id].name
    }
    fn extern_name(&self, id: ExternId) -> &str {
        &self.externs[id].name
    }
}
