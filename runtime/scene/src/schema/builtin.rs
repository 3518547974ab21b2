//! Schemas of the scene root and of the plugins the runtime implements natively. Names,
//! defaults and ranges follow Mitsuba 3's plugin documentation; what drs does not implement
//! is listed as unsupported so that a scene using it fails with a reason.

use crate::desc::Category::{self, *};
use crate::math::Transform;
use crate::schema::{Bound, ParamKind as K, ParamSchema as P, PluginSchema, Range, Rule};
use crate::value::Value;

pub(super) fn scene_root() -> PluginSchema {
    PluginSchema::new(Scene, "scene")
        .slot(Shape, None)
        .slot(Emitter, None)
        .slot(Sensor, None)
        .slot(Integrator, Some(1))
        // Declared at the top level to be referenced by id.
        .slot(Bsdf, None)
        .slot(Texture, None)
        .slot(Medium, None)
}

pub(super) fn native_plugins() -> Vec<PluginSchema> {
    let mut plugins = Vec::new();
    for name in ["obj", "ply"] {
        plugins.push(
            shape(name)
                .param(P::new("filename", K::Filename).required())
                .param(P::new("face_normals", K::Boolean).default(false))
                .param(P::new("flip_tex_coords", K::Boolean).default(true)),
        );
    }
    for name in ["rectangle", "cube", "disk"] {
        plugins.push(shape(name));
    }
    plugins.push(
        shape("sphere")
            .param(P::new("center", K::Point).default(Value::Point([0.0; 3])))
            .param(P::new("radius", K::Float).default(1.0).range(Range::above(0.0))),
    );
    plugins.push(perspective());
    plugins.push(hdrfilm());
    plugins.push(PluginSchema::new(Rfilter, "box"));
    plugins.push(
        PluginSchema::new(Rfilter, "gaussian").param(P::new("stddev", K::Float).default(0.5).range(Range::above(0.0))),
    );
    plugins.push(
        PluginSchema::new(Rfilter, "tent").param(P::new("radius", K::Float).default(1.0).range(Range::above(0.0))),
    );
    plugins.push(sampler("independent"));
    plugins.push(sampler("stratified").param(P::new("jitter", K::Boolean).default(true)));
    plugins.extend(emitters());
    // The `srgb` texture is stdlib/textures/srgb.drs; scene files give its colour as `color`
    // (its param, and Mitsuba's key, is `value`). `unbounded` only matters to Mitsuba's
    // spectral variants: in RGB a colour is used as given either way.
    plugins.push(
        PluginSchema::new(Texture, "srgb")
            .param(P::new("color", K::Color).required())
            .param(P::new("unbounded", K::Boolean).default(false)),
    );
    // The `aov` integrator is stdlib/integrators/aov.drs; its `aovs` list, which a .drs param
    // cannot hold, is read by the runtime.
    plugins.push(
        PluginSchema::new(Integrator, "aov").param(P::new("aovs", K::String).required()).slot(Integrator, Some(1)),
    );
    plugins
}

/// What every shape takes.
fn shape(name: &str) -> PluginSchema {
    PluginSchema::new(Shape, name)
        .param(P::new("flip_normals", K::Boolean).default(false))
        .param(P::new("to_world", K::Transform).default(Transform::IDENTITY))
        .slot(Bsdf, Some(1))
        .slot(Emitter, Some(1))
}

fn perspective() -> PluginSchema {
    PluginSchema::new(Sensor, "perspective")
        .param(P::new("to_world", K::Transform).default(Transform::IDENTITY))
        // Without `fov`, Mitsuba uses a 50 mm (35 mm film equivalent) lens on the diagonal.
        .param(P::new("fov", K::Float).range(Range::strictly_between(0.0, 180.0)))
        .param(P::new("fov_axis", K::String).default("x").choices(&["x", "y", "diagonal", "smaller", "larger"]))
        .param(P::new("near_clip", K::Float).default(1e-2).range(Range::above(0.0)))
        .param(P::new("far_clip", K::Float).default(1e4).range(Range::above(0.0)))
        .param(P::new("principal_point_offset_x", K::Float).default(0.0))
        .param(P::new("principal_point_offset_y", K::Float).default(0.0))
        .rule(Rule::Less("near_clip".into(), "far_clip".into()))
        .slot(Film, Some(1))
        .slot(Sampler, Some(1))
        .unsupported("focal_length", "give the field of view in degrees with \"fov\"")
        .unsupported("shutter_open", "motion blur is not supported")
        .unsupported("shutter_close", "motion blur is not supported")
        .unsupported("srf", "spectral response functions are not supported")
}

