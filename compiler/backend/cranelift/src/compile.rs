//! Module-level compilation: Cranelift setup, the internal functions and entry wrappers of a
//! module, laid out one after another in one relocatable code blob ([`NativeModule`]).
//!
//! This is the only place that runs Cranelift's code generation: [`crate::Jit::compile`],
//! the kernel cache and `drsc build` all get their code from [`compile`] and load it with
//! [`NativeModule::load`].

use crate::codegen::{internal_signature, Env, Shape, Translator, NS_FUNCTION, NS_SYMBOL, SYM_FMODF};
use crate::native::{NativeFn, NativeModule, Reloc, RelocKind, RelocTarget, Symbol, Target};
use crate::{Error, Options};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{AbiParam, ExternalName, LibCall, Signature, UserFuncName};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{CodegenError, Context, FinalizedRelocTarget};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use drs_ir::Module;
use std::sync::OnceLock;

/// The namespace of entry wrappers' names (only shown by `DRS_CRANELIFT_DUMP`).
const NS_ENTRY: u32 = 2;

fn codegen_error(function: &str, e: impl std::fmt::Display) -> Error {
    Error::Codegen { function: function.to_string(), message: e.to_string() }
}

fn cranelift_error(function: &str, e: &CodegenError) -> Error {
    let message = match e {
        CodegenError::Verifier(errors) => format!("Cranelift verifier: {errors}"),
        other => other.to_string(),
    };
    Error::Codegen { function: function.to_string(), message }
}

/// The host's ISA with the settings of every compilation, and `cpu` settings changed from what
/// the host has (tests turn features off).
pub(crate) fn build_isa(cpu: &[(&str, &str)]) -> Result<OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    let set =
        |flags: &mut settings::Builder, k: &str, v: &str| flags.set(k, v).map_err(|e| format!("setting {k}={v}: {e}"));
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "enable_multi_ret_implicit_sret", "true")?;
    // Library calls (floorf etc. without SSE4.1, fmaf without FMA) and host functions are
    // called through absolute addresses patched in at load time (relocation `Abs8`); calls
    // between a module's functions are PC-relative within its code blob. No GOT or PLT.
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    // Frames larger than a page (local arrays) touch every page as they grow, so that running
    // out of stack hits the guard page instead of writing past it.
    set(&mut flags, "enable_probestack", "true")?;
    set(&mut flags, "probestack_strategy", "inline")?;
    // Checks only; it does not change the code (and is not part of the code's target).
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    let mut isa_builder = cranelift_native::builder().map_err(|e| format!("unsupported host: {e}"))?;
    for &(k, v) in cpu {
        isa_builder.set(k, v).map_err(|e| format!("setting {k}={v}: {e}"))?;
    }
    isa_builder.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
}

/// The host's ISA with the settings of every compilation (CPU features detected once).
pub(crate) fn host_isa() -> Result<&'static dyn TargetIsa, Error> {
    static ISA: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    match ISA.get_or_init(|| build_isa(&[])) {
        Ok(isa) => Ok(&**isa),
        Err(m) => Err(codegen_error("", m)),
    }
}

/// The code of a module as it is being compiled.
#[derive(Default)]
struct Blob {
    code: Vec<u8>,
    align: u32,
    relocs: Vec<Reloc>,
    /// Relocations whose target is the internal version of an IR function (index into
    /// `relocs`, function), resolved when every function is laid out.
    calls: Vec<(usize, u32)>,
}

