//! The reverse pass: gradients of a loss with respect to the scene parameters whose gradients
//! are enabled, given the loss's adjoint image (design.md §5).
//!
//! The film develops pixel `p` as `Σ_i w_ip L_i / W_p` (filter weights `w`, weight sums `W`),
//! and the weights do not depend on the parameters, so sample `i` receives the radiance
//! adjoint `δL_i = Σ_p δy_p w_ip / W_p`. A first pass over the samples' film positions gives
//! `W` for this pass's seed; the second runs the integrator's reverse-mode derivative (its
//! `@custom_bwd` adjoint) on every sample with `δL_i`, which scatter-adds into the gradient
//! buffers `{buffer}.grad`. An integrator with a replay (`sample_replay`: `prb`, `rb`) runs
//! instead as two kernels per batch of samples: `sample`, then the replay given `sample`'s
//! results and the same random numbers, so that each walk is a loop with full lane groups (in
//! a single adjoint kernel, a group's lanes wait for its longest path in each walk). Each tile
//! has its own gradient buffers, summed in tile order as the tiles finish ([`fold_in_order`]),
//! so gradients do not depend on the thread count.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use drs_cranelift::Buffer;
use drs_film::{fold_in_order, Film, Image, ImageBlock, TileOrder};

use crate::error::RenderError;
use crate::kernel::IntegratorKernel;
use crate::render::{batch_lanes, tile_count, tile_size, RenderOptions, ARGS, RESULTS};
use crate::scene::Scene;
use crate::streams::{with_host_streams, HostStreams};

/// Suffix of the gradient buffer of a parameter buffer (spec/derivatives.md § Scene parameters).
const GRAD_SUFFIX: &str = ".grad";

/// Gradients of the parameters whose gradients were enabled, by key, each with one value per
/// scalar of the parameter (as [`ParamStore::values`](crate::ParamStore::values)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gradients {
    values: Vec<(String, Vec<f32>)>,
}

impl Gradients {
    pub fn get(&self, key: &str) -> Option<&[f32]> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
    }

    /// (key, gradient) in the order the gradients were enabled.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[f32])> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }
}

