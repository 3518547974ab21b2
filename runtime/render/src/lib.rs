//! The drs runtime: renders Mitsuba 3 scenes with `.drs` plugins.
//!
//! - [`PluginLibrary`] (`library.rs`): the stdlib's and the user's plugins, checked and lowered
//!   once, with the scene-file schema of every plugin type.
//! - [`Scene`] (`scene.rs`): a validated scene description turned into geometry (BVH), plugin
//!   instances whose parameter values live in buffers ([`ParamStore`], `params.rs`), the
//!   camera (`sensor.rs`), film and sampler. [`materials`]: Mitsuba's named IORs and conductor
//!   presets, which scenes may give instead of numbers.
//! - `link.rs`: the scene's integrator and plugin types linked into one kernel (dispatch on
//!   handles, host derivatives; plugins nested in plugins of their kind unrolled to a bounded
//!   depth by `nesting.rs`); `kernel.rs` compiles it through the kernel cache and binds
//!   the host functions of `host.rs` (ray tracing, shape sampling, the host's sample
//!   streams); `streams.rs`: where kernels draw their random numbers, most of them in
//!   compiled code.
//!   `tabulate.rs` computes the tables of plugin methods (`@derived(tabulate | mean, ..)`)
//!   with kernels of their own before every pass; `derive.rs` the other derived tensors.
//! - `render.rs`: the render loop, tiles in parallel, deterministic for a seed.
//! - `gradient.rs`: the reverse pass, [`Scene::backward`]: parameter gradients from the adjoint
//!   of the image; `optimize.rs`: losses ([`Loss`]) and optimisers ([`Optimizer`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use drs_render::{LibraryOptions, PluginLibrary, RenderOptions, Scene};
//!
//! let library = Arc::new(PluginLibrary::load(&LibraryOptions::default())?);
//! let mut scene = Scene::load_file("cornell_box.xml", &Default::default(), library)
//!     .map_err(|errors| errors[0].to_string())?;
//! scene.params_mut().set_text("red.reflectance.value", "Color(0.2, 0.8, 0.2)")?;
//! let image = scene.render(&RenderOptions::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aov;
pub mod derive;
mod error;
mod gradient;
mod host;
mod image_tensor;
mod kernel;
mod library;
pub mod link;
pub mod materials;
mod nesting;
mod optimize;
mod params;
mod render;
mod scene;
mod sensor;
mod streams;
mod tabulate;

pub use aov::{parse_aovs, AovChannels};
pub use drs_cranelift::{CodeGenerator, Lanes};
pub use drs_film::Image;
pub use drs_scene::{Definitions, SceneError, Value};
pub use error::RenderError;
pub use gradient::Gradients;
pub use kernel::{IntegratorKernel, Kernel};
pub use library::{LibraryError, LibraryOptions, PluginLibrary};
pub use link::EntryMode;
pub use optimize::{Loss, LossError, Method, Optimizer};
pub use params::{ParamError, ParamInfo, ParamStore, TensorValue};
pub use render::RenderOptions;
pub use scene::{FilmDesc, Scene, SceneGeometry};
pub use sensor::{FovAxis, PerspectiveCamera, RayLanes};
pub use tabulate::{table_arguments, tabulated_data, tabulated_len};