impl Blob {
    /// Compiles the function in `ctx` and appends it; returns its offset in the blob.
    fn define(&mut self, isa: &dyn TargetIsa, ctx: &mut Context, name: &str) -> Result<u32, Error> {
        if let Err(e) = ctx.compile(isa, &mut ControlPlane::default()) {
            return Err(cranelift_error(name, &e.inner));
        }
        let compiled = ctx.compiled_code().expect("compiled just now");
        let align =
            compiled.buffer.alignment.max(isa.function_alignment().preferred).max(isa.symbol_alignment() as u32);
        self.align = self.align.max(align);
        let at = self.code.len().next_multiple_of(align as usize);
        self.code.resize(at, 0);
        self.code.extend_from_slice(compiled.code_buffer());
        let too_big = || codegen_error(name, "the module's code is larger than 2 GiB");
        let base = u32::try_from(at).map_err(|_| too_big())?;
        u32::try_from(self.code.len()).map_err(|_| too_big())?;
        for r in compiled.buffer.relocs() {
            let kind = RelocKind::from_cranelift(r.kind)
                .ok_or_else(|| codegen_error(name, format!("unsupported relocation {:?}", r.kind)))?;
            let target = match &r.target {
                FinalizedRelocTarget::Func(offset) => RelocTarget::Code(base + offset),
                FinalizedRelocTarget::ExternalName(ExternalName::User(user)) => {
                    let n = &ctx.func.params.user_named_funcs()[*user];
                    match (n.namespace, n.index) {
                        (NS_FUNCTION, index) => {
                            self.calls.push((self.relocs.len(), index));
                            RelocTarget::Code(0)
                        }
                        (NS_SYMBOL, SYM_FMODF) => RelocTarget::Symbol(Symbol::Fmodf),
                        (ns, index) => return Err(codegen_error(name, format!("unknown external name {ns}:{index}"))),
                    }
                }
                FinalizedRelocTarget::ExternalName(ExternalName::LibCall(call)) => {
                    RelocTarget::Symbol(libcall_symbol(*call).ok_or_else(|| {
                        codegen_error(name, format!("Cranelift needs the library call {call}, which is not provided"))
                    })?)
                }
                FinalizedRelocTarget::ExternalName(other) => {
                    return Err(codegen_error(name, format!("unsupported external name {other:?}")))
                }
            };
            self.relocs.push(Reloc { offset: base + r.offset, kind, target, addend: r.addend });
        }
        Ok(base)
    }
}

/// The host functions for the library calls Cranelift emits where an instruction is missing
/// (`floorf` etc. without SSE4.1, `fmaf` without FMA): Rust's, which agree with the
/// interpreter.
fn libcall_symbol(call: LibCall) -> Option<Symbol> {
    Some(match call {
        LibCall::FmaF32 => Symbol::FmaF32,
        LibCall::FloorF32 => Symbol::FloorF32,
        LibCall::CeilF32 => Symbol::CeilF32,
        LibCall::TruncF32 => Symbol::TruncF32,
        LibCall::NearestF32 => Symbol::NearestF32,
        LibCall::FmaF64 => Symbol::FmaF64,
        LibCall::FloorF64 => Symbol::FloorF64,
        LibCall::CeilF64 => Symbol::CeilF64,
        LibCall::TruncF64 => Symbol::TruncF64,
        LibCall::NearestF64 => Symbol::NearestF64,
        _ => return None,
    })
}

/// Compiles every function of a checked module (see [`crate::NativeModule::compile`]).
pub(crate) fn compile(module: &Module, options: &Options) -> Result<NativeModule, Error> {
    compile_for(host_isa()?, module, options)
}

