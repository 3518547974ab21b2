//! Random well-typed `.drs` programs, run through the whole pipeline and compared across
//! stages and backends (see `differential/mod.rs` for exactly what is compared and why).
//!
//! The generator writes source text: a few structs (with an `impl` of methods and associated
//! functions), constants, and functions that call the ones before them (never recursively).
//! Bodies use f32, i32, u32, bool, vecN, ivecN, uvecN, Color, mat3, structs, tuples and arrays
//! (of scalars, vectors, colours and structs); arithmetic with broadcasting, comparisons,
//! logic, bit operations and shifts, swizzles (also as assignment targets), constructors and
//! conversions, dynamic indexing (always in range), `if` expressions and statements whose
//! conditions depend on the arguments (so lanes diverge), `var`s assigned in branches and loops
//! (also declared without initialiser and assigned on both branches), shadowing `let`s, tuple
//! patterns, `for`/`while`/`loop` with data-dependent trip counts bounded by construction
//! (`for i in 0..(n & 7)`, `@max_iters(N)`, counters), `break`, `continue` and early `return`
//! inside nested control flow, calls of built-ins (transcendentals included) and of prelude
//! functions. Every program must pass the checker: a generator bug shows up as a failing test
//! that prints the program and its diagnostics.
//!
//! So that every value computed can be observed, each function also returns an accumulator of
//! digests of its bindings (`acc = (acc * 31u) ^ digest(v)` at the end of blocks). Each
//! function takes a lane id `lid` and passes it on; the extern `tick(lid, x)` answers
//! differently at every call of a lane, so calling it for an inactive lane, twice, in another
//! order (arguments, struct fields written out of order, compound assignment places), or
//! outside a short circuit, changes the results.
//!
//! Oracle for the lowering: each program is also generated in a desugared form ([`Gen::alt`],
//! the same choices written with equivalent constructs: `for` as `while`, `@max_iters` as
//! counters, `&&` as `if`, `p op= e` as `p = p op e`, `if`/`else` with the condition negated);
//! both must compute the same results in the interpreter.
//!
//! The generator draws every decision from a stream of numbers that proptest produces and
//! shrinks; a zero always picks the simplest option, so shrinking simplifies the program.
//! Argument values come from a separate seed. `DRS_RANDOM_PROGRAMS=n` changes the number of
//! programs per test (there are four tests; the default gives 2,000 programs in all);
//! `DRS_RANDOM_DUMP` and `DRS_RANDOM_SAVE` write programs out (see [`dump`]).

mod differential;

use differential::{Env, Rng, Stages, UlpStats, LEVELS};
use drs_sema::LoadOptions;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::fmt::Write as _;
use std::sync::Mutex;

// ------------------------------------------------------------------------------ choices

struct Choices<'a> {
    stream: &'a [u32],
    pos: usize,
}

impl Choices<'_> {
    fn next(&mut self) -> u32 {
        let v = self.stream.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }

    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
        } else {
            self.next() as usize % n
        }
    }

    /// True with `percent`% probability; false for a zero.
    fn maybe(&mut self, percent: u32) -> bool {
        self.next() % 100 >= 100 - percent
    }

    /// An index drawn with the given weights (zero weight: never); a zero picks the first
    /// option with a weight.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        assert!(total > 0, "no option available");
        let mut r = self.next() % total;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        unreachable!()
    }

    fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        &items[self.below(items.len())]
    }
}

// -------------------------------------------------------------------------------- types

#[derive(Clone, Debug, PartialEq, Eq)]
enum T {
    F32,
    I32,
    U32,
    Bool,
    /// vecN
    V(u8),
    /// ivecN
    IV(u8),
    /// uvecN
    UV(u8),
    Color,
    Mat3,
    /// Struct `S{i}` of the program.
    S(usize),
    Tup(Vec<T>),
    Arr(Box<T>, u8),
}

impl T {
    /// The element type of a vector or colour.
    fn elem(&self) -> Option<T> {
        match self {
            T::V(_) | T::Color => Some(T::F32),
            T::IV(_) => Some(T::I32),
            T::UV(_) => Some(T::U32),
            _ => None,
        }
    }

    fn width(&self) -> u8 {
        match self {
            T::V(n) | T::IV(n) | T::UV(n) => *n,
            T::Color => 3,
            _ => 1,
        }
    }

    fn is_int(&self) -> bool {
        matches!(self, T::I32 | T::U32 | T::IV(_) | T::UV(_))
    }

    /// Types with `+ - * / %`.
    fn is_arith(&self) -> bool {
        matches!(self, T::F32 | T::I32 | T::U32 | T::V(_) | T::IV(_) | T::UV(_) | T::Color)
    }

    /// Types with `==`/`!=`.
    fn is_eq(&self) -> bool {
        matches!(self, T::F32 | T::I32 | T::U32 | T::Bool | T::V(_) | T::IV(_) | T::UV(_) | T::Color)
    }

    /// The vector of `n` elements of scalar type `elem` (the scalar itself for 1).
    fn vec_of(elem: &T, n: u8) -> T {
        match (elem, n) {
            (e, 1) => e.clone(),
            (T::F32, n) => T::V(n),
            (T::I32, n) => T::IV(n),
            (T::U32, n) => T::UV(n),
            _ => unreachable!("no vector of {elem:?}"),
        }
    }
}

/// A float literal as the value of an `if` branch, a `select` arm or a block takes the
/// expected type of the whole, which may be a vector or `Color`: in
/// `(if c { 0.5 } else { x }) * col` the `0.5` splats to a `Color` and then the branches differ,
/// and so do `(0.5 + 1.0)` or `(0.5 - f32(x))` (literals in operators splat too, and the
/// result broadcasts). As the reference specifies it: expected types flow into branches,
/// tails and operands, and a float literal splats wherever a vector or `Color` is expected.
/// So an f32 branch with a float literal in it is written `f32(..)`, which fixes its type.
fn typed_literal(t: &T, text: String) -> String {
    let b = text.as_bytes();
    let literal = (1..b.len().saturating_sub(1)).any(|i| {
        b[i - 1].is_ascii_digit()
            && (i < 2 || !(b[i - 2].is_ascii_alphabetic() || b[i - 2] == b'_'))
            && ((b[i] == b'.' && b[i + 1].is_ascii_digit())
                || (b[i] == b'e' && (b[i + 1].is_ascii_digit() || b[i + 1] == b'-')))
    });
    if *t == T::F32 && literal {
        format!("f32({text})")
    } else {
        text
    }
}

fn paren_if_negative(s: &str) -> String {
    if s.starts_with('-') {
        format!("({s})")
    } else {
        s.to_string()
    }
}

const F32_LITS: [&str; 16] = [
    "1.0", "0.5", "2.0", "0.0", "-1.0", "3.0", "0.25", "-0.5", "10.0", "1e-3", "-0.0", "1e10", "7.25", "0.1", "100.0",
    "-3.75",
];
const I32_LITS: [&str; 13] = ["1", "0", "2", "3", "-1", "7", "-8", "16", "100", "2147483647", "-100000", "31", "5i"];
const U32_LITS: [&str; 10] = ["1u", "0u", "2u", "3u", "7u", "31u", "255u", "4294967295u", "0x80000000u", "1000u"];
const F32_CONSTS: [&str; 8] = ["PI", "INV_PI", "TWO_PI", "E", "EPSILON", "SQRT_TWO", "INFINITY", "F32_MAX"];

/// Elementwise float built-ins of one argument.
const F1: [&str; 23] = [
    "abs", "sqrt", "sin", "cos", "exp", "log", "floor", "fract", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "exp2", "log2", "rsqrt", "sign", "ceil", "trunc", "round", "saturate",
];
/// Of them, those whose interesting domain is positive: sometimes given `abs(x) + 0.5`.
const POSITIVE: [&str; 5] = ["sqrt", "log", "log2", "rsqrt", "pow"];

/// A user function (free, method of struct `S{s}` with `self`, or associated function).
#[derive(Clone, Debug)]
struct FnSig {
    name: String,
    kind: FnKind,
    params: Vec<T>,
    ret: T,
    /// Rough dynamic cost of a call (statements run, loops multiplied out).
    cost: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum FnKind {
    Free,
    Method(usize),
    Assoc(usize),
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: T,
    /// Assignable by generated statements (loop counters and `for` variables are not).
    mutable: bool,
}

/// Most statements a function may run (loops multiplied out, calls included), to keep the
/// interpreter fast.
const MAX_COST: u64 = 600;
const MAX_LOOP_NEST: u32 = 2;
const MAX_NEST: u32 = 3;

/// Features of the generated programs, counted for the report.
#[derive(Default, Debug, Clone)]
struct Coverage {
    programs: u64,
    functions: u64,
    methods: u64,
    structs: u64,
    consts: u64,
    ifs: u64,
    deferred_vars: u64,
    fors: u64,
    whiles: u64,
    loops: u64,
    breaks: u64,
    continues: u64,
    returns: u64,
    calls: u64,
    ticks: u64,
    transcendentals: u64,
    assigns: u64,
    swizzle_assigns: u64,
    index_dyn: u64,
    tuple_lets: u64,
    shadows: u64,
    desugared: u64,
    with_math: u64,
    results_exact: u64,
    results_direct: u64,
    results_inexact: u64,
    max_direct_ulps: u64,
    max_inexact_ulps: u64,
    inexact_differ: u64,
    lanes_run: u64,
    levels: [u64; 3],
    uniform_params: u64,
    source_bytes: u64,
}

struct Gen<'a> {
    c: Choices<'a>,
    structs: Vec<Vec<(String, T)>>,
    consts: Vec<(String, T)>,
    fns: Vec<FnSig>,
    // The function being generated.
    scope: Vec<Var>,
    next_id: usize,
    loops: u32,
    nest: u32,
    /// Where the bindings of the innermost block start in `scope`.
    block_mark: usize,
    /// Write the equivalent desugared forms (see [`Gen::alt`]); never changes a choice.
    alt: bool,
    alt_id: usize,
    mult: u64,
    cost: u64,
    ret: T,
    cov: Coverage,
}

