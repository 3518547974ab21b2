//! The drs intermediate representation.
//!
//! Every `.drs` function lowers to an IR [`Function`] over *scalar* SSA values: vectors,
//! colours, matrices, tuples, structs and arrays are flattened into their scalar components
//! when lowered, so that a value is exactly one SIMD register on the CPU and one register on
//! the GPU. Control flow is structured: an [`Op::If`] yields values from its two regions, and
//! an [`Op::Loop`] is a do-while whose body yields a continue flag and the next values of its
//! loop-carried variables. `break`, `continue` and `return` are turned into flags by the
//! lowering, so backends only ever see these two forms: masked SIMD execution and PTX's
//! structured branches are direct translations.
//!
//! The semantics of each operation (including edge cases such as integer division by zero) are
//! defined here and implemented exactly by the reference interpreter; every backend is tested
//! against it.

mod builder;
mod display;
mod ops;
mod verify;

pub use builder::{Builder, Signatures};
pub use display::{print_function, print_module};
pub use ops::*;
pub use verify::{verify_function, verify_module, VerifyError};

use serde::{Deserialize, Serialize};

/// The type of an IR value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    F32,
    I32,
    U32,
    Bool,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::Bool => "bool",
        }
    }
}

/// An SSA value, numbered within its function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Value(pub u32);

/// A function of a [`Module`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FuncId(pub u32);

/// A constant. Floats are kept as bits so that constants compare, hash and serialise exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Const {
    F32(u32),
    I32(i32),
    U32(u32),
    Bool(bool),
}

impl Const {
    pub fn f32(v: f32) -> Const {
        Const::F32(v.to_bits())
    }

    pub fn ty(self) -> Ty {
        match self {
            Const::F32(_) => Ty::F32,
            Const::I32(_) => Ty::I32,
            Const::U32(_) => Ty::U32,
            Const::Bool(_) => Ty::Bool,
        }
    }

    /// The 32 bits that represent the constant in a lane (bools are 0 or 1).
    pub fn bits(self) -> u32 {
        match self {
            Const::F32(b) | Const::U32(b) => b,
            Const::I32(v) => v as u32,
            Const::Bool(b) => b as u32,
        }
    }

    pub fn from_bits(ty: Ty, bits: u32) -> Const {
        match ty {
            Ty::F32 => Const::F32(bits),
            Ty::I32 => Const::I32(bits as i32),
            Ty::U32 => Const::U32(bits),
            Ty::Bool => Const::Bool(bits != 0),
        }
    }
}

/// A sequence of instructions. A region yields values to the operation that owns it (the
/// function body yields the function's results).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// Values defined on entry (the loop-carried values of a loop body; empty otherwise).
    pub params: Vec<Value>,
    pub insts: Vec<Inst>,
    pub yields: Vec<Value>,
}

/// One operation and the values it defines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inst {
    pub results: Vec<Value>,
    pub op: Op,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub value: Value,
    /// Name in the source, with a component suffix (`wo.x`), for printing and tools.
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub result_types: Vec<Ty>,
    pub body: Region,
    /// The type of every value, indexed by [`Value`].
    pub value_types: Vec<Ty>,
    /// Scratch arrays of this function, indexed by `LocalLoad`/`LocalStore`'s `array`.
    pub locals: Vec<LocalArray>,
}

/// Per-lane scratch memory owned by one call of a function (reverse-mode tapes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LocalArray {
    pub elem: Ty,
    pub len: u32,
}

impl Function {
    pub fn new(name: impl Into<String>) -> Self {
        Function {
            name: name.into(),
            params: Vec::new(),
            result_types: Vec::new(),
            body: Region::default(),
            value_types: Vec::new(),
            locals: Vec::new(),
        }
    }

    /// Allocates a new value of type `ty`.
    pub fn new_value(&mut self, ty: Ty) -> Value {
        self.value_types.push(ty);
        Value(self.value_types.len() as u32 - 1)
    }

    pub fn ty(&self, v: Value) -> Ty {
        self.value_types[v.0 as usize]
    }

    pub fn add_param(&mut self, name: impl Into<String>, ty: Ty) -> Value {
        let value = self.new_value(ty);
        self.params.push(Param { value, name: name.into() });
        value
    }

    /// Declares a scratch array of `len` elements of type `elem` and returns its index.
    pub fn add_local(&mut self, elem: Ty, len: u32) -> u32 {
        self.locals.push(LocalArray { elem, len });
        self.locals.len() as u32 - 1
    }

    pub fn param_types(&self) -> Vec<Ty> {
        self.params.iter().map(|p| self.ty(p.value)).collect()
    }
}

/// A runtime buffer that kernels read and write through [`Op::Load`], [`Op::Store`] and
/// [`Op::AtomicAdd`] (scene parameters, textures, gradient buffers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferDecl {
    pub name: String,
    pub elem: Ty,
}

/// A function provided by the host (the runtime), called by [`Op::CallExtern`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExternDecl {
    pub name: String,
    pub params: Vec<Ty>,
    pub results: Vec<Ty>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Module {
    pub functions: Vec<Function>,
    pub externs: Vec<ExternDecl>,
    pub buffers: Vec<BufferDecl>,
}

impl Module {
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }

    pub fn function_mut(&mut self, id: FuncId) -> &mut Function {
        &mut self.functions[id.0 as usize]
    }

    pub fn find(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().position(|f| f.name == name).map(|i| FuncId(i as u32))
    }

    pub fn add_function(&mut self, f: Function) -> FuncId {
        self.functions.push(f);
        FuncId(self.functions.len() as u32 - 1)
    }
}
