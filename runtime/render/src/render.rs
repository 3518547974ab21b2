//! The render loop: film tiles in parallel (rayon), each tile's samples run through the
//! kernel in batches of lanes, splatted into the tile's block with the film's filter.
//!
//! Each sample's random numbers come from the counter-based sampler keyed by (seed, pixel,
//! sample index, pass), and blocks are merged in tile order, so an image depends on the seed
//! and never on the number of threads or the scheduling.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use drs_cranelift::{Buffer, CodeGenerator, Lanes};
use drs_film::{Film, Image, ImageBlock, SampleStream, Sampler, Tile, TileOrder};

use crate::error::RenderError;
use crate::kernel::Kernel;
use crate::scene::Scene;
use crate::streams::BatchStreams;

/// Samples per kernel call: enough lanes to amortise the call and the refill's drain at its
/// end (16 lanes drain for as long as the longest of their last paths), few enough to stay in
/// cache. 1024 rendered 1.5% faster than 256 at 16 lanes and the same at 4; 4096 gained no
/// more (docs/benchmarks.md, session 37).
pub(crate) const BATCH: usize = 1024;

/// The lanes of a tile's largest batch: a tile of a low-spp pass (64 samples for 8x8 pixels at
/// 1 spp) needs buffers for its own samples, not for a whole [`BATCH`].
pub(crate) fn batch_lanes(tile: Tile, spp: u32) -> usize {
    BATCH.min(tile.width as usize * tile.height as usize * spp as usize)
}

/// Film tiles per render at least. A render ends when its last tile does, so the tiles must be
/// small next to each thread's share: with 64 tiles of 32 pixels for a 256x256 film, 16 threads
/// rendered 7–14% slower than with 1024 tiles of 8 (docs/benchmarks.md, session 21).
const MIN_TILES: u64 = 1024;
/// Sample streams seeded side by side (see [`Sampler::streams`]).
const SEED_LANES: usize = 8;
/// Camera rays made side by side (see [`crate::PerspectiveCamera::rays`]).
const RAY_LANES: usize = 8;
/// Kernel arguments per lane: integrator instance, scene, sampler, ray (o, d, maxt, time).
pub(crate) const ARGS: usize = 11;
/// Kernel results per lane: colour and the valid flag (then the AOV values, if any).
pub(crate) const RESULTS: usize = 4;

/// How to render.
pub struct RenderOptions<'p> {
    /// Samples per pixel (default: the scene's sampler).
    pub spp: Option<u32>,
    /// Seed of the random numbers (default: the scene's sampler).
    pub seed: Option<u32>,
    /// Worker threads (default: rayon's, one per core).
    pub threads: Option<usize>,
    pub lanes: Lanes,
    /// Who compiles the kernel (Cranelift unless another is chosen, such as drs-llvm's).
    pub generator: CodeGenerator,
    /// Called after each finished tile with (tiles done, tiles in all).
    pub progress: Option<&'p (dyn Fn(u64, u64) + Sync)>,
}

impl Default for RenderOptions<'_> {
    fn default() -> Self {
        RenderOptions {
            spp: None,
            seed: None,
            threads: None,
            lanes: Lanes::X4,
            generator: CodeGenerator::CRANELIFT,
            progress: None,
        }
    }
}

/// The side of the tiles a render splits its film into: the largest of 32, 16 and 8 pixels that
/// gives [`MIN_TILES`] tiles, else 8, since smaller blocks would be mostly filter border. It
/// depends on the film's size alone, never on the thread count, so neither does the image.
pub(crate) fn tile_size(film: &Film) -> u32 {
    [32, 16].into_iter().find(|&size| tile_count(film, size) >= MIN_TILES).unwrap_or(8)
}

/// How many tiles of `size` pixels cover the film.
pub(crate) fn tile_count(film: &Film, size: u32) -> u64 {
    u64::from(film.width().div_ceil(size)) * u64::from(film.height().div_ceil(size))
}

