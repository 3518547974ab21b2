//! Module-level compilation: Cranelift setup, declarations, the internal functions, entry
//! wrappers, and linking.

use crate::abi::*;
use crate::codegen::{internal_signature, Env, Shape, Translator};
use crate::{Error, Options};
use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module as _};
use drs_ir::Module;

fn codegen_error(function: &str, e: impl std::fmt::Display) -> Error {
    Error::Codegen { function: function.to_string(), message: e.to_string() }
}

fn module_error(function: &str, e: cranelift_module::ModuleError) -> Error {
    let message = match &e {
        cranelift_module::ModuleError::Compilation(cranelift_codegen::CodegenError::Verifier(errors)) => {
            format!("Cranelift verifier: {errors}")
        }
        other => format!("{other:?}"),
    };
    Error::Codegen { function: function.to_string(), message }
}

fn new_jit() -> Result<JITModule, Error> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, k: &str, v: &str| {
        flags.set(k, v).map_err(|e| codegen_error("", format!("setting {k}={v}: {e}")))
    };
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "enable_multi_ret_implicit_sret", "true")?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    let isa_builder = cranelift_native::builder().map_err(|e| codegen_error("", format!("unsupported host: {e}")))?;
    let isa = isa_builder.finish(settings::Flags::new(flags)).map_err(|e| codegen_error("", e))?;
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    builder.symbol("drs_fmodf", drs_fmodf as *const u8);
    builder.symbol("fmaf", drs_fmaf as *const u8);
    builder.symbol("floorf", drs_floorf as *const u8);
    builder.symbol("ceilf", drs_ceilf as *const u8);
    builder.symbol("truncf", drs_truncf as *const u8);
    builder.symbol("nearbyintf", drs_nearbyintf as *const u8);
    Ok(JITModule::new(builder))
}

/// Compiles every function of a verified module. On error the partially built JIT memory is
/// released by the caller's guard.
pub(crate) fn compile(
    module: &Module,
    options: &Options,
    jit_slot: &mut Option<JITModule>,
) -> Result<Vec<EntryFn>, Error> {
    *jit_slot = Some(new_jit()?);
    let jit = jit_slot.as_mut().expect("just set");
    let shape = Shape::new(options.lanes, jit.target_config().pointer_type());

    let mut fmod_sig = jit.make_signature();
    fmod_sig.params.extend([AbiParam::new(types::F32), AbiParam::new(types::F32)]);
    fmod_sig.returns.push(AbiParam::new(types::F32));
    let fmod = jit.declare_function("drs_fmodf", Linkage::Import, &fmod_sig).map_err(|e| module_error("", e))?;

    let mut funcs = Vec::new();
    for (i, f) in module.functions.iter().enumerate() {
        let sig = internal_signature(jit, shape, f);
        funcs.push(jit.declare_function(&format!("f{i}"), Linkage::Local, &sig).map_err(|e| module_error(&f.name, e))?);
    }
    let mut entry_sig = jit.make_signature();
    for _ in 0..3 {
        entry_sig.params.push(AbiParam::new(shape.ptr));
    }
    let mut entries = Vec::new();
    for (i, f) in module.functions.iter().enumerate() {
        entries.push(
            jit.declare_function(&format!("e{i}"), Linkage::Local, &entry_sig).map_err(|e| module_error(&f.name, e))?,
        );
    }

    // `DRS_CRANELIFT_DUMP=1` prints the Cranelift IR of every function before compilation;
    // `DRS_CRANELIFT_DUMP=asm` prints the machine code of entry wrappers too.
    let dump = std::env::var_os("DRS_CRANELIFT_DUMP").is_some_and(|v| v != "0");
    let dump_asm = std::env::var_os("DRS_CRANELIFT_DUMP").is_some_and(|v| v == "asm");
    let mut ctx = jit.make_context();
    let mut fctx = FunctionBuilderContext::new();
    for (i, f) in module.functions.iter().enumerate() {
        // The internal version, for calls from other functions.
        ctx.func.signature = internal_signature(jit, shape, f);
        ctx.func.name = UserFuncName::user(0, funcs[i].as_u32());
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let env = Env { module, jit, funcs: &funcs, fmod };
        Translator::translate_function(b, env, f, shape).map_err(|m| codegen_error(&f.name, m))?;
        if dump {
            eprintln!("; {} ({:?})\n{}", f.name, options.lanes, ctx.func.display());
        }
        jit.define_function(funcs[i], &mut ctx).map_err(|e| module_error(&f.name, e))?;
        jit.clear_context(&mut ctx);

        // The entry wrapper, with the body inline and specialised for uniform parameters.
        let uniform: &[bool] =
            if shape.vector() { options.uniform_params.get(&f.name).map_or(&[], |u| u) } else { &[] };
        ctx.func.signature = entry_sig.clone();
        ctx.func.name = UserFuncName::user(0, entries[i].as_u32());
        let b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let env = Env { module, jit, funcs: &funcs, fmod };
        Translator::translate_entry(b, env, f, shape, uniform).map_err(|m| codegen_error(&f.name, m))?;
        if dump {
            eprintln!(
                "; entry of {} ({:?}, uniform params {uniform:?})\n{}",
                f.name,
                options.lanes,
                ctx.func.display()
            );
        }
        ctx.set_disasm(dump_asm);
        jit.define_function(entries[i], &mut ctx).map_err(|e| module_error(&f.name, e))?;
        if let (true, Some(code)) = (dump_asm, ctx.compiled_code()) {
            eprintln!("; machine code of the entry of {}\n{}", f.name, code.vcode.as_deref().unwrap_or(""));
        }
        jit.clear_context(&mut ctx);
    }
    jit.finalize_definitions().map_err(|e| module_error("", e))?;
    Ok(entries
        .iter()
        .map(|&id| {
            let ptr = jit.get_finalized_function(id);
            // SAFETY: the function was defined with `entry_sig`, the C ABI of `EntryFn`.
            unsafe { std::mem::transmute::<*const u8, EntryFn>(ptr) }
        })
        .collect())
}
