//! The crate's two error types: one for images (files and shapes), one for configuration.

use std::path::PathBuf;

/// Reading, writing or combining images failed. Every error about a file names the file.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot decode image: {reason}", path.display())]
    Decode { path: PathBuf, reason: String },
    #[error("{}: cannot encode image: {reason}", path.display())]
    Encode { path: PathBuf, reason: String },
    #[error("{}: unsupported image format (expected one of {expected})", path.display())]
    UnsupportedFormat { path: PathBuf, expected: &'static str },
    #[error("{}: no colour channels (expected R, G, B or Y; found {found})", path.display())]
    MissingColorChannels { path: PathBuf, found: String },
    /// Pixel data that does not fit the stated size, or two images of different shapes.
    #[error("{0}")]
    Shape(String),
}

/// A film, filter, tiling or sampler was configured with values it cannot work with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FilmError {
    #[error(
        "{filter} filter: `{parameter}` must be positive and give a radius of at most {} pixels, got {value}",
        crate::MAX_FILTER_RADIUS
    )]
    InvalidFilterParameter { filter: &'static str, parameter: &'static str, value: f32 },
    #[error("film size must be at least 1x1, got {width}x{height}")]
    EmptyFilm { width: u32, height: u32 },
    #[error("a {width}x{height} film does not fit in memory")]
    TooLarge { width: u32, height: u32 },
    #[error("film channel `{0}` is given twice")]
    DuplicateChannel(String),
    #[error("film channel `{0}` is reserved for colour and weight (R, G, B, W)")]
    ReservedChannel(String),
    #[error("tile size must be at least 1")]
    InvalidTileSize,
    #[error("sample_count must be at least 1")]
    ZeroSampleCount,
    #[error("sample_count {0} is too large for a stratified sampler (its square grid would exceed 2^32 samples)")]
    SampleCountTooLarge(u32),
}
