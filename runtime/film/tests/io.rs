//! Image files: EXR and PNG round trips, HDR and JPEG loading, errors, and that a failed write
//! never damages the target.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use drs_film::{
    linear_to_srgb, load_exr, load_image, load_image_raw, srgb_to_linear, write_atomically, write_image, Image,
    ImageError,
};

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn names(channels: &[&str]) -> Vec<String> {
    channels.iter().map(|name| name.to_string()).collect()
}

/// Values with every kind of f32 an EXR must keep: negatives, tiny, huge, infinities, NaN.
fn awkward_image() -> Image {
    let channels = names(&["R", "G", "B", "depth", "normal.X", "albedo.R"]);
    let specials = [0.0, -0.0, 1e-40, -2.5, 3.4e38, f32::INFINITY, f32::NAN, 0.1, 1.0, 65504.0];
    let data = (0..5 * 3 * channels.len()).map(|i| specials[i % specials.len()] * (1.0 + i as f32 * 1e-3)).collect();
    Image::new(5, 3, channels, data).unwrap()
}

fn bits_of_channel(image: &Image, name: &str) -> Vec<u32> {
    let channel = image.channel_index(name).unwrap();
    image.data().chunks_exact(image.channel_count()).map(|pixel| pixel[channel].to_bits()).collect()
}

#[test]
fn exr_round_trip_keeps_every_channel_bit_for_bit() {
    let dir = temp_dir();
    let path = dir.path().join("film.exr");
    let image = awkward_image();
    write_image(&path, &image).unwrap();

    let loaded = load_exr(&path).unwrap();
    assert_eq!((loaded.width(), loaded.height()), (5, 3));
    // R, G, B first, then the rest in the file's alphabetical order.
    assert_eq!(loaded.channels(), names(&["R", "G", "B", "albedo.R", "depth", "normal.X"]));
    for name in image.channels() {
        assert_eq!(bits_of_channel(&loaded, name), bits_of_channel(&image, name), "channel {name}");
    }

    let rgb = load_image(&path).unwrap();
    assert_eq!(rgb.channels(), names(&["R", "G", "B"]));
    for name in ["R", "G", "B"] {
        assert_eq!(bits_of_channel(&rgb, name), bits_of_channel(&image, name));
    }
}

#[test]
fn exr_with_luminance_only_loads_as_grey() {
    let dir = temp_dir();
    let path = dir.path().join("grey.EXR");
    write_image(&path, &Image::new(2, 1, names(&["Y"]), vec![0.25, 3.0]).unwrap()).unwrap();
    let rgb = load_image(&path).unwrap();
    assert_eq!(rgb.data(), [0.25, 0.25, 0.25, 3.0, 3.0, 3.0]);

    let aov_only = dir.path().join("depth.exr");
    write_image(&aov_only, &Image::new(1, 1, names(&["depth"]), vec![1.0]).unwrap()).unwrap();
    let error = load_image(&aov_only).unwrap_err();
    assert!(matches!(error, ImageError::MissingColorChannels { .. }));
    assert!(error.to_string().contains("depth.exr") && error.to_string().contains("found depth"), "{error}");
}

#[test]
fn png_round_trip_of_8_bit_levels_is_exact() {
    // Linear values that are exactly decoded sRGB codes survive encoding and decoding bit for bit.
    let levels: Vec<f32> = (0..=255u8).map(|code| srgb_to_linear(f32::from(code) / 255.0)).collect();
    let data: Vec<f32> = (0..16 * 16).flat_map(|i| [levels[i], levels[255 - i], levels[(i * 7) % 256]]).collect();
    let image = Image::from_rgb(16, 16, data).unwrap();
    let dir = temp_dir();
    let path = dir.path().join("levels.png");
    write_image(&path, &image).unwrap();
    assert_eq!(load_image(&path).unwrap(), image);

    let raw = load_image_raw(&path).unwrap();
    assert_eq!(raw.pixel(1, 0)[0], 1.0 / 255.0);
    assert_eq!(raw.pixel(0, 0)[1], 1.0);
}

