//! The Cranelift JIT backend of drs: compiles a [`drs_ir::Module`] to native code that runs
//! one, four or eight lanes (SPMD samples) per call.
//!
//! ```no_run
//! # use drs_cranelift::*;
//! # fn demo(module: &drs_ir::Module) -> Result<(), Error> {
//! let jit = Jit::compile(module, Lanes::X4)?;
//! let f = jit.function("shade")?;
//! let args = vec![0u32; f.params().len() * 4]; // [param][lane]
//! let mut results = vec![0u32; f.results().len() * 4]; // [result][lane]
//! let mut texels = vec![0u32; 1024];
//! let buffers = [Buffer::from_mut(&mut texels)];
//! let mut externs = jit.externs();
//! externs.bind("trace", |args: &[u32], results: &mut [u32]| results[0] = args[0])?;
//! f.call(&args, &mut results, &buffers, &externs)?;
//! # Ok(()) }
//! ```
//!
//! # Semantics
//! Results agree bit for bit with the reference interpreter (`drs-interp`) for every operation:
//! IEEE f32 without fast-math or contraction (only `Fma` fuses), `Min`/`Max` as the comparison
//! `a < b ? a : b`, integer division and remainder with the IR's results for division by zero
//! and `MIN / -1`, shifts modulo 32, saturating conversions (`u32 → f32` correctly rounded),
//! `Round` half away from zero, `Floor`/`Ceil`/`Trunc` returning a NaN operand unchanged, f32
//! `Rem` through Rust's `%`. One exception: the sign and payload of a NaN *result* are
//! unspecified (as in IEEE 754 and in Rust), because Cranelift may commute the operands of an
//! addition or multiplication (x86 returns the first NaN operand) or fold `(-a) * (-b)`; the
//! result is NaN exactly when the interpreter's is.
//! [`drs_ir::Op::Math`] must be expanded into arithmetic before (by `drs-opt`); a module that
//! still has one is rejected with [`Error::Unsupported`], as is recursion.
//!
//! # Execution model
//! Lanes run SPMD: an `if` whose condition differs between lanes runs both regions under masks
//! and selects the results per lane (short side-effect-free regions are simply both run and
//! selected); a uniform condition branches. A loop runs while any lane's continue flag is set,
//! and lanes that stopped keep their carried values (there is no iteration limit: a loop that
//! never ends does not return, unlike the interpreter, which traps). Stores, atomic adds and
//! extern calls only happen for active lanes; an extern runs once per lane group with the
//! active-lane bits ([`RawExternFn`], [`LaneGroup`]). With 8 lanes every value is two 4-lane
//! halves.
//! An entry whose body is one such loop with code before and after it (reached through `if`s
//! on uniform conditions; no buffer stores) runs the lanes of a call through one group and
//! refills a lane with the call's next lane as soon as its loop ends, so that the loop runs with
//! full groups (lane refill, `codegen/refill.rs`; when every lane is active and the uniform
//! parameters are the same in every group). Each lane's results are the same bits; only the
//! order in which extern calls see the lanes differs.
//! Values that are the same in all lanes (constants and what is computed from them, loads at
//! a uniform index, and parameters declared uniform in [`Options::uniform_params`]) stay scalar.
//!
//! Lanes of one call are not isolated from each other in memory: when several lanes of a call
//! store to or atomically add into the same element, the outcome is that of running the
//! operations lane by lane in lane order at each instruction, which differs from running whole
//! lanes one after another (as the interpreter does) if a lane reads what another wrote.
//!
//! Local arrays are per lane (each lane reads only what it wrote) and live on the native
//! stack, `len * lanes * 4` bytes each; a function whose arrays need more than
//! [`MAX_LOCAL_BYTES`] is rejected with [`Error::Unsupported`]. An element a call has not
//! written reads as whatever the stack held (the IR leaves it unspecified).
//!
//! # Threads
//! [`Jit`] is `Send + Sync`; any number of threads may call its kernels at once, each call
//! with its own context. [`Buffer`]s are shared atomics, so calls on several threads may use
//! the same buffers; `AtomicAdd` is a real atomic read-modify-write (a compare-and-swap loop for
//! f32).
//!
//! # Native code, caching and artifacts
//! Compilation produces relocatable native code ([`NativeModule`]), which [`NativeModule::load`]
//! maps into executable memory; [`Jit::compile`] does both. The code can be serialised
//! ([`NativeModule::to_bytes`]) and loaded again without Cranelift ([`Jit::from_native_bytes`])
//! on any host with the same target triple and at least its CPU features ([`Target`]; otherwise
//! [`Error::TargetMismatch`]). [`KernelCache`] keeps compiled modules by content hash, in memory
//! and on disk; [`Jit::from_artifact`] loads what `drsc build` writes, from its native code
//! when it has code for this host. Native code is supported on x86-64 and AArch64 hosts
//! ([`NATIVE_CODE_SUPPORTED`]); elsewhere compiling fails with [`Error::Codegen`].
//! Code of another code generator becomes a [`NativeModule`] too, from an x86-64 ELF object
//! file ([`NativeModule::from_elf_object`]).
//!
//! # Debugging
//! `DRS_CRANELIFT_DUMP=1` prints the Cranelift IR of every function as it is compiled, and
//! `DRS_CRANELIFT_DUMP=asm` also the machine code of the entry wrappers.

