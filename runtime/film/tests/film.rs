//! Splatting samples into blocks, merging blocks into the film, developing, and tiling.

use std::collections::HashSet;

use drs_film::{tiles, Film, FilmError, ImageBlock, ReconstructionFilter, Tile, TileOrder};

fn filters() -> Vec<ReconstructionFilter> {
    vec![
        ReconstructionFilter::box_filter(),
        ReconstructionFilter::default(),
        ReconstructionFilter::gaussian(0.3).unwrap(),
        ReconstructionFilter::tent(1.0).unwrap(),
        ReconstructionFilter::tent(1.5).unwrap(),
    ]
}

/// Splats `per_axis²` jittered samples into every pixel of every tile, all with the same values.
fn splat_everywhere(film: &mut Film, tile_size: u32, per_axis: u32, rgb: [f32; 3], aovs: &[f32]) {
    let tiles = film.tiles(tile_size, TileOrder::Spiral).unwrap();
    film.render_tiles(&tiles, |block: &mut ImageBlock| -> Result<(), ()> {
        for (x, y) in block.tile().pixels() {
            for i in 0..per_axis {
                for j in 0..per_axis {
                    // Irregular offsets inside the pixel, including its exact corner.
                    let u = (i as f32 + 0.37 * (j as f32 / per_axis as f32)) / per_axis as f32;
                    let v = (j as f32 + 0.61 * (i as f32 / per_axis as f32)) / per_axis as f32;
                    block.put([x as f32 + u, y as f32 + v], rgb, aovs);
                }
            }
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn constant_radiance_develops_to_exactly_that_constant() {
    // Powers of two make w·c exact, so Σ w·c / Σ w is exactly c whatever the weights.
    for filter in filters() {
        let mut film = Film::new(19, 13, filter, ["depth", "normal.X"]).unwrap();
        splat_everywhere(&mut film, 8, 3, [0.5, 2.0, 0.25], &[4.0, -1.0]);
        let image = film.develop();
        assert_eq!(image.channels(), ["R", "G", "B", "depth", "normal.X"]);
        for y in 0..13 {
            for x in 0..19 {
                assert_eq!(image.pixel(x, y), [0.5, 2.0, 0.25, 4.0, -1.0], "{filter:?} at ({x}, {y})");
            }
        }
    }
}

#[test]
fn any_constant_develops_to_that_constant_within_rounding() {
    for filter in filters() {
        let mut film = Film::new(11, 9, filter, Vec::<String>::new()).unwrap();
        splat_everywhere(&mut film, 4, 2, [0.3, 0.7, 1.1], &[]);
        for value in film.develop().data().chunks_exact(3) {
            for (developed, expected) in value.iter().zip([0.3f32, 0.7, 1.1]) {
                assert!((developed / expected - 1.0).abs() < 1e-6, "{filter:?}: {developed} for {expected}");
            }
        }
    }
}

/// The stored value of channel `channel` at film pixel `(x, y)` of a block.
fn stored(block: &ImageBlock, x: i64, y: i64, channel: usize) -> f32 {
    let tile = block.tile();
    let border = i64::from(block.border());
    let (stored_width, _) = block.stored_size();
    let column = x - i64::from(tile.x) + border;
    let row = y - i64::from(tile.y) + border;
    block.raw()[(row as usize * stored_width as usize + column as usize) * block.channel_count() + channel]
}

#[test]
fn a_sample_reaches_the_pixels_within_the_radius_with_the_filter_weights() {
    let filter = ReconstructionFilter::default();
    let tile = Tile { x: 8, y: 8, width: 8, height: 8 };
    let mut block = ImageBlock::new(tile, filter, 0);
    let pos = [10.3f32, 9.6];
    block.put(pos, [2.0, 4.0, 8.0], &[]);
    assert_eq!(block.border(), 2);
    assert_eq!(block.stored_size(), (12, 12));
    for y in 6..20i64 {
        for x in 6..20i64 {
            let dx = x as f32 + 0.5 - pos[0];
            let dy = y as f32 + 0.5 - pos[1];
            let expected = filter.eval(dx) * filter.eval(dy);
            let in_footprint = dx.abs() <= 2.0 && dy.abs() <= 2.0;
            let inside = (6..18).contains(&x) && (6..18).contains(&y);
            if inside {
                let weight = stored(&block, x, y, 3);
                assert!((weight - expected).abs() < 1e-6, "({x}, {y}): {weight} vs {expected}");
                assert!((stored(&block, x, y, 0) - 2.0 * weight).abs() < 1e-6);
                assert!((stored(&block, x, y, 2) - 8.0 * weight).abs() < 1e-6);
            } else {
                assert!(!in_footprint || expected == 0.0, "({x}, {y}) in the footprint but not stored");
            }
        }
    }
    // Pixel centres within 2 of the sample: x + 0.5 in [8.3, 12.3], y + 0.5 in [7.6, 11.6].
    let reached: usize = block.raw().chunks_exact(4).filter(|pixel| pixel[3] > 0.0).count();
    assert_eq!(reached, 4 * 4);
}

#[test]
fn a_normalised_sample_spreads_weights_that_sum_to_one() {
    for filter in filters() {
        for pos in [[20.5f32, 20.5], [21.0, 19.0], [20.13, 21.87]] {
            let mut block = ImageBlock::new(Tile { x: 16, y: 16, width: 8, height: 8 }, filter, 1);
            block.set_normalize(true);
            block.put_weighted(pos, [1.0, 0.5, 0.0], &[3.0], 0.0);
            let sums = block.raw().chunks_exact(5).fold([0.0f32; 5], |mut sums, pixel| {
                sums.iter_mut().zip(pixel).for_each(|(sum, value)| *sum += value);
                sums
            });
            assert!((sums[0] - 1.0).abs() < 1e-6, "{filter:?} at {pos:?}: weights sum to {}", sums[0]);
            assert!((sums[1] - 0.5).abs() < 1e-6 && (sums[4] - 3.0).abs() < 1e-5);
            assert_eq!(sums[3], 0.0, "weight 0 leaves the weight channel empty");
        }
    }
}

#[test]
fn the_box_filter_splats_into_the_containing_pixel_only() {
    let mut film = Film::new(6, 6, ReconstructionFilter::box_filter(), Vec::<String>::new()).unwrap();
    let mut block = film.create_block(Tile { x: 0, y: 0, width: 6, height: 6 });
    assert_eq!(block.border(), 0);
    block.put([3.0, 4.999], [1.0, 2.0, 3.0], &[]);
    block.put([3.999, 4.0], [3.0, 4.0, 5.0], &[]);
    block.put([6.0, 1.0], [9.0, 9.0, 9.0], &[]); // right of the film: dropped
    block.put([f32::NAN, 1.0], [9.0, 9.0, 9.0], &[]); // ignored
    film.put_block(&block);
    let image = film.develop();
    for y in 0..6 {
        for x in 0..6 {
            let expected = if (x, y) == (3, 4) { [2.0, 3.0, 4.0] } else { [0.0; 3] };
            assert_eq!(image.pixel(x, y), expected, "({x}, {y})");
        }
    }
}

#[test]
fn tiles_rendered_separately_match_one_block_for_the_whole_film() {
    // Footprints straddle tile edges: the borders must carry them into the neighbours.
    let samples: Vec<([f32; 2], [f32; 3])> = (0..3000)
        .map(|i| {
            let t = i as f32;
            let pos = [(t * 0.618_034).fract() * 23.0, (t * 0.414_214).fract() * 17.0];
            (pos, [pos[0].sin() + 1.0, pos[1] * 0.1, (t * 0.1).cos() + 2.0])
        })
        .collect();
    for filter in filters() {
        let mut whole = Film::new(23, 17, filter, Vec::<String>::new()).unwrap();
        let mut block = whole.create_block(Tile { x: 0, y: 0, width: 23, height: 17 });
        for (pos, rgb) in &samples {
            block.put(*pos, *rgb, &[]);
        }
        whole.put_block(&block);

        let mut tiled = Film::new(23, 17, filter, Vec::<String>::new()).unwrap();
        let tiles = tiled.tiles(5, TileOrder::Scanline).unwrap();
        tiled
            .render_tiles(&tiles, |block: &mut ImageBlock| -> Result<(), ()> {
                let tile = block.tile();
                for (pos, rgb) in &samples {
                    let inside = |p: f32, start: u32, size: u32| p >= start as f32 && p < (start + size) as f32;
                    if inside(pos[0], tile.x, tile.width) && inside(pos[1], tile.y, tile.height) {
                        block.put(*pos, *rgb, &[]);
                    }
                }
                Ok(())
            })
            .unwrap();
        for (a, b) in whole.develop().data().iter().zip(tiled.develop().data()) {
            assert!((a - b).abs() <= 1e-5 * a.abs().max(1.0), "{filter:?}: {a} vs {b}");
        }
    }
}

#[test]
fn a_failing_tile_leaves_the_film_unchanged_and_reports_the_first_error() {
    let mut film = Film::new(16, 16, ReconstructionFilter::default(), Vec::<String>::new()).unwrap();
    let tiles = film.tiles(4, TileOrder::Scanline).unwrap();
    let result = film.render_tiles(&tiles, |block| {
        block.put([block.tile().x as f32 + 0.5, block.tile().y as f32 + 0.5], [1.0; 3], &[]);
        match block.tile() {
            Tile { x: 8, y: 4, .. } => Err("first"),
            Tile { x: 4, y: 12, .. } => Err("second"),
            _ => Ok(()),
        }
    });
    assert_eq!(result, Err("first"));
    assert!(film.develop().data().iter().all(|&value| value == 0.0));
}

/// A film that already holds samples gets a second pass added to them, and keeps them as they
/// were when a tile of the second pass fails.
#[test]
fn a_pass_adds_to_earlier_samples_and_a_failing_pass_keeps_them() {
    let mut film = Film::new(16, 16, ReconstructionFilter::box_filter(), Vec::<String>::new()).unwrap();
    let tiles = film.tiles(4, TileOrder::Spiral).unwrap();
    let pass = |film: &mut Film, value: f32, failing: Option<Tile>| {
        film.render_tiles(&tiles, |block| {
            for (x, y) in block.tile().pixels() {
                block.put([x as f32 + 0.5, y as f32 + 0.5], [value; 3], &[]);
            }
            if Some(block.tile()) == failing {
                Err("failed")
            } else {
                Ok(())
            }
        })
    };
    pass(&mut film, 1.0, None).unwrap();
    let first = film.clone();
    assert_eq!(pass(&mut film, 5.0, Some(tiles[7])), Err("failed"));
    assert_eq!(film.develop().data(), first.develop().data());
    assert_eq!(film.weights(), first.weights());
    pass(&mut film, 5.0, None).unwrap();
    // Two samples per pixel, of 1 and 5: mean 3, weight sum 2.
    assert!(film.develop().data().iter().all(|&value| value == 3.0));
    assert!(film.weights().iter().all(|&weight| weight == 2.0));
}

#[test]
fn tiles_cover_every_pixel_once() {
    for (width, height, size) in [(64, 64, 32), (100, 37, 32), (5, 3, 8), (1, 1, 1), (33, 65, 16)] {
        for order in [TileOrder::Scanline, TileOrder::Spiral] {
            let tiles = tiles(width, height, size, order).unwrap();
            let mut covered = HashSet::new();
            for tile in &tiles {
                assert!(tile.width >= 1 && tile.width <= size && tile.height >= 1 && tile.height <= size);
                assert_eq!(tile.pixels().count() as u64, tile.pixel_count());
                for pixel in tile.pixels() {
                    assert!(pixel.0 < width && pixel.1 < height);
                    assert!(covered.insert(pixel), "{pixel:?} in two tiles");
                }
            }
            assert_eq!(covered.len(), (width * height) as usize);
        }
    }
}

#[test]
fn tile_orders() {
    let scanline = tiles(70, 40, 32, TileOrder::Scanline).unwrap();
    let corners: Vec<(u32, u32)> = scanline.iter().map(|tile| (tile.x, tile.y)).collect();
    assert_eq!(corners, [(0, 0), (32, 0), (64, 0), (0, 32), (32, 32), (64, 32)]);
    assert_eq!(scanline[5], Tile { x: 64, y: 32, width: 6, height: 8 });

    // A 5x5 grid: centre first, then right, down, left, left, up, up, right, right, ...
    let spiral = tiles(5, 5, 1, TileOrder::Spiral).unwrap();
    let cells: Vec<(u32, u32)> = spiral.iter().take(10).map(|tile| (tile.x, tile.y)).collect();
    assert_eq!(cells, [(2, 2), (3, 2), (3, 3), (2, 3), (1, 3), (1, 2), (1, 1), (2, 1), (3, 1), (4, 1)]);
    assert_eq!(tiles(4, 4, 0, TileOrder::Spiral), Err(FilmError::InvalidTileSize));
}

#[test]
fn invalid_films_are_errors() {
    let filter = ReconstructionFilter::default();
    assert_eq!(
        Film::new(0, 5, filter, Vec::<String>::new()).unwrap_err(),
        FilmError::EmptyFilm { width: 0, height: 5 }
    );
    assert_eq!(Film::new(4, 4, filter, ["depth", "depth"]).unwrap_err(), FilmError::DuplicateChannel("depth".into()));
    assert_eq!(Film::new(4, 4, filter, ["W"]).unwrap_err(), FilmError::ReservedChannel("W".into()));
    assert!(matches!(Film::new(u32::MAX, u32::MAX, filter, ["a"]), Err(FilmError::TooLarge { .. })));
}

#[test]
fn clearing_resets_the_film() {
    let mut film = Film::new(4, 4, ReconstructionFilter::tent(1.0).unwrap(), ["depth"]).unwrap();
    splat_everywhere(&mut film, 2, 1, [1.0; 3], &[2.0]);
    assert!(film.develop().data().iter().all(|&value| value > 0.0));
    film.clear();
    assert!(film.develop().data().iter().all(|&value| value == 0.0));
}

/// `SumsAdjoint::gather` is the transpose of splatting and developing: for a film holding one
/// sample of radiance L at pos and black samples at every pixel centre, Σ_p A_p · developed_p =
/// L · gather(pos) for any adjoint image A. (The black samples keep every weight sum well away
/// from zero: at a footprint's edge the Gaussian's weight is the difference of two nearly
/// equal numbers, which splatting and gathering round differently in their own coordinates.)
#[test]
fn gather_is_the_transpose_of_splatting_and_developing() {
    let (width, height) = (9, 7);
    let adjoint: Vec<f32> = (0..width * height * 3).map(|i| ((i * 37 % 11) as f32 - 5.0) * 0.1).collect();
    let adjoint = drs_film::Image::from_rgb(width, height, adjoint).unwrap();
    for filter in filters() {
        for pos in [[4.3, 3.7], [0.2, 0.1], [8.9, 6.95], [4.5, 3.5]] {
            let mut film = Film::new(width, height, filter, Vec::<String>::new()).unwrap();
            let tile = Tile { x: 0, y: 0, width, height };
            let mut block = film.create_block(tile);
            for (x, y) in (0..width).flat_map(|x| (0..height).map(move |y| (x, y))) {
                block.put([x as f32 + 0.5, y as f32 + 0.5], [0.0; 3], &[]);
            }
            block.put(pos, [1.0, 2.0, 3.0], &[]);
            film.put_block(&block);
            let lhs: f32 = film.develop().data().iter().zip(adjoint.data()).map(|(v, a)| v * a).sum();
            let g = film.sums_adjoint(&adjoint).unwrap().gather(pos);
            let rhs = g[0] * 1.0 + g[1] * 2.0 + g[2] * 3.0;
            assert!((lhs - rhs).abs() <= 1e-5 * (1.0 + lhs.abs()), "{} at {pos:?}: {lhs} vs {rhs}", filter.name());
            assert!(g.iter().any(|&v| v != 0.0), "{} at {pos:?}: the footprint is empty", filter.name());
        }
    }
}

/// The adjoint of the sums is the image's adjoint over each pixel's weight sum (zero where
/// nothing was splatted), and it must have the film's size and RGB.
#[test]
fn the_sums_adjoint_divides_by_the_weights_and_checks_its_image() {
    let filter = ReconstructionFilter::box_filter();
    let mut film = Film::new(2, 1, filter, Vec::<String>::new()).unwrap();
    let mut block = film.create_block(Tile { x: 0, y: 0, width: 2, height: 1 });
    block.put_weighted([0.5, 0.5], [1.0; 3], &[], 4.0);
    film.put_block(&block);
    let adjoint = drs_film::Image::from_rgb(2, 1, vec![2.0, 4.0, 8.0, 1.0, 1.0, 1.0]).unwrap();
    let sums = film.sums_adjoint(&adjoint).unwrap();
    assert_eq!(sums.gather([0.5, 0.5]), [0.5, 1.0, 2.0]);
    assert_eq!(sums.gather([1.5, 0.5]), [0.0; 3]);
    assert_eq!(sums.gather([f32::NAN, 0.5]), [0.0; 3]);
    let wrong_size = drs_film::Image::from_rgb(1, 1, vec![1.0; 3]).unwrap();
    let err = film.sums_adjoint(&wrong_size).unwrap_err().to_string();
    assert!(err.contains("1x1") && err.contains("2x1"), "{err}");
    let grey = drs_film::Image::new(2, 1, vec!["Y".into()], vec![1.0; 2]).unwrap();
    assert!(film.sums_adjoint(&grey).is_err());
}
