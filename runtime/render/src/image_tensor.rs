//! Image files as the data of `Tensor` params (a bitmap's texels), as Mitsuba's `bitmap`
//! plugin reads them: shape (height, width, channels) with rows from the top of the image,
//! one channel for grey images and three (`R`, `G`, `B`) for colour ones, alpha dropped.
//! OpenEXR and Radiance HDR files hold linear values; PNG and JPEG files are sRGB-encoded and
//! decoded to linear values unless `raw` (Mitsuba's `raw`, for data such as normal maps).

use std::path::Path;

use drs_film::{load_exr, srgb_to_linear};
use image::{ColorType, DynamicImage, ImageFormat, ImageReader};

use crate::params::TensorValue;

/// Reads `path` (by extension: `.exr`, `.hdr`, `.png`, `.jpg`, `.jpeg`) as a tensor.
pub fn load_image_tensor(path: &Path, raw: bool) -> Result<TensorValue, String> {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let format = match extension.as_deref() {
        Some("exr") => return load_exr_tensor(path),
        Some("hdr") => ImageFormat::Hdr,
        Some("png") => ImageFormat::Png,
        Some("jpg" | "jpeg") => ImageFormat::Jpeg,
        _ => {
            return Err(format!(
                "{}: unsupported image format (expected .exr, .hdr, .png, .jpg or .jpeg)",
                path.display()
            ))
        }
    };
    let reader = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let decoded = ImageReader::with_format(std::io::BufReader::new(reader), format)
        .decode()
        .map_err(|e| format!("{}: cannot decode image: {e}", path.display()))?;
    let srgb = format != ImageFormat::Hdr && !raw;
    tensor_of(decoded, srgb).map_err(|e| format!("{}: {e}", path.display()))
}

/// The pixels of a decoded PNG, JPEG or HDR image; `srgb`: decode sRGB-encoded values.
fn tensor_of(image: DynamicImage, srgb: bool) -> Result<TensorValue, String> {
    let (width, height) = (image.width(), image.height());
    let grey = matches!(image.color(), ColorType::L8 | ColorType::La8 | ColorType::L16 | ColorType::La16);
    let (channels, mut data) = match grey {
        true => (1, image.to_luma32f().into_raw()),
        false => (3, image.to_rgb32f().into_raw()),
    };
    if srgb {
        data.iter_mut().for_each(|v| *v = srgb_to_linear(*v));
    }
    TensorValue::new([height, width, channels], data)
}

/// An OpenEXR file's `R`, `G`, `B` channels, or else its `Y` channel.
fn load_exr_tensor(path: &Path) -> Result<TensorValue, String> {
    let image = load_exr(path).map_err(|e| e.to_string())?;
    let rgb: Option<Vec<usize>> = ["R", "G", "B"].iter().map(|c| image.channel_index(c)).collect();
    let indices = match (rgb, image.channel_index("Y")) {
        (Some(rgb), _) => rgb,
        (None, Some(y)) => vec![y],
        (None, None) => {
            return Err(format!(
                "{}: no colour channels (expected R, G, B or Y; found {})",
                path.display(),
                image.channels().join(", ")
            ))
        }
    };
    let stride = image.channel_count();
    let data = image.data().chunks_exact(stride).flat_map(|pixel| indices.iter().map(|&c| pixel[c])).collect();
    TensorValue::new([image.height(), image.width(), indices.len() as u32], data)
        .map_err(|e| format!("{}: {e}", path.display()))
}