#[cfg(not(target_pointer_width = "64"))]
compile_error!("drs-cranelift supports 64-bit hosts only");

mod abi;
mod artifact;
mod cache;
mod codegen;
mod compile;
mod native;
mod object;
pub mod refill;
pub mod uniform;

pub use crate::object::ObjectFunction;
pub use abi::{Buffer, Context, EntryFn, ExternEntry, LaneGroup, RawExternFn};
pub use artifact::{native_code_for_artifact, native_for_host, prepare_artifact_module};
pub use cache::{CacheKey, CacheStats, KernelCache, CACHE_FORMAT_VERSION};
pub use native::{NativeModule, Target, NATIVE_CODE_SUPPORTED, NATIVE_FORMAT_VERSION};

use abi::{host_trampoline, per_lane, take_host_error, HostClosure, HostSlot};
use drs_ir::{BufferDecl, ExternDecl, FuncId, Module, Op, Region, Ty};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_void;
use std::fmt;
use std::hash::{Hash, Hasher};

/// How many lanes one call of a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lanes {
    /// Scalar code, one lane.
    X1,
    /// 128-bit SIMD: `f32x4` / `i32x4`.
    X4,
    /// Two 128-bit halves per value.
    X8,
    /// One AVX-512 register per value: the LLVM backend only (drs-llvm); Cranelift has no
    /// vectors wider than 128 bits.
    X16,
}

impl Lanes {
    /// The widths the Cranelift backend compiles.
    pub const ALL: [Lanes; 3] = [Lanes::X1, Lanes::X4, Lanes::X8];

    pub fn count(self) -> usize {
        match self {
            Lanes::X1 => 1,
            Lanes::X4 => 4,
            Lanes::X8 => 8,
            Lanes::X16 => 16,
        }
    }

    /// The mask with every lane active.
    pub fn full_mask(self) -> u32 {
        (1u32 << self.count()) - 1
    }

    /// The width with `count` lanes (1, 4, 8 or 16).
    pub fn from_count(count: usize) -> Option<Lanes> {
        [Lanes::X1, Lanes::X4, Lanes::X8, Lanes::X16].into_iter().find(|l| l.count() == count)
    }
}

/// Compilation options.
#[derive(Clone, Debug)]
pub struct Options {
    pub lanes: Lanes,
    /// For functions named here, which parameters are *uniform*: the caller guarantees that
    /// such a parameter has the same value in every lane of a group, and the compiled entry
    /// reads it from lane 0 only and keeps it (and what is computed from it) scalar. (An entry
    /// with lane refill runs lanes of different groups side by side, so it refills only when
    /// these parameters are the same in every group of the call.) The flags
    /// follow the function's parameters; missing trailing flags mean varying. Ignored in
    /// scalar mode. Calls between functions always pass varying values.
    pub uniform_params: BTreeMap<String, Vec<bool>>,
    /// The functions the host can call: `None`, every function; else only those named, and
    /// the others are compiled only as callees. Each callable function costs an entry wrapper
    /// with its body inline, so a kernel with one entry point compiles in about half the time.
    pub entries: Option<BTreeSet<String>>,
    /// Who makes the code: [`CodeGenerator::CRANELIFT`] unless another is chosen.
    pub generator: CodeGenerator,
    /// The caller guarantees that no other thread reads or writes the buffers a call adds to
    /// while the call runs (the runtime's gradient kernels add into buffers of their own tile).
    /// Atomic adds then compile to a plain load, add and store per lane, in lane order as the
    /// atomic ones, so the sums are the same bits; a float's compare-and-swap loop costs
    /// several times as much.
    pub private_buffers: bool,
}

