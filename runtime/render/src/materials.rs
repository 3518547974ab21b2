//! Mitsuba 3's named optical constants, which its scenes may give instead of numbers (the
//! plugin library adds these forms to the schemas of BSDFs whose params follow Mitsuba's names,
//! and the scene builder turns them into param values):
//!
//! - an index of refraction by name for an `f32` param `int_ior` or `ext_ior`
//!   (`<string name="int_ior" value="water"/>`): [`NAMED_IORS`], compared ignoring case;
//! - a measured conductor preset for a BSDF with `Texture<Color>` params `eta` and `k`
//!   (`<string name="material" value="Au"/>`): [`CONDUCTOR_MATERIALS`]. The preset gives eta
//!   and k as constant colours; giving `eta` or `k` as well is an error unless the material is
//!   "none" (Mitsuba's default: eta 0, k 1, a perfect mirror), as in Mitsuba.
//!
//! Where the numbers come from: [`NAMED_IORS`] is the table of Mitsuba's
//! `include/mitsuba/render/ior.h` (mostly from Hecht, *Optics*, 4th edition: 0–20 °C, about
//! 589 nm). Mitsuba stores each conductor preset as measured spectra (`data/ior/NAME.eta.spd`
//! and `NAME.k.spd`, the PBRT / Luxpop data after Palik et al.) and converts them to linear sRGB
//! when an RGB variant loads the BSDF; [`CONDUCTOR_MATERIALS`] holds the colours Mitsuba 3.9.1
//! gets, read back from Mitsuba itself by `tests/references/conductor_materials.py`.

use drs_lower::layout::Layout;
use drs_lower::ParamLayout;
use drs_scene::{Object, ParamKind, ParamSchema, SceneError, Value};
use drs_sema::types::PluginKind;

/// The params that take an index of refraction by name.
pub const IOR_PARAMS: [&str; 2] = ["int_ior", "ext_ior"];

/// The scene parameter naming a conductor preset, and the params its preset gives.
pub const MATERIAL_PARAM: &str = "material";
pub const MATERIAL_TARGETS: [&str; 2] = ["eta", "k"];

/// Mitsuba's default `material`: no preset, eta 0 and k 1 unless given.
pub const NO_MATERIAL: &str = "none";

/// Indices of refraction by name, as Mitsuba's `ior.h` lists them.
pub const NAMED_IORS: [(&str, f32); 23] = [
    ("vacuum", 1.0),
    ("helium", 1.000036),
    ("hydrogen", 1.000132),
    ("air", 1.000277),
    ("carbon dioxide", 1.00045),
    ("water", 1.3330),
    ("acetone", 1.36),
    ("ethanol", 1.361),
    ("carbon tetrachloride", 1.461),
    ("glycerol", 1.4729),
    ("benzene", 1.501),
    ("silicone oil", 1.52045),
    ("bromine", 1.661),
    ("water ice", 1.31),
    ("fused quartz", 1.458),
    ("pyrex", 1.470),
    ("acrylic glass", 1.49),
    ("polypropylene", 1.49),
    ("bk7", 1.5046),
    ("sodium chloride", 1.544),
    ("amber", 1.55),
    ("pet", 1.5750),
    ("diamond", 2.419),
];