fn hdrfilm() -> PluginSchema {
    let mut film = PluginSchema::new(Film, "hdrfilm")
        .param(P::new("width", K::Integer).default(768_i64).range(Range::between(1.0, u32::MAX.into())))
        .param(P::new("height", K::Integer).default(576_i64).range(Range::between(1.0, u32::MAX.into())))
        .param(P::new("file_format", K::String).default("openexr").choices(&["openexr", "pfm"]))
        .param(P::new("pixel_format", K::String).default("rgb").choices(&["rgb", "rgba"]))
        .param(P::new("component_format", K::String).default("float16").choices(&["float16", "float32"]))
        .slot(Rfilter, Some(1));
    for crop in ["crop_offset_x", "crop_offset_y", "crop_width", "crop_height"] {
        film = film.unsupported(crop, "crop windows are not supported: render the full film");
    }
    film.unsupported("sample_border", "sampling outside the film is not supported")
}

fn sampler(name: &str) -> PluginSchema {
    PluginSchema::new(Category::Sampler, name)
        .param(P::new("sample_count", K::Integer).default(4_i64).range(Range::between(1.0, u32::MAX.into())))
        .param(P::new("seed", K::Integer).default(0_i64).range(Range::u32()))
}

fn emitters() -> Vec<PluginSchema> {
    let non_negative = Range::at_least(0.0);
    // A spot light's cutoff half-angle in degrees: (0, 180].
    let cone_angle = Range { min: Some(Bound { value: 0.0, inclusive: false }), ..Range::between(0.0, 180.0) };
    vec![
        PluginSchema::new(Emitter, "area")
            .param(P::new("radiance", K::ColorTexture).default(Value::Spectrum(1.0)).range(non_negative))
            .unsupported("to_world", "an area light takes its placement from its shape"),
        PluginSchema::new(Emitter, "point")
            .param(P::new("intensity", K::Color).default(Value::Spectrum(1.0)).range(non_negative))
            .param(P::new("position", K::Point))
            .param(P::new("to_world", K::Transform))
            .rule(Rule::Exclusive("position".into(), "to_world".into())),
        // Angles in degrees. `beam_width` has no default here: Mitsuba's is 3/4 of the
        // scene's `cutoff_angle`, which the runtime computes.
        PluginSchema::new(Emitter, "spot")
            .param(P::new("intensity", K::Color).default(Value::Spectrum(1.0)).range(non_negative))
            .param(P::new("cutoff_angle", K::Float).default(20.0).range(cone_angle))
            .param(P::new("beam_width", K::Float).range(Range::between(0.0, 180.0)))
            .param(P::new("texture", K::ColorTexture).default(Value::Spectrum(1.0)).range(non_negative))
            .param(P::new("to_world", K::Transform).default(Transform::IDENTITY)),
        PluginSchema::new(Emitter, "constant")
            .param(P::new("radiance", K::Color).default(Value::Spectrum(1.0)).range(non_negative)),
        PluginSchema::new(Emitter, "envmap")
            .param(P::new("filename", K::Filename).required())
            .param(P::new("mis_compensation", K::Boolean).default(false))
            .param(P::new("scale", K::Float).default(1.0).range(non_negative))
            .param(P::new("to_world", K::Transform).default(Transform::IDENTITY)),
        PluginSchema::new(Emitter, "directional")
            .param(P::new("irradiance", K::Color).default(Value::Spectrum(1.0)).range(non_negative))
            .param(P::new("direction", K::Vector))
            .param(P::new("to_world", K::Transform))
            .rule(Rule::Exclusive("direction".into(), "to_world".into()))
            .rule(Rule::NonZero("direction".into())),
    ]
}
