//! Measures for comparing a rendering with a reference, as the renderer's tests use them. All
//! sums are taken in f64 over every pixel and channel.

use crate::{Image, ImageError};

/// The ε in the relative MSE's denominator, `reference² + ε`: it keeps black reference pixels
/// from dominating the mean.
pub const RELATIVE_MSE_EPSILON: f64 = 1e-2;

/// The mean of every value of every channel.
pub fn mean(image: &Image) -> f64 {
    image.data().iter().map(|&value| f64::from(value)).sum::<f64>() / image.data().len() as f64
}

/// The mean of each channel, in the image's channel order.
pub fn channel_means(image: &Image) -> Vec<f64> {
    let channels = image.channel_count();
    let mut sums = vec![0.0; channels];
    for pixel in image.data().chunks_exact(channels) {
        for (sum, &value) in sums.iter_mut().zip(pixel) {
            *sum += f64::from(value);
        }
    }
    let pixels = image.data().len() / channels;
    sums.into_iter().map(|sum| sum / pixels as f64).collect()
}

/// `mean((image - reference)² / (reference² + ε))` with ε = [`RELATIVE_MSE_EPSILON`].
/// The images must have the same size and channels.
pub fn relative_mse(image: &Image, reference: &Image) -> Result<f64, ImageError> {
    mean_of(image, reference, |value, reference| {
        (value - reference).powi(2) / (reference * reference + RELATIVE_MSE_EPSILON)
    })
}

/// `mean(|image - reference|)`. The images must have the same size and channels.
pub fn mean_absolute_error(image: &Image, reference: &Image) -> Result<f64, ImageError> {
    mean_of(image, reference, |value, reference| (value - reference).abs())
}

fn mean_of(image: &Image, reference: &Image, error: impl Fn(f64, f64) -> f64) -> Result<f64, ImageError> {
    check_same_shape(image, reference)?;
    let total: f64 = image.data().iter().zip(reference.data()).map(|(&a, &b)| error(f64::from(a), f64::from(b))).sum();
    Ok(total / image.data().len() as f64)
}

fn check_same_shape(image: &Image, reference: &Image) -> Result<(), ImageError> {
    if image.width() != reference.width()
        || image.height() != reference.height()
        || image.channels() != reference.channels()
    {
        return Err(ImageError::Shape(format!(
            "cannot compare a {}x{} image with channels [{}] to a {}x{} reference with channels [{}]",
            image.width(),
            image.height(),
            image.channels().join(", "),
            reference.width(),
            reference.height(),
            reference.channels().join(", ")
        )));
    }
    Ok(())
}