/// Conductor presets as (name, eta, k), linear RGB, named as Mitsuba names them (its data
/// file names: `_palik` entries are Palik's measurements, mostly equal to the plain entry;
/// `-e` is the extraordinary ray of a birefringent crystal).
// Printed by tests/references/conductor_materials.py (Mitsuba 3.9.1, scalar_rgb and llvm_ad_rgb).
pub const CONDUCTOR_MATERIALS: [(&str, [f32; 3], [f32; 3]); 72] = [
    ("none", [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
    ("Ag", [0.1552762, 0.116727956, 0.13838764], [4.8283544, 3.1222224, 2.1469011]),
    ("Al", [1.6575009, 0.8804047, 0.52124447], [9.223811, 6.269502, 4.837004]),
    ("AlAs", [3.605296, 3.2329378, 2.2163186], [6.794373e-4, 0.0, 0.007512709]),
    ("AlAs_palik", [3.605296, 3.2329378, 2.2163186], [6.794373e-4, 0.0, 0.007512709]),
    ("AlSb", [0.0, 4.1393747, 4.6692543], [0.0, 0.09400908, 1.30057]),
    ("AlSb_palik", [0.0, 4.1393747, 4.6692543], [0.0, 0.09400908, 1.30057]),
    ("Au", [0.14303598, 0.37530708, 1.4420453], [3.982997, 2.3855565, 1.6033592]),
    ("Be", [4.1850123, 3.1850293, 2.7840612], [3.835466, 3.0101223, 2.868994]),
    ("Be_palik", [4.1850123, 3.1850293, 2.7840612], [3.835466, 3.0101223, 2.868994]),
    ("Cr", [4.3696675, 2.9165053, 1.6549046], [5.206547, 4.231306, 3.7546988]),
    ("CsI", [2.1448996, 1.7023189, 1.6624272], [0.0, 0.0, 0.0]),
    ("CsI_palik", [2.1448996, 1.7023189, 1.6624272], [0.0, 0.0, 0.0]),
    ("Cu", [0.20100547, 0.9237495, 1.1022154], [3.9132621, 2.4530451, 2.1420898]),
    ("Cu2O", [3.5517726, 2.9498696, 2.7518754], [0.11420702, 0.19389686, 0.6061339]),
    ("Cu2O_palik", [3.5517726, 2.9498696, 2.7518754], [0.11420702, 0.19389686, 0.6061339]),
    ("CuO", [3.247541, 2.4478052, 2.2102196], [0.52108955, 0.57003075, 0.72217894]),
    ("CuO_palik", [3.247541, 2.4478052, 2.2102196], [0.52108955, 0.57003075, 0.72217894]),
    ("Cu_palik", [0.21322851, 0.9197154, 1.1024108], [3.9218733, 2.4573317, 2.136584]),
    ("Hg", [2.3989387, 1.440028, 0.9095704], [6.327587, 4.371925, 3.4217637]),
    ("HgTe", [4.77904, 3.2311962, 2.6599011], [1.6316127, 1.5808104, 1.7292874]),
    ("HgTe_palik", [4.77904, 3.2311962, 2.6599011], [1.6316127, 1.5808104, 1.7292874]),
    ("Hg_palik", [2.3989387, 1.440028, 0.9095704], [6.327587, 4.371925, 3.4217637]),
    ("Ir", [3.0863, 2.0821905, 1.6179146], [5.592153, 4.067088, 3.267312]),
    ("Ir_palik", [3.0863, 2.0821905, 1.6179146], [5.592153, 4.067088, 3.267312]),
    ("K", [0.06404319, 0.046409767, 0.038184915], [2.1041996, 1.34894, 0.9131259]),
    ("K_palik", [0.06404319, 0.046409767, 0.038184915], [2.1041996, 1.34894, 0.9131259]),
    ("Li", [0.26579094, 0.19561832, 0.22094862], [3.540155, 2.3111234, 1.6686072]),
    ("Li_palik", [0.26579094, 0.19561832, 0.22094862], [3.540155, 2.3111234, 1.6686072]),
    ("MgO", [2.0895839, 1.6507235, 1.594879], [4.3326952e-12, 0.0, 2.4986457e-11]),
    ("MgO_palik", [2.0895839, 1.6507235, 1.594879], [4.3326952e-12, 0.0, 2.4986457e-11]),
    ("Mo", [4.483974, 3.5251307, 2.7763104], [4.1114373, 3.420827, 3.1506073]),
    ("Mo_palik", [4.483974, 3.5251307, 2.7763104], [4.1114373, 3.420827, 3.1506073]),
    ("Na_palik", [0.060269356, 0.056140948, 0.061988432], [3.1792734, 2.1124904, 1.5790411]),
    ("Nb", [3.420074, 2.7900932, 2.3956294], [3.4413946, 2.7376661, 2.5797458]),
    ("Nb_palik", [3.420074, 2.7900932, 2.3956294], [3.4413946, 2.7376661, 2.5797458]),
    ("Ni_palik", [2.3673046, 1.6633731, 1.4670781], [4.4988117, 3.050153, 2.3454392]),
    ("Rh", [2.5857935, 1.8602164, 1.5542634], [6.7822604, 4.702987, 3.976073]),
    ("Rh_palik", [2.5857935, 1.8602164, 1.5542634], [6.7822604, 4.702987, 3.976073]),
    ("Se", [4.0583115, 2.842935, 2.8208535], [0.75404954, 0.6384435, 0.52180755]),
    ("Se-e", [5.722849, 4.165736, 4.0813384], [0.8711363, 1.1051575, 1.5653203]),
    ("Se-e_palik", [5.722849, 4.165736, 4.0813384], [0.8711363, 1.1051575, 1.5653203]),
    ("Se_palik", [4.0583115, 2.842935, 2.8208535], [0.75404954, 0.6384435, 0.52180755]),
    ("SiC", [3.1723416, 2.5259717, 2.4793706], [7.5376636e-7, 0.0, 1.0192531e-5]),
    ("SiC_palik", [3.1723416, 2.5259717, 2.4793706], [7.5376636e-7, 0.0, 1.0192531e-5]),
    ("SnTe", [4.5242496, 1.981645, 1.2815913], [0.0, 0.0, 0.0]),
    ("SnTe_palik", [4.5242496, 1.981645, 1.2815913], [0.0, 0.0, 0.0]),
    ("Ta", [2.062721, 2.3929389, 2.6279287], [2.4083598, 1.7414864, 1.9470278]),
    ("Ta_palik", [2.062721, 2.3929389, 2.6279287], [2.4083598, 1.7414864, 1.9470278]),
    ("Te", [7.3902335, 4.482105, 2.637106], [3.2560222, 3.5270588, 3.2920542]),
    ("Te-e", [7.508907, 4.2964287, 2.3699877], [5.5839286, 4.947205, 3.9975922]),
    ("Te-e_palik", [7.508907, 4.2964287, 2.3699877], [5.5839286, 4.947205, 3.9975922]),
    ("Te_palik", [7.3902335, 4.482105, 2.637106], [3.2560222, 3.5270588, 3.2920542]),
    ("ThF4", [1.8307136, 1.4422286, 1.3876476], [0.0, 0.0, 0.0]),
    ("ThF4_palik", [1.8307136, 1.4422286, 1.3876476], [0.0, 0.0, 0.0]),
    ("TiC", [3.7005284, 2.8374221, 2.582287], [3.265635, 2.3515892, 2.1727905]),
    ("TiC_palik", [3.7005284, 2.8374221, 2.582287], [3.265635, 2.3515892, 2.1727905]),
    ("TiN", [1.6484497, 1.150516, 1.3798234], [3.368328, 1.9434981, 1.1020677]),
    ("TiN_palik", [1.6484497, 1.150516, 1.3798234], [3.368328, 1.9434981, 1.1020677]),
    ("TiO2", [3.45661, 2.8017359, 2.905175], [1.0526484e-4, 0.0, 6.528865e-4]),
    ("TiO2-e", [3.1065645, 2.5131683, 2.5824444], [2.9751605e-5, 0.0, 1.8269809e-4]),
    ("TiO2-e_palik", [3.1065645, 2.5131683, 2.5824444], [2.9751605e-5, 0.0, 1.8269809e-4]),
    ("TiO2_palik", [3.45661, 2.8017359, 2.905175], [1.0526484e-4, 0.0, 6.528865e-4]),
    ("VC", [3.657566, 2.752736, 2.532672], [3.0683007, 2.1986873, 1.9631927]),
    ("VC_palik", [3.657566, 2.752736, 2.532672], [3.0683007, 2.1986873, 1.9631927]),
    ("VN", [2.8656023, 2.119189, 1.9400911], [3.0322425, 2.0561156, 1.6163063]),
    ("VN_palik", [2.8656023, 2.119189, 1.9400911], [3.0322425, 2.0561156, 1.6163063]),
    ("V_palik", [4.277582, 3.5129488, 2.7610714], [3.4913008, 2.8894548, 3.111522]),
    ("W", [4.3708167, 3.3002465, 2.9984074], [3.5006406, 2.604874, 2.2732332]),
    ("a-C", [2.9440458, 2.2271364, 1.9681617], [0.8874649, 0.7992985, 0.81529]),
    ("d-C", [2.7087197, 2.3188257, 2.2288976], [0.0, 0.0, 0.0]),
    ("d-C_palik", [2.7087197, 2.3188257, 2.2288976], [0.0, 0.0, 0.0]),
];

/// Whether `param` of a plugin of `kind` takes an index of refraction by name: a BSDF's
/// `f32` [`IOR_PARAMS`].
pub(crate) fn takes_ior_name(kind: PluginKind, param: &ParamLayout) -> bool {
    kind == PluginKind::Bsdf
        && IOR_PARAMS.contains(&param.name.as_str())
        && param.layout == Layout::Scalar(drs_ir::Ty::F32)
}

/// `schema` (of an [`IOR_PARAMS`] param) accepting the names of [`NAMED_IORS`].
pub(crate) fn with_ior_names(schema: ParamSchema) -> ParamSchema {
    schema.named_values(NAMED_IORS.iter().map(|&(name, ior)| (name, ior as f64)))
}

/// Whether a plugin with these params takes a conductor `material`: a BSDF with
/// `Texture<Color>` params `eta` and `k` and no param of that name.
pub(crate) fn takes_material(kind: PluginKind, params: &[ParamLayout]) -> bool {
    let color_texture =
        |name: &str| params.iter().any(|p| p.name == name && p.layout == Layout::Handle("Texture<Color>".into()));
    kind == PluginKind::Bsdf
        && MATERIAL_TARGETS.iter().all(|name| color_texture(name))
        && !params.iter().any(|p| p.name == MATERIAL_PARAM)
}

/// The `material` scene parameter: one of the preset names, "none" by default.
pub(crate) fn material_schema() -> ParamSchema {
    let names: Vec<&str> = CONDUCTOR_MATERIALS.iter().map(|&(name, _, _)| name).collect();
    ParamSchema::new(MATERIAL_PARAM, ParamKind::String).choices(&names).default(Value::String(NO_MATERIAL.into()))
}

/// The values the `material` of `object`, an instance of a plugin that
/// [takes one](takes_material), gives to the [`MATERIAL_TARGETS`] it leaves out. A material
/// other than "none" with an explicit `eta` or `k` is an error at that parameter, as in
/// Mitsuba.
pub(crate) fn material_values(object: &Object) -> Result<Vec<(&'static str, Value)>, SceneError> {
    let Some(material) = object.string(MATERIAL_PARAM) else { return Ok(Vec::new()) };
    // Validation keeps only preset names, but a description may have been validated against
    // another library's schema.
    let Some(&(name, eta, k)) = CONDUCTOR_MATERIALS.iter().find(|(name, _, _)| name.eq_ignore_ascii_case(material))
    else {
        return Err(located(object, MATERIAL_PARAM, format!("unknown conductor material \"{material}\"")));
    };
    let given: Vec<&str> = MATERIAL_TARGETS.into_iter().filter(|t| object.property(t).is_some()).collect();
    if let (Some(first), false) = (given.first(), name == NO_MATERIAL) {
        let message = format!("\"{first}\" cannot be given together with material \"{name}\"");
        return Err(located(object, first, message).with_hint("give either eta and k, or a material"));
    }
    let rgb = |c: [f32; 3]| Value::Rgb(c.map(f64::from));
    Ok([("eta", rgb(eta)), ("k", rgb(k))].into_iter().filter(|(target, _)| !given.contains(target)).collect())
}

/// An error at the scene parameter `name` of `object` (at the object when it has no location).
fn located(object: &Object, name: &str, message: String) -> SceneError {
    let location = object.property(name).and_then(|p| p.location.clone());
    let mut e = SceneError::new(location.or_else(|| object.location().cloned()), message);
    e.element_path = Some(object.path().to_owned());
    e
}