impl<'a> Gen<'a> {
    /// The same program, written with equivalent forms where the language has two: `p op= e`
    /// as `p = p op e` (when evaluating the place twice is the same), `if c {A} else {B}` as
    /// `if !c {B} else {A}`, `for` as a `while` with a counter, `@max_iters(N)` loops with an
    /// explicit counter, `a && b` / `a || b` as `if` expressions. Both programs make the same
    /// choices, so they compute the same results, bit for bit.
    fn alt(stream: &'a [u32]) -> Gen<'a> {
        let mut g = Gen::new(stream);
        g.alt = true;
        g
    }

    /// A name for the desugared forms (outside the numbering of the generated bindings).
    fn alt_name(&mut self, prefix: &str) -> String {
        self.alt_id += 1;
        format!("{prefix}{}", self.alt_id)
    }

    fn new(stream: &'a [u32]) -> Gen<'a> {
        Gen {
            c: Choices { stream, pos: 0 },
            structs: Vec::new(),
            consts: Vec::new(),
            fns: Vec::new(),
            scope: Vec::new(),
            next_id: 0,
            loops: 0,
            nest: 0,
            block_mark: 0,
            alt: false,
            alt_id: 0,
            mult: 1,
            cost: 0,
            ret: T::F32,
            cov: Coverage::default(),
        }
    }

    fn tname(&self, t: &T) -> String {
        match t {
            T::F32 => "f32".into(),
            T::I32 => "i32".into(),
            T::U32 => "u32".into(),
            T::Bool => "bool".into(),
            T::V(n) => format!("vec{n}"),
            T::IV(n) => format!("ivec{n}"),
            T::UV(n) => format!("uvec{n}"),
            T::Color => "Color".into(),
            T::Mat3 => "mat3".into(),
            T::S(i) => format!("S{i}"),
            T::Tup(ts) if ts.len() == 1 => format!("({},)", self.tname(&ts[0])),
            T::Tup(ts) => format!("({})", ts.iter().map(|t| self.tname(t)).collect::<Vec<_>>().join(", ")),
            T::Arr(e, n) => format!("[{}; {n}]", self.tname(e)),
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id - 1)
    }

    // ---------------------------------------------------------------------- types

    fn basic_type(&mut self) -> T {
        match self.c.weighted(&[30, 14, 8, 8, 6, 10, 5, 7, 4, 3]) {
            0 => T::F32,
            1 => T::I32,
            2 => T::U32,
            3 => T::Bool,
            4 => T::V(2),
            5 => T::V(3),
            6 => T::V(4),
            7 => T::Color,
            8 => T::IV(2 + self.c.below(3) as u8),
            _ => T::UV(2 + self.c.below(3) as u8),
        }
    }

    fn value_type(&mut self) -> T {
        let structs = if self.structs.is_empty() { 0 } else { 8 };
        match self.c.weighted(&[80, 3, structs, 6, 4]) {
            0 => self.basic_type(),
            1 => T::Mat3,
            2 => T::S(self.c.below(self.structs.len())),
            3 => {
                let n = 1 + self.c.below(3);
                T::Tup((0..n).map(|_| self.basic_type()).collect())
            }
            _ => {
                let structs = if self.structs.is_empty() { 0 } else { 1 };
                let e = match self.c.weighted(&[3, 2, 1, 2, 1, structs]) {
                    0 => T::F32,
                    1 => T::I32,
                    2 => T::U32,
                    3 => T::V(3),
                    4 => T::Color,
                    _ => T::S(self.c.below(self.structs.len())),
                };
                T::Arr(Box::new(e), 2 + self.c.below(3) as u8)
            }
        }
    }

    // ------------------------------------------------------------------- literals

    fn literal(&mut self, t: &T) -> String {
        match t {
            T::F32 => paren_if_negative(self.c.pick::<&str>(&F32_LITS)),
            T::I32 => paren_if_negative(self.c.pick::<&str>(&I32_LITS)),
            T::U32 => self.c.pick(&U32_LITS).to_string(),
            T::Bool => (if self.c.maybe(50) { "true" } else { "false" }).into(),
            T::V(_) | T::IV(_) | T::UV(_) | T::Color => {
                let e = t.elem().unwrap();
                let name = self.tname(t);
                if self.c.maybe(30) {
                    format!("{name}({})", self.literal(&e))
                } else {
                    let parts: Vec<String> = (0..t.width()).map(|_| self.literal(&e)).collect();
                    format!("{name}({})", parts.join(", "))
                }
            }
            T::Mat3 => format!("mat3({})", self.literal(&T::F32)),
            T::S(s) => {
                let fields = self.structs[*s].clone();
                let inits: Vec<String> = fields.iter().map(|(f, ft)| format!("{f}: {}", self.literal(ft))).collect();
                format!("(S{s} {{ {} }})", inits.join(", "))
            }
            T::Tup(ts) => {
                let parts = ts.iter().map(|t| self.literal(t)).collect();
                self.tuple_text(parts)
            }
            T::Arr(e, n) => {
                if self.c.maybe(30) {
                    format!("[{}; {n}]", self.literal(e))
                } else {
                    let parts: Vec<String> = (0..*n).map(|_| self.literal(e)).collect();
                    format!("[{}]", parts.join(", "))
                }
            }
        }
    }

    fn tuple_text(&self, parts: Vec<String>) -> String {
        if parts.len() == 1 {
            format!("({},)", parts[0])
        } else {
            format!("({})", parts.join(", "))
        }
    }

    // ---------------------------------------------------------------- expressions

    fn vars_of(&self, t: &T) -> Vec<usize> {
        self.scope.iter().enumerate().filter(|(_, v)| &v.ty == t).map(|(i, _)| i).collect()
    }

    fn leaf(&mut self, t: &T) -> String {
        self.leaf_at(t, 2)
    }

    /// A variable of type `t`; or, with none, mostly a value built from variables of other
    /// types (`f32(n)`, `vec3(x, y, x)`, `v.zy`), so that most values depend on the arguments;
    /// or a literal or constant.
    fn leaf_at(&mut self, t: &T, budget: u32) -> String {
        let vars = self.vars_of(t);
        if !vars.is_empty() && !self.c.maybe(12) {
            let i = *self.c.pick(&vars);
            return self.scope[i].name.clone();
        }
        if budget > 0 && !self.c.maybe(25) {
            if let Some(e) = self.derived(t, budget - 1) {
                return e;
            }
        }
        if *t == T::F32 && self.c.maybe(10) {
            return self.c.pick(&F32_CONSTS).to_string();
        }
        let consts: Vec<String> = self.consts.iter().filter(|(_, ct)| ct == t).map(|(n, _)| n.clone()).collect();
        if !consts.is_empty() && self.c.maybe(20) {
            return self.c.pick(&consts).clone();
        }
        self.literal(t)
    }

    fn derived(&mut self, t: &T, budget: u32) -> Option<String> {
        let var_of = |g: &mut Self, ty: &T| -> Option<String> {
            let vars = g.vars_of(ty);
            if vars.is_empty() {
                None
            } else {
                Some(g.scope[*g.c.pick(&vars)].name.clone())
            }
        };
        Some(match t {
            T::F32 => match self.c.below(3) {
                0 => format!(
                    "({}).{}",
                    var_of(self, &T::V(3)).or_else(|| var_of(self, &T::Color))?,
                    self.c.pick(&["x", "y", "z"])
                ),
                1 => format!("f32({})", var_of(self, &T::I32)?),
                _ => format!("f32({})", self.leaf_at(&T::U32, budget)),
            },
            T::I32 => match self.c.below(2) {
                0 => format!("i32({})", var_of(self, &T::F32)?),
                _ => format!("i32({})", self.leaf_at(&T::U32, budget)),
            },
            T::U32 => match self.c.below(2) {
                0 => format!("u32({})", var_of(self, &T::I32)?),
                _ => format!("u32({})", var_of(self, &T::F32)?),
            },
            T::Bool => {
                let x = self.leaf_at(&T::F32, budget);
                let y = self.leaf_at(&T::F32, budget);
                format!("({x} < {y})")
            }
            T::V(n) => {
                let m = 2 + self.c.below(3) as u8;
                if let (Some(v), true) = (var_of(self, &T::V(m)), self.c.maybe(50)) {
                    let l = self.swizzle_letters(m, *n, false);
                    format!("({v}).{l}")
                } else {
                    let parts: Vec<String> = (0..*n).map(|_| self.leaf_at(&T::F32, budget)).collect();
                    format!("vec{n}({})", parts.join(", "))
                }
            }
            T::IV(_) | T::UV(_) | T::Color => {
                let e = t.elem().unwrap();
                let parts: Vec<String> = (0..t.width()).map(|_| self.leaf_at(&e, budget)).collect();
                format!("{}({})", self.tname(t), parts.join(", "))
            }
            T::Mat3 => {
                let parts: Vec<String> = (0..3).map(|_| self.leaf_at(&T::V(3), budget)).collect();
                format!("mat3({})", parts.join(", "))
            }
            T::S(k) => {
                let fields = self.structs[*k].clone();
                let inits: Vec<String> =
                    fields.iter().map(|(f, ft)| format!("{f}: {}", self.leaf_at(ft, budget))).collect();
                format!("(S{k} {{ {} }})", inits.join(", "))
            }
            T::Tup(ts) => {
                let parts = ts.iter().map(|et| self.leaf_at(et, budget)).collect();
                self.tuple_text(parts)
            }
            T::Arr(e, n) => {
                let parts: Vec<String> = (0..*n).map(|_| self.leaf_at(e, budget)).collect();
                format!("[{}]", parts.join(", "))
            }
        })
    }

    /// A u32 digest of a variable, for the accumulator `acc` (None for types without one).
    fn digest(&mut self, name: &str, t: &T) -> String {
        match t {
            T::U32 => name.to_string(),
            T::I32 => format!("u32({name})"),
            T::Bool => format!("select({name}, 1u, 0u)"),
            // NaN payloads are not specified: never look at a NaN's bits.
            T::F32 => format!("to_bits(select(isnan({name}), 0.5, {name}))"),
            T::V(n) | T::IV(n) | T::UV(n) => {
                let l = self.swizzle_letters(*n, 1, false);
                self.digest(&format!("{name}.{l}"), &t.elem().unwrap())
            }
            T::Color => {
                let l = *self.c.pick(&["r", "g", "b"]);
                self.digest(&format!("{name}.{l}"), &T::F32)
            }
            T::Mat3 => {
                let i = self.c.below(3);
                self.digest(&format!("{name}[{i}]"), &T::V(3))
            }
            T::S(k) => {
                let (f, ft) = self.c.pick(&self.structs[*k].clone()).clone();
                self.digest(&format!("{name}.{f}"), &ft)
            }
            T::Tup(ts) => {
                let k = self.c.below(ts.len());
                self.digest(&format!("{name}.{k}"), &ts[k])
            }
            T::Arr(e, n) => {
                let i = self.c.below(*n as usize);
                self.digest(&format!("{name}[{i}]"), e)
            }
        }
    }

    fn expr(&mut self, t: &T, d: u32) -> String {
        if d == 0 {
            return self.leaf(t);
        }
        match t {
            T::F32 => self.e_f32(d),
            T::I32 | T::U32 => self.e_int(t, d),
            T::Bool => self.e_bool(d),
            T::V(n) => self.e_vec(*n, d),
            T::IV(_) | T::UV(_) => self.e_ivec(t, d),
            T::Color => self.e_color(d),
            T::Mat3 => self.e_mat(d),
            T::S(_) | T::Tup(_) | T::Arr(..) => self.e_aggregate(t, d),
        }
    }

    /// An operand: an expression of `t` at depth `d - 1`.
    fn sub(&mut self, t: &T, d: u32) -> String {
        self.expr(t, d.saturating_sub(1))
    }

    /// Options every type has: if-expression, select, call, block, field/element access.
    /// `None` if the chosen one is not available.
    fn common(&mut self, t: &T, d: u32) -> Option<String> {
        match self.c.weighted(&[6, 4, 6, 2, 4]) {
            0 => {
                let c = self.sub(&T::Bool, d);
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                Some(format!("(if {c} {{ {} }} else {{ {} }})", typed_literal(t, a), typed_literal(t, b)))
            }
            1 => {
                let c = self.sub(&T::Bool, d);
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                Some(format!("select({c}, {}, {})", typed_literal(t, a), typed_literal(t, b)))
            }
            2 => self.call(t, d),
            3 => {
                let at = self.basic_type();
                let init = self.sub(&at, d);
                let name = self.fresh("b");
                let mark = self.scope.len();
                self.scope.push(Var { name: name.clone(), ty: at, mutable: false });
                let body = self.sub(t, d);
                self.scope.truncate(mark);
                Some(format!("({{ let {name} = {init}; {} }})", typed_literal(t, body)))
            }
            _ => self.project(t, d),
        }
    }

    /// A field of a struct, an element of a tuple or an array, of type `t`.
    fn project(&mut self, t: &T, d: u32) -> Option<String> {
        let mut options: Vec<(T, String)> = Vec::new();
        for (s, fields) in self.structs.iter().enumerate() {
            for (f, ft) in fields {
                if ft == t {
                    options.push((T::S(s), format!(".{f}")));
                }
            }
        }
        for v in &self.scope {
            if let T::Tup(ts) = &v.ty {
                for (k, et) in ts.iter().enumerate() {
                    if et == t {
                        options.push((v.ty.clone(), format!(".{k}")));
                    }
                }
            }
            if let T::Arr(e, _) = &v.ty {
                if **e == *t {
                    options.push((v.ty.clone(), String::new()));
                }
            }
        }
        if options.is_empty() {
            return None;
        }
        let (src_t, suffix) = self.c.pick(&options).clone();
        let src = self.sub(&src_t, d);
        if let T::Arr(_, n) = src_t {
            let i = self.index(n, d);
            return Some(format!("({src})[{i}]"));
        }
        Some(format!("({src}){suffix}"))
    }

    /// An index into something of length `n`, always in range: a constant or a masked
    /// dynamic value.
    fn index(&mut self, n: u8, d: u32) -> String {
        if self.c.maybe(70) {
            self.cov.index_dyn += 1;
            if self.c.maybe(10) {
                // A call of the stateful extern: the index must be evaluated exactly once.
                self.cov.ticks += 1;
                let x = self.sub(&T::F32, d);
                format!("(u32(abs(tick(lid, {x})) * 8.0) % {n}u)")
            } else if n.is_power_of_two() && self.c.maybe(50) {
                let i = self.sub(&T::I32, d);
                format!("({i} & {})", n - 1)
            } else {
                let u = self.sub(&T::U32, d);
                format!("({u} % {n}u)")
            }
        } else {
            format!("{}", self.c.below(n as usize))
        }
    }

    /// A call of a generated function returning `t` (or a tuple or struct containing it).
    fn call(&mut self, t: &T, d: u32) -> Option<String> {
        let mut options: Vec<(usize, String)> = Vec::new();
        for (i, f) in self.fns.iter().enumerate() {
            if self.cost + self.mult * f.cost > MAX_COST {
                continue;
            }
            if f.ret == *t {
                options.push((i, String::new()));
            }
            if let T::Tup(ts) = &f.ret {
                for (k, et) in ts.iter().enumerate() {
                    if et == t {
                        options.push((i, format!(".{k}")));
                    }
                }
            }
            if let T::S(s) = &f.ret {
                for (name, ft) in &self.structs[*s] {
                    if ft == t {
                        options.push((i, format!(".{name}")));
                    }
                }
            }
        }
        if options.is_empty() {
            return None;
        }
        let (i, suffix) = self.c.pick(&options).clone();
        let text = self.call_text(i, d);
        if suffix.is_empty() {
            Some(text)
        } else {
            Some(format!("({text}){suffix}"))
        }
    }

    fn call_text(&mut self, i: usize, d: u32) -> String {
        let sig = self.fns[i].clone();
        self.cost += self.mult * sig.cost;
        self.cov.calls += 1;
        let mut args: Vec<String> = vec!["lid".into()];
        args.extend(sig.params.iter().map(|p| self.sub(p, d)));
        match sig.kind {
            FnKind::Free => format!("{}({})", sig.name, args.join(", ")),
            FnKind::Assoc(s) => format!("S{s}::{}({})", sig.name, args.join(", ")),
            FnKind::Method(s) => {
                let recv = self.sub(&T::S(s), d);
                if self.c.maybe(30) {
                    let mut all = vec![recv];
                    all.extend(args);
                    format!("S{s}::{}({})", sig.name, all.join(", "))
                } else {
                    format!("({recv}).{}({})", sig.name, args.join(", "))
                }
            }
        }
    }

    fn f1_call(&mut self, t: &T, d: u32) -> String {
        let name = *self.c.pick(&F1);
        if !matches!(name, "abs" | "floor" | "fract" | "sign" | "ceil" | "trunc" | "round" | "saturate" | "sqrt") {
            self.cov.transcendentals += 1;
        }
        let a = self.sub(t, d);
        if POSITIVE.contains(&name) && self.c.maybe(50) {
            format!("{name}((abs({a}) + 0.5))")
        } else {
            format!("{name}({a})")
        }
    }

    fn f2_call(&mut self, t: &T, d: u32) -> String {
        let name = *self.c.pick(&["min", "max", "pow", "atan2", "step"]);
        let a = self.sub(t, d);
        let b = self.sub(t, d);
        if matches!(name, "pow" | "atan2") {
            self.cov.transcendentals += 1;
        }
        if name == "pow" && self.c.maybe(50) {
            format!("pow((abs({a}) + 0.1), {b})")
        } else {
            format!("{name}({a}, {b})")
        }
    }

    fn f3_call(&mut self, t: &T, d: u32) -> String {
        match self.c.below(5) {
            0 => {
                let x = self.sub(t, d);
                if self.c.maybe(50) {
                    format!("clamp({x}, 0.0, 1.0)")
                } else {
                    let lo = self.sub(t, d);
                    let hi = self.sub(t, d);
                    format!("clamp({x}, {lo}, {hi})")
                }
            }
            1 => {
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                let s = if self.c.maybe(50) { self.sub(&T::F32, d) } else { self.sub(t, d) };
                format!("lerp({a}, {b}, {s})")
            }
            2 => {
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                let x = self.sub(t, d);
                format!("smoothstep({a}, {b}, {x})")
            }
            3 => {
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                let x = self.sub(t, d);
                format!("fma({a}, {b}, {x})")
            }
            _ => {
                let a = self.sub(t, d);
                format!("clamp({a}, -1.0, 1.0)")
            }
        }
    }

    fn arith_op(&mut self, int: bool) -> &'static str {
        if int {
            ["+", "-", "*", "/", "%"][self.c.weighted(&[4, 3, 3, 1, 1])]
        } else {
            ["+", "-", "*", "/", "%"][self.c.weighted(&[4, 3, 4, 2, 1])]
        }
    }

    fn e_f32(&mut self, d: u32) -> String {
        let w = [10, 12, 22, 3, 14, 6, 4, 6, 9, 4, 1, 4, 2, 5];
        match self.c.weighted(&w) {
            0 => self.leaf(&T::F32),
            1 => self.common(&T::F32, d).unwrap_or_else(|| self.leaf(&T::F32)),
            2 => {
                let a = self.sub(&T::F32, d);
                let op = self.arith_op(false);
                let b = self.sub(&T::F32, d);
                format!("({a} {op} {b})")
            }
            3 => format!("(-{})", self.sub(&T::F32, d)),
            4 => self.f1_call(&T::F32, d),
            5 => self.f2_call(&T::F32, d),
            6 => self.f3_call(&T::F32, d),
            7 => {
                let n = 2 + self.c.below(3) as u8;
                let a = self.sub(&T::V(n), d);
                match self.c.below(4) {
                    0 => format!("dot({a}, {})", self.sub(&T::V(n), d)),
                    1 => format!("length({a})"),
                    2 => format!("distance({a}, {})", self.sub(&T::V(n), d)),
                    _ => format!("length_squared({a})"),
                }
            }
            8 => {
                // A component.
                match self.c.below(4) {
                    0 | 1 => {
                        let n = 2 + self.c.below(3) as u8;
                        let v = self.sub(&T::V(n), d);
                        if self.c.maybe(30) {
                            let i = self.index(n, d);
                            format!("({v})[{i}]")
                        } else {
                            let l = self.swizzle_letters(n, 1, false);
                            format!("({v}).{l}")
                        }
                    }
                    2 => {
                        let c = self.sub(&T::Color, d);
                        if self.c.maybe(30) {
                            let i = self.index(3, d);
                            format!("({c})[{i}]")
                        } else {
                            format!("({c}).{}", self.c.pick(&["r", "g", "b", "x", "y", "z"]))
                        }
                    }
                    _ => {
                        let m = self.sub(&T::Mat3, d);
                        if self.c.maybe(50) {
                            format!("determinant({m})")
                        } else {
                            let i = self.index(3, d);
                            let j = self.index(3, d);
                            format!("({m})[{i}][{j}]")
                        }
                    }
                }
            }
            9 => {
                let t = if self.c.maybe(50) { T::I32 } else { T::U32 };
                format!("f32({})", self.sub(&t, d))
            }
            10 => format!("from_bits({})", self.sub(&T::U32, d)),
            11 => self.prelude_call(&T::F32, d).unwrap_or_else(|| self.leaf(&T::F32)),
            12 => {
                let a = self.sub(&T::F32, d);
                format!("f32({a})")
            }
            _ => {
                self.cov.ticks += 1;
                let a = self.sub(&T::F32, d);
                format!("tick(lid, {a})")
            }
        }
    }

    fn e_int(&mut self, t: &T, d: u32) -> String {
        let signed = *t == T::I32;
        match self.c.weighted(&[10, 12, 20, 10, 6, 4, 6, 6, 6, 3]) {
            0 => self.leaf(t),
            1 => self.common(t, d).unwrap_or_else(|| self.leaf(t)),
            2 => {
                let a = self.sub(t, d);
                let op = self.arith_op(true);
                let b = self.sub(t, d);
                format!("({a} {op} {b})")
            }
            3 => {
                let a = self.sub(t, d);
                let op = self.c.pick(&["&", "|", "^"]).to_string();
                let b = self.sub(t, d);
                format!("({a} {op} {b})")
            }
            4 => {
                let a = self.sub(t, d);
                let op = self.c.pick(&["<<", ">>"]).to_string();
                let b = self.sub(t, d);
                let mask = if signed { "31" } else { "31u" };
                if self.c.maybe(85) {
                    format!("({a} {op} ({b} & {mask}))")
                } else {
                    format!("({a} {op} {b})")
                }
            }
            5 => {
                let a = self.sub(t, d);
                if signed && self.c.maybe(50) {
                    format!("(-{a})")
                } else {
                    format!("(!{a})")
                }
            }
            6 => {
                let a = self.sub(t, d);
                match self.c.below(4) {
                    0 => format!("abs({a})"),
                    1 => format!("min({a}, {})", self.sub(t, d)),
                    2 => format!("max({a}, {})", self.sub(t, d)),
                    _ => {
                        let lo = self.sub(t, d);
                        let hi = self.sub(t, d);
                        format!("clamp({a}, {lo}, {hi})")
                    }
                }
            }
            7 => {
                let name = self.tname(t);
                match self.c.below(4) {
                    0 | 1 => format!("{name}({})", self.sub(&T::F32, d)),
                    2 => {
                        let other = if signed { T::U32 } else { T::I32 };
                        format!("{name}({})", self.sub(&other, d))
                    }
                    _ if !signed => {
                        // NaN payloads are not specified: never look at a NaN's bits.
                        let x = self.sub(&T::F32, d);
                        format!("to_bits(({{ let nb = {x}; select(isnan(nb), 0.5, nb) }}))")
                    }
                    _ => format!("{name}({})", self.sub(t, d)),
                }
            }
            8 => {
                let n = 2 + self.c.below(3) as u8;
                let vt = T::vec_of(t, n);
                let v = self.sub(&vt, d);
                if self.c.maybe(40) {
                    let i = self.index(n, d);
                    format!("({v})[{i}]")
                } else {
                    let l = self.swizzle_letters(n, 1, false);
                    format!("({v}).{l}")
                }
            }
            _ => {
                if !signed && self.c.maybe(50) {
                    let a = self.sub(&T::U32, d);
                    let b = self.sub(&T::U32, d);
                    format!("select(has_flag({a}, {b}), 1u, 0u)")
                } else {
                    self.leaf(t)
                }
            }
        }
    }

    fn e_bool(&mut self, d: u32) -> String {
        match self.c.weighted(&[6, 8, 24, 8, 10, 4, 4, 3]) {
            0 => self.leaf(&T::Bool),
            1 => self.common(&T::Bool, d).unwrap_or_else(|| self.leaf(&T::Bool)),
            2 => {
                let t = [T::F32, T::I32, T::U32][self.c.weighted(&[5, 3, 2])].clone();
                let a = self.sub(&t, d);
                let op = self.c.pick(&["<", "<=", ">", ">=", "==", "!="]).to_string();
                let b = self.sub(&t, d);
                format!("({a} {op} {b})")
            }
            3 => {
                let t = loop {
                    let t = self.basic_type();
                    if t.is_eq() {
                        break t;
                    }
                };
                let a = self.sub(&t, d);
                let op = self.c.pick(&["==", "!="]).to_string();
                let b = self.sub(&t, d);
                format!("({a} {op} {b})")
            }
            4 => {
                let a = self.sub(&T::Bool, d);
                let op = self.c.pick(&["&&", "||", "&", "|", "^", "==", "!="]).to_string();
                let b = self.sub(&T::Bool, d);
                self.logic(a, &op, b)
            }
            5 if self.c.maybe(30) => {
                // Short circuit: the right operand (a call of the stateful extern) runs only
                // when needed.
                self.cov.ticks += 1;
                let a = self.sub(&T::Bool, d);
                let op = self.c.pick(&["&&", "||"]).to_string();
                let x = self.sub(&T::F32, d);
                self.logic(a, &op, format!("(tick(lid, {x}) > 0.0)"))
            }
            5 => format!("(!{})", self.sub(&T::Bool, d)),
            6 => {
                let name = self.c.pick(&["isnan", "isinf", "isfinite"]).to_string();
                format!("{name}({})", self.sub(&T::F32, d))
            }
            _ => self.prelude_call(&T::Bool, d).unwrap_or_else(|| self.leaf(&T::Bool)),
        }
    }

    /// `a op b` for a logical operator; in the desugared program, `&&` and `||` as `if`s.
    fn logic(&self, a: String, op: &str, b: String) -> String {
        match op {
            "&&" if self.alt => format!("(if {a} {{ {b} }} else {{ false }})"),
            "||" if self.alt => format!("(if {a} {{ true }} else {{ {b} }})"),
            _ => format!("({a} {op} {b})"),
        }
    }

    /// `k` swizzle letters for a vector of width `n` (distinct letters if `distinct`).
    fn swizzle_letters(&mut self, n: u8, k: u8, distinct: bool) -> String {
        let set: &[char] = if self.c.maybe(20) { &['r', 'g', 'b', 'a'] } else { &['x', 'y', 'z', 'w'] };
        let mut out = String::new();
        let mut avail: Vec<usize> = (0..n as usize).collect();
        for _ in 0..k {
            let i = self.c.below(avail.len());
            out.push(set[avail[i]]);
            if distinct {
                avail.remove(i);
            }
        }
        out
    }

    /// Constructor arguments for a vector of `n` elements of `elem`: scalars and smaller
    /// vectors adding up to `n` (at least two parts), or one scalar (splat).
    fn ctor_args(&mut self, elem: &T, n: u8, d: u32) -> Vec<String> {
        if self.c.maybe(15) {
            return vec![self.sub(elem, d)];
        }
        let mut parts = Vec::new();
        let mut left = n;
        while left > 0 {
            let max = if parts.is_empty() { left - 1 } else { left };
            let k = 1 + self.c.below(max.min(3) as usize) as u8;
            parts.push(self.sub(&T::vec_of(elem, k), d));
            left -= k;
        }
        parts
    }

    fn e_vec(&mut self, n: u8, d: u32) -> String {
        let t = T::V(n);
        let three = if n == 3 { 8 } else { 0 };
        match self.c.weighted(&[8, 10, 12, 18, 3, 10, 5, 5, 4, 8, 4, three, 3]) {
            0 => self.leaf(&t),
            1 => self.common(&t, d).unwrap_or_else(|| self.leaf(&t)),
            2 => {
                let args = self.ctor_args(&T::F32, n, d);
                format!("vec{n}({})", args.join(", "))
            }
            3 => {
                let op = self.arith_op(false);
                match self.c.below(4) {
                    0 => format!("({} {op} {})", self.sub(&t, d), self.sub(&T::F32, d)),
                    1 => format!("({} {op} {})", self.sub(&T::F32, d), self.sub(&t, d)),
                    _ => format!("({} {op} {})", self.sub(&t, d), self.sub(&t, d)),
                }
            }
            4 => format!("(-{})", self.sub(&t, d)),
            5 => self.f1_call(&t, d),
            6 => self.f2_call(&t, d),
            7 => self.f3_call(&t, d),
            8 => format!("normalize({})", self.sub(&t, d)),
            9 => {
                // A swizzle of another vector or of a colour.
                if self.c.maybe(25) && n != 3 {
                    let c = self.sub(&T::Color, d);
                    let set = if self.c.maybe(50) { ['r', 'g', 'b'] } else { ['x', 'y', 'z'] };
                    let l: String = (0..n).map(|_| *self.c.pick(&set)).collect();
                    format!("({c}).{l}")
                } else {
                    let m = 2 + self.c.below(3) as u8;
                    let v = self.sub(&T::V(m), d);
                    let l = self.swizzle_letters(m, n, false);
                    format!("({v}).{l}")
                }
            }
            10 => match self.c.below(3) {
                0 => format!("vec{n}({})", self.sub(&T::IV(n), d)),
                1 => format!("vec{n}({})", self.sub(&T::UV(n), d)),
                _ if n == 3 => format!("vec3({})", self.sub(&T::Color, d)),
                _ => format!("vec{n}({})", self.sub(&t, d)),
            },
            11 => {
                let a = self.sub(&t, d);
                let b = self.sub(&t, d);
                match self.c.below(6) {
                    0 => format!("cross({a}, {b})"),
                    1 => format!("reflect({a}, {b})"),
                    2 => format!("refract({a}, {b}, {})", self.sub(&T::F32, d)),
                    3 => format!("({} * {a})", self.sub(&T::Mat3, d)),
                    4 => format!("({a} * {})", self.sub(&T::Mat3, d)),
                    _ => {
                        let m = self.sub(&T::Mat3, d);
                        let i = self.index(3, d);
                        format!("({m})[{i}]")
                    }
                }
            }
            _ => self.prelude_call(&t, d).unwrap_or_else(|| self.leaf(&t)),
        }
    }

    fn e_ivec(&mut self, t: &T, d: u32) -> String {
        let n = t.width();
        let elem = t.elem().unwrap();
        let name = self.tname(t);
        let signed = matches!(t, T::IV(_));
        match self.c.weighted(&[8, 8, 12, 14, 10, 4, 4, 6, 8, 6]) {
            0 => self.leaf(t),
            1 => self.common(t, d).unwrap_or_else(|| self.leaf(t)),
            2 => {
                let args = self.ctor_args(&elem, n, d);
                format!("{name}({})", args.join(", "))
            }
            3 => {
                let op = self.arith_op(true);
                match self.c.below(4) {
                    0 => format!("({} {op} {})", self.sub(t, d), self.sub(&elem, d)),
                    1 => format!("({} {op} {})", self.sub(&elem, d), self.sub(t, d)),
                    _ => format!("({} {op} {})", self.sub(t, d), self.sub(t, d)),
                }
            }
            4 => {
                let op = self.c.pick(&["&", "|", "^"]).to_string();
                format!("({} {op} {})", self.sub(t, d), self.sub(t, d))
            }
            5 => {
                let op = self.c.pick(&["<<", ">>"]).to_string();
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                let mask = if signed { format!("{name}(31)") } else { format!("{name}(31u)") };
                format!("({a} {op} ({b} & {mask}))")
            }
            6 => {
                let a = self.sub(t, d);
                if signed && self.c.maybe(50) {
                    format!("(-{a})")
                } else {
                    format!("(!{a})")
                }
            }
            7 => {
                let a = self.sub(t, d);
                match self.c.below(4) {
                    0 => format!("abs({a})"),
                    1 => format!("min({a}, {})", self.sub(t, d)),
                    2 => format!("max({a}, {})", self.sub(t, d)),
                    _ => format!("clamp({a}, {}, {})", self.sub(t, d), self.sub(t, d)),
                }
            }
            8 => {
                if self.c.maybe(50) {
                    format!("{name}({})", self.sub(&T::V(n), d))
                } else {
                    let other = if signed { T::UV(n) } else { T::IV(n) };
                    format!("{name}({})", self.sub(&other, d))
                }
            }
            _ => {
                let m = 2 + self.c.below(3) as u8;
                let v = self.sub(&T::vec_of(&elem, m), d);
                let l = self.swizzle_letters(m, n, false);
                format!("({v}).{l}")
            }
        }
    }

    fn e_color(&mut self, d: u32) -> String {
        let t = T::Color;
        match self.c.weighted(&[8, 10, 10, 18, 3, 10, 4, 5, 6, 4]) {
            0 => self.leaf(&t),
            1 => self.common(&t, d).unwrap_or_else(|| self.leaf(&t)),
            2 => match self.c.below(3) {
                0 => format!("Color({}, {}, {})", self.sub(&T::F32, d), self.sub(&T::F32, d), self.sub(&T::F32, d)),
                1 => format!("Color({})", self.sub(&T::F32, d)),
                _ => format!("Color({})", self.sub(&T::V(3), d)),
            },
            3 => {
                let op = self.arith_op(false);
                match self.c.below(4) {
                    0 => format!("({} {op} {})", self.sub(&t, d), self.sub(&T::F32, d)),
                    1 => format!("({} {op} {})", self.sub(&T::F32, d), self.sub(&t, d)),
                    _ => format!("({} {op} {})", self.sub(&t, d), self.sub(&t, d)),
                }
            }
            4 => format!("(-{})", self.sub(&t, d)),
            5 => self.f1_call(&t, d),
            6 => self.f2_call(&t, d),
            7 => self.f3_call(&t, d),
            8 => {
                let c = self.sub(&t, d);
                let set = if self.c.maybe(50) { ['r', 'g', 'b'] } else { ['x', 'y', 'z'] };
                let l: String = (0..3).map(|_| *self.c.pick(&set)).collect();
                format!("({c}).{l}")
            }
            _ => self.prelude_call(&t, d).unwrap_or_else(|| self.leaf(&t)),
        }
    }

    fn e_mat(&mut self, d: u32) -> String {
        let t = T::Mat3;
        match self.c.weighted(&[8, 6, 10, 4, 6, 4, 4, 3, 3]) {
            0 => self.leaf(&t),
            1 => self.common(&t, d).unwrap_or_else(|| self.leaf(&t)),
            2 => {
                let cols: Vec<String> = (0..3).map(|_| self.sub(&T::V(3), d)).collect();
                format!("mat3({})", cols.join(", "))
            }
            3 => format!("mat3({})", self.sub(&T::F32, d)),
            4 => format!("({} * {})", self.sub(&t, d), self.sub(&t, d)),
            5 => {
                let op = self.c.pick(&["+", "-"]).to_string();
                format!("({} {op} {})", self.sub(&t, d), self.sub(&t, d))
            }
            6 => match self.c.below(3) {
                0 => format!("({} * {})", self.sub(&t, d), self.sub(&T::F32, d)),
                1 => format!("({} * {})", self.sub(&T::F32, d), self.sub(&t, d)),
                _ => format!("({} / {})", self.sub(&t, d), self.sub(&T::F32, d)),
            },
            7 => format!("transpose({})", self.sub(&t, d)),
            _ => {
                if self.c.maybe(50) {
                    format!("inverse({})", self.sub(&t, d))
                } else {
                    format!("(-{})", self.sub(&t, d))
                }
            }
        }
    }

    fn e_aggregate(&mut self, t: &T, d: u32) -> String {
        match self.c.weighted(&[8, 8, 12]) {
            0 => self.leaf(t),
            1 => self.common(t, d).unwrap_or_else(|| self.leaf(t)),
            _ => match t {
                T::S(s) => {
                    let mut fields = self.structs[*s].clone();
                    // Fields in any order.
                    for i in (1..fields.len()).rev() {
                        let j = self.c.below(i + 1);
                        fields.swap(i, j);
                    }
                    let inits: Vec<String> = fields.iter().map(|(f, ft)| format!("{f}: {}", self.sub(ft, d))).collect();
                    format!("(S{s} {{ {} }})", inits.join(", "))
                }
                T::Tup(ts) => {
                    let parts: Vec<String> = ts.iter().map(|et| self.sub(et, d)).collect();
                    self.tuple_text(parts)
                }
                T::Arr(e, n) => {
                    if self.c.maybe(25) {
                        format!("[{}; {n}]", self.sub(e, d))
                    } else {
                        let parts: Vec<String> = (0..*n).map(|_| self.sub(e, d)).collect();
                        format!("[{}]", parts.join(", "))
                    }
                }
                _ => unreachable!(),
            },
        }
    }

    /// A call of a prelude (stdlib) function returning `t`.
    fn prelude_call(&mut self, t: &T, d: u32) -> Option<String> {
        // Parameter codes: f f32, u u32, c Color, 2 vec2, 3 vec3.
        let table: &[(&str, &str)] = match t {
            T::F32 => &[
                ("sqr({})", "f"),
                ("rcp({})", "f"),
                ("safe_sqrt({})", "f"),
                ("safe_asin({})", "f"),
                ("safe_acos({})", "f"),
                ("sign_nonzero({})", "f"),
                ("mulsign({}, {})", "ff"),
                ("copysign({}, {})", "ff"),
                ("unlerp({}, {}, {})", "fff"),
                ("radians({})", "f"),
                ("erf({})", "f"),
                ("erfinv({})", "f"),
                ("luminance({})", "c"),
                ("srgb_to_linear({})", "f"),
                ("linear_to_srgb({})", "f"),
                ("max_channel({})", "c"),
                ("mean_channel({})", "c"),
                ("cos_theta({})", "3"),
                ("sin_theta({})", "3"),
                ("tan_theta({})", "3"),
                ("cos_phi({})", "3"),
                ("spherical_theta({})", "3"),
                ("spherical_phi({})", "3"),
                ("max_component({})", "3"),
                ("sincos({}).1", "f"),
                ("square_to_uniform_disk_concentric_pdf({})", "2"),
            ],
            T::Bool => &[("is_black({})", "c"), ("same_hemisphere({}, {})", "33"), ("has_flag({}, {})", "uu")],
            T::V(3) => &[
                ("face_forward({}, {})", "33"),
                ("reflect_local({})", "3"),
                ("sph_dir({}, {})", "ff"),
                ("square_to_uniform_sphere({})", "2"),
                ("square_to_cosine_hemisphere({})", "2"),
                ("Frame::new({}).to_local({})", "33"),
                ("Frame::to_world(Frame::new({}), {})", "33"),
                ("coordinate_system({}).0", "3"),
            ],
            T::V(2) => &[("square_to_uniform_disk_concentric({})", "2"), ("square_to_std_normal({})", "2")],
            T::Color => &[("srgb_to_linear_color({})", "c"), ("linear_to_srgb_color({})", "c")],
            _ => return None,
        };
        let (template, params) = *self.c.pick(table);
        self.cov.calls += 1;
        let mut out = String::new();
        let mut pieces = template.split("{}");
        out.push_str(pieces.next().unwrap());
        for (p, piece) in params.chars().zip(pieces) {
            let p = match p {
                'f' => T::F32,
                'u' => T::U32,
                'c' => T::Color,
                '2' => T::V(2),
                _ => T::V(3),
            };
            let a = self.sub(&p, d);
            out.push_str(&a);
            out.push_str(piece);
        }
        Some(format!("({out})"))
    }

    // ----------------------------------------------------------------- statements

    fn pad(indent: usize) -> String {
        "    ".repeat(indent)
    }

    /// A sequence of statements in a new scope; with `forced_break`, one of them (at a random
    /// position) is `if c { break; }`.
    fn block(&mut self, max: usize, indent: usize, forced_break: bool) -> String {
        let mark = self.scope.len();
        let outer_mark = std::mem::replace(&mut self.block_mark, mark);
        let n = self.c.below(max + 1);
        let at = if forced_break { Some(self.c.below(n + 1)) } else { None };
        let mut out = String::new();
        for i in 0..=n {
            if at == Some(i) {
                let cond = self.expr(&T::Bool, 2);
                self.cov.breaks += 1;
                let _ = writeln!(out, "{}if {cond} {{ break; }}", Self::pad(indent));
            }
            if i < n {
                out.push_str(&self.stmt(indent));
            }
        }
        // Fold some of the block's bindings into the function's accumulator, which it returns:
        // every value computed may then be observed.
        let mut folded = 0;
        let block_vars: Vec<Var> = self.scope.drain(mark..).collect();
        for v in block_vars {
            if folded < 3 && self.c.maybe(50) {
                folded += 1;
                let d = self.digest(&v.name, &v.ty);
                let _ = writeln!(out, "{}acc = (acc * 31u) ^ {d};", Self::pad(indent));
            }
        }
        self.scope.truncate(mark);
        self.block_mark = outer_mark;
        out
    }

    fn stmt(&mut self, indent: usize) -> String {
        self.cost += self.mult;
        let pad = Self::pad(indent);
        let can_nest = self.nest < MAX_NEST;
        let can_loop = can_nest && self.loops < MAX_LOOP_NEST && self.cost + self.mult * 8 <= MAX_COST;
        let mutable = self.scope.iter().any(|v| v.mutable);
        let w = [
            20,                            // let
            10,                            // var
            if mutable { 22 } else { 0 },  // assignment
            if can_nest { 12 } else { 0 }, // if
            if can_nest { 4 } else { 0 },  // deferred var
            if can_loop { 6 } else { 0 },  // for
            if can_loop { 4 } else { 0 },  // while
            if can_loop { 3 } else { 0 },  // loop
            if can_nest { 8 } else { 0 },  // jump
            if can_nest { 2 } else { 0 },  // block
            3,                             // tuple let
        ];
        match self.c.weighted(&w) {
            0 => {
                let t = self.value_type();
                let e = self.expr(&t, 3);
                // Sometimes shadow a binding of this block (`let x = x * 2.0;`, maybe with
                // another type): it is dropped from the scope, and ends with the block anyway.
                let own: Vec<usize> =
                    (self.block_mark..self.scope.len()).filter(|&i| self.scope[i].name.starts_with('v')).collect();
                let name = if !own.is_empty() && self.c.maybe(15) {
                    self.cov.shadows += 1;
                    let i = *self.c.pick(&own);
                    self.scope.remove(i).name
                } else {
                    self.fresh("v")
                };
                let s = if self.c.maybe(40) {
                    format!("{pad}let {name}: {} = {e};\n", self.tname(&t))
                } else {
                    format!("{pad}let {name} = {e};\n")
                };
                self.scope.push(Var { name, ty: t, mutable: false });
                s
            }
            1 => {
                let t = self.value_type();
                let name = self.fresh("v");
                let s = if matches!(t, T::V(_) | T::Color) && self.c.maybe(20) {
                    // Float-literal splat.
                    format!("{pad}var {name}: {} = {};\n", self.tname(&t), self.c.pick(&F32_LITS))
                } else {
                    let e = self.expr(&t, 3);
                    if self.c.maybe(40) {
                        format!("{pad}var {name}: {} = {e};\n", self.tname(&t))
                    } else {
                        format!("{pad}var {name} = {e};\n")
                    }
                };
                self.scope.push(Var { name, ty: t, mutable: true });
                s
            }
            2 => self.assignment(indent),
            3 => {
                self.cov.ifs += 1;
                let cond = self.expr(&T::Bool, 3);
                self.nest += 1;
                let then = self.block(3, indent + 1, false);
                let mut s = format!("{pad}if {cond} {{\n{then}{pad}}}");
                match self.c.weighted(&[5, 4, 1]) {
                    0 => {}
                    1 => {
                        let els = self.block(3, indent + 1, false);
                        if self.alt {
                            s = format!("{pad}if (!{cond}) {{\n{els}{pad}}} else {{\n{then}{pad}}}");
                        } else {
                            let _ = write!(s, " else {{\n{els}{pad}}}");
                        }
                    }
                    _ => {
                        let c2 = self.expr(&T::Bool, 2);
                        let b2 = self.block(3, indent + 1, false);
                        let b3 = self.block(3, indent + 1, false);
                        let _ = write!(s, " else if {c2} {{\n{b2}{pad}}} else {{\n{b3}{pad}}}");
                    }
                }
                self.nest -= 1;
                s.push('\n');
                s
            }
            4 => {
                // `var x: T;` assigned on both branches.
                self.cov.deferred_vars += 1;
                let t = self.value_type();
                let name = self.fresh("v");
                let cond = self.expr(&T::Bool, 3);
                self.nest += 1;
                let mut branches = Vec::new();
                for _ in 0..2 {
                    let mark = self.scope.len();
                    let body = self.block(3, indent + 1, false);
                    let e = self.expr(&t, 3);
                    self.scope.truncate(mark);
                    branches.push(format!("{body}{}{name} = {e};\n", Self::pad(indent + 1)));
                }
                self.nest -= 1;
                self.scope.push(Var { name: name.clone(), ty: t.clone(), mutable: true });
                format!(
                    "{pad}var {name}: {};\n{pad}if {cond} {{\n{}{pad}}} else {{\n{}{pad}}}\n",
                    self.tname(&t),
                    branches[0],
                    branches[1]
                )
            }
            5 => self.for_loop(indent),
            6 => self.while_loop(indent),
            7 => self.loop_loop(indent),
            8 => self.jump(indent),
            9 => {
                self.nest += 1;
                let body = self.block(4, indent + 1, false);
                self.nest -= 1;
                format!("{pad}{{\n{body}{pad}}}\n")
            }
            _ => {
                self.cov.tuple_lets += 1;
                let n = 2 + self.c.below(2);
                let ts: Vec<T> = (0..n).map(|_| self.basic_type()).collect();
                let e = self.expr(&T::Tup(ts.clone()), 3);
                let kw = if self.c.maybe(50) { "let" } else { "var" };
                let mut names = Vec::new();
                for t in ts {
                    if self.c.maybe(20) {
                        names.push("_".to_string());
                    } else {
                        let name = self.fresh("v");
                        names.push(name.clone());
                        self.scope.push(Var { name, ty: t, mutable: kw == "var" });
                    }
                }
                format!("{pad}{kw} ({}) = {e};\n", names.join(", "))
            }
        }
    }

    /// A place of a mutable variable (`v`, `v.f`, `v.0`, `v.xy`, `v[i]`, `m[i].y`) and its type.
    fn place(&mut self, d: u32) -> (String, T, bool) {
        let vars: Vec<usize> = self.scope.iter().enumerate().filter(|(_, v)| v.mutable).map(|(i, _)| i).collect();
        let v = self.scope[*self.c.pick(&vars)].clone();
        let mut text = v.name.clone();
        let mut ty = v.ty.clone();
        let mut swizzled = false;
        for _ in 0..3 {
            if !self.c.maybe(45) {
                break;
            }
            match ty.clone() {
                T::S(s) => {
                    let (f, ft) = self.c.pick(&self.structs[s].clone()).clone();
                    text = format!("{text}.{f}");
                    ty = ft;
                }
                T::Tup(ts) => {
                    if text.contains('.') {
                        break;
                    }
                    let k = self.c.below(ts.len());
                    text = format!("{text}.{k}");
                    ty = ts[k].clone();
                }
                T::Arr(e, n) => {
                    let i = self.index(n, d);
                    text = format!("{text}[{i}]");
                    ty = *e;
                }
                T::Mat3 => {
                    let i = self.index(3, d);
                    text = format!("{text}[{i}]");
                    ty = T::V(3);
                }
                T::V(_) | T::IV(_) | T::UV(_) | T::Color => {
                    let n = ty.width();
                    let elem = ty.elem().unwrap();
                    if self.c.maybe(30) {
                        let i = self.index(n, d);
                        text = format!("{text}[{i}]");
                        ty = elem;
                    } else {
                        let k = 1 + self.c.below(n as usize) as u8;
                        swizzled = k > 1;
                        if ty == T::Color {
                            let set = if self.c.maybe(50) { ['r', 'g', 'b'] } else { ['x', 'y', 'z'] };
                            let mut avail: Vec<char> = set.to_vec();
                            let mut l = String::new();
                            for _ in 0..k {
                                let i = self.c.below(avail.len());
                                l.push(avail.remove(i));
                            }
                            text = format!("{text}.{l}");
                            ty = match k {
                                1 => T::F32,
                                2 => T::V(2),
                                _ => T::Color,
                            };
                        } else {
                            let l = self.swizzle_letters(n, k, true);
                            text = format!("{text}.{l}");
                            ty = T::vec_of(&elem, k);
                        }
                    }
                    break;
                }
                _ => break,
            }
        }
        (text, ty, swizzled)
    }

    fn assignment(&mut self, indent: usize) -> String {
        self.cov.assigns += 1;
        let pad = Self::pad(indent);
        let (calls, ticks) = (self.cov.calls, self.cov.ticks);
        let (place, ty, swizzled) = self.place(2);
        // `p op= e` evaluates the place once, `p = p op e` twice: only equivalent when the
        // place calls nothing that may tick (a call of a generated function may, indirectly).
        let place_calls = self.cov.calls != calls || self.cov.ticks != ticks;
        if swizzled {
            self.cov.swizzle_assigns += 1;
        }
        if ty.is_arith() && self.c.maybe(40) {
            let op = self.arith_op(ty.is_int());
            // `v op= s` broadcasts a scalar over a vector or colour.
            let rhs_t = if ty.width() > 1 && self.c.maybe(30) { ty.elem().unwrap() } else { ty.clone() };
            let e = self.expr(&rhs_t, 3);
            if self.alt && !place_calls {
                return format!("{pad}{place} = ({place} {op} {e});\n");
            }
            return format!("{pad}{place} {op}= {e};\n");
        }
        let e = self.expr(&ty, 3);
        format!("{pad}{place} = {e};\n")
    }

    /// An i32 expression bounded to `0..=mask` (`mask` is 2^k - 1), and the bound.
    fn small_i32(&mut self) -> (String, u64) {
        let mask = *self.c.pick(&[3u64, 7, 1, 5]);
        let e = self.expr(&T::I32, 2);
        if mask == 5 {
            (format!("({e} & 5)"), 5)
        } else {
            (format!("({e} & {mask})"), mask)
        }
    }

    fn loop_body(&mut self, trips: u64, indent: usize, forced_break: bool) -> String {
        let (mult, loops, nest) = (self.mult, self.loops, self.nest);
        self.mult *= trips.max(1);
        self.loops += 1;
        self.nest += 1;
        let body = self.block(4, indent + 1, forced_break);
        self.mult = mult;
        self.loops = loops;
        self.nest = nest;
        body
    }

    fn for_loop(&mut self, indent: usize) -> String {
        self.cov.fors += 1;
        let pad = Self::pad(indent);
        let name = self.fresh("ix");
        let (bounds, ty, trips) = match self.c.below(5) {
            0 | 1 => {
                let (hi, m) = self.small_i32();
                (Some(("0".to_string(), hi)), T::I32, m)
            }
            2 => {
                let e = self.expr(&T::U32, 2);
                (Some(("1u".to_string(), format!("({e} % 6u)"))), T::U32, 5)
            }
            3 => {
                let lo = self.expr(&T::I32, 2);
                let (hi, m) = self.small_i32();
                (Some((format!("({lo} % 4)"), hi)), T::I32, m + 3)
            }
            _ => (None, T::I32, 1 + self.c.below(6) as u64),
        };
        let header = match &bounds {
            Some((lo, hi)) => format!("for {name} in {lo}..{hi}"),
            None => format!("@max_iters({trips}) for {name} in 0..({} & 15)", self.expr(&T::I32, 2)),
        };
        let mark = self.scope.len();
        self.scope.push(Var { name: name.clone(), ty, mutable: false });
        let body = self.loop_body(trips, indent, false);
        self.scope.truncate(mark);
        match bounds {
            Some((lo, hi)) if self.alt => {
                // The bounds once, in order, then a counter counted up before the body (so
                // that `continue` cannot skip it).
                let c = self.alt_name("fc");
                format!(
                    "{pad}{{\n{pad}    let {c}lo = {lo};\n{pad}    let {c}hi = {hi};\n{pad}    var {c} = {c}lo;\n\
                     {pad}    while {c} < {c}hi {{\n{pad}        let {name} = {c};\n{pad}        {c} += 1;\n\
                     {body}{pad}    }}\n{pad}}}\n"
                )
            }
            _ => format!("{pad}{header} {{\n{body}{pad}}}\n"),
        }
    }

    fn while_loop(&mut self, indent: usize) -> String {
        self.cov.whiles += 1;
        let pad = Self::pad(indent);
        if self.c.maybe(50) {
            let n = 1 + self.c.below(8) as u64;
            let cond = self.expr(&T::Bool, 3);
            let body = self.loop_body(n, indent, false);
            if self.alt {
                // The bound is checked before the condition, which is not evaluated again
                // once the bound is reached.
                let c = self.alt_name("wc");
                format!("{pad}var {c} = 0;\n{pad}while {c} < {n} && {cond} {{\n{pad}    {c} += 1;\n{body}{pad}}}\n")
            } else {
                format!("{pad}@max_iters({n}) while {cond} {{\n{body}{pad}}}\n")
            }
        } else {
            let k = self.fresh("k");
            let (bound, m) = self.small_i32();
            let extra = if self.c.maybe(40) { format!(" && {}", self.expr(&T::Bool, 2)) } else { String::new() };
            let s = format!("{pad}var {k} = 0;\n");
            self.scope.push(Var { name: k.clone(), ty: T::I32, mutable: false });
            let body = self.loop_body(m, indent, false);
            format!("{s}{pad}while {k} < {bound}{extra} {{\n{}    {k} += 1;\n{body}{pad}}}\n", pad)
        }
    }

    fn loop_loop(&mut self, indent: usize) -> String {
        self.cov.loops += 1;
        let pad = Self::pad(indent);
        if self.c.maybe(50) {
            let n = 1 + self.c.below(8) as u64;
            let body = self.loop_body(n, indent, true);
            if self.alt {
                let c = self.alt_name("lc");
                format!(
                    "{pad}var {c} = 0;\n{pad}loop {{\n{pad}    if {c} >= {n} {{ break; }}\n{pad}    {c} += 1;\n{body}{pad}}}\n"
                )
            } else {
                format!("{pad}@max_iters({n}) loop {{\n{body}{pad}}}\n")
            }
        } else {
            let k = self.fresh("k");
            let (bound, m) = self.small_i32();
            let s = format!("{pad}var {k} = 0;\n");
            self.scope.push(Var { name: k.clone(), ty: T::I32, mutable: false });
            let body = self.loop_body(m + 1, indent, false);
            format!("{s}{pad}loop {{\n{pad}    {k} += 1;\n{pad}    if {k} > {bound} {{ break; }}\n{body}{pad}}}\n")
        }
    }

    fn jump(&mut self, indent: usize) -> String {
        let pad = Self::pad(indent);
        let in_loop = self.loops > 0;
        let kind = self.c.weighted(&[if in_loop { 4 } else { 0 }, if in_loop { 3 } else { 0 }, 3]);
        let cond = self.expr(&T::Bool, 3);
        self.nest += 1;
        let before = self.block(2, indent + 1, false);
        let jump = match kind {
            0 => {
                self.cov.breaks += 1;
                "break;".to_string()
            }
            1 => {
                self.cov.continues += 1;
                "continue;".to_string()
            }
            _ => {
                self.cov.returns += 1;
                let mark = self.scope.len();
                let ret = self.ret.clone();
                let e = self.expr(&ret, 3);
                self.scope.truncate(mark);
                format!("return ({e}, acc);")
            }
        };
        let els = if self.c.maybe(25) {
            let b = self.block(2, indent + 1, false);
            format!(" else {{\n{b}{pad}}}")
        } else {
            String::new()
        };
        self.nest -= 1;
        format!("{pad}if {cond} {{\n{before}{pad}    {jump}\n{pad}}}{els}\n")
    }

    // ------------------------------------------------------------------ items

    fn const_expr(&mut self, t: &T, d: u32) -> String {
        if d == 0 || self.c.maybe(30) {
            let consts: Vec<String> = self.consts.iter().filter(|(_, ct)| ct == t).map(|(n, _)| n.clone()).collect();
            if !consts.is_empty() && self.c.maybe(40) {
                return self.c.pick(&consts).clone();
            }
            return self.literal(t);
        }
        match t {
            T::F32 => match self.c.below(3) {
                0 => format!("({} {} {})", self.const_expr(t, d - 1), self.arith_op(false), self.const_expr(t, d - 1)),
                1 => format!("{}({})", self.c.pick(&["sin", "exp", "sqrt", "abs", "floor"]), self.const_expr(t, d - 1)),
                _ => format!("f32({})", self.const_expr(&T::I32, d - 1)),
            },
            T::I32 | T::U32 => {
                let op = *self.c.pick(&["+", "-", "*", "&", "|", "^"]);
                format!("({} {op} {})", self.const_expr(t, d - 1), self.const_expr(t, d - 1))
            }
            T::V(3) => format!(
                "vec3({}, {}, {})",
                self.const_expr(&T::F32, d - 1),
                self.const_expr(&T::F32, d - 1),
                self.const_expr(&T::F32, d - 1)
            ),
            T::Color => format!("(Color({}) * {})", self.const_expr(&T::F32, d - 1), self.const_expr(&T::F32, d - 1)),
            _ => self.literal(t),
        }
    }

    fn function(&mut self, index: usize) -> (String, FnSig) {
        let kind = if !self.structs.is_empty() && self.c.maybe(25) {
            let s = self.c.below(self.structs.len());
            if self.c.maybe(70) {
                FnKind::Method(s)
            } else {
                FnKind::Assoc(s)
            }
        } else {
            FnKind::Free
        };
        let name = format!("f{index}");
        let nparams = 1 + self.c.below(4);
        let params: Vec<T> = (0..nparams).map(|_| self.value_type()).collect();
        let ret = match kind {
            FnKind::Assoc(s) if self.c.maybe(60) => T::S(s),
            _ => self.value_type(),
        };
        self.scope.clear();
        self.next_id = 0;
        self.loops = 0;
        self.nest = 0;
        self.mult = 1;
        self.cost = 0;
        self.ret = ret.clone();
        let mut plist = Vec::new();
        if let FnKind::Method(s) = kind {
            plist.push("self".to_string());
            self.scope.push(Var { name: "self".into(), ty: T::S(s), mutable: false });
        }
        // The lane id, passed on to every call, for the stateful extern `tick`.
        plist.push("lid: u32".to_string());
        self.scope.push(Var { name: "lid".into(), ty: T::U32, mutable: false });
        for (i, p) in params.iter().enumerate() {
            plist.push(format!("p{i}: {}", self.tname(p)));
            self.scope.push(Var { name: format!("p{i}"), ty: p.clone(), mutable: false });
        }
        let body = self.block(6, 1, false);
        let tail = self.expr(&ret, 3);
        let tail =
            if self.c.maybe(10) { format!("    return ({tail}, acc);\n") } else { format!("    ({tail}, acc)\n") };
        // Every function also returns an accumulator of digests of its bindings.
        let ret = T::Tup(vec![ret, T::U32]);
        let text = format!(
            "fn {name}({}) -> {} {{\n    var acc: u32 = {};\n{body}{tail}}}\n",
            plist.join(", "),
            self.tname(&ret),
            self.c.pick(&["0u", "lid", "7u"])
        );
        let sig = FnSig { name, kind, params, ret, cost: self.cost.max(1) };
        (text, sig)
    }

    /// Generates a program; returns its source and the paths of its functions.
    fn program(&mut self) -> (String, Vec<String>) {
        // A host function that answers differently at each call of each lane (see `Env`).
        let mut out = String::from("extern fn tick(lane: u32, x: f32) -> f32;\n");
        let nstructs = self.c.weighted(&[4, 3, 2]);
        for s in 0..nstructs {
            let nf = 1 + self.c.below(3);
            let mut fields = Vec::new();
            for f in 0..nf {
                let t = if s > 0 && self.c.maybe(15) { T::S(self.c.below(s)) } else { self.basic_type() };
                fields.push((["a", "b", "c"][f].to_string(), t));
            }
            let decl: Vec<String> = fields.iter().map(|(f, t)| format!("{f}: {}", self.tname(t))).collect();
            let _ = writeln!(out, "struct S{s} {{ {} }}", decl.join(", "));
            self.structs.push(fields);
            self.cov.structs += 1;
        }
        let nconsts = self.c.weighted(&[5, 3, 2]);
        for k in 0..nconsts {
            let t = [T::F32, T::I32, T::U32, T::V(3), T::Color][self.c.below(5)].clone();
            let e = self.const_expr(&t, 2);
            let _ = writeln!(out, "const K{k}: {} = {e};", self.tname(&t));
            self.consts.push((format!("K{k}"), t));
            self.cov.consts += 1;
        }
        let nfns = 1 + self.c.weighted(&[3, 4, 3, 1]);
        let mut impls: Vec<Vec<String>> = vec![Vec::new(); self.structs.len()];
        let mut paths = Vec::new();
        for i in 0..nfns {
            let (text, sig) = self.function(i);
            self.cov.functions += 1;
            match sig.kind {
                FnKind::Free => {
                    out.push('\n');
                    out.push_str(&text);
                    paths.push(sig.name.clone());
                }
                FnKind::Method(s) | FnKind::Assoc(s) => {
                    self.cov.methods += 1;
                    impls[s].push(text);
                    paths.push(format!("S{s}::{}", sig.name));
                }
            }
            self.fns.push(sig);
        }
        for (s, fns) in impls.iter().enumerate() {
            if fns.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\nimpl S{s} {{");
            for f in fns {
                for line in f.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
            out.push_str("}\n");
        }
        (out, paths)
    }
}

// -------------------------------------------------------------------------------- test

/// Argument sets per function: eight groups of 8 lanes and a partial ninth (call_batch's
/// tail path), sixteen groups of 4 and a partial seventeenth.
const SETS: usize = 67;

static COVERAGE: Mutex<Option<Coverage>> = Mutex::new(None);

fn options() -> LoadOptions {
    LoadOptions { stdlib_dir: Some(drs_sema::bundled_stdlib_dir()) }
}

/// With `DRS_RANDOM_DUMP=path`, failing programs are written there (the last one wins), for
/// minimising by hand or with a script; with `DRS_RANDOM_SAVE=dir`, every program is saved in
/// `dir`.
fn dump(source: &str) {
    if let Ok(path) = std::env::var("DRS_RANDOM_DUMP") {
        let _ = std::fs::write(path, source);
    }
}

/// Runs `f`, turning a panic into a failure that shows the program.
fn catch<R>(source: &str, stage: &str, f: impl FnOnce() -> R) -> Result<R, TestCaseError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        dump(source);
        TestCaseError::fail(format!("panic while {stage}: {message}\n--- program ---\n{source}"))
    })
}

fn run_program(stream: &[u32], seed: u64) -> Result<Coverage, TestCaseError> {
    let mut gen = Gen::new(stream);
    let (source, _) = gen.program();
    catch(&source, "running the pipeline", || run_program_inner(stream, seed))?
}

fn run_program_inner(stream: &[u32], seed: u64) -> Result<Coverage, TestCaseError> {
    let mut gen = Gen::new(stream);
    let (source, paths) = gen.program();
    if let Ok(dir) = std::env::var("DRS_RANDOM_SAVE") {
        let _ = std::fs::write(format!("{dir}/p{seed:016x}.drs"), &source);
    }
    let mut cov = gen.cov.clone();
    cov.programs = 1;
    cov.source_bytes = source.len() as u64;
    let mut alt = Gen::alt(stream);
    let (alt_source, alt_paths) = alt.program();
    assert_eq!(paths, alt_paths, "the desugared program has other functions");
    if alt_source != source {
        cov.desugared = 1;
    }
    if let Ok(dir) = std::env::var("DRS_RANDOM_SAVE") {
        let _ = std::fs::write(format!("{dir}/p{seed:016x}.desugared.drs"), &alt_source);
    }
    run_source(&source, &paths, seed, cov, Some(&alt_source))
}

/// Checks, lowers and runs the functions `paths` of `source` on every stage and backend (a
/// parameter named `lid` gets the lane id; an extern `tick` is stateful). With `alt`, the
/// same program written with other forms ([`Gen::alt`]): its lowered module must give the
/// same results in the interpreter, bit for bit (NaNs equal), an oracle for the lowering.
fn run_source(
    source: &str,
    paths: &[String],
    seed: u64,
    mut cov: Coverage,
    alt: Option<&str>,
) -> Result<Coverage, TestCaseError> {
    let fail = |what: String| {
        dump(source);
        TestCaseError::fail(format!("{what}\n--- program ---\n{source}"))
    };
    let program = drs_lower::lower_source("random.drs", source, &options())
        .map_err(|e| fail(format!("the generated program does not check (a generator bug):\n{e}")))?;
    if !program.lowered.errors.is_empty() {
        return Err(fail(format!("lowering failed:\n{}", program.render_errors())));
    }
    let mut names = Vec::new();
    for p in paths {
        let f = program.find_fn(p).ok_or_else(|| fail(format!("no lowered function `{p}`")))?;
        names.push(program.lowered.module.function(program.lowered.functions[&f]).name.clone());
    }
    let m0 = differential::prune(&program.lowered.module, &names);
    if differential::has_math(&m0) {
        cov.with_math = 1;
    }
    let level_index = (seed % 3) as usize;
    cov.levels[level_index] = 1;
    // One more JIT, 4 or 8 lanes, with some parameters (never the lane id) uniform: those get
    // one value per aligned group of 8 argument sets.
    let mut rng = Rng(seed);
    let mut uniform = std::collections::BTreeMap::new();
    for name in &names {
        let f = m0.function(m0.find(name).unwrap());
        let flags: Vec<bool> = f.params.iter().map(|p| p.name != "lid" && rng.below(3) == 0).collect();
        uniform.insert(name.clone(), flags);
    }
    // (Every fourth program: compiling dominates the run time.)
    let lanes = if rng.below(2) == 0 { drs_cranelift::Lanes::X4 } else { drs_cranelift::Lanes::X8 };
    let with_uniform = (seed >> 8).is_multiple_of(4);
    if !with_uniform {
        uniform.values_mut().for_each(|f| f.iter_mut().for_each(|u| *u = false));
    } else {
        cov.uniform_params += uniform.values().flatten().filter(|&&u| u).count() as u64;
    }
    let stages = Stages::new(m0, LEVELS[level_index], with_uniform.then(|| (lanes, uniform.clone()))).map_err(fail)?;
    let env = Env { buffers: Vec::new(), stateful: vec!["tick".into()] };
    let alt_module = match alt {
        Some(alt) if alt != source => {
            let fail_alt = |what: String| {
                dump(source);
                TestCaseError::fail(format!(
                    "{what}\n--- program ---\n{source}\n--- the same, desugared (a generator bug) ---\n{alt}"
                ))
            };
            let p = drs_lower::lower_source("random_desugared.drs", alt, &options())
                .map_err(|e| fail_alt(format!("the desugared program does not check:\n{e}")))?;
            if !p.lowered.errors.is_empty() {
                return Err(fail_alt(format!("lowering failed:\n{}", p.render_errors())));
            }
            Some(differential::prune(&p.lowered.module, &names))
        }
        _ => None,
    };
    let mut stats = UlpStats::default();
    for name in &names {
        let f = stages.m0.function(stages.m0.find(name).unwrap());
        let mut inputs: Vec<Vec<u32>> = Vec::new();
        for set in 0..SETS {
            let args: Vec<u32> = f
                .params
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    if p.name == "lid" {
                        set as u32
                    } else if uniform[name][k] && set % 8 != 0 {
                        inputs[set & !7][k]
                    } else {
                        rng.bits(f.ty(p.value))
                    }
                })
                .collect();
            inputs.push(args);
        }
        let s = stages.check(name, &inputs, &env).map_err(|e| {
            fail(format!(
                "function `{name}` at {:?}: {e}\n--- IR (lowered) ---\n{}",
                stages.level,
                drs_ir::print_module(&stages.m0)
            ))
        })?;
        stats.add(&s);
        cov.lanes_run += SETS as u64;
        if let Some(alt_module) = &alt_module {
            let a = differential::interp_all(&stages.m0, name, &inputs, &env).map_err(fail)?;
            let b = differential::interp_all(alt_module, name, &inputs, &env).map_err(fail)?;
            differential::compare(&f.result_types, &a, &b, &inputs, "the program", "the same program, desugared")
                .map_err(|e| {
                    fail(format!(
                        "function `{name}`: {e}\n--- the same program, desugared ---\n{}",
                        alt.unwrap_or_default()
                    ))
                })?;
        }
    }
    cov.results_exact = stats.exact;
    cov.results_direct = stats.direct;
    cov.results_inexact = stats.inexact;
    cov.max_direct_ulps = stats.max_direct;
    cov.max_inexact_ulps = stats.max_inexact;
    cov.inexact_differ = stats.inexact_differ;
    Ok(cov)
}