impl Scene {
    /// Gradients of a loss with respect to every parameter whose gradient is enabled
    /// ([`ParamStore::enable_grad`](crate::ParamStore::enable_grad)), given `adjoint`, the
    /// derivative of the loss with respect to each pixel and channel of the rendered image (RGB,
    /// the film's size). The samples are those a render with the same options would take: use
    /// a seed different from the primal render's, as path replay requires for unbiased
    /// gradients of non-linear losses.
    pub fn backward(&self, adjoint: &Image, options: &RenderOptions) -> Result<Gradients, RenderError> {
        let film_desc = self.film();
        if (adjoint.width(), adjoint.height()) != (film_desc.width, film_desc.height) || adjoint.channel_count() < 3 {
            return Err(RenderError::Film(format!(
                "the adjoint image is {}x{} with {} channels; the film is {}x{} RGB",
                adjoint.width(),
                adjoint.height(),
                adjoint.channel_count(),
                film_desc.width,
                film_desc.height
            )));
        }
        self.update_tables()?;
        // With a replay, the render kernel first gives each sample's (colour, valid). (A scene
        // with AOVs renders through `sample_aovs`, whose results are more than that: it takes
        // the adjoint, which adds the same gradients.)
        let primal = if self.has_replay() && self.aovs.is_none() {
            Some(self.kernel_for(options, IntegratorKernel::Render)?)
        } else {
            None
        };
        let which = if primal.is_some() { IntegratorKernel::Replay } else { IntegratorKernel::Adjoint };
        let kernel = self.kernel_for(options, which)?;
        let entry = kernel.jit.function_by_id(kernel.entry).map_err(|e| RenderError::Kernel(e.to_string()))?;
        let primal_entry = match &primal {
            Some(primal) => {
                let entry = primal.jit.function_by_id(primal.entry).map_err(|e| RenderError::Kernel(e.to_string()))?;
                Some((primal, entry, self.param_buffers(primal)))
            }
            None => None,
        };
        // The adjoint entry's arguments after the primal ones: the primal results for a replay,
        // then the adjoint of the colour (for `bwd_diff(sample)`, that of (colour, valid): the
        // flag's is ignored).
        let out_args = if primal.is_some() { RESULTS } else { 0 };
        let adjoint_args = match entry.params().len().checked_sub(ARGS + out_args) {
            Some(count @ 3..=4) => count,
            _ => {
                return Err(RenderError::Link(format!(
                    "the integrator's {which:?} kernel takes {} values per sample, the renderer passes {} and the \
                     colour's adjoint",
                    entry.params().len(),
                    ARGS + out_args
                )))
            }
        };
        let result_count = entry.results().len();
        let sampler = self.sample_generator(options)?;
        let spp = sampler.sample_count();
        let pool = self.thread_pool(options)?;

        // Gradient buffers: only those of enabled parameters are allocated; the others are
        // empty, and the kernel drops adds out of range.
        let grad_lens: Vec<usize> = kernel
            .buffers
            .iter()
            .map(|name| match name.strip_suffix(GRAD_SUFFIX) {
                Some(param) if self.params.grad_enabled().any(|info| info.buffers.iter().any(|b| b == param)) => {
                    self.params.buffer(param).len()
                }
                _ => 0,
            })
            .collect();

        // Pass 1: the film's weight sums for these samples, and the adjoint divided by them.
        let mut film = self.new_film(Vec::new())?;
        let tile_size = backward_tile_size(&film, grad_lens.iter().sum(), spp);
        let tiles = film.tiles(tile_size, TileOrder::Spiral).map_err(|e| RenderError::Film(e.to_string()))?;
        pool.install(|| {
            film.render_tiles(&tiles, |block: &mut ImageBlock| {
                self.for_each_position(block.tile(), &sampler, spp, |pos| block.put(pos, [0.0; 3], &[]));
                Ok(())
            })
        })?;
        let sums_adjoint = film.sums_adjoint(adjoint).map_err(|e| RenderError::Film(e.to_string()))?;

        // Pass 2: the reverse-mode kernel (or `sample` and the replay) on every sample, per
        // tile, each tile with its own gradient buffers.
        let done = AtomicU64::new(0);
        let total = tiles.len() as u64;
        let backward_tile = |tile| -> Result<Vec<Vec<f32>>, RenderError> {
            let mut grads: Vec<Vec<f32>> = grad_lens.iter().map(|&len| vec![0.0; len]).collect();
            {
                let mut grad_buffers = grads.iter_mut();
                let buffers: Vec<Buffer> = kernel
                    .buffers
                    .iter()
                    .map(|name| {
                        let grad = grad_buffers.next().expect("one gradient slot per buffer");
                        if name.ends_with(GRAD_SUFFIX) {
                            Buffer::from_f32_mut(grad)
                        } else {
                            Buffer::new(self.params.buffer(name))
                        }
                    })
                    .collect();
                let lanes = batch_lanes(tile, spp);
                let width = ARGS + out_args + adjoint_args;
                let mut args = vec![0u32; width * lanes];
                let mut results = vec![0u32; result_count * lanes];
                let mut primal_results = vec![0u32; out_args * lanes];
                let mut saved = (HostStreams::default(), Vec::new());
                self.for_each_batch(tile, &sampler, spp, |n, primal, positions, streams| {
                    let args = &mut args[..width * n];
                    args[..ARGS * n].copy_from_slice(primal);
                    args[ARGS * n..].fill(0);
                    if let Some((kernel, entry, buffers)) = &primal_entry {
                        // The replay draws the random numbers `sample` drew: from the streams
                        // as they were before it.
                        with_host_streams(|s| saved.0.clone_from(s));
                        saved.1.clear();
                        saved.1.extend_from_slice(streams);
                        let out = &mut primal_results[..out_args * n];
                        entry
                            .call_batch(n, primal, out, &kernel.with_streams(buffers, streams), &kernel.externs)
                            .map_err(|e| RenderError::Kernel(e.to_string()))?;
                        with_host_streams(|s| s.clone_from(&saved.0));
                        streams.copy_from_slice(&saved.1);
                        args[ARGS * n..(ARGS + out_args) * n].copy_from_slice(out);
                    }
                    let first_adjoint = ARGS + out_args;
                    for (lane, &pos) in positions.iter().enumerate() {
                        let d_radiance = sums_adjoint.gather(pos);
                        for (c, v) in d_radiance.iter().enumerate().take(adjoint_args) {
                            args[(first_adjoint + c) * n + lane] = v.to_bits();
                        }
                    }
                    let buffers = kernel.with_streams(&buffers, streams);
                    entry
                        .call_batch(n, args, &mut results[..result_count * n], &buffers, &kernel.externs)
                        .map_err(|e| RenderError::Kernel(e.to_string()))
                })?;
            }
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(progress) = options.progress {
                progress(finished, total);
            }
            Ok(grads)
        };
        // Summed in tile order as the tiles finish, so that only tiles that finished ahead of an
        // earlier one keep their buffers: about one set per thread, not one per tile.
        let mut sums: Vec<Vec<f32>> = grad_lens.iter().map(|&len| vec![0.0; len]).collect();
        pool.install(|| {
            fold_in_order(
                &tiles,
                |&tile| backward_tile(tile),
                |grads| {
                    for (sum, grad) in sums.iter_mut().zip(&grads) {
                        for (s, g) in sum.iter_mut().zip(grad) {
                            *s += g;
                        }
                    }
                },
            )
        })?;

        // Read each enabled parameter's elements.
        let merged: HashMap<&str, Vec<f32>> = kernel
            .buffers
            .iter()
            .zip(sums)
            .filter_map(|(name, sum)| Some((name.strip_suffix(GRAD_SUFFIX)?, sum)))
            .collect();
        let values = self
            .params
            .grad_enabled()
            .map(|info| {
                let grad = self
                    .params
                    .elements(info)
                    .into_iter()
                    .map(|(b, i)| merged.get(b).and_then(|g| g.get(i)).copied().unwrap_or(0.0))
                    .collect();
                (info.key.clone(), grad)
            })
            .collect();
        Ok(Gradients { values })
    }
}

