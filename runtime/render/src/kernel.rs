//! A scene's compiled kernels: the linked module (the integrator's `sample`, its reverse-mode
//! derivative or its replay for gradients), optimised and compiled through the kernel cache,
//! with its host functions bound and the order of its parameter buffers.

use std::sync::Arc;

use drs_cranelift::{Buffer, Externs, Jit, KernelCache, Options};
use drs_ir::FuncId;
use drs_opt::OptLevel;
use drs_sema::program::{FnId, Program};
use drs_sema::types::Type;

use crate::error::RenderError;
use crate::link::EntryMode;
use crate::render::RenderOptions;
use crate::scene::Scene;
use crate::streams::{keep_stream_in_values, SAMPLE_STREAMS};

pub struct Kernel {
    pub(crate) jit: Arc<Jit>,
    pub(crate) externs: Externs,
    /// The names of the module's buffers, in order.
    pub(crate) buffers: Vec<String>,
    /// Which of them holds the sample streams that compiled code draws from (`streams.rs`).
    sample_streams: Option<usize>,
    /// The entry function: see [`IntegratorKernel`]; for a table (`tabulate.rs`), the
    /// tabulated method, (instance, x) -> value.
    pub(crate) entry: FuncId,
}

/// Which of the integrator's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegratorKernel {
    /// `sample`, (instance, scene, sampler, ray) -> (colour, valid), or with AOVs
    /// `sample_aovs` (the AOV values follow).
    Render,
    /// `bwd_diff(sample)`: the same arguments and the adjoint of the result, parameter
    /// gradients added into the `.grad` buffers.
    Adjoint,
    /// `sample_replay`, where the integrator has it: the same arguments, `sample`'s result for
    /// the same random numbers and the adjoint of its colour, gradients as `Adjoint`
    /// (spec/plugins.md § How scenes use plugins).
    Replay,
}

/// The integrator method of [`IntegratorKernel::Replay`].
pub(crate) const REPLAY_METHOD: &str = "sample_replay";

impl Scene {
    /// The rendering kernel that renders with `options` run (their lanes and code generator),
    /// linked and compiled on first use (and found in the kernel cache when another scene
    /// with the same plugin types made it before).
    pub fn kernel(&self, options: &RenderOptions) -> Result<Arc<Kernel>, RenderError> {
        self.kernel_for(options, IntegratorKernel::Render)
    }

    /// Whether the scene's integrator has a [`IntegratorKernel::Replay`] kernel.
    pub fn has_replay(&self) -> bool {
        let program = self.library.program();
        program.program.plugins[self.integrator.0].methods.contains_key(REPLAY_METHOD)
    }

    /// The integrator's kernel `which`.
    pub fn kernel_for(&self, options: &RenderOptions, which: IntegratorKernel) -> Result<Arc<Kernel>, RenderError> {
        let (lanes, generator) = (options.lanes, options.generator);
        let mut kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kernels.get(&(lanes, generator.name, which)) {
            return Ok(k.clone());
        }
        let program = self.library.program();
        let (plugin, _) = self.integrator;
        let def = &program.program.plugins[plugin];
        // Renders with AOVs go through `sample_aovs`; gradients always differentiate `sample`.
        let (method, mode) = match which {
            IntegratorKernel::Render if self.aovs.is_some() => (crate::aov::AOV_METHOD, EntryMode::Primal),
            IntegratorKernel::Render => ("sample", EntryMode::Primal),
            IntegratorKernel::Adjoint => ("sample", EntryMode::Backward),
            IntegratorKernel::Replay => (REPLAY_METHOD, EntryMode::Primal),
        };
        let function = *def
            .methods
            .get(method)
            .ok_or_else(|| RenderError::Link(format!("integrator `{}` has no `{method}` method", def.name)))?;
        if which == IntegratorKernel::Replay {
            let sample = def.methods.get("sample").copied();
            check_replay_signature(&program.program, sample, function, &def.name)?;
        }
        // The integrator instance and the scene are the same in every lane. The reverse pass
        // adds into gradient buffers of the call's tile alone (`gradient.rs`), so its adds
        // need not be atomic.
        let private_buffers = which != IntegratorKernel::Render;
        let options = Options::new(lanes).generator(generator).private_buffers(private_buffers);
        let kernel = Arc::new(self.link_and_compile(function, mode, options, &[true, true])?);
        kernels.insert((lanes, generator.name, which), kernel.clone());
        Ok(kernel)
    }

