//! The operations of the IR and their exact semantics.
//!
//! These rules hold for every module, and passes rely on them:
//! - which NaN (sign and payload) an operation returns when its result is NaN is unspecified:
//!   any arithmetic may return any NaN, so `x * 1.0` may be replaced by `x`;
//! - host functions ([`Op::CallExtern`]) neither read nor write the module's buffers (nor, of
//!   course, a call's local arrays); they may have other effects, so they are never removed,
//!   duplicated or reordered;
//! - a local array ([`Op::LocalLoad`], [`Op::LocalStore`]) belongs to one call of its function:
//!   calls never share them, and different arrays never alias;
//! - every loop terminates: a loop without effects whose results are unused may be removed.

use crate::{Const, FuncId, Region, Ty, Value};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Op {
    Const(Const),
    /// Result has the operand's type.
    Unary(UnaryOp, Value),
    /// Both operands and the result have one type.
    Binary(BinaryOp, Value, Value),
    /// `a * b + c` rounded once (f32).
    Fma(Value, Value, Value),
    /// Compares two values of one type; the result is bool.
    Cmp(CmpOp, Value, Value),
    /// `cond ? a : b`; `a` and `b` have one type.
    Select(Value, Value, Value),
    /// Numeric conversion to `Ty` (see [`Op::Convert`]'s rules in [`convert`]).
    Convert(Ty, Value),
    /// Reinterprets the 32 bits of an f32, i32 or u32 as another of these types.
    Bitcast(Ty, Value),
    /// A transcendental function of f32 arguments. Backends without an instruction for it
    /// expand it into arithmetic (`drs-opt`'s math expansion), within a documented error.
    Math(MathOp, Vec<Value>),
    /// Calls a function of the module; the results are the callee's.
    Call(FuncId, Vec<Value>),
    /// Calls a host function declared in [`crate::Module::externs`].
    CallExtern(u32, Vec<Value>),
    /// Reads element `index` (u32) of buffer `buffer`. Out of range reads give 0.
    Load {
        buffer: u32,
        index: Value,
    },
    /// Writes element `index` of a buffer. Out of range writes are dropped.
    Store {
        buffer: u32,
        index: Value,
        value: Value,
    },
    /// Adds to element `index` of an f32 or integer buffer, atomically with respect to other
    /// lanes and threads (the adjoint of a parameter read). Out of range is dropped.
    AtomicAdd {
        buffer: u32,
        index: Value,
        value: Value,
    },
    /// Reads element `index` (u32) of local array `array` of the current call. Out of range
    /// gives 0; an element not yet written in this call reads as an unspecified value.
    LocalLoad {
        array: u32,
        index: Value,
    },
    /// Writes element `index` of a local array of the current call. Out of range is dropped.
    LocalStore {
        array: u32,
        index: Value,
        value: Value,
    },
    /// Returns its operand unchanged; derivatives do not flow through it (`detach(x)`).
    Detach(Value),
    /// Has the value of the first operand and, for differentiation, the derivative of the
    /// second (`replace_grad(a, b)`); both have one type.
    ReplaceGrad(Value, Value),
    /// Runs `then` if `cond`, else `els`; results are the yields of the region that ran.
    If {
        cond: Value,
        then: Region,
        els: Region,
    },
    /// Loop-carried values start as `init`; the body runs with them as its params and yields
    /// `[continue, next...]`; it repeats while `continue` is true. Results are the carried
    /// values after the last iteration.
    Loop {
        init: Vec<Value>,
        body: Region,
        /// The `@max_iters(N)` bound of the source loop, when it has one. Informational (the
        /// lowering already makes such a loop stop after N iterations): the autodiff sizes
        /// its tapes by it, and passes that rebuild a loop keep it.
        max_iters: Option<u32>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    /// Negation: f32 flips the sign bit; i32 wraps (`-MIN == MIN`).
    Neg,
    /// bool: logical not; integers: bitwise not.
    Not,
    /// f32 only below.
    Abs,
    Sqrt,
    Floor,
    Ceil,
    Trunc,
    /// Rounds half away from zero (as Rust's `f32::round`).
    Round,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    /// Arithmetic; integer forms wrap.
    Add,
    Sub,
    Mul,
    /// f32: IEEE division. Integers: truncating division (signed for i32, unsigned for u32);
    /// division by zero gives 0 and `i32::MIN / -1` gives `i32::MIN`.
    Div,
    /// f32: remainder with the sign of the dividend (C `fmodf`). Integers: remainder of
    /// `Div`; `x % 0` gives `x` and `i32::MIN % -1` gives 0.
    Rem,
    /// f32: `a < b ? a : b` (so a NaN second operand is returned as is); integers: the
    /// smaller (signed for i32, unsigned for u32).
    Min,
    /// f32: `a > b ? a : b`; integers: the larger.
    Max,
    /// f32: the magnitude of `a` with the sign of `b`.
    CopySign,
    /// bool or integers.
    And,
    Or,
    Xor,
    /// Integers; the shift amount is taken modulo 32. `Shr` is arithmetic for i32 and
    /// logical for u32.
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CmpOp {
    /// f32 comparisons are ordered (false if either side is NaN) except `Ne` (true then).
    /// i32 compares signed, u32 unsigned; bool supports `Eq` and `Ne`.
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Transcendental functions; arguments and results are f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathOp {
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    /// `atan2(y, x)`.
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Exp,
    Exp2,
    Log,
    Log2,
    /// `pow(x, y)`.
    Pow,
}

impl MathOp {
    pub const ALL: [MathOp; 15] = [
        MathOp::Sin,
        MathOp::Cos,
        MathOp::Tan,
        MathOp::Asin,
        MathOp::Acos,
        MathOp::Atan,
        MathOp::Atan2,
        MathOp::Sinh,
        MathOp::Cosh,
        MathOp::Tanh,
        MathOp::Exp,
        MathOp::Exp2,
        MathOp::Log,
        MathOp::Log2,
        MathOp::Pow,
    ];

    pub fn arity(self) -> usize {
        match self {
            MathOp::Atan2 | MathOp::Pow => 2,
            _ => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MathOp::Sin => "sin",
            MathOp::Cos => "cos",
            MathOp::Tan => "tan",
            MathOp::Asin => "asin",
            MathOp::Acos => "acos",
            MathOp::Atan => "atan",
            MathOp::Atan2 => "atan2",
            MathOp::Sinh => "sinh",
            MathOp::Cosh => "cosh",
            MathOp::Tanh => "tanh",
            MathOp::Exp => "exp",
            MathOp::Exp2 => "exp2",
            MathOp::Log => "log",
            MathOp::Log2 => "log2",
            MathOp::Pow => "pow",
        }
    }

    pub fn from_name(name: &str) -> Option<MathOp> {
        MathOp::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl UnaryOp {
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Not => "not",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Trunc => "trunc",
            UnaryOp::Round => "round",
        }
    }
}

impl BinaryOp {
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Rem => "rem",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::CopySign => "copysign",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
            BinaryOp::Shl => "shl",
            BinaryOp::Shr => "shr",
        }
    }

    pub fn is_commutative(self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Mul | BinaryOp::And | BinaryOp::Or | BinaryOp::Xor)
    }
}

