//! Reading images: OpenEXR (the `exr` crate), Radiance HDR, PNG and JPEG (the `image` crate),
//! chosen by file extension. Results are linear f32 values; 8-bit formats are sRGB-decoded.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use crate::color::srgb_to_linear;
use crate::image::rgb_channel_names;
use crate::{Image, ImageError};

const READABLE: &str = ".exr, .hdr, .png, .jpg, .jpeg";

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Exr,
    Hdr,
    Png,
    Jpeg,
}

/// An RGB image (channels `R`, `G`, `B`) with linear values, as environment maps and bitmap
/// textures need it. EXR files give their `R`, `G`, `B` channels (or `Y`, repeated); PNG and
/// JPEG are decoded from sRGB; alpha is dropped, grey is repeated into the three channels.
pub fn load_image(path: impl AsRef<Path>) -> Result<Image, ImageError> {
    load(path.as_ref(), true)
}

/// Like [`load_image`], but 8-bit formats keep their stored values (`code / 255`) instead of
/// being sRGB-decoded: Mitsuba's `raw` bitmaps, for data such as normal or roughness maps.
pub fn load_image_raw(path: impl AsRef<Path>) -> Result<Image, ImageError> {
    load(path.as_ref(), false)
}

/// Every channel of the first layer of an OpenEXR file, as f32, with `R`, `G`, `B` first (when
/// present) and the others in the file's (alphabetical) order. Used for reference images and
/// for films written with AOVs.
pub fn load_exr(path: impl AsRef<Path>) -> Result<Image, ImageError> {
    use exr::prelude::{ReadChannels, ReadLayers};

    let path = path.as_ref();
    let reader = open(path)?;
    let decode_error = |reason: String| ImageError::Decode { path: path.to_owned(), reason };
    let exr = exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .from_buffered(reader)
        .map_err(|error| decode_error(error.to_string()))?;
    let layer = exr.layer_data;
    let (width, height) = (layer.size.width(), layer.size.height());
    let (Ok(width32), Ok(height32)) = (u32::try_from(width), u32::try_from(height)) else {
        return Err(decode_error(format!("{width}x{height} pixels is too large")));
    };

    let mut channels: Vec<_> = layer.channel_data.list.iter().collect();
    // Stable sort: R, G, B first, the rest as stored.
    channels.sort_by_key(|channel| ["R", "G", "B"].iter().position(|name| channel.name.eq(name)).unwrap_or(3));
    let pixel_count = width * height;
    let mut columns = Vec::with_capacity(channels.len());
    for channel in &channels {
        if channel.sample_data.len() != pixel_count {
            return Err(decode_error(format!("channel `{}` is subsampled, which is not supported", channel.name)));
        }
        columns.push(channel.sample_data.values_as_f32().collect::<Vec<f32>>());
    }
    let data = (0..pixel_count).flat_map(|i| columns.iter().map(move |column| column[i])).collect();
    let names = channels.iter().map(|channel| channel.name.to_string()).collect();
    Image::new(width32, height32, names, data).map_err(|error| decode_error(error.to_string()))
}

fn load(path: &Path, srgb_decode: bool) -> Result<Image, ImageError> {
    match format_of(path) {
        Some(Format::Exr) => {
            let image = load_exr(path)?;
            let Some(indices) = image.color_channel_indices() else {
                return Err(ImageError::MissingColorChannels {
                    path: path.to_owned(),
                    found: image.channels().join(", "),
                });
            };
            image.select_channels(&indices, rgb_channel_names())
        }
        Some(format @ (Format::Hdr | Format::Png | Format::Jpeg)) => {
            let image_format = match format {
                Format::Hdr => image::ImageFormat::Hdr,
                Format::Png => image::ImageFormat::Png,
                _ => image::ImageFormat::Jpeg,
            };
            let decoded = image::ImageReader::with_format(open(path)?, image_format)
                .decode()
                .map_err(|error| ImageError::Decode { path: path.to_owned(), reason: error.to_string() })?;
            let rgb = decoded.to_rgb32f();
            let (width, height) = rgb.dimensions();
            let mut data = rgb.into_raw();
            if format != Format::Hdr && srgb_decode {
                data.iter_mut().for_each(|value| *value = srgb_to_linear(*value));
            }
            Image::from_rgb(width, height, data)
                .map_err(|error| ImageError::Decode { path: path.to_owned(), reason: error.to_string() })
        }
        None => Err(ImageError::UnsupportedFormat { path: path.to_owned(), expected: READABLE }),
    }
}

fn format_of(path: &Path) -> Option<Format> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    match extension.as_str() {
        "exr" => Some(Format::Exr),
        "hdr" => Some(Format::Hdr),
        "png" => Some(Format::Png),
        "jpg" | "jpeg" => Some(Format::Jpeg),
        _ => None,
    }
}

fn open(path: &Path) -> Result<BufReader<File>, ImageError> {
    File::open(path).map(BufReader::new).map_err(|source| ImageError::Io { path: path.to_owned(), source })
}