impl Scene {
    /// Renders the scene's sensor into an RGB image.
    pub fn render(&self, options: &RenderOptions) -> Result<Image, RenderError> {
        self.update_tables()?;
        let kernel = self.kernel(options)?;
        let entry = kernel.jit.function_by_id(kernel.entry).map_err(|e| RenderError::Kernel(e.to_string()))?;
        let expected = self.result_width();
        if entry.results().len() != expected {
            return Err(RenderError::Link(format!(
                "the integrator's entry returns {} values per sample, the renderer reads {expected} (colour, valid flag{})",
                entry.results().len(),
                if self.aovs.is_some() { " and the AOV values of stdlib/integrators/aov.drs" } else { "" }
            )));
        }
        let buffers = self.param_buffers(&kernel);
        let sampler = self.sample_generator(options)?;
        let spp = sampler.sample_count();
        let mut film = self.new_film(self.aovs.as_ref().map(|a| a.names.clone()).unwrap_or_default())?;
        let tiles = film.tiles(tile_size(&film), TileOrder::Spiral).map_err(|e| RenderError::Film(e.to_string()))?;
        let done = AtomicU64::new(0);
        let total = tiles.len() as u64;
        let render_tile = |block: &mut ImageBlock| -> Result<(), RenderError> {
            self.render_block(block, &sampler, spp, |n, args, results, streams| {
                entry
                    .call_batch(n, args, results, &kernel.with_streams(&buffers, streams), &kernel.externs)
                    .map_err(|e| RenderError::Kernel(e.to_string()))
            })?;
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(progress) = options.progress {
                progress(finished, total);
            }
            Ok(())
        };
        let pool = self.thread_pool(options)?;
        pool.install(|| film.render_tiles(&tiles, render_tile))?;
        Ok(film.develop())
    }