/// The side of the backward pass's tiles: the render's ([`tile_size`]), unless summing the
/// tiles' gradient buffers (`grad_len` values per tile) would then take more additions than the
/// pass has samples; then the next larger, up to 32 pixels.
fn backward_tile_size(film: &Film, grad_len: usize, spp: u32) -> u32 {
    let samples = u64::from(film.width()) * u64::from(film.height()) * u64::from(spp);
    let render = tile_size(film);
    [8, 16, 32]
        .into_iter()
        .filter(|&size| size >= render)
        .find(|&size| tile_count(film, size).saturating_mul(grad_len as u64) <= samples)
        .unwrap_or(32)
}

#[cfg(test)]
mod tests {
    use drs_film::{Film, ReconstructionFilter};

    use super::backward_tile_size;

    /// Small gradient buffers keep the render's tiles; large ones get larger tiles, so that
    /// summing the tiles' buffers costs no more additions than the pass has samples.
    #[test]
    fn backward_tiles_grow_with_the_gradient_buffers() {
        let film = Film::new(256, 256, ReconstructionFilter::default(), Vec::<String>::new()).unwrap();
        assert_eq!(backward_tile_size(&film, 3, 16), 8);
        assert_eq!(backward_tile_size(&film, 64 * 64 * 3, 16), 32);
        assert_eq!(backward_tile_size(&film, 2048, 16), 16);
        assert_eq!(backward_tile_size(&film, 1 << 30, 1), 32);
        let large = Film::new(1920, 1080, ReconstructionFilter::default(), Vec::<String>::new()).unwrap();
        assert_eq!(backward_tile_size(&large, 3, 1), 32);
    }
}
