//! Writes IR functions back as `.drs` source (what `drsc ad` prints).
//!
//! [`write_program`] turns root functions of a [`Module`], with every module function they
//! call, into one self-contained `.drs` program that the front end checks without
//! diagnostics and that lowers back to IR computing exactly the same results, bit for bit
//! (NaN payloads aside, which the IR leaves unspecified anyway). The output reads like the
//! IR it comes from:
//!
//! - one `let` per instruction, named after its SSA value (`let v12 = v10 * wo_x;`);
//!   parameters keep their IR names (`wo.x` → `wo_x`); constants are written inline where
//!   they are used, floats with the shortest digits that round-trip, infinities and NaNs as
//!   `from_bits(0x7F800000u)`;
//! - an `If` is an `if` expression bound with `let (a, b) = if c { ..; (x, y) } else { .. };`;
//!   a `Loop` (a do-while) is a `loop` whose carried values are `var`s named after the loop's
//!   results, ending in `if !continue { break; }`, with `@max_iters(N)` when the IR records
//!   that bound (which the IR guarantees the loop respects);
//! - a local array is a zero-initialised `var` array (`local0`); a load guards the index,
//!   because out of range the IR gives 0 and the language the last element;
//! - operations without an operator or built-in of their own are spelled exactly in terms of
//!   others: bit casts between `f32` and `i32` go through `u32`, and `CopySign` is
//!   `from_bits((to_bits(a) & 0x7FFFFFFFu) | (to_bits(b) & 0x80000000u))` (a `copysign`
//!   built-in would not help: the prelude's `math::copysign`, which treats -0.0 and NaN
//!   signs differently, hides any built-in of that name in user modules);
//! - host functions are declared `extern fn` (`bsdf::eval` → `bsdf__eval`), and so are the
//!   module's buffers, through accessors `buffer_load_B(index) -> T`, `buffer_store_B(index,
//!   value)` and `buffer_atomic_add_B(index, value)` whose host implementations must follow
//!   the IR's rules (a load out of range gives 0, an out-of-range write is dropped).
//!
//! The program is meant to be checked as an ordinary (non-stdlib) module: its own items come
//! before the implicit prelude in name lookup, and names are chosen so that no item or local
//! hides a built-in the code calls. The written names are returned with the text
//! ([`WrittenProgram`]) so that callers can find the functions and bind the host functions
//! of the checked program.

mod body;
mod literal;
mod names;
mod reach;

use drs_ir::{FuncId, Module, Ty, VerifyError};
use names::{function_ident, sanitize, Namer};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

/// A `.drs` program written from IR functions.
#[derive(Clone, Debug, PartialEq)]
pub struct WrittenProgram {
    /// The source text.
    pub source: String,
    /// The `.drs` name of every function written: the roots and their callees.
    pub functions: BTreeMap<FuncId, String>,
    /// The `extern fn` declared for each host function used, by index in `Module::externs`.
    pub externs: BTreeMap<u32, String>,
    /// The accessors declared for each buffer used, by index in `Module::buffers`.
    pub buffers: BTreeMap<u32, BufferAccessors>,
}

/// The `extern fn`s through which written code reaches one buffer; only the operations the
/// code performs are declared.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferAccessors {
    /// `fn(index: u32) -> T`: element `index`, 0 out of range.
    pub load: Option<String>,
    /// `fn(index: u32, value: T)`: writes element `index`; dropped out of range.
    pub store: Option<String>,
    /// `fn(index: u32, value: T)`: adds atomically to element `index`; dropped out of range.
    pub atomic_add: Option<String>,
}

impl fmt::Display for WrittenProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Why functions could not be written.
#[derive(Clone, Debug, PartialEq)]
pub enum WriteError {
    /// A root is not a function of the module.
    UnknownFunction(FuncId),
    /// A function to write fails [`drs_ir::verify_function`].
    InvalidIr(VerifyError),
    /// The functions call each other in this cycle (first = last), which `.drs` does not
    /// allow.
    Recursion(Vec<String>),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::UnknownFunction(id) => write!(f, "the module has no function {}", id.0),
            WriteError::InvalidIr(e) => write!(f, "cannot write invalid IR: {e}"),
            WriteError::Recursion(cycle) => write!(
                f,
                "cannot write recursive functions as .drs (recursion is not allowed): {}",
                cycle.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" calls ")
            ),
        }
    }
}

impl std::error::Error for WriteError {}