    /// The kernel's buffers: the scene's parameter buffers it reads, in its order (its
    /// sample streams empty: [`Kernel::with_streams`] gives each batch its own).
    pub(crate) fn param_buffers(&self, kernel: &Kernel) -> Vec<Buffer<'_>> {
        kernel.buffers.iter().map(|name| Buffer::new(self.params.buffer(name))).collect()
    }

    /// The kernel results per lane: [`RESULTS`], then the AOV values if the scene has AOVs.
    fn result_width(&self) -> usize {
        RESULTS + if self.aovs.is_some() { crate::aov::value_count() } else { 0 }
    }

    /// The sample generator of a pass: the scene's sampler with the options' count and seed.
    pub(crate) fn sample_generator(&self, options: &RenderOptions) -> Result<Sampler, RenderError> {
        let base = self.sampler();
        let spp = options.spp.unwrap_or(base.sample_count());
        let seed = options.seed.unwrap_or(base.seed());
        match base.kind() {
            drs_film::SamplerKind::Independent => Sampler::independent(spp, seed),
            drs_film::SamplerKind::Stratified { jitter } => Sampler::stratified(spp, seed, jitter),
        }
        .map_err(|e| RenderError::Film(e.to_string()))
    }

    /// An empty film of the scene's size and filter, with extra channels after R, G, B.
    pub(crate) fn new_film(&self, extra_channels: Vec<String>) -> Result<Film, RenderError> {
        let film = self.film();
        Film::new(film.width, film.height, film.filter, extra_channels)
            .map_err(|e| RenderError::Scene(vec![film.error(e.to_string())]))
    }

    /// The worker pool of a pass, built on the scene's first pass with that thread count and
    /// kept: a new pool per pass started its threads again every time, and their thread-local
    /// sample-stream tables grew again from empty.
    pub(crate) fn thread_pool(&self, options: &RenderOptions) -> Result<Arc<rayon::ThreadPool>, RenderError> {
        let threads = options.threads.unwrap_or(0);
        let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pool) = pools.get(&threads) {
            return Ok(pool.clone());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| RenderError::Kernel(format!("cannot start the worker threads: {e}")))?;
        let pool = Arc::new(pool);
        pools.insert(threads, pool.clone());
        Ok(pool)
    }

    /// Runs every sample of the block's tile through `run(n, args, results, streams)` and
    /// splats the resulting colours into the block.
    fn render_block(
        &self,
        block: &mut ImageBlock,
        sampler: &Sampler,
        spp: u32,
        run: impl Fn(usize, &[u32], &mut [u32], &mut [u32]) -> Result<(), RenderError>,
    ) -> Result<(), RenderError> {
        let aov_values = self.aovs.as_ref().map(|a| a.values.as_slice()).unwrap_or_default();
        let width = self.result_width();
        let mut results = vec![0u32; width * batch_lanes(block.tile(), spp)];
        let mut extra = vec![0f32; aov_values.len()];
        self.for_each_batch(block.tile(), sampler, spp, |n, args, positions, streams| {
            let results = &mut results[..width * n];
            run(n, args, results, streams)?;
            for (lane, &pos) in positions.iter().enumerate() {
                let rgb = [0, 1, 2].map(|c| f32::from_bits(results[c * n + lane]));
                for (e, &k) in extra.iter_mut().zip(aov_values) {
                    *e = f32::from_bits(results[(RESULTS + k) * n + lane]);
                }
                block.put(pos, rgb, &extra);
            }
            Ok(())
        })
    }

    /// Prepares the samples of `tile` in batches of at most [`BATCH`] lanes and hands each to
    /// `batch(n, args, positions, streams)`: the kernel's primal arguments ([`ARGS`] per lane,
    /// parameter-major: `args[p * n + lane]`), each sample's film position and the contents of
    /// the batch's sample-stream buffer (`streams.rs`: the independent sampler's streams, which
    /// this thread's host streams hold too), the camera sample already drawn from the streams.
    pub(crate) fn for_each_batch(
        &self,
        tile: Tile,
        sampler: &Sampler,
        spp: u32,
        mut batch: impl FnMut(usize, &[u32], &[[f32; 2]], &mut [u32]) -> Result<(), RenderError>,
    ) -> Result<(), RenderError> {
        let pixels: Vec<(u32, u32)> = tile.pixels().collect();
        let total = pixels.len() * spp as usize;
        let (width, height) = (self.film.width, self.film.height);
        let instance = self.integrator.1;
        let lanes = batch_lanes(tile, spp);
        let mut args = vec![0u32; ARGS * lanes];
        let mut positions = vec![[0f32; 2]; lanes];
        let mut stream_words = Vec::new();
        for start in (0..total).step_by(BATCH) {
            let n = BATCH.min(total - start);
            let args = &mut args[..ARGS * n];
            {
                let mut streams = BatchStreams::start(&mut stream_words, n, sampler);
                seed_samples(sampler, &pixels, spp, width, start..start + n, |lane, pos, stream| {
                    positions[lane] = pos;
                    streams.add(stream);
                });
            }
            // Parameter-major (args[p * n + lane]): integrator instance, scene, sample stream,
            // the camera ray's o, d and maxt, time.
            let mut columns = args.chunks_exact_mut(n);
            let [integrator, scene, stream] = std::array::from_fn(|_| columns.next().expect("ARGS columns"));
            let mut ray_columns: [&mut [u32]; 7] = std::array::from_fn(|_| columns.next().expect("ARGS columns"));
            let time = columns.next().expect("ARGS columns");
            integrator.fill(instance);
            scene.fill(0);
            for (lane, handle) in stream.iter_mut().enumerate() {
                *handle = lane as u32;
            }
            time.fill(0f32.to_bits());
            let film_size = [width as f32, height as f32];
            for (chunk, at) in positions[..n].chunks(RAY_LANES).zip((0..n).step_by(RAY_LANES)) {
                // A short chunk repeats its last position.
                let uv: [[f32; RAY_LANES]; 2] = std::array::from_fn(|axis| {
                    std::array::from_fn(|l| chunk[l.min(chunk.len() - 1)][axis] / film_size[axis])
                });
                let rays = self.camera.rays(&uv);
                let values = rays.o.iter().chain(&rays.d).chain([&rays.maxt]);
                for (column, values) in ray_columns.iter_mut().zip(values) {
                    for (arg, value) in column[at..at + chunk.len()].iter_mut().zip(values) {
                        *arg = value.to_bits();
                    }
                }
            }
            batch(n, args, &positions[..n], &mut stream_words)?;
        }
        Ok(())
    }

    /// The film position of each sample of `tile`, in the order of [`Self::for_each_batch`]:
    /// its camera sample, without the ray and the arguments.
    pub(crate) fn for_each_position(&self, tile: Tile, sampler: &Sampler, spp: u32, mut f: impl FnMut([f32; 2])) {
        let pixels: Vec<(u32, u32)> = tile.pixels().collect();
        let total = pixels.len() * spp as usize;
        seed_samples(sampler, &pixels, spp, self.film.width, 0..total, |_, pos, _| f(pos));
    }
}

