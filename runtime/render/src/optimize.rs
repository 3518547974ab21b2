//! Inverse rendering's building blocks around [`Scene::backward`](crate::Scene::backward):
//! image losses with their adjoint images, and the optimisers that update parameters in place
//! (Mitsuba 3's `mi.ad.Adam` and `mi.ad.SGD`).

use std::collections::HashMap;

use drs_film::Image;

use crate::gradient::Gradients;
use crate::params::{ParamError, ParamStore};

/// An image loss: the mean over pixels and RGB channels of a per-value error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Mean absolute error.
    L1,
    /// Mean squared error.
    L2,
}

/// Why a loss cannot be evaluated.
#[derive(Debug, thiserror::Error)]
#[error("loss: {0}")]
pub struct LossError(String);

impl Loss {
    pub fn from_name(name: &str) -> Option<Loss> {
        match name {
            "l1" => Some(Loss::L1),
            "l2" => Some(Loss::L2),
            _ => None,
        }
    }

    /// The loss of `image` against `reference` (their first three channels), and its adjoint
    /// image: the derivative of the loss with respect to each pixel value (RGB).
    pub fn eval(self, image: &Image, reference: &Image) -> Result<(f64, Image), LossError> {
        if (image.width(), image.height()) != (reference.width(), reference.height()) {
            return Err(LossError(format!(
                "the image is {}x{}, the reference {}x{}",
                image.width(),
                image.height(),
                reference.width(),
                reference.height()
            )));
        }
        if image.channel_count() < 3 || reference.channel_count() < 3 {
            return Err(LossError("both images need RGB channels".into()));
        }
        let count = image.width() as usize * image.height() as usize * 3;
        let scale = 1.0 / count as f64;
        let mut loss = 0.0;
        let mut adjoint = Vec::with_capacity(count);
        // Pixel by pixel, without collecting the RGB values first: this runs between the passes
        // of every optimisation step, on one thread.
        let (image_pixels, reference_pixels) = (
            image.data().chunks_exact(image.channel_count()),
            reference.data().chunks_exact(reference.channel_count()),
        );
        for (pixel, reference_pixel) in image_pixels.zip(reference_pixels) {
            for (&x, &r) in pixel[..3].iter().zip(&reference_pixel[..3]) {
                let d = f64::from(x) - f64::from(r);
                let (value, derivative) = match self {
                    Loss::L1 => (
                        d.abs(),
                        if d > 0.0 {
                            1.0
                        } else if d < 0.0 {
                            -1.0
                        } else {
                            0.0
                        },
                    ),
                    Loss::L2 => (d * d, 2.0 * d),
                };
                loss += value * scale;
                adjoint.push((derivative * scale) as f32);
            }
        }
        let adjoint = Image::from_rgb(image.width(), image.height(), adjoint).map_err(|e| LossError(e.to_string()))?;
        Ok((loss, adjoint))
    }
}

/// The update rule of an [`Optimizer`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Gradient descent with momentum: `v = momentum·v + g; p -= lr·v`.
    Sgd { momentum: f32 },
    /// Adam (Kingma and Ba 2015), with bias correction.
    Adam { beta_1: f32, beta_2: f32, epsilon: f32 },
}

impl Method {
    /// Adam with the usual constants (0.9, 0.999, 1e-8), as Mitsuba's defaults.
    pub fn adam() -> Method {
        Method::Adam { beta_1: 0.9, beta_2: 0.999, epsilon: 1e-8 }
    }
}

/// Per-parameter state: the first and second moments and the step count.
#[derive(Clone, Debug, Default)]
struct State {
    m: Vec<f32>,
    v: Vec<f32>,
    steps: i32,
}

/// Updates scene parameters from their gradients, in place, each clamped to its bounds.
#[derive(Clone, Debug)]
pub struct Optimizer {
    method: Method,
    learning_rate: f32,
    bounds: HashMap<String, (f32, f32)>,
    state: HashMap<String, State>,
}

impl Optimizer {
    pub fn new(method: Method, learning_rate: f32) -> Optimizer {
        Optimizer { method, learning_rate, bounds: HashMap::new(), state: HashMap::new() }
    }

    pub fn learning_rate(&self) -> f32 {
        self.learning_rate
    }

    /// Changes the step size (for a schedule); the moments are kept.
    pub fn set_learning_rate(&mut self, learning_rate: f32) {
        self.learning_rate = learning_rate;
    }

    /// Keeps every scalar of parameter `key` within `[low, high]` after each step (for example
    /// `[0, 1]` for a reflectance).
    pub fn set_bounds(&mut self, key: &str, low: f32, high: f32) {
        self.bounds.insert(key.to_owned(), (low, high));
    }

    /// One step for every parameter in `gradients`: reads its value from `params`, updates it
    /// and writes it back.
    pub fn step(&mut self, params: &mut ParamStore, gradients: &Gradients) -> Result<(), ParamError> {
        for (key, gradient) in gradients.iter() {
            let mut values = params.values(key)?;
            let state = self.state.entry(key.to_owned()).or_default();
            if state.m.len() != values.len() {
                *state = State { m: vec![0.0; values.len()], v: vec![0.0; values.len()], steps: 0 };
            }
            state.steps += 1;
            let lr = self.learning_rate;
            match self.method {
                Method::Sgd { momentum } => {
                    for ((p, &g), m) in values.iter_mut().zip(gradient).zip(&mut state.m) {
                        *m = momentum * *m + g;
                        *p -= lr * *m;
                    }
                }
                Method::Adam { beta_1, beta_2, epsilon } => {
                    let t = state.steps;
                    let step = lr * (1.0 - beta_2.powi(t)).sqrt() / (1.0 - beta_1.powi(t));
                    for (((p, &g), m), v) in values.iter_mut().zip(gradient).zip(&mut state.m).zip(&mut state.v) {
                        *m = beta_1 * *m + (1.0 - beta_1) * g;
                        *v = beta_2 * *v + (1.0 - beta_2) * g * g;
                        *p -= step * *m / (v.sqrt() + epsilon);
                    }
                }
            }
            if let Some(&(low, high)) = self.bounds.get(key) {
                for p in &mut values {
                    *p = p.clamp(low, high);
                }
            }
            params.set_values(key, &values)?;
        }
        Ok(())
    }
}
