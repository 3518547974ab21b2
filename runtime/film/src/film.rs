//! `Film`: Mitsuba's `hdrfilm` as the renderer uses it. Tiles accumulate privately in
//! [`ImageBlock`]s; blocks are merged in a fixed order so that the film is bit-identical
//! whatever the number of threads; `develop` divides by the accumulated weights.

use wide::f32x4;

use crate::block::{BASE_CHANNELS, WEIGHT_CHANNEL};
use crate::{
    fold_in_order, FilmError, Image, ImageBlock, ImageError, ReconstructionFilter, SumsAdjoint, Tile, TileOrder,
};

/// The film's sums for every pixel, R, G, B, W and the AOV channels.
#[derive(Clone, Debug)]
pub struct Film {
    width: u32,
    height: u32,
    filter: ReconstructionFilter,
    aov_names: Vec<String>,
    /// Row by row, `BASE_CHANNELS + aov_names.len()` values per pixel.
    data: Vec<f32>,
}

impl Film {
    /// A cleared `width` x `height` film. `aov_names` are extra channels (depth, normals,
    /// albedo, ... as EXR channel names such as `depth` or `normal.X`) that samples carry besides
    /// colour; they are filtered and normalised like colour.
    pub fn new<S: Into<String>>(
        width: u32,
        height: u32,
        filter: ReconstructionFilter,
        aov_names: impl IntoIterator<Item = S>,
    ) -> Result<Film, FilmError> {
        if width == 0 || height == 0 {
            return Err(FilmError::EmptyFilm { width, height });
        }
        let aov_names: Vec<String> = aov_names.into_iter().map(Into::into).collect();
        for (i, name) in aov_names.iter().enumerate() {
            if ["R", "G", "B", "W"].contains(&name.as_str()) {
                return Err(FilmError::ReservedChannel(name.clone()));
            }
            if aov_names[..i].contains(name) {
                return Err(FilmError::DuplicateChannel(name.clone()));
            }
        }
        let len = (BASE_CHANNELS + aov_names.len())
            .checked_mul(width as usize)
            .and_then(|len| len.checked_mul(height as usize))
            .ok_or(FilmError::TooLarge { width, height })?;
        let mut data = Vec::new();
        data.try_reserve_exact(len).map_err(|_| FilmError::TooLarge { width, height })?;
        data.resize(len, 0.0);
        Ok(Film { width, height, filter, aov_names, data })
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn filter(&self) -> &ReconstructionFilter {
        &self.filter
    }

    pub fn aov_names(&self) -> &[String] {
        &self.aov_names
    }

    /// The channels of the developed image: `R`, `G`, `B`, then the AOVs.
    pub fn channel_names(&self) -> Vec<String> {
        ["R", "G", "B"].into_iter().map(String::from).chain(self.aov_names.iter().cloned()).collect()
    }

    /// The film covered by `tile_size`-pixel tiles in the given order (see [`crate::tiles`]).
    pub fn tiles(&self, tile_size: u32, order: TileOrder) -> Result<Vec<Tile>, FilmError> {
        crate::tiles(self.width, self.height, tile_size, order)
    }

    /// An empty block for `tile`, with this film's filter, border and AOV channels.
    pub fn create_block(&self, tile: Tile) -> ImageBlock {
        ImageBlock::new(tile, self.filter, self.aov_names.len())
    }

    /// Adds a block's sums (border included, clipped to the film) into the film. Addition is
    /// not associative in floating point: merge blocks in a fixed order for reproducible films.
    ///
    /// # Panics
    /// If the block was not made for this film (different number of AOV channels).
    pub fn put_block(&mut self, block: &ImageBlock) {
        assert_eq!(block.aov_count(), self.aov_names.len(), "Film::put_block: block from a different film");
        let channels = block.channel_count();
        let (stored_width, stored_height) = block.stored_size();
        let tile = block.tile();
        let border = i64::from(block.border());
        let origin_x = i64::from(tile.x) - border;
        let origin_y = i64::from(tile.y) - border;
        // The stored columns and rows that fall inside the film.
        let columns = (-origin_x).max(0)..(i64::from(self.width) - origin_x).min(i64::from(stored_width));
        let rows = (-origin_y).max(0)..(i64::from(self.height) - origin_y).min(i64::from(stored_height));
        if columns.is_empty() {
            return;
        }
        let row_len = (columns.end - columns.start) as usize * channels;
        for row in rows {
            let source = (row as usize * stored_width as usize + columns.start as usize) * channels;
            let film_y = (origin_y + row) as usize;
            let film_x = (origin_x + columns.start) as usize;
            let target = (film_y * self.width as usize + film_x) * channels;
            for (sum, value) in
                self.data[target..target + row_len].iter_mut().zip(&block.raw()[source..source + row_len])
            {
                *sum += value;
            }
        }
    }

    /// Renders `tiles` in parallel on the current rayon pool: each tile gets a fresh block (as
    /// from [`create_block`](Self::create_block)) and `render_tile` fills it. The blocks are
    /// merged in the order of `tiles` as they finish ([`fold_in_order`]), so the film does not
    /// depend on the number of threads or on scheduling, and only blocks that finished ahead of
    /// an earlier tile wait in memory. If any tile fails, the film is left unchanged and the
    /// error of the first failing tile (in `tiles` order) is returned.
    pub fn render_tiles<E, F>(&mut self, tiles: &[Tile], render_tile: F) -> Result<(), E>
    where
        E: Send,
        F: Fn(&mut ImageBlock) -> Result<(), E> + Sync,
    {
        let (filter, aov_count) = (self.filter, self.aov_names.len());
        let render_block = |&tile: &Tile| {
            let mut block = ImageBlock::new(tile, filter, aov_count);
            render_tile(&mut block).map(|()| block)
        };
        // A film without samples (the usual case) takes the blocks directly and is cleared again
        // if a tile fails. Any other film gets them through a cleared copy, added once all
        // tiles have succeeded, which costs a second film's memory.
        if self.data.iter().all(|&value| value == 0.0) {
            let result = fold_in_order(tiles, render_block, |block| self.put_block(&block));
            if result.is_err() {
                self.clear();
            }
            return result;
        }
        let mut merged = Film { data: vec![0.0; self.data.len()], aov_names: self.aov_names.clone(), ..*self };
        fold_in_order(tiles, render_block, |block| merged.put_block(&block))?;
        for (sum, value) in self.data.iter_mut().zip(&merged.data) {
            *sum += value;
        }
        Ok(())
    }

    /// Each pixel's sum of filter weights, row by row: what [`develop`](Self::develop) divides by.
    pub fn weights(&self) -> Vec<f32> {
        self.data.chunks_exact(BASE_CHANNELS + self.aov_names.len()).map(|pixel| pixel[WEIGHT_CHANNEL]).collect()
    }

    /// The adjoint of this film's weighted sums, given the adjoint of its developed image
    /// (`adjoint`'s first three channels, RGB): each pixel's value times the reciprocal of its
    /// weight sum, zero where that sum is zero. Fails unless `adjoint` has the film's size and
    /// at least three channels.
    pub fn sums_adjoint(&self, adjoint: &Image) -> Result<SumsAdjoint, ImageError> {
        let channels = adjoint.channel_count();
        if (adjoint.width(), adjoint.height()) != (self.width, self.height) || channels < 3 {
            return Err(ImageError::Shape(format!(
                "the adjoint image is {}x{} with {channels} channels; the film is {}x{} RGB",
                adjoint.width(),
                adjoint.height(),
                self.width,
                self.height
            )));
        }
        let stored = BASE_CHANNELS + self.aov_names.len();
        let pixels = self
            .data
            .chunks_exact(stored)
            .zip(adjoint.data().chunks_exact(channels))
            .map(|(sums, value)| {
                let weight = sums[WEIGHT_CHANNEL];
                let scale = if weight > 0.0 { 1.0 / weight } else { 0.0 };
                f32x4::from([value[0] * scale, value[1] * scale, value[2] * scale, 0.0])
            })
            .collect();
        Ok(SumsAdjoint::new(self.width, self.height, self.filter, pixels))
    }

    /// Sets every sum back to zero.
    pub fn clear(&mut self) {
        self.data.fill(0.0);
    }

    /// The image: every channel divided by the pixel's weight sum (pixels that received no
    /// weight keep their sums, which are zero unless samples were splatted with weight 0).
    pub fn develop(&self) -> Image {
        let stored = BASE_CHANNELS + self.aov_names.len();
        let developed = stored - 1;
        let mut data = Vec::with_capacity(self.width as usize * self.height as usize * developed);
        for pixel in self.data.chunks_exact(stored) {
            let weight = pixel[WEIGHT_CHANNEL];
            let divisor = if weight == 0.0 { 1.0 } else { weight };
            let values = pixel[..WEIGHT_CHANNEL].iter().chain(&pixel[BASE_CHANNELS..]);
            data.extend(values.map(|value| value / divisor));
        }
        Image::new(self.width, self.height, self.channel_names(), data)
            .expect("a film's size and channels always form a valid image")
    }
}
