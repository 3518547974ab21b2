//! Films, reconstruction filters, image input/output and the counter-based samplers of the drs
//! runtime, following Mitsuba 3's definitions (`hdrfilm`, the `box`/`gaussian`/`tent` rfilters,
//! the `independent`/`stratified` samplers).
//!
//! A render splits the [`Film`] into [`Tile`]s; each tile accumulates samples privately in an
//! [`ImageBlock`] (the tile plus a border for the filter's footprint), and the blocks are merged
//! in a fixed order ([`Film::render_tiles`]), so the result is bit-identical for any number of
//! threads. Random numbers come from a [`Sampler`]: every (pixel, sample, pass, seed) has its own
//! [`SampleStream`], which can be regenerated to replay a sample exactly.

mod block;
mod color;
pub mod compare;
mod error;
mod film;
mod filter;
mod image;
mod load;
mod ordered;
mod sampler;
mod save;
mod tiles;

pub use block::{ImageBlock, SumsAdjoint};
pub use color::{linear_to_srgb, linear_to_srgb8, srgb_to_linear};
pub use error::{FilmError, ImageError};
pub use film::Film;
pub use filter::{ReconstructionFilter, MAX_FILTER_RADIUS};
pub use image::Image;
pub use load::{load_exr, load_image, load_image_raw};
pub use ordered::fold_in_order;
pub use sampler::{stratified_sample_count, SampleStream, Sampler, SamplerKind, Xoshiro128};
pub use save::{write_atomically, write_image};
pub use tiles::{tiles, Tile, TileOrder};