/// A code generator whose output this crate loads and runs: Cranelift's, or another that makes
/// [`NativeModule`]s with the same binary interface (drs-llvm's, from an object file).
#[derive(Clone, Copy, Debug)]
pub struct CodeGenerator {
    /// Its name, for messages and options (`cranelift`, `llvm`).
    pub name: &'static str,
    /// What identifies its version (its sources, the library it drives): part of every kernel
    /// cache key, so that code from another version is never reused.
    pub version: fn() -> String,
    pub compile: fn(&Module, &Options) -> Result<NativeModule, Error>,
}

impl CodeGenerator {
    pub const CRANELIFT: CodeGenerator = CodeGenerator {
        name: "cranelift",
        // The cache key's build ID already covers this crate's sources and Cargo.lock.
        version: String::new,
        compile: NativeModule::compile,
    };
}

impl Options {
    pub fn new(lanes: Lanes) -> Options {
        Options {
            lanes,
            uniform_params: BTreeMap::new(),
            entries: None,
            generator: CodeGenerator::CRANELIFT,
            private_buffers: false,
        }
    }

    /// Declares the buffers a call adds to private to it (see [`Options::private_buffers`]).
    pub fn private_buffers(mut self, private: bool) -> Options {
        self.private_buffers = private;
        self
    }

    /// Has `generator` make the code.
    pub fn generator(mut self, generator: CodeGenerator) -> Options {
        self.generator = generator;
        self
    }

    /// Makes `function` callable from the host, and with it only the functions named so far
    /// (see [`Options::entries`]).
    pub fn entry(mut self, function: impl Into<String>) -> Options {
        self.entries.get_or_insert_with(BTreeSet::new).insert(function.into());
        self
    }

    /// Whether the host can call `function` (see [`Options::entries`]).
    pub(crate) fn is_entry(&self, function: &str) -> bool {
        self.entries.as_ref().is_none_or(|names| names.contains(function))
    }

    /// Declares the uniform parameters of `function` (see [`Options::uniform_params`]).
    pub fn uniform(mut self, function: impl Into<String>, flags: Vec<bool>) -> Options {
        self.uniform_params.insert(function.into(), flags);
        self
    }
}

/// Everything that can go wrong, at compile time or at a call.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The module does not pass [`drs_ir::verify_module`].
    Verify(drs_ir::VerifyError),
    /// The module uses something this backend does not compile (e.g. an unexpanded `Math`).
    Unsupported {
        function: String,
        message: String,
    },
    /// The code generator (Cranelift, or another such as drs-llvm) rejected the code it made or
    /// failed on it: a bug of that backend.
    Codegen {
        function: String,
        message: String,
    },
    /// [`Options::uniform_params`] names a function the module does not have, or has more
    /// flags than the function has parameters.
    BadOptions(String),
    UnknownFunction(String),
    UnknownExtern(String),
    /// A slice passed to a call has the wrong length.
    Arity {
        function: String,
        what: &'static str,
        expected: usize,
        given: usize,
    },
    /// The lane mask of a call has bits beyond the lane count.
    BadMask {
        mask: u32,
        lanes: usize,
    },
    /// The extern table was made for another module's externs.
    ExternMismatch,
    /// A called extern has no host function bound.
    UnboundExtern(String),
    /// A host function panicked (the call went on with zero results).
    ExternPanicked(String),
    /// Serialised native code ([`NativeModule::from_bytes`]) or an object file
    /// ([`NativeModule::from_elf_object`]) that cannot be used: not native code, another format
    /// version, truncated, corrupt or inconsistent, or (an object file) with relocations or
    /// calls drs cannot resolve.
    InvalidNativeCode(String),
    /// Native code compiled for another target than this host (another architecture, OS, or
    /// CPU features the host lacks): recompile it from the IR.
    TargetMismatch {
        code: String,
        host: String,
        reason: String,
    },
    /// The operating system refused memory for code.
    Memory(String),
}

