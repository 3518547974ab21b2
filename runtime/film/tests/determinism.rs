//! A synthetic "scene" (a closed-form function of the film position and the sampler's numbers)
//! rendered with 1, 2 and 8 threads must give bit-identical films.

use drs_film::{Film, Image, ImageBlock, ReconstructionFilter, Sampler, TileOrder};

const WIDTH: u32 = 37;
const HEIGHT: u32 = 23;

/// Radiance and a depth AOV at a film position, with two more random numbers as a path would
/// use them.
fn scene(pos: [f32; 2], u: f32, v: [f32; 2]) -> ([f32; 3], f32) {
    let r = (pos[0] * 0.31).sin() * 0.5 + 0.5 + u;
    let g = (pos[1] * 0.17).cos() * v[0] * v[0];
    let b = (pos[0] * pos[1] * 0.01).fract() + v[1] * 0.25;
    ([r, g, b], 1.0 + pos[0] * 0.1 + v[1])
}

fn render(threads: usize, sampler: &Sampler, filter: ReconstructionFilter, order: TileOrder) -> Image {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut film = Film::new(WIDTH, HEIGHT, filter, ["depth"]).unwrap();
    let tiles = film.tiles(8, order).unwrap();
    pool.install(|| {
        film.render_tiles(&tiles, |block: &mut ImageBlock| -> Result<(), ()> {
            for (x, y) in block.tile().pixels() {
                let pixel = y * WIDTH + x;
                for sample in 0..sampler.sample_count() {
                    let mut stream = sampler.stream(pixel, sample, 0);
                    let offset = stream.next_2d();
                    let pos = [x as f32 + offset[0], y as f32 + offset[1]];
                    let (rgb, depth) = scene(pos, stream.next_1d(), stream.next_2d());
                    block.put(pos, rgb, &[depth]);
                }
            }
            Ok(())
        })
    })
    .unwrap();
    film.develop()
}

fn bits(image: &Image) -> Vec<u32> {
    image.data().iter().map(|value| value.to_bits()).collect()
}

#[test]
fn films_are_bit_identical_for_any_thread_count() {
    let cases = [
        (Sampler::independent(4, 3).unwrap(), ReconstructionFilter::default(), TileOrder::Spiral),
        (Sampler::stratified(9, 0, true).unwrap(), ReconstructionFilter::tent(1.5).unwrap(), TileOrder::Scanline),
        (Sampler::independent(2, 0).unwrap(), ReconstructionFilter::box_filter(), TileOrder::Spiral),
    ];
    for (sampler, filter, order) in cases {
        let single = render(1, &sampler, filter, order);
        // The image is not trivial: the scene varies across the film.
        let first = single.pixel(0, 0)[0];
        assert!(single.data().chunks_exact(4).any(|pixel| pixel[0] != first));
        for threads in [2, 8] {
            let parallel = render(threads, &sampler, filter, order);
            assert!(bits(&parallel) == bits(&single), "{threads} threads differ from 1 ({:?})", sampler.kind());
        }
    }
}

#[test]
fn a_different_seed_changes_the_film() {
    let filter = ReconstructionFilter::default();
    let a = render(2, &Sampler::independent(2, 0).unwrap(), filter, TileOrder::Spiral);
    let b = render(2, &Sampler::independent(2, 1).unwrap(), filter, TileOrder::Spiral);
    assert_ne!(bits(&a), bits(&b));
}