#[test]
fn png_output_is_srgb_encoded_and_clamped() {
    let values = [0.5f32, -1.0, 7.0, f32::NAN, 0.0031308, 1.0];
    let image = Image::from_rgb(2, 1, values.to_vec()).unwrap();
    let dir = temp_dir();
    let path = dir.path().join("clamped.png");
    write_image(&path, &image).unwrap();
    let raw = load_image_raw(&path).unwrap();
    let codes: Vec<u8> = raw.data().iter().map(|value| (value * 255.0).round() as u8).collect();
    // 0.5 linear is 0.7354 in sRGB: code 188; negative and NaN give 0, above 1 gives 255.
    assert_eq!(codes, [188, 0, 255, 0, 10, 255]);
    assert!((linear_to_srgb(0.5) - 0.735_357).abs() < 1e-5);
}

#[test]
fn png_of_an_image_without_colour_is_refused() {
    let dir = temp_dir();
    let path = dir.path().join("depth.png");
    let error = write_image(&path, &Image::new(1, 1, names(&["depth"]), vec![1.0]).unwrap()).unwrap_err();
    assert!(matches!(error, ImageError::MissingColorChannels { .. }));
    assert!(!path.exists());
}

fn test_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

#[test]
fn loads_a_radiance_hdr_file() {
    // 3x2 flat RGBE pixels; a value is mantissa · 2^(exponent - 136), exponent 0 is black.
    let image = load_image(test_data("rgbe_3x2.hdr")).unwrap();
    assert_eq!((image.width(), image.height()), (3, 2));
    let expected = [
        [1.0, 0.5, 0.25],
        [0.5, 0.5, 0.5],
        [0.0, 0.0, 0.0],
        [3.0, 0.0, 3.984375],
        [0.003_906_25, 0.0, 0.0],
        [3200.0, 1600.0, 800.0],
    ];
    for (i, rgb) in expected.iter().enumerate() {
        assert_eq!(image.pixel(i as u32 % 3, i as u32 / 3), rgb, "pixel {i}");
    }
}

#[test]
fn loads_jpeg_as_linear() {
    let dir = temp_dir();
    let path = dir.path().join("flat.jpeg");
    let pixels: Vec<u8> = (0..16 * 16).flat_map(|_| [200u8, 100, 50]).collect();
    let mut file = fs::File::create(&path).unwrap();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut file, 95)
        .encode(&pixels, 16, 16, image::ExtendedColorType::Rgb8)
        .unwrap();
    drop(file);
    let loaded = load_image(&path).unwrap();
    assert_eq!((loaded.width(), loaded.height()), (16, 16));
    for pixel in loaded.data().chunks_exact(3) {
        for (value, code) in pixel.iter().zip([200.0f32, 100.0, 50.0]) {
            // JPEG is lossy: allow two codes of error, compared after decoding.
            let expected = srgb_to_linear(code / 255.0);
            let tolerance = srgb_to_linear((code + 2.0) / 255.0) - expected;
            assert!((value - expected).abs() <= tolerance, "{value} vs {expected}");
        }
    }
}