/// [`compile`] for a given ISA (tests compile for CPUs with fewer features than the host).
pub(crate) fn compile_for(isa: &dyn TargetIsa, module: &Module, options: &Options) -> Result<NativeModule, Error> {
    if !crate::NATIVE_CODE_SUPPORTED {
        return Err(codegen_error("", "native code is supported on x86-64 and AArch64 hosts only"));
    }
    let call_conv = isa.default_call_conv();
    let shape = Shape::new(options.lanes, isa.pointer_type());
    let sigs: Vec<Signature> = module.functions.iter().map(|f| internal_signature(call_conv, shape, f)).collect();
    let mut entry_sig = Signature::new(call_conv);
    for _ in 0..3 {
        entry_sig.params.push(AbiParam::new(shape.ptr));
    }

    // `DRS_CRANELIFT_DUMP=1` prints the Cranelift IR of every function before compilation;
    // `DRS_CRANELIFT_DUMP=asm` prints the machine code of entry wrappers too. (`DRS_PERF_MAP=1`
    // names the loaded code for `perf`: see `NativeModule::load`.)
    let dump = std::env::var_os("DRS_CRANELIFT_DUMP").is_some_and(|v| v != "0");
    let dump_asm = std::env::var_os("DRS_CRANELIFT_DUMP").is_some_and(|v| v == "asm");
    let mut ctx = Context::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut blob = Blob::default();
    let mut internal = Vec::with_capacity(module.functions.len());
    let mut entries = Vec::with_capacity(module.functions.len());
    let x64_has =
        |flag: &str| isa.name() == "x64" && isa.isa_flags().iter().any(|f| f.name == flag && f.as_bool() == Some(true));
    let (blendv, pshufb) = (x64_has("has_sse41"), x64_has("has_ssse3"));
    let private_buffers = options.private_buffers;
    let read_only = crate::codegen::read_only_buffers(module);
    let env = || Env {
        module,
        call_conv,
        config: isa.frontend_config(),
        funcs: &sigs,
        blendv,
        pshufb,
        private_buffers,
        index_pairs: isa.name() == "x64",
        read_only: &read_only,
    };
    let mut called = vec![false; module.functions.len()];
    for f in &module.functions {
        for callee in drs_opt::util::callees(&f.body) {
            called[callee.0 as usize] = true;
        }
    }
    for (i, f) in module.functions.iter().enumerate() {
        // The internal version, for calls from other functions. An entry that no function
        // calls needs none (a kernel's entry: its wrapper holds the body inline).
        if called[i] || !options.is_entry(&f.name) {
            ctx.func.signature = sigs[i].clone();
            ctx.func.name = UserFuncName::user(NS_FUNCTION, i as u32);
            let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            Translator::translate_function(b, env(), f, shape).map_err(|m| codegen_error(&f.name, m))?;
            if dump {
                eprintln!("; {} ({:?})\n{}", f.name, options.lanes, ctx.func.display());
            }
            internal.push(Some(blob.define(isa, &mut ctx, &f.name)?));
            ctx.clear();
        } else {
            internal.push(None);
        }

        // The entry wrapper, with the body inline and specialised for uniform parameters.
        if !options.is_entry(&f.name) {
            entries.push(None);
            continue;
        }
        let uniform: &[bool] =
            if shape.vector() { options.uniform_params.get(&f.name).map_or(&[], |u| u) } else { &[] };
        ctx.func.signature = entry_sig.clone();
        ctx.func.name = UserFuncName::user(NS_ENTRY, i as u32);
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        Translator::translate_entry(b, env(), f, shape, uniform).map_err(|m| codegen_error(&f.name, m))?;
        if dump {
            eprintln!(
                "; entry of {} ({:?}, uniform params {uniform:?})\n{}",
                f.name,
                options.lanes,
                ctx.func.display()
            );
        }
        ctx.set_disasm(dump_asm);
        entries.push(Some(blob.define(isa, &mut ctx, &f.name)?));
        if let (true, Some(code)) = (dump_asm, ctx.compiled_code()) {
            eprintln!("; machine code of the entry of {}\n{}", f.name, code.vcode.as_deref().unwrap_or(""));
        }
        ctx.clear();
    }
    for &(reloc, function) in &blob.calls {
        let at = internal
            .get(function as usize)
            .copied()
            .flatten()
            .ok_or_else(|| codegen_error("", "call of an unknown function"))?;
        blob.relocs[reloc].target = RelocTarget::Code(at);
    }
    let functions = module
        .functions
        .iter()
        .zip(entries)
        .zip(internal)
        .map(|((f, entry), internal)| NativeFn {
            name: f.name.clone(),
            params: f.param_types(),
            results: f.result_types.clone(),
            entry,
            internal,
        })
        .collect();
    Ok(NativeModule {
        target: Target::of(isa),
        lanes: options.lanes,
        functions,
        externs: module.externs.clone(),
        extern_reads: drs_opt::util::extern_results_read(module),
        buffers: module.buffers.clone(),
        align: blob.align,
        code: blob.code,
        relocs: blob.relocs,
    })
}
