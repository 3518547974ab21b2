//! Writing images by file extension: `.exr` (every channel as f32) and `.png` (8-bit sRGB).
//! Files are written to a temporary file beside the target and renamed over it only once
//! complete, so a failed write never leaves a broken file or destroys the previous one.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::color::linear_to_srgb8;
use crate::{Image, ImageError};

const WRITABLE: &str = ".exr, .png";

/// Writes `image` in the format its extension names: `.exr` keeps every channel as f32 (ZIP
/// compressed); `.png` stores the colour channels (`R`, `G`, `B`, or `Y`) sRGB-encoded, clamped
/// to `[0, 1]`, 8 bits each.
pub fn write_image(path: impl AsRef<Path>, image: &Image) -> Result<(), ImageError> {
    let path = path.as_ref();
    let extension = path.extension().and_then(|extension| extension.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("exr") => write_atomically(path, |writer| write_exr(writer, image)),
        Some("png") => {
            let Some(indices) = image.color_channel_indices() else {
                return Err(ImageError::MissingColorChannels {
                    path: path.to_owned(),
                    found: image.channels().join(", "),
                });
            };
            write_atomically(path, |writer| write_png(writer, image, indices))
        }
        _ => Err(ImageError::UnsupportedFormat { path: path.to_owned(), expected: WRITABLE }),
    }
}

/// Runs `write` on a new temporary file in the target's directory; only when it succeeds (and
/// the data is flushed to disk) is the file renamed to `path`, replacing any file there.
/// Otherwise the temporary file is removed and `path` is untouched.
pub fn write_atomically(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), ImageError> {
    let path = path.as_ref();
    let io_error = |source: io::Error| ImageError::Io { path: path.to_owned(), source };
    let Some(file_name) = path.file_name() else {
        return Err(io_error(io::Error::new(io::ErrorKind::InvalidInput, "not a file name")));
    };
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(file_name);
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The temporary file is created private (0600) by default; ask for the usual 0666 less the
    // umask, so that the final file has the permissions any newly created file would have.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let (file, temp_path) = builder.tempfile_in(directory).map_err(io_error)?.into_parts();

    let mut writer = BufWriter::new(file);
    write(&mut writer)
        .and_then(|()| writer.flush())
        .map_err(|error| ImageError::Encode { path: path.to_owned(), reason: error.to_string() })?;
    let file = writer.into_inner().map_err(|error| io_error(error.into_error()))?;
    file.sync_all().map_err(io_error)?;
    temp_path.persist(path).map_err(|error| io_error(error.error))
}

fn write_exr(writer: &mut BufWriter<File>, image: &Image) -> io::Result<()> {
    use exr::prelude::*;

    let channel_count = image.channel_count();
    let channels = image
        .channels()
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let name = Text::new_or_none(name).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("channel name `{name}` is not Latin-1 text"))
            })?;
            let samples = image.data().iter().skip(c).step_by(channel_count).copied().collect();
            Ok(AnyChannel::new(name, FlatSamples::F32(samples)))
        })
        .collect::<io::Result<_>>()?;
    let size = (image.width() as usize, image.height() as usize);
    let layer = Layer::new(size, LayerAttributes::default(), Encoding::SMALL_LOSSLESS, AnyChannels::sort(channels));
    exr::prelude::Image::from_layer(layer).write().to_buffered(writer).map_err(io::Error::other)
}

fn write_png(writer: &mut BufWriter<File>, image: &Image, [r, g, b]: [usize; 3]) -> io::Result<()> {
    use image::ImageEncoder;

    let bytes: Vec<u8> = image
        .data()
        .chunks_exact(image.channel_count())
        .flat_map(|pixel| [pixel[r], pixel[g], pixel[b]])
        .map(linear_to_srgb8)
        .collect();
    image::codecs::png::PngEncoder::new(writer)
        .write_image(&bytes, image.width(), image.height(), image::ExtendedColorType::Rgb8)
        .map_err(io::Error::other)
}