#[test]
fn missing_and_corrupt_files_are_errors_that_name_the_file() {
    let dir = temp_dir();
    let missing = dir.path().join("missing.exr");
    let error = load_image(&missing).unwrap_err();
    assert!(matches!(&error, ImageError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound));
    assert!(error.to_string().starts_with(&missing.display().to_string()), "{error}");

    for name in ["noise.exr", "noise.png", "noise.hdr", "noise.jpg"] {
        let path = dir.path().join(name);
        let noise: Vec<u8> = (0..2000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        fs::write(&path, noise).unwrap();
        let error = load_image(&path).unwrap_err();
        assert!(matches!(error, ImageError::Decode { .. }), "{name}: {error}");
        assert!(error.to_string().contains(name), "{error}");
    }

    // A valid file cut short, and an empty one.
    let whole = dir.path().join("whole.exr");
    write_image(&whole, &awkward_image()).unwrap();
    let bytes = fs::read(&whole).unwrap();
    for length in [0, 4, bytes.len() / 2, bytes.len() - 1] {
        let cut = dir.path().join("cut.exr");
        fs::write(&cut, &bytes[..length]).unwrap();
        assert!(matches!(load_exr(&cut), Err(ImageError::Decode { .. })), "EXR cut at {length}");
    }
    let png = dir.path().join("whole.png");
    write_image(&png, &Image::from_rgb(4, 4, vec![0.5; 48]).unwrap()).unwrap();
    let bytes = fs::read(&png).unwrap();
    // (Only the trailing end marker may be missing: decoders accept that.)
    for length in [0, 8, 40, bytes.len() / 2] {
        let cut = dir.path().join("cut.png");
        fs::write(&cut, &bytes[..length]).unwrap();
        assert!(matches!(load_image(&cut), Err(ImageError::Decode { .. })), "PNG cut at {length}");
    }

    let unknown = dir.path().join("picture.bmp");
    assert!(matches!(load_image(&unknown), Err(ImageError::UnsupportedFormat { .. })));
    let no_extension = dir.path().join("picture");
    assert!(matches!(write_image(&no_extension, &awkward_image()), Err(ImageError::UnsupportedFormat { .. })));
}

/// The names of the files in a directory, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_failed_write_leaves_the_previous_file_untouched() {
    let dir = temp_dir();
    let target = dir.path().join("render.exr");
    fs::write(&target, b"previous render").unwrap();

    // The encoder fails halfway through, after writing part of the file.
    let result = write_atomically(&target, |writer| {
        writer.write_all(&[0u8; 100_000])?;
        Err(io::Error::other("disk on fire"))
    });
    let error = result.unwrap_err();
    assert!(matches!(error, ImageError::Encode { .. }));
    assert!(error.to_string().contains("render.exr") && error.to_string().contains("disk on fire"), "{error}");
    assert_eq!(fs::read(&target).unwrap(), b"previous render");
    assert_eq!(listing(dir.path()), ["render.exr"], "no temporary file is left behind");

    // A real encoder failure: an EXR channel name must be Latin-1 text.
    let image = Image::new(1, 1, names(&["R", "G", "B", "深度"]), vec![1.0; 4]).unwrap();
    assert!(matches!(write_image(&target, &image), Err(ImageError::Encode { .. })));
    assert_eq!(fs::read(&target).unwrap(), b"previous render");
    assert_eq!(listing(dir.path()), ["render.exr"]);

    // A directory that does not exist: nothing is created.
    let elsewhere = dir.path().join("no/such/dir/render.png");
    assert!(matches!(write_image(&elsewhere, &awkward_image()), Err(ImageError::Io { .. })));
    assert_eq!(listing(dir.path()), ["render.exr"]);
}

#[test]
fn a_successful_write_replaces_the_file_with_ordinary_permissions() {
    let dir = temp_dir();
    let target = dir.path().join("render.png");
    fs::write(&target, b"previous render").unwrap();
    let image = Image::from_rgb(1, 1, vec![1.0, 0.0, 0.0]).unwrap();
    write_image(&target, &image).unwrap();
    assert_eq!(load_image(&target).unwrap(), image);
    assert_eq!(listing(dir.path()), ["render.png"]);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The same mode as any file created here (0666 less the umask), not the 0600 of a
        // temporary file.
        let written = dir.path().join("new.png");
        write_image(&written, &image).unwrap();
        let ordinary = dir.path().join("ordinary");
        fs::write(&ordinary, b"").unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&written), mode(&ordinary));
    }
}

#[test]
fn images_reject_inconsistent_shapes() {
    assert!(matches!(Image::from_rgb(2, 2, vec![0.0; 11]), Err(ImageError::Shape(_))));
    assert!(matches!(Image::from_rgb(0, 2, vec![]), Err(ImageError::Shape(_))));
    assert!(matches!(Image::new(1, 1, names(&["R", "R"]), vec![0.0; 2]), Err(ImageError::Shape(_))));
    assert!(matches!(Image::new(1, 1, vec![], vec![]), Err(ImageError::Shape(_))));
}
