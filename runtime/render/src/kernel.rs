//! A scene's compiled kernels: the linked module (the integrator's `sample`, or its reverse-mode
//! derivative for gradients), optimised and compiled through the kernel cache, with its host
//! functions bound and the order of its parameter buffers.

use std::sync::Arc;

use drs_cranelift::{Externs, Jit, KernelCache, Options};
use drs_ir::FuncId;
use drs_opt::OptLevel;
use drs_sema::program::FnId;

use crate::error::RenderError;
use crate::link::EntryMode;
use crate::render::RenderOptions;
use crate::scene::Scene;

pub struct Kernel {
    pub(crate) jit: Arc<Jit>,
    pub(crate) externs: Externs,
    /// The names of the module's buffers, in order.
    pub(crate) buffers: Vec<String>,
    /// The entry function. Primal: the integrator's `sample`, (instance, scene, sampler, ray)
    /// -> (colour, valid), or with AOVs its `sample_aovs` (the AOV values follow). Backward:
    /// `bwd_diff(sample)`, the same arguments and the adjoint of the result. For a table
    /// (`tabulate.rs`): the tabulated method, (instance, x) -> value.
    pub(crate) entry: FuncId,
}

impl Scene {
    /// The rendering kernel that renders with `options` run (their lanes and code generator),
    /// linked and compiled on first use (and found in the kernel cache when another scene
    /// with the same plugin types made it before).
    pub fn kernel(&self, options: &RenderOptions) -> Result<Arc<Kernel>, RenderError> {
        self.kernel_for(options, EntryMode::Primal)
    }

    /// The kernel of `mode` (rendering, or the reverse pass of gradients).
    pub fn kernel_for(&self, options: &RenderOptions, mode: EntryMode) -> Result<Arc<Kernel>, RenderError> {
        let (lanes, generator) = (options.lanes, options.generator);
        let mut kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kernels.get(&(lanes, generator.name, mode)) {
            return Ok(k.clone());
        }
        let program = self.library.program();
        let (plugin, _) = self.integrator;
        let def = &program.program.plugins[plugin];
        // Renders with AOVs go through `sample_aovs`; gradients always differentiate `sample`.
        let method = match (&self.aovs, mode) {
            (Some(_), EntryMode::Primal) => crate::aov::AOV_METHOD,
            _ => "sample",
        };
        let sample = *def
            .methods
            .get(method)
            .ok_or_else(|| RenderError::Link(format!("integrator `{}` has no `{method}` method", def.name)))?;
        // The integrator instance and the scene are the same in every lane. The reverse pass
        // adds into gradient buffers of the call's tile alone (`gradient.rs`), so its adds
        // need not be atomic.
        let options = Options::new(lanes).generator(generator).private_buffers(mode == EntryMode::Backward);
        let kernel = Arc::new(self.link_and_compile(sample, mode, options, &[true, true])?);
        kernels.insert((lanes, generator.name, mode), kernel.clone());
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
        let preparation = format!("drs_opt::prepare_kernel({level:?})");
        let jit = KernelCache::global()
            .get_or_prepare(&linked.module, preparation.as_bytes(), &options, |module| {
                drs_opt::prepare_kernel(module, level, entry)
            })
            .map_err(|e| RenderError::Compile(e.to_string()))?;
        let mut externs = jit.externs();
        crate::host::bind(&mut externs, jit.extern_decls(), program, self.geometry.clone())
            .map_err(|e| RenderError::Link(e.to_string()))?;
        let buffers = jit.buffers().iter().map(|b| b.name.clone()).collect();
        Ok(Kernel { jit, externs, buffers, entry })
    }
}
