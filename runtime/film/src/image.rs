//! `Image`: a developed or loaded picture, linear f32 values in named channels.

use crate::ImageError;

/// `width` x `height` pixels, row by row from the top left, each with one f32 per channel.
/// Images made by this crate put `R`, `G`, `B` first; further channels are AOVs.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    width: u32,
    height: u32,
    channels: Vec<String>,
    data: Vec<f32>,
}

impl Image {
    /// An image from interleaved pixel data: `data[(y * width + x) * channels.len() + c]`.
    /// Fails unless the image has at least one pixel and one channel, the channel names are
    /// distinct and `data` has exactly one value per pixel and channel.
    pub fn new(width: u32, height: u32, channels: Vec<String>, data: Vec<f32>) -> Result<Image, ImageError> {
        if width == 0 || height == 0 || channels.is_empty() {
            return Err(ImageError::Shape(format!(
                "an image needs at least one pixel and one channel, got {width}x{height} with {} channels",
                channels.len()
            )));
        }
        if let Some((i, name)) = channels.iter().enumerate().find(|(i, name)| channels[..*i].contains(name)) {
            return Err(ImageError::Shape(format!("image channel `{name}` is given twice (at {i})")));
        }
        let expected = width as usize * height as usize * channels.len();
        if data.len() != expected {
            return Err(ImageError::Shape(format!(
                "a {width}x{height} image with {} channels has {expected} values, got {}",
                channels.len(),
                data.len()
            )));
        }
        Ok(Image { width, height, channels, data })
    }

    /// An RGB image (channels `R`, `G`, `B`) from interleaved data.
    pub fn from_rgb(width: u32, height: u32, data: Vec<f32>) -> Result<Image, ImageError> {
        Image::new(width, height, rgb_channel_names(), data)
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn channels(&self) -> &[String] {
        &self.channels
    }

    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// The position of a channel in each pixel.
    pub fn channel_index(&self, name: &str) -> Option<usize> {
        self.channels.iter().position(|channel| channel == name)
    }

    /// All values, interleaved, row by row.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// The values of pixel `(x, y)`, one per channel.
    ///
    /// # Panics
    /// If the pixel is outside the image.
    pub fn pixel(&self, x: u32, y: u32) -> &[f32] {
        assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside a {}x{} image", self.width, self.height);
        let channels = self.channels.len();
        let start = (y as usize * self.width as usize + x as usize) * channels;
        &self.data[start..start + channels]
    }

    /// The indices of the channels that give colour: `R`, `G`, `B`, or a luminance channel `Y`
    /// used for all three.
    pub(crate) fn color_channel_indices(&self) -> Option<[usize; 3]> {
        match (self.channel_index("R"), self.channel_index("G"), self.channel_index("B")) {
            (Some(r), Some(g), Some(b)) => Some([r, g, b]),
            _ => self.channel_index("Y").map(|y| [y; 3]),
        }
    }

    /// The same image with only the given channels, in that order.
    pub(crate) fn select_channels(&self, indices: &[usize], names: Vec<String>) -> Result<Image, ImageError> {
        let channels = self.channels.len();
        let data = self.data.chunks_exact(channels).flat_map(|pixel| indices.iter().map(|&i| pixel[i])).collect();
        Image::new(self.width, self.height, names, data)
    }
}

pub(crate) fn rgb_channel_names() -> Vec<String> {
    ["R", "G", "B"].into_iter().map(String::from).collect()
}
