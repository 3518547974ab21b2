//! Loading the artifacts `drsc build` writes: their native code for this host when they have
//! one that runs here, else their IR, compiled.

use crate::cache::CacheKey;
use crate::native::{NativeModule, Target};
use crate::{Error, Jit, KernelCache, Lanes, Options};
use drs_artifact::{Artifact, NativeCode};
use drs_ir::Module;
use drs_opt::OptLevel;
use std::sync::Arc;

/// The optimisation level an artifact names (`Artifact::opt`); unknown names mean the default.
fn opt_level(name: &str) -> OptLevel {
    match name {
        "none" => OptLevel::None,
        "basic" => OptLevel::Basic,
        "full" => OptLevel::Full,
        _ => OptLevel::Default,
    }
}

/// The module a backend compiles for an artifact: its IR through
/// [`drs_opt::prepare_for_backend`] at the artifact's optimisation level. `drsc build`
/// compiles the artifact's native code from exactly this module, so both ways of loading an
/// artifact run the same code.
pub fn prepare_artifact_module(artifact: &Artifact) -> Module {
    drs_opt::prepare_for_backend(&artifact.module, opt_level(&artifact.opt))
}

/// Native code of `prepared` (see [`prepare_artifact_module`]) for this host at `lanes`, as an
/// artifact stores it.
pub fn native_code_for_artifact(prepared: &Module, lanes: Lanes) -> Result<NativeCode, Error> {
    let native = NativeModule::compile(prepared, &Options::new(lanes))?;
    Ok(NativeCode { target: native.target().to_string(), lanes: lanes.count() as u32, code: native.to_bytes() })
}

/// The artifact's native code for `lanes` that runs on this host, if it has one (entries that
/// are damaged or for another target are skipped).
pub fn native_for_host(artifact: &Artifact, lanes: Lanes) -> Option<NativeModule> {
    let host = Target::host().ok()?;
    artifact
        .native
        .iter()
        .filter(|n| n.lanes as usize == lanes.count())
        .filter_map(|n| NativeModule::from_bytes(&n.code).ok())
        .find(|m| m.lanes() == lanes && m.target().incompatibility(host).is_none())
}

impl Jit {
    /// Loads an artifact's code for `lanes`: its native code if it has code that runs on this
    /// host ([`native_for_host`]), else its IR compiled ([`prepare_artifact_module`]).
    pub fn from_artifact(artifact: &Artifact, lanes: Lanes) -> Result<Jit, Error> {
        if let Some(jit) = native_for_host(artifact, lanes).and_then(|n| n.load().ok()) {
            return Ok(jit);
        }
        Jit::compile(&prepare_artifact_module(artifact), lanes)
    }
}

impl KernelCache {
    /// [`Jit::from_artifact`] through the cache: the same `Arc` for the same artifact content
    /// and lanes while in memory; an artifact without native code for this host is prepared
    /// and compiled through [`KernelCache::get_or_prepare`] (so it also uses the disk cache,
    /// and a hit there skips the preparation).
    pub fn get_or_load_artifact(&self, artifact: &Artifact, lanes: Lanes) -> Result<Arc<Jit>, Error> {
        let mut h = CacheKey::hasher(b"artifact")?;
        h.update(&artifact.content_hash());
        h.update(&[lanes.count() as u8]);
        self.get_or_insert_with(CacheKey::from_hasher(h), || {
            if let Some(jit) = native_for_host(artifact, lanes).and_then(|n| n.load().ok()) {
                return Ok(Arc::new(jit));
            }
            let level = opt_level(&artifact.opt);
            let preparation = format!("drs_opt::prepare_for_backend({level:?})");
            self.get_or_prepare(&artifact.module, preparation.as_bytes(), &Options::new(lanes), |module| {
                drs_opt::prepare_for_backend(module, level)
            })
        })
    }
}
