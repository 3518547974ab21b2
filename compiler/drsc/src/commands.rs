//! `drsc ir`, `drsc eval` and `drsc build`.

use crate::pipeline::{self, Opt};
use clap::ValueEnum;
use drs_artifact::{Artifact, FunctionMeta, PluginMeta, PluginParamMeta, ValueMeta};
use drs_lower::{FnLayout, HostValue, LoweredProgram};
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The reference interpreter (exact scalar semantics).
    Interp,
    /// Native code through Cranelift (scalar or SIMD).
    Cranelift,
}

/// `drsc ir`: prints the IR of one function (or all), at an optimisation level.
pub fn ir(program: &LoweredProgram, function: Option<&str>, opt: Opt, expand_math: bool) -> ExitCode {
    let module = if expand_math {
        pipeline::for_backend(&program.lowered.module, opt)
    } else {
        pipeline::optimized(&program.lowered.module, opt)
    };
    match function {
        None => print!("{}", drs_ir::print_module(&module)),
        Some(name) => {
            let Some(f) = program.find_fn(name) else {
                eprintln!("error: no function `{name}` with IR in the program");
                return ExitCode::FAILURE;
            };
            let ir_name = &program.lowered.module.function(program.lowered.functions[&f]).name;
            match module.find(ir_name) {
                Some(id) => print!("{}", drs_ir::print_function(&module, module.function(id))),
                None => {
                    eprintln!("error: `{name}` was inlined into its callers and removed at this optimisation level");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// `drsc eval`: evaluates a call and prints its value.
pub fn eval(program: &LoweredProgram, call: &str, backend: Backend, lanes: usize, opt: Opt) -> ExitCode {
    let result = match backend {
        Backend::Interp => eval_interp(program, call, lanes),
        Backend::Cranelift => eval_cranelift(program, call, lanes, opt),
    };
    match result {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn eval_interp(program: &LoweredProgram, call: &str, lanes: usize) -> Result<String, String> {
    let prepared = program.prepare_call(call)?;
    let mut values = Vec::new();
    for _ in 0..lanes {
        let mut interp = drs_interp::Interpreter::new(&program.lowered.module);
        values.push(interp.call(prepared.function, &prepared.args).map_err(|t| t.to_string())?);
    }
    same_in_all_lanes(values).map(|bits| prepared.result.unflatten(&bits).to_string())
}

fn eval_cranelift(program: &LoweredProgram, call: &str, lanes: usize, opt: Opt) -> Result<String, String> {
    let prepared = program.prepare_call(call)?;
    let name = program.lowered.module.function(prepared.function).name.clone();
    let module = pipeline::for_backend(&program.lowered.module, opt);
    let width = match lanes {
        1 => drs_cranelift::Lanes::X1,
        4 => drs_cranelift::Lanes::X4,
        8 => drs_cranelift::Lanes::X8,
        n => return Err(format!("--lanes {n} is not supported: use 1, 4 or 8")),
    };
    let jit = drs_cranelift::Jit::compile(&module, width).map_err(|e| e.to_string())?;
    let kernel = jit.function(&name).map_err(|e| e.to_string())?;
    // [param][lane]: every lane gets the same arguments.
    let args: Vec<u32> = prepared.args.iter().flat_map(|&a| std::iter::repeat_n(a, lanes)).collect();
    let mut results = vec![0u32; kernel.results().len() * lanes];
    let mut storage: Vec<Vec<u32>> = vec![Vec::new(); module.buffers.len()];
    let buffers: Vec<drs_cranelift::Buffer<'_>> =
        storage.iter_mut().map(|b| drs_cranelift::Buffer::from_mut(b)).collect();
    kernel.call(&args, &mut results, &buffers, &jit.externs()).map_err(|e| e.to_string())?;
    let per_lane: Vec<Vec<u32>> =
        (0..lanes).map(|l| (0..kernel.results().len()).map(|r| results[r * lanes + l]).collect()).collect();
    same_in_all_lanes(per_lane).map(|bits| prepared.result.unflatten(&bits).to_string())
}

fn same_in_all_lanes(values: Vec<Vec<u32>>) -> Result<Vec<u32>, String> {
    let first = values.first().cloned().unwrap_or_default();
    match values.iter().position(|v| *v != first) {
        None => Ok(first),
        Some(lane) => Err(format!("lane {lane} computed a different value than lane 0 (a backend bug)")),
    }
}

/// `drsc build`: writes the artifact of a complete program, with native code for this host
/// at 1, 4 and 8 lanes if `native`.
pub fn build(program: &LoweredProgram, out: &Path, opt: Opt, native: bool) -> ExitCode {
    let mut artifact = artifact(program, opt);
    if native && !drs_cranelift::NATIVE_CODE_SUPPORTED {
        eprintln!("note: no native code in the artifact: this host's architecture has none (x86-64 and AArch64 do)");
    } else if native {
        // Compiled from the module a loader would compile, so both give the same code.
        let prepared = drs_cranelift::prepare_artifact_module(&artifact);
        for lanes in drs_cranelift::Lanes::ALL {
            match drs_cranelift::native_code_for_artifact(&prepared, lanes) {
                Ok(code) => artifact.native.push(code),
                Err(e) => {
                    eprintln!("error: cannot compile native code ({} lanes): {e}", lanes.count());
                    eprintln!("note: `--no-native` builds an artifact with the IR only");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    match artifact.write(out) {
        Ok(()) => {
            let native = match artifact.native.first() {
                Some(n) => format!(", native code for {} at 1/4/8 lanes", n.target),
                None => String::new(),
            };
            println!(
                "wrote {} ({} functions, {} plugins{native})",
                out.display(),
                artifact.functions.len(),
                artifact.plugins.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

fn artifact(program: &LoweredProgram, opt: Opt) -> Artifact {
    let lowered = &program.lowered;
    // Function metadata follows the order of the IR functions (before optimisation; the
    // optimiser keeps every function, inlining only copies bodies into callers).
    let mut functions: Vec<(u32, FunctionMeta)> = lowered
        .functions
        .iter()
        .map(|(&f, &id)| {
            let layout = FnLayout::of(&program.program, f);
            let value = |name: &str, l: &drs_lower::Layout| ValueMeta {
                name: name.to_string(),
                ty: l.describe(),
                scalars: l.len() as u32,
            };
            let meta = FunctionMeta {
                name: lowered.module.function(id).name.clone(),
                params: layout.params.iter().map(|(n, l)| value(n, l)).collect(),
                result: value("result", &layout.ret),
            };
            (id.0, meta)
        })
        .collect();
    functions.sort_by_key(|(id, _)| *id);
    let plugins = lowered
        .plugins
        .iter()
        .zip(&program.program.plugins)
        .map(|(p, def)| {
            let mut methods: Vec<(String, String)> = def
                .methods
                .iter()
                .filter_map(|(m, f)| {
                    lowered.functions.get(f).map(|id| (m.clone(), lowered.module.function(*id).name.clone()))
                })
                .collect();
            methods.sort();
            PluginMeta {
                kind: p.kind.keyword().to_string(),
                name: p.name.clone(),
                params: p
                    .params
                    .iter()
                    .map(|q| PluginParamMeta {
                        name: q.name.clone(),
                        ty: q.layout.describe(),
                        no_diff: q.no_diff,
                        default: q.default.as_ref().map(host_bits),
                        buffers: q.buffers.clone(),
                    })
                    .collect(),
                methods,
            }
        })
        .collect();
    Artifact {
        compiler: format!("drsc {}", env!("CARGO_PKG_VERSION")),
        module: pipeline::optimized(&lowered.module, opt),
        opt: opt.name().to_string(),
        functions: functions.into_iter().map(|(_, m)| m).collect(),
        plugins,
        sources: program.sources.iter().map(|(_, f)| f.name.clone()).collect(),
        native: Vec::new(),
    }
}

/// The scalars of a host value as bits, in flattening order.
fn host_bits(value: &HostValue) -> Vec<u32> {
    match value {
        HostValue::F32(x) => vec![x.to_bits()],
        HostValue::I32(x) => vec![*x as u32],
        HostValue::U32(x) | HostValue::Handle(x) => vec![*x],
        HostValue::Bool(b) => vec![*b as u32],
        HostValue::List(items) | HostValue::Tuple(items) => items.iter().flat_map(host_bits).collect(),
        HostValue::Struct(_, fields) => fields.iter().flat_map(|(_, v)| host_bits(v)).collect(),
    }
}