impl Error {
    /// Runs a code generator (`name`), turning a panic of it into [`Error::Codegen`].
    pub fn catch_codegen_panic<T>(name: &str, run: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| format!("{name} panicked"));
            Err(Error::Codegen { function: String::new(), message })
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Verify(e) => write!(f, "{e}"),
            Error::Unsupported { function, message } => write!(f, "cannot compile `{function}`: {message}"),
            Error::Codegen { function, message } => write!(f, "code generation failed in `{function}`: {message}"),
            Error::BadOptions(m) => write!(f, "invalid options: {m}"),
            Error::UnknownFunction(n) => write!(f, "the module has no function `{n}`"),
            Error::UnknownExtern(n) => write!(f, "the module has no extern function `{n}`"),
            Error::Arity { function, what, expected, given } => {
                write!(f, "`{function}`: {what} has {given} elements, {expected} expected")
            }
            Error::BadMask { mask, lanes } => write!(f, "lane mask {mask:#x} has bits beyond {lanes} lanes"),
            Error::ExternMismatch => write!(f, "the extern table was made for another module"),
            Error::UnboundExtern(n) => write!(f, "extern function `{n}` was called, and none is bound"),
            Error::ExternPanicked(n) => write!(f, "host function `{n}` panicked"),
            Error::InvalidNativeCode(m) => write!(f, "invalid native code: {m}"),
            Error::TargetMismatch { code, host, reason } => write!(
                f,
                "native code compiled for another target ({reason}): recompile it from the IR\n  code: {code}\n  host: {host}"
            ),
            Error::Memory(m) => write!(f, "cannot map memory for code: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Owns the executable memory of a [`Jit`] (read-only and executable); unmapped on drop,
/// when no kernel can run any more (kernels borrow the `Jit`).
struct Code(#[allow(dead_code)] memmap2::Mmap);

struct CompiledFn {
    name: String,
    params: Vec<Ty>,
    results: Vec<Ty>,
    /// None for a function compiled only as a callee ([`Options::entries`]).
    entry: Option<EntryFn>,
}

/// A compiled module.
pub struct Jit {
    lanes: Lanes,
    functions: Vec<CompiledFn>,
    externs: Vec<ExternDecl>,
    extern_reads: Vec<Vec<bool>>,
    externs_fingerprint: u64,
    buffers: Vec<BufferDecl>,
    _code: Code,
}

fn fingerprint(decls: &[ExternDecl]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for d in decls {
        d.name.hash(&mut h);
        d.params.hash(&mut h);
        d.results.hash(&mut h);
    }
    decls.len().hash(&mut h);
    h.finish()
}

fn find_math(r: &Region) -> Option<drs_ir::MathOp> {
    r.insts.iter().find_map(|inst| match &inst.op {
        Op::Math(m, _) => Some(*m),
        Op::If { then, els, .. } => find_math(then).or_else(|| find_math(els)),
        Op::Loop { body, .. } => find_math(body),
        _ => None,
    })
}

fn callees(r: &Region, out: &mut Vec<usize>) {
    for inst in &r.insts {
        match &inst.op {
            Op::Call(f, _) => out.push(f.0 as usize),
            Op::If { then, els, .. } => {
                callees(then, out);
                callees(els, out);
            }
            Op::Loop { body, .. } => callees(body, out),
            _ => {}
        }
    }
}

/// A function that can call itself (directly or through others), if any: recursion is not
/// supported (the language rejects it; native recursion could overflow the stack).
fn find_recursion(module: &Module) -> Option<usize> {
    let n = module.functions.len();
    let edges: Vec<Vec<usize>> = module
        .functions
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            callees(&f.body, &mut out);
            out
        })
        .collect();
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; n];
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some(&mut (f, ref mut next)) = stack.last_mut() {
            if let Some(&g) = edges[f].get(*next) {
                *next += 1;
                match state[g] {
                    0 => {
                        state[g] = 1;
                        stack.push((g, 0));
                    }
                    1 => return Some(g),
                    _ => {}
                }
            } else {
                state[f] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// The most stack one function's local arrays may take (`len * lanes * 4` bytes each): calls
/// nest, and host threads often have only a few MiB of stack.
pub const MAX_LOCAL_BYTES: u64 = 1 << 20;

/// What every compilation checks first: the module verifies, has no `Math` op and no
/// recursion, its local arrays fit [`MAX_LOCAL_BYTES`], and the options fit it.
pub fn check_module(module: &Module, options: &Options) -> Result<(), Error> {
    drs_ir::verify_module(module).map_err(Error::Verify)?;
    for f in &module.functions {
        if let Some(m) = find_math(&f.body) {
            return Err(Error::Unsupported {
                function: f.name.clone(),
                message: format!(
                    "`{}` (Op::Math) must be expanded into arithmetic before code generation (drs-opt)",
                    m.name()
                ),
            });
        }
    }
    for f in &module.functions {
        let bytes: u64 = f.locals.iter().map(|a| a.len as u64 * options.lanes.count() as u64 * 4).sum();
        if bytes > MAX_LOCAL_BYTES {
            return Err(Error::Unsupported {
                function: f.name.clone(),
                message: format!(
                    "its local arrays take {bytes} bytes of stack at {} lanes, more than the {MAX_LOCAL_BYTES} allowed",
                    options.lanes.count()
                ),
            });
        }
    }
    if let Some(f) = find_recursion(module) {
        return Err(Error::Unsupported {
            function: module.functions[f].name.clone(),
            message: "recursive calls are not supported".into(),
        });
    }
    for (name, flags) in &options.uniform_params {
        let f = module.find(name).ok_or_else(|| Error::BadOptions(format!("no function `{name}`")))?;
        let n = module.function(f).params.len();
        if flags.len() > n {
            return Err(Error::BadOptions(format!("`{name}` has {n} parameters, {} uniform flags given", flags.len())));
        }
    }
    if let Some(name) = options.entries.iter().flatten().find(|name| module.find(name).is_none()) {
        return Err(Error::BadOptions(format!("no function `{name}` to make an entry")));
    }
    Ok(())
}

impl Jit {
    /// Compiles every function of `module` for `lanes` lanes.
    pub fn compile(module: &Module, lanes: Lanes) -> Result<Jit, Error> {
        Jit::compile_with(module, &Options::new(lanes))
    }

    /// Compiles with [`Options`] (by its code generator), then [`NativeModule::load`].
    pub fn compile_with(module: &Module, options: &Options) -> Result<Jit, Error> {
        (options.generator.compile)(module, options)?.load()
    }

    /// Loads serialised native code ([`NativeModule::to_bytes`]) without compiling anything.
    pub fn from_native_bytes(bytes: &[u8]) -> Result<Jit, Error> {
        NativeModule::from_bytes(bytes)?.load()
    }

    pub fn lanes(&self) -> Lanes {
        self.lanes
    }

    /// The compiled module's buffers, in the order calls pass them.
    pub fn buffers(&self) -> &[BufferDecl] {
        &self.buffers
    }

    /// The compiled module's externs, in the order of their table ([`Jit::externs`]).
    pub fn extern_decls(&self) -> &[ExternDecl] {
        &self.externs
    }

    /// Which results of extern `index` (in [`Jit::extern_decls`]' order) the compiled code
    /// reads: its host function may leave the others' values unspecified. Every result when
    /// that is not known (code loaded from another generator's object without the record).
    pub fn extern_results_read(&self, index: usize) -> Vec<bool> {
        match self.extern_reads.get(index) {
            Some(reads) => reads.clone(),
            None => vec![true; self.externs.get(index).map_or(0, |e| e.results.len())],
        }
    }

    /// The callable function `name`; [`Error::UnknownFunction`] also for a function compiled
    /// only as a callee ([`Options::entries`]).
    pub fn function(&self, name: &str) -> Result<Kernel<'_>, Error> {
        self.functions
            .iter()
            .position(|f| f.name == name)
            .and_then(|index| self.kernel(index))
            .ok_or_else(|| Error::UnknownFunction(name.to_string()))
    }

    /// Like [`Jit::function`], by the function's id in the module.
    pub fn function_by_id(&self, id: FuncId) -> Result<Kernel<'_>, Error> {
        self.kernel(id.0 as usize).ok_or_else(|| Error::UnknownFunction(format!("#{}", id.0)))
    }

    fn kernel(&self, index: usize) -> Option<Kernel<'_>> {
        let entry = self.functions.get(index)?.entry?;
        Some(Kernel { jit: self, index, entry })
    }

