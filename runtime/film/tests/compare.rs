//! The image comparison measures, on images whose answers are known in closed form.

use drs_film::compare::{channel_means, mean, mean_absolute_error, relative_mse, RELATIVE_MSE_EPSILON};
use drs_film::{Image, ImageError};

fn rgb(data: Vec<f32>) -> Image {
    Image::from_rgb(2, 2, data).unwrap()
}

#[test]
fn means() {
    let image = rgb(vec![1.0, 10.0, 0.0, 3.0, 10.0, 0.5, 5.0, 10.0, -0.5, 7.0, 10.0, 0.0]);
    assert_eq!(channel_means(&image), [4.0, 10.0, 0.0]);
    assert_eq!(mean(&image), 14.0 / 3.0);
}

#[test]
fn errors_against_a_reference() {
    let reference = rgb(vec![1.0; 12]);
    assert_eq!(relative_mse(&reference, &reference).unwrap(), 0.0);
    assert_eq!(mean_absolute_error(&reference, &reference).unwrap(), 0.0);

    // Every value off by 0.5 from a reference of 1: relMSE = 0.25 / (1 + ε).
    let image = rgb((0..12).map(|i| if i % 2 == 0 { 1.5 } else { 0.5 }).collect());
    let expected = 0.25 / (1.0 + RELATIVE_MSE_EPSILON);
    assert!((relative_mse(&image, &reference).unwrap() - expected).abs() < 1e-12);
    assert_eq!(mean_absolute_error(&image, &reference).unwrap(), 0.5);

    // Against a black reference, ε bounds the relative error: 1 / ε per value off by 1.
    let black = rgb(vec![0.0; 12]);
    let ones = rgb(vec![1.0; 12]);
    assert!((relative_mse(&ones, &black).unwrap() - 1.0 / RELATIVE_MSE_EPSILON).abs() < 1e-9);
}

#[test]
fn images_of_different_shapes_cannot_be_compared() {
    let a = rgb(vec![0.0; 12]);
    let wider = Image::from_rgb(4, 1, vec![0.0; 12]).unwrap();
    let other_channels = Image::new(2, 2, vec!["R".into(), "G".into(), "Y".into()], vec![0.0; 12]).unwrap();
    for b in [&wider, &other_channels] {
        assert!(matches!(relative_mse(&a, b), Err(ImageError::Shape(_))));
        assert!(matches!(mean_absolute_error(&a, b), Err(ImageError::Shape(_))));
    }
}