/// Seeds the streams of the samples `samples` of the pixels `pixels` (`spp` samples each, pixel
/// by pixel) and draws their camera samples: calls `lane(i, film position, stream)` for the
/// `i`-th of them. The seeding runs [`SEED_LANES`] samples side by side.
fn seed_samples(
    sampler: &Sampler,
    pixels: &[(u32, u32)],
    spp: u32,
    film_width: u32,
    samples: std::ops::Range<usize>,
    mut lane: impl FnMut(usize, [f32; 2], SampleStream),
) {
    let n = samples.len();
    for first in (0..n).step_by(SEED_LANES) {
        // The pixel and sample index of up to SEED_LANES lanes (a short chunk repeats its last).
        let chunk: [((u32, u32), u32); SEED_LANES] = std::array::from_fn(|l| {
            let index = samples.start + (first + l).min(n - 1);
            (pixels[index / spp as usize], (index % spp as usize) as u32)
        });
        let streams = sampler.streams(chunk.map(|((x, y), _)| y * film_width + x), chunk.map(|s| s.1), 0);
        for ((i, ((x, y), _)), mut stream) in (first..n).zip(chunk).zip(streams) {
            let [dx, dy] = stream.next_2d();
            lane(i, [x as f32 + dx, y as f32 + dy], stream);
        }
    }
}

#[cfg(test)]
mod tests {
    use drs_film::{Film, ReconstructionFilter};

    use super::{batch_lanes, tile_size, BATCH};

    /// A batch never has more lanes than its tile has samples, nor more than BATCH.
    #[test]
    fn batches_are_sized_by_the_tile_samples() {
        let tile = |width, height| drs_film::Tile { x: 0, y: 0, width, height };
        assert_eq!(batch_lanes(tile(8, 8), 1), 64);
        assert_eq!(batch_lanes(tile(8, 7), 2), 112);
        assert_eq!(batch_lanes(tile(8, 8), 16), BATCH);
        assert_eq!(batch_lanes(tile(32, 32), 1), BATCH);
    }

    /// Small films get small tiles, enough of them to keep every thread busy to the end; large
    /// films keep tiles of 32 pixels, so that their blocks' borders stay a small overhead.
    #[test]
    fn tile_size_gives_enough_tiles_for_the_film() {
        let size = |width, height| {
            tile_size(&Film::new(width, height, ReconstructionFilter::default(), Vec::<String>::new()).unwrap())
        };
        assert_eq!(size(256, 256), 8);
        assert_eq!(size(512, 512), 16);
        assert_eq!(size(640, 480), 16);
        assert_eq!(size(1024, 1024), 32);
        assert_eq!(size(1920, 1080), 32);
        assert_eq!(size(1, 1), 8);
    }
}