    /// A table for this module's externs, with nothing bound yet.
    pub fn externs(&self) -> Externs {
        Externs::new(&self.externs)
    }
}

/// One compiled function of a [`Jit`].
#[derive(Clone, Copy)]
pub struct Kernel<'j> {
    jit: &'j Jit,
    index: usize,
    entry: EntryFn,
}

impl<'j> Kernel<'j> {
    fn info(&self) -> &'j CompiledFn {
        &self.jit.functions[self.index]
    }

    pub fn name(&self) -> &'j str {
        &self.info().name
    }

    pub fn params(&self) -> &'j [Ty] {
        &self.info().params
    }

    pub fn results(&self) -> &'j [Ty] {
        &self.info().results
    }

    /// The raw entry wrapper (see [`EntryFn`] and [`Context`]) for callers that manage their
    /// own tables; valid while the [`Jit`] lives.
    pub fn entry(&self) -> EntryFn {
        self.entry
    }

    /// Runs one group of lanes, all active. `args` is `[param][lane]` (`params().len() *
    /// lanes` bits: f32 bits, two's complement integers, bools 0/1), `results` likewise.
    /// `buffers` are the module's buffers in order.
    pub fn call(
        &self,
        args: &[u32],
        results: &mut [u32],
        buffers: &[Buffer<'_>],
        externs: &Externs,
    ) -> Result<(), Error> {
        self.call_masked(self.jit.lanes.full_mask(), args, results, buffers, externs)
    }

    /// Like [`Kernel::call`], with only the lanes whose bit is set in `active` running;
    /// the results of the other lanes are unspecified.
    pub fn call_masked(
        &self,
        active: u32,
        args: &[u32],
        results: &mut [u32],
        buffers: &[Buffer<'_>],
        externs: &Externs,
    ) -> Result<(), Error> {
        let lanes = self.jit.lanes.count();
        if active & !self.jit.lanes.full_mask() != 0 {
            return Err(Error::BadMask { mask: active, lanes });
        }
        self.check(lanes, args, results, buffers, externs)?;
        if active == 0 {
            return Ok(());
        }
        // SAFETY: lengths and tables were checked above.
        unsafe { self.run(args.as_ptr(), results.as_mut_ptr(), buffers, externs, 1, lanes as u64, active) }
    }

    /// Runs `n` lanes of any count: `args` is `[param][n]`, `results` is `[result][n]`.
    /// Full groups run straight from the arrays; a partial last group through a copy.
    pub fn call_batch(
        &self,
        n: usize,
        args: &[u32],
        results: &mut [u32],
        buffers: &[Buffer<'_>],
        externs: &Externs,
    ) -> Result<(), Error> {
        let w = self.jit.lanes.count();
        self.check(n, args, results, buffers, externs)?;
        let groups = n / w;
        if groups > 0 {
            let full = self.jit.lanes.full_mask();
            // SAFETY: checked above; the wrapper reads `groups * w <= n` lanes of each row.
            unsafe { self.run(args.as_ptr(), results.as_mut_ptr(), buffers, externs, groups as u64, n as u64, full)? };
        }
        let tail = n % w;
        if tail > 0 {
            let start = groups * w;
            let (np, nr) = (self.params().len(), self.results().len());
            let mut a = vec![0u32; np * w];
            for p in 0..np {
                a[p * w..p * w + tail].copy_from_slice(&args[p * n + start..p * n + n]);
            }
            let mut r = vec![0u32; nr * w];
            let active = (1u32 << tail) - 1;
            // SAFETY: one group of `w` lanes in arrays of stride `w`.
            unsafe { self.run(a.as_ptr(), r.as_mut_ptr(), buffers, externs, 1, w as u64, active)? };
            for q in 0..nr {
                results[q * n + start..q * n + n].copy_from_slice(&r[q * w..q * w + tail]);
            }
        }
        Ok(())
    }

    fn check(
        &self,
        lanes: usize,
        args: &[u32],
        results: &[u32],
        buffers: &[Buffer<'_>],
        externs: &Externs,
    ) -> Result<(), Error> {
        let info = self.info();
        let arity = |what, expected, given| {
            if expected == given {
                Ok(())
            } else {
                Err(Error::Arity { function: info.name.clone(), what, expected, given })
            }
        };
        arity("args", info.params.len() * lanes, args.len())?;
        arity("results", info.results.len() * lanes, results.len())?;
        arity("buffers", self.jit.buffers.len(), buffers.len())?;
        if externs.fingerprint != self.jit.externs_fingerprint {
            return Err(Error::ExternMismatch);
        }
        Ok(())
    }

    /// # Safety
    /// `args` and `results` hold `groups` groups of every parameter / result at `stride`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        &self,
        args: *const u32,
        results: *mut u32,
        buffers: &[Buffer<'_>],
        externs: &Externs,
        groups: u64,
        stride: u64,
        active: u32,
    ) -> Result<(), Error> {
        let ctx = Context { buffers: buffers.as_ptr().cast(), externs: externs.table.as_ptr(), groups, stride, active };
        take_host_error();
        // SAFETY: the caller checked the arrays; tables match the module (checked).
        unsafe { (self.entry)(args, results, &ctx) };
        match take_host_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Host functions for a module's externs, in the module's order. Make one with
/// [`Jit::externs`] (or [`Externs::new`] with the module's declarations), bind functions by
/// name, and pass it to calls; it can be shared by any number of threads and by every [`Jit`]
/// compiled from modules with the same extern declarations.
pub struct Externs {
    fingerprint: u64,
    decls: Vec<ExternDecl>,
    /// The slots that `table` points at (never pushed to after creation, so their addresses
    /// are stable).
    slots: Vec<HostSlot>,
    table: Vec<ExternEntry>,
}

// SAFETY: the table only points into `slots` (immutable while shared; closures are
// `Send + Sync`) or at raw functions whose binder promised thread safety (`bind_raw`).
unsafe impl Send for Externs {}
unsafe impl Sync for Externs {}

impl Default for Externs {
    fn default() -> Self {
        Externs::new(&[])
    }
}

impl Externs {
    pub fn new(decls: &[ExternDecl]) -> Externs {
        let slots: Vec<HostSlot> = decls
            .iter()
            .map(|d| HostSlot { name: d.name.clone(), params: d.params.len(), results: d.results.len(), func: None })
            .collect();
        let table = slots
            .iter()
            .map(|s| ExternEntry { func: host_trampoline, user: s as *const HostSlot as *mut c_void })
            .collect();
        Externs { fingerprint: fingerprint(decls), decls: decls.to_vec(), slots, table }
    }

    fn index(&self, name: &str) -> Result<usize, Error> {
        self.decls.iter().position(|d| d.name == name).ok_or_else(|| Error::UnknownExtern(name.to_string()))
    }

    /// Binds a host closure: it receives one lane's arguments and writes that lane's results
    /// (both as u32 bits, bools 0/1), once per active lane. A panic is caught and reported as
    /// [`Error::ExternPanicked`] by the call.
    pub fn bind(&mut self, name: &str, f: impl Fn(&[u32], &mut [u32]) + Send + Sync + 'static) -> Result<(), Error> {
        let i = self.index(name)?;
        let slot = &self.slots[i];
        self.set_closure(i, per_lane(slot.params, slot.results, f));
        Ok(())
    }

    /// Binds a host closure that runs a whole lane group at once (see [`LaneGroup`]): for
    /// functions that gain from seeing several lanes, or that look up per-thread state once per
    /// call rather than once per lane. A panic is caught as with [`Externs::bind`].
    pub fn bind_group(&mut self, name: &str, f: impl Fn(&mut LaneGroup) + Send + Sync + 'static) -> Result<(), Error> {
        let i = self.index(name)?;
        self.set_closure(i, Box::new(f));
        Ok(())
    }

    fn set_closure(&mut self, i: usize, f: HostClosure) {
        self.slots[i].func = Some(f);
        self.table[i] = ExternEntry { func: host_trampoline, user: &self.slots[i] as *const HostSlot as *mut c_void };
    }

    /// Binds a raw C function with its `user` pointer.
    ///
    /// # Safety
    /// `func` must be safe to call from any thread with `user`, read `lanes` u32 per extern
    /// parameter, write `lanes` u32 per result (the layout of [`RawExternFn`]), and not unwind.
    pub unsafe fn bind_raw(&mut self, name: &str, func: RawExternFn, user: *mut c_void) -> Result<(), Error> {
        let i = self.index(name)?;
        self.table[i] = ExternEntry { func, user };
        Ok(())
    }

    /// The entry table, for [`Context::externs`].
    pub fn table(&self) -> *const ExternEntry {
        self.table.as_ptr()
    }
}