impl CmpOp {
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
}

/// Which types an operation accepts.
pub fn unary_accepts(op: UnaryOp, ty: Ty) -> bool {
    match op {
        UnaryOp::Neg => matches!(ty, Ty::F32 | Ty::I32),
        UnaryOp::Not => matches!(ty, Ty::Bool | Ty::I32 | Ty::U32),
        _ => ty == Ty::F32,
    }
}

pub fn binary_accepts(op: BinaryOp, ty: Ty) -> bool {
    match op {
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::Rem
        | BinaryOp::Min
        | BinaryOp::Max => ty != Ty::Bool,
        BinaryOp::CopySign => ty == Ty::F32,
        BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => ty != Ty::F32,
        BinaryOp::Shl | BinaryOp::Shr => matches!(ty, Ty::I32 | Ty::U32),
    }
}

pub fn cmp_accepts(op: CmpOp, ty: Ty) -> bool {
    ty != Ty::Bool || matches!(op, CmpOp::Eq | CmpOp::Ne)
}

/// The value conversions of [`Op::Convert`], applied to one lane's bits.
///
/// f32 → i32/u32 truncates toward zero and saturates (NaN gives 0, negative values give 0 for
/// u32); i32/u32 → f32 rounds to nearest even; i32 ↔ u32 keeps the bits (two's complement).
pub fn convert(from: Ty, to: Ty, bits: u32) -> u32 {
    match (from, to) {
        (a, b) if a == b => bits,
        (Ty::F32, Ty::I32) => f32::from_bits(bits) as i32 as u32,
        (Ty::F32, Ty::U32) => f32::from_bits(bits) as u32,
        (Ty::I32, Ty::F32) => (bits as i32 as f32).to_bits(),
        (Ty::U32, Ty::F32) => (bits as f32).to_bits(),
        (Ty::I32, Ty::U32) | (Ty::U32, Ty::I32) => bits,
        (Ty::Bool, _) | (_, Ty::Bool) => unreachable!("the verifier rejects conversions from or to bool"),
        _ => unreachable!("all numeric pairs are listed"),
    }
}