    /// The kernel whose entry is the plugin method or function `function` (or its derivative,
    /// by `mode`), linked with the scene's plugin types and compiled through the kernel cache
    /// with `options` (lanes, code generator), with `uniform` flags for its leading parameters.
    pub(crate) fn link_and_compile(
        &self,
        function: FnId,
        mode: EntryMode,
        options: Options,
        uniform: &[bool],
    ) -> Result<Kernel, RenderError> {
        let program = self.library.program();
        let linked = crate::link::link(program, &self.types, self.nesting, function, mode)
            .map_err(|e| RenderError::Link(e.to_string()))?;
        // The linked module's entry is function 0, and stays so through the optimisation.
        let entry = FuncId(0);
        // The host calls the entry alone.
        let name = linked.module.function(entry).name.clone();
        let options = options.uniform(name.clone(), uniform.to_vec()).entry(name);
        // Keyed on the linked module: a kernel in the cache costs no optimisation.
        let level = OptLevel::Default;
        let preparation = format!("drs_opt::prepare_kernel({level:?}), streams::keep_stream_in_values");
        let jit = KernelCache::global()
            .get_or_prepare(&linked.module, preparation.as_bytes(), &options, |module| {
                let mut module = drs_opt::prepare_kernel(module, level, entry);
                keep_stream_in_values(&mut module);
                module
            })
            .map_err(|e| RenderError::Compile(e.to_string()))?;
        let mut externs = jit.externs();
        crate::host::bind(&mut externs, &jit, program, self.geometry.clone())
            .map_err(|e| RenderError::Link(e.to_string()))?;
        let buffers: Vec<String> = jit.buffers().iter().map(|b| b.name.clone()).collect();
        let sample_streams = buffers.iter().position(|name| name == SAMPLE_STREAMS);
        Ok(Kernel { jit, externs, buffers, sample_streams, entry })
    }
}

impl Kernel {
    /// The kernel's `buffers` with `streams`, a batch's sample-stream buffer, in its place.
    pub(crate) fn with_streams<'a>(&self, buffers: &[Buffer<'a>], streams: &'a mut [u32]) -> Vec<Buffer<'a>> {
        let mut buffers = buffers.to_vec();
        if let Some(slot) = self.sample_streams {
            buffers[slot] = Buffer::from_mut(streams);
        }
        buffers
    }
}

/// Checks that `replay` takes `sample`'s parameters, then its result and the colour's adjoint,
/// and returns nothing, as the reverse pass calls it (spec/plugins.md).
fn check_replay_signature(
    program: &Program,
    sample: Option<FnId>,
    replay: FnId,
    integrator: &str,
) -> Result<(), RenderError> {
    let replay = &program.functions[replay];
    let params: Vec<&Type> = replay.params.iter().map(|p| &p.ty).collect();
    let matches = sample.map(|sample| &program.functions[sample]).is_some_and(|sample| {
        let expected: Vec<&Type> = sample.params.iter().map(|p| &p.ty).chain([&sample.ret, &Type::Color]).collect();
        params == expected && replay.ret == Type::Tuple(Vec::new())
    });
    if !matches {
        return Err(RenderError::Link(format!(
            "integrator `{integrator}`: `{REPLAY_METHOD}` must take `sample`'s parameters, then its result and the \
             colour's adjoint, and return nothing: fn {REPLAY_METHOD}(scene: Scene, sampler: Sampler, ray: Ray, \
             out: (Color, bool), d_radiance: Color)"
        )));
    }
    Ok(())
}
