//! The LLVM backend of drs (feature `llvm`): IR modules compiled by LLVM 19 into native code
//! as wide as the CPU's vectors allow, with the binary interface of the Cranelift backend.
//!
//! [`compile`] translates the module into LLVM IR over `W`-lane vectors (`codegen.rs`), runs
//! LLVM's `O3` pipeline and code generation for this host, and imports the object file as a
//! [`NativeModule`]. From there on nothing differs from Cranelift's code: the same loader,
//! kernel cache, artifacts, [`drs_cranelift::Jit`], entry wrappers, [`drs_cranelift::Context`]
//! and host calls. So every test of the JIT's behaviour applies to this backend unchanged, and
//! the runtime chooses a backend by choosing who compiles.
//!
//! The code uses exactly the CPU features of [`Target::host`] (the features Cranelift detects,
//! named as LLVM names them), so the loader's target check is the same for both backends.
//! Only x86-64 is supported.
//!
//! Without the `llvm` feature the crate is empty, so that the default build needs only cargo.
//!
//! `DRS_LLVM_DUMP=1` prints each module's LLVM IR before optimisation.

#![cfg(feature = "llvm")]

mod codegen;
mod llvm;

use drs_cranelift::{CodeGenerator, Error, Lanes, NativeModule, ObjectFunction, Options, Target};
use drs_ir::Module;

/// This backend as the code generator of [`Options::generator`].
pub const GENERATOR: CodeGenerator = CodeGenerator { name: "llvm", version, compile };

/// What identifies this backend's code: a hash of its sources and LLVM's version.
fn version() -> String {
    const SOURCES: [&str; 4] = [
        include_str!("lib.rs"),
        include_str!("codegen.rs"),
        include_str!("codegen/refill.rs"),
        include_str!("llvm.rs"),
    ];
    let mut h = blake3::Hasher::new();
    for source in SOURCES {
        h.update(&(source.len() as u64).to_le_bytes());
        h.update(source.as_bytes());
    }
    format!("{} LLVM {}", h.finalize().to_hex(), llvm::version())
}

/// How kernels load a vector of buffer or local-array elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gathers {
    /// A gather of the active lanes only: with AVX-512, one instruction that skips the lanes
    /// masked off.
    Masked,
    /// Every lane loads, from its index or, out of range, from element 0, and the lanes masked
    /// off are then zeroed. Without AVX-512 LLVM turns a masked gather into a test and a branch
    /// per lane wherever it deems the gather instruction slow (AMD's processors); this becomes
    /// straight-line loads instead.
    EveryLane,
}

impl Gathers {
    /// The kind of gather this host's kernels use.
    pub fn for_host() -> Result<Gathers, Error> {
        Ok(if host_has("avx512f")? { Gathers::Masked } else { Gathers::EveryLane })
    }
}

/// The kernel width that suits this host's vectors: 16 lanes (one AVX-512 register per value)
/// with AVX-512, 8 (one AVX register) with AVX2, 4 otherwise. Without AVX-512, 16 lanes take two
/// registers per value and spill more: on a Zen 3 host 8 lanes rendered 4–8% faster
/// (docs/benchmarks.md, session 39).
pub fn native_lanes() -> Result<Lanes, Error> {
    Ok(if host_has("avx512f")? {
        Lanes::X16
    } else if host_has("avx2")? {
        Lanes::X8
    } else {
        Lanes::X4
    })
}

/// Whether this host's code may use the CPU feature `name` (Cranelift's name, without `has_`).
fn host_has(name: &str) -> Result<bool, Error> {
    Ok(Target::host()?.features().contains(&name))
}

/// Compiles every function of `module` for this host with LLVM; entries, and the uniform
/// parameters that decide lane refill, as `options` says. A bug of the code generator is an
/// error, never a panic (LLVM's own fatal errors still end the process).
pub fn compile(module: &Module, options: &Options) -> Result<NativeModule, Error> {
    compile_with(module, options, Gathers::for_host()?)
}

/// [`compile`] with the given kind of gathers rather than the host's (so that tests cover both
/// on any host).
pub fn compile_with(module: &Module, options: &Options, gathers: Gathers) -> Result<NativeModule, Error> {
    drs_cranelift::check_module(module, options)?;
    Error::catch_codegen_panic("the LLVM code generator", || compile_checked(module, options, gathers))
}

fn compile_checked(module: &Module, options: &Options, gathers: Gathers) -> Result<NativeModule, Error> {
    let codegen_error = |message: String| Error::Codegen { function: String::new(), message };
    let target = Target::host()?;
    let features = llvm_features(target)?;
    let machine = llvm::Machine::host("x86-64", &features).map_err(codegen_error)?;
    let context = llvm::Llvm::new("drs");
    machine.adopt(&context);
    let tune = llvm::Machine::host_cpu_name();
    let mut generator = codegen::Codegen::new(&context, module, options, gathers, "x86-64", &tune, &features);
    generator.emit(options);
    if std::env::var_os("DRS_LLVM_DUMP").is_some_and(|v| v != "0") {
        eprintln!("{}", context.print());
    }
    context.verify().map_err(|m| codegen_error(format!("LLVM verifier: {m}")))?;
    machine.optimise(&context).map_err(codegen_error)?;
    let object = machine.object(&context).map_err(codegen_error)?;
    let functions = module
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| ObjectFunction {
            name: f.name.clone(),
            params: f.param_types(),
            results: f.result_types.clone(),
            entry_symbol: options
                .entries
                .as_ref()
                .is_none_or(|names| names.contains(&f.name))
                .then(|| codegen::entry_symbol(i)),
            internal_symbol: None,
        })
        .collect();
    NativeModule::from_elf_object(&object, options.lanes, functions, module.externs.clone(), module.buffers.clone())
        .map(|native| native.with_extern_reads_of(module))
}

/// The host's CPU features as an LLVM feature list: each x86 feature Cranelift detects,
/// enabled or disabled as [`Target::host`] has it.
fn llvm_features(target: &Target) -> Result<String, Error> {
    if !target.triple.starts_with("x86_64") {
        return Err(Error::Unsupported {
            function: String::new(),
            message: format!("the LLVM backend generates x86-64 code only, this host is {}", target.triple),
        });
    }
    let mut features = Vec::new();
    for (name, value) in &target.flags {
        let llvm = match name.as_str() {
            "has_sse3" => "sse3",
            "has_ssse3" => "ssse3",
            "has_cmpxchg16b" => "cx16",
            "has_sse41" => "sse4.1",
            "has_sse42" => "sse4.2",
            "has_popcnt" => "popcnt",
            "has_avx" => "avx",
            "has_avx2" => "avx2",
            "has_fma" => "fma",
            "has_bmi1" => "bmi",
            "has_bmi2" => "bmi2",
            "has_lzcnt" => "lzcnt",
            "has_avx512bitalg" => "avx512bitalg",
            "has_avx512dq" => "avx512dq",
            "has_avx512f" => "avx512f",
            "has_avx512vbmi" => "avx512vbmi",
            "has_avx512vl" => "avx512vl",
            _ => continue,
        };
        features.push(format!("{}{llvm}", if value == "true" { '+' } else { '-' }));
    }
    Ok(features.join(","))
}