/// Writes `roots` and every module function they call, transitively, as one `.drs`
/// program: the declarations of the host functions and buffers they use, then the
/// functions, each after its callees. See the crate documentation for the form.
pub fn write_program(module: &Module, roots: &[FuncId]) -> Result<WrittenProgram, WriteError> {
    let reach = reach::reach(module, roots)?;

    // Item names first, so that parameters can stay clear of them (a local would hide a
    // function of the same name).
    let mut items = Namer::default();
    let functions: BTreeMap<FuncId, String> =
        reach.order.iter().map(|&f| (f, items.fresh(&function_ident(&module.function(f).name)))).collect();
    let externs: BTreeMap<u32, String> = reach
        .externs
        .iter()
        .map(|&e| (e, items.fresh(&sanitize(&module.externs[e as usize].name.replace("::", "__"), "host"))))
        .collect();
    let buffers: BTreeMap<u32, BufferAccessors> = reach
        .buffers
        .iter()
        .map(|(&b, usage)| {
            let base = sanitize(&module.buffers[b as usize].name, "buffer");
            let mut accessor = |used: bool, op: &str| used.then(|| items.fresh(&format!("buffer_{op}_{base}")));
            let accessors = BufferAccessors {
                load: accessor(usage.load, "load"),
                store: accessor(usage.store, "store"),
                atomic_add: accessor(usage.atomic_add, "atomic_add"),
            };
            (b, accessors)
        })
        .collect();

    let mut out = String::new();
    let _ = writeln!(out, "// Written from drs IR: {}.", describe_roots(module, roots));
    if !externs.is_empty() {
        out.push_str("\n// Host functions.\n");
        for (&e, name) in &externs {
            let decl = &module.externs[e as usize];
            let params: Vec<String> =
                decl.params.iter().enumerate().map(|(i, t)| format!("a{i}: {}", t.name())).collect();
            let tail = format!("{}; // `{}`", return_type(&decl.results), decl.name.escape_debug());
            out.push_str(&signature(&format!("extern fn {name}"), &params, &tail));
            out.push('\n');
        }
    }
    if !buffers.is_empty() {
        out.push_str(
            "\n// Buffers, through host functions: a load out of range gives 0, a store or atomic add out of\n\
             // range is dropped.\n",
        );
        for (&b, accessors) in &buffers {
            let decl = &module.buffers[b as usize];
            let elem = decl.elem.name();
            if let Some(name) = &accessors.load {
                let _ = writeln!(out, "extern fn {name}(index: u32) -> {elem}; // `{}`", decl.name.escape_debug());
            }
            for name in [&accessors.store, &accessors.atomic_add].into_iter().flatten() {
                let _ = writeln!(out, "extern fn {name}(index: u32, value: {elem}); // `{}`", decl.name.escape_debug());
            }
        }
    }
    let names = body::ItemNames { functions: &functions, externs: &externs, buffers: &buffers };
    for &f in &reach.order {
        out.push('\n');
        body::write_function(&mut out, module, f, &names, items.clone());
    }
    Ok(WrittenProgram { source: out, functions, externs, buffers })
}

/// What the program holds, for its first line: the first few roots by IR name.
fn describe_roots(module: &Module, roots: &[FuncId]) -> String {
    const LISTED: usize = 4;
    let mut names: Vec<String> =
        roots.iter().take(LISTED).map(|&r| format!("`{}`", module.function(r).name.escape_debug())).collect();
    if roots.len() > LISTED {
        names.push(format!("{} more", roots.len() - LISTED));
    }
    match names.len() {
        0 => "no functions".to_string(),
        1 => format!("{} and the functions it calls", names[0]),
        n => format!("{} and {} and the functions they call", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// `head(params)tail` on one line, or with one parameter per line when that line would be
/// longer than 120 columns (the project's line width).
pub(crate) fn signature(head: &str, params: &[String], tail: &str) -> String {
    let line = format!("{head}({}){tail}", params.join(", "));
    if line.len() <= 120 {
        return line;
    }
    let params: String = params.iter().map(|p| format!("    {p},\n")).collect();
    format!("{head}(\n{params}){tail}")
}

/// ` -> T`, ` -> (T, U)` or nothing, for a list of result types.
pub(crate) fn return_type(results: &[Ty]) -> String {
    match results {
        [] => String::new(),
        [t] => format!(" -> {}", t.name()),
        _ => format!(" -> ({})", results.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")),
    }
}