fn merge(total: &mut Coverage, c: &Coverage) {
    macro_rules! sum {
        ($($f:ident),*) => { $( total.$f += c.$f; )* };
    }
    sum!(
        programs,
        functions,
        methods,
        structs,
        consts,
        ifs,
        deferred_vars,
        fors,
        whiles,
        loops,
        breaks,
        continues,
        returns,
        calls,
        ticks,
        transcendentals,
        assigns,
        swizzle_assigns,
        index_dyn,
        tuple_lets,
        shadows,
        desugared,
        with_math,
        results_exact,
        results_direct,
        results_inexact,
        inexact_differ,
        lanes_run,
        uniform_params,
        source_bytes
    );
    total.max_direct_ulps = total.max_direct_ulps.max(c.max_direct_ulps);
    total.max_inexact_ulps = total.max_inexact_ulps.max(c.max_inexact_ulps);
    for i in 0..3 {
        total.levels[i] += c.levels[i];
    }
}

/// Panics with the reason of a failure (the program and what disagreed), without the
/// minimal input (a stream of numbers, useless to a reader).
fn report<V: std::fmt::Debug>(result: Result<(), proptest::test_runner::TestError<V>>) {
    match result {
        Ok(()) => {}
        Err(proptest::test_runner::TestError::Fail(reason, _)) => panic!("{reason}"),
        Err(e) => panic!("{e}"),
    }
}

fn programs_per_test() -> u32 {
    std::env::var("DRS_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(500)
}

fn run_batch(part: u64) {
    let config =
        Config { cases: programs_per_test(), max_shrink_iters: 600, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let strategy = (prop::collection::vec(any::<u32>(), 1500..3000), any::<u64>());
    let start = std::time::Instant::now();
    let result = runner.run(&strategy, |(stream, seed)| {
        let cov = run_program(&stream, seed ^ part)?;
        let mut total = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
        merge(total.get_or_insert_with(Coverage::default), &cov);
        Ok(())
    });
    report(result);
    let total = COVERAGE.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default();
    println!(
        "random programs, part {part}: {:.1?}; running totals: {total:#?}\n{}",
        start.elapsed(),
        differential::timings()
    );
}

#[test]
fn random_programs_agree_on_all_stages_and_backends_1() {
    run_batch(1);
}

#[test]
fn random_programs_agree_on_all_stages_and_backends_2() {
    run_batch(2);
}

#[test]
fn random_programs_agree_on_all_stages_and_backends_3() {
    run_batch(3);
}

#[test]
fn random_programs_agree_on_all_stages_and_backends_4() {
    run_batch(4);
}

/// The generator itself: many programs check (fast; no backends).
#[test]
fn generated_programs_check() {
    let mut runner = TestRunner::new(Config { cases: 200, failure_persistence: None, ..Config::default() });
    let result = runner.run(&prop::collection::vec(any::<u32>(), 1500..3000), |stream| {
        let mut gen = Gen::new(&stream);
        let (source, _) = gen.program();
        let checked = catch(&source, "checking", || drs_sema::check_source("random.drs", &source, &options()))?;
        if !checked.diagnostics.is_empty() {
            dump(&source);
        }
        prop_assert!(
            checked.diagnostics.is_empty(),
            "{}\n--- program ---\n{source}",
            drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false)
        );
        Ok(())
    });
    report(result);
}

/// Programs that once failed, minimised (run on every stage and backend like generated ones).
const REGRESSIONS: &[(&str, &[&str])] = &[
    // The checker panicked (index out of bounds in its definite-assignment state) on a local
    // declared after a `while` loop whose body declared one.
    (
        "fn f(n: i32) -> i32 {
            var k = 0;
            while k < (n & 7) {
                k += 1;
                let a = k * 2;
            }
            let b = k + 1;
            b
        }",
        &["f"],
    ),
    // ... and on a local of an `else` branch after a `then` branch that declared one.
    (
        "fn g(p: f32) -> f32 {
            if p > 0.0 {
                let a = 1.0;
            } else {
                var b = 2.0;
                b = b * p;
            }
            p
        }",
        &["g"],
    ),
];

#[test]
fn regressions() {
    for (i, (source, paths)) in REGRESSIONS.iter().enumerate() {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let result =
            catch(source, "running the pipeline", || run_source(source, &paths, i as u64, Coverage::default(), None));
        if let Err(e) | Ok(Err(e)) = result.map(|r| r.map(|_| ())) {
            panic!("regression {i}: {e}");
        }
    }
}
