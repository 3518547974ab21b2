//! Loading valid scenes: every element and value form, transforms against hand-computed
//! matrices, `$name` defaults and overrides, includes, shared references, file names, the
//! builder and the schema registry.

use std::path::Path;

use drs_scene::{
    load_file, load_str, Category, Definitions, ParamKind, ParamSchema, PluginSchema, Range, Rule, SceneBuilder,
    SceneDesc, SceneError, Schema, Transform, Value,
};

/// The built-in schemas, placeholders for the `.drs` plugins the scenes use, and a `probe`
/// integrator that declares one parameter of every kind (no defaults) to inspect values.
fn schema() -> Schema {
    let mut schema = Schema::builtin();
    let diffuse = PluginSchema::new(Category::Bsdf, "diffuse")
        .param(ParamSchema::new("reflectance", ParamKind::ColorTexture).default(Value::Spectrum(0.5)));
    let twosided = PluginSchema::new(Category::Bsdf, "twosided").slot(Category::Bsdf, Some(2));
    let checkerboard = PluginSchema::new(Category::Texture, "checkerboard")
        .param(ParamSchema::new("color0", ParamKind::Color).default(Value::Spectrum(0.4)));
    let kinds = [
        ("f", ParamKind::Float),
        ("i", ParamKind::Integer),
        ("b", ParamKind::Boolean),
        ("s", ParamKind::String),
        ("c", ParamKind::Color),
        ("ft", ParamKind::FloatTexture),
        ("p", ParamKind::Point),
        ("v", ParamKind::Vector),
        ("t", ParamKind::Transform),
        ("bsdf_param", ParamKind::Object(Category::Bsdf)),
    ];
    let probe = kinds
        .into_iter()
        .fold(PluginSchema::new(Category::Integrator, "probe"), |p, (n, k)| p.param(ParamSchema::new(n, k)));
    for plugin in [diffuse, twosided, checkerboard, probe] {
        schema.register(plugin).unwrap();
    }
    schema
}

fn show(errors: &[SceneError]) -> String {
    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}

fn load_with(text: &str, definitions: &Definitions) -> SceneDesc {
    load_str(text, "tests/scenes/inline.xml", definitions, &schema()).unwrap_or_else(|e| panic!("{}", show(&e)))
}

fn load(text: &str) -> SceneDesc {
    load_with(text, &Definitions::new())
}

/// The `probe` integrator of a scene whose top level is `body`.
fn probe(body: &str) -> drs_scene::Object {
    let scene = load(&format!("<scene version=\"3.0.0\"><integrator type=\"probe\">{body}</integrator></scene>"));
    scene[scene.root().child(Category::Integrator).unwrap()].clone()
}

fn transform(ops: &str) -> Transform {
    probe(&format!("<transform name=\"t\">{ops}</transform>")).transform("t").unwrap()
}

fn assert_matrix(actual: Transform, expected: [[f64; 4]; 4]) {
    let a = actual.rows();
    let close = a.iter().flatten().zip(expected.iter().flatten()).all(|(x, y)| (x - y).abs() < 1e-12);
    assert!(close, "\n{a:?}\n!=\n{expected:?}");
}

#[test]
fn scalar_and_string_values() {
    let p = probe(
        r#"<float name="f" value="-1.5e3"/><integer name="i" value=" 42 "/><boolean name="b" value="True"/>
           <string name="s" value="a b, c"/>"#,
    );
    assert_eq!(
        (p.float("f"), p.integer("i"), p.boolean("b"), p.string("s")),
        (Some(-1500.0), Some(42), Some(true), Some("a b, c"))
    );
    // An integer where a float is expected is converted, as in Mitsuba.
    assert_eq!(probe(r#"<integer name="f" value="3"/>"#).float("f"), Some(3.0));
    // Parameters without a value or default are absent.
    assert_eq!(probe("").value("f"), None);
}

#[test]
fn rgb_takes_one_value_or_three_separated_by_commas_or_spaces() {
    assert_eq!(probe(r#"<rgb name="c" value="0.5"/>"#).value("c"), Some(&Value::Rgb([0.5; 3])));
    assert_eq!(probe(r#"<rgb name="c" value="0.1, 0.2, 0.3"/>"#).rgb("c"), Some([0.1, 0.2, 0.3]));
    assert_eq!(probe(r#"<rgb name="c" value="0.1 0.2 0.3"/>"#).rgb("c"), Some([0.1, 0.2, 0.3]));
}

#[test]
fn uniform_spectra_and_floats_are_colours() {
    let p = probe(r#"<spectrum name="c" value="0.25"/><float name="ft" value="0.5"/>"#);
    assert_eq!(p.value("c"), Some(&Value::Spectrum(0.25)));
    assert_eq!(p.rgb("c"), Some([0.25; 3]));
    assert_eq!(p.float("ft"), Some(0.5));
    assert_eq!(probe(r#"<float name="c" value="2"/>"#).value("c"), Some(&Value::Spectrum(2.0)));
}

#[test]
fn points_and_vectors_from_value_or_components() {
    let p = probe(r#"<point name="p" x="1" y="-2" z="3"/><vector name="v" value="0, 0, 1"/>"#);
    assert_eq!((p.point("p"), p.vector("v")), (Some([1.0, -2.0, 3.0]), Some([0.0, 0.0, 1.0])));
    assert_eq!(probe(r#"<point name="p" value="4"/>"#).point("p"), Some([4.0; 3]));
    // Mitsuba stores both as 3-vectors: each is accepted for the other.
    assert_eq!(probe(r#"<vector name="p" value="1 2 3"/>"#).point("p"), Some([1.0, 2.0, 3.0]));
}

#[test]
fn translate_scale_and_matrix() {
    assert_matrix(
        transform(r#"<translate x="1" z="3"/>"#),
        [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 3.0], [0.0, 0.0, 0.0, 1.0]],
    );
    assert_eq!(transform(r#"<translate value="1, 2, 3"/>"#), Transform::translate([1.0, 2.0, 3.0]));
    assert_eq!(transform(r#"<scale value="2"/>"#), Transform::scale([2.0; 3]));
    // Missing scale components are 1.
    assert_eq!(transform(r#"<scale y="-1"/>"#), Transform::scale([1.0, -1.0, 1.0]));
    let rows = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [0.0, 0.0, 0.0, 1.0]];
    assert_matrix(transform(r#"<matrix value="1 2 3 4 5 6 7 8 9 10 11 12 0 0 0 1"/>"#), rows);
    assert_matrix(
        transform(r#"<matrix value="1 2 3, 4 5 6, 7 8 9"/>"#),
        [[1.0, 2.0, 3.0, 0.0], [4.0, 5.0, 6.0, 0.0], [7.0, 8.0, 9.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
    );
    assert_eq!(transform(""), Transform::IDENTITY);
}

#[test]
fn rotations_are_counter_clockwise_about_any_axis() {
    // 90 degrees about y takes z to x.
    assert_matrix(
        transform(r#"<rotate y="1" angle="90"/>"#),
        [[0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
    );
    // 120 degrees about (1, 1, 1) cycles the axes x -> y -> z -> x; the axis need not be unit.
    let cycle = [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
    assert_matrix(transform(r#"<rotate value="2, 2, 2" angle="120"/>"#), cycle);
    assert_matrix(transform(r#"<rotate x="1" y="1" z="1" angle="120"/>"#), cycle);
    // 180 degrees about (1, 1, 0)/sqrt(2) swaps x and y and flips z.
    assert_matrix(
        transform(r#"<rotate x="1" y="1" angle="180"/>"#),
        [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
    );
}

#[test]
fn each_operation_applies_after_the_previous_ones() {
    // Translate then rotate: R * T. The origin goes to (1, 0, 0), then to (0, 1, 0).
    let t = transform(r#"<translate x="1"/><rotate z="1" angle="90"/>"#);
    assert_matrix(t, [[0.0, -1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]);
    // Scale then translate: (1, 0, 0) -> (2, 0, 0) -> (3, 0, 0); the reverse order gives (4, 0, 0).
    assert_eq!(transform(r#"<scale value="2"/><translate x="1"/>"#).transform_point([1.0, 0.0, 0.0]), [3.0, 0.0, 0.0]);
    assert_eq!(transform(r#"<translate x="1"/><scale value="2"/>"#).transform_point([1.0, 0.0, 0.0]), [4.0, 0.0, 0.0]);
}

#[test]
fn lookat_builds_mitsubas_camera_frame() {
    // Columns: left = up x dir, up' = dir x left, dir, origin.
    let t = transform(r#"<lookat origin="1, 1, 1" target="1, 2, 1" up="0, 0, 1"/>"#);
    assert_matrix(t, [[-1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]);
    // A non-unit, non-orthogonal up is projected: dir = (0, 0, -1), up' = (0, 1, 0).
    let t = transform(r#"<lookat origin="0, 0, 5" target="0 0 0" up="0, 3, 1"/>"#);
    assert_matrix(t, [[-1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 5.0], [0.0, 0.0, 0.0, 1.0]]);
    // Without up, a perpendicular one is chosen: the frame is still orthonormal and looks at the target.
    let rows = transform(r#"<lookat origin="0, 0, 0" target="0, 0, 2"/>"#).rows();
    let column = |j: usize| [rows[0][j], rows[1][j], rows[2][j]];
    let dot = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    assert_eq!(column(2), [0.0, 0.0, 1.0]);
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        assert!(dot(column(i), column(j)).abs() < 1e-12);
    }
    for i in 0..3 {
        assert!((dot(column(i), column(i)) - 1.0).abs() < 1e-12);
    }
}

#[test]
fn defaults_fill_parameters_and_caller_definitions_override_them() {
    let text = r#"<scene version="3.0.0">
        <default name="spp" value="16"/>
        <default name="axis" value="x"/>
        <sensor type="perspective">
            <float name="fov" value="4$digit"/>
            <sampler type="independent"><integer name="sample_count" value="$spp"/></sampler>
        </sensor>
        <shape type="sphere"><string name="filename" value="\$nothing" /></shape>
    </scene>"#;
    // `\$` is a literal dollar sign: here it makes an unknown parameter, not a substitution.
    let errors = load_str(text, "x.xml", &Definitions::new(), &schema()).unwrap_err();
    assert!(show(&errors).contains("undefined parameter \"$digit\""), "{}", show(&errors));

    let text = text.replace(r#"<shape type="sphere"><string name="filename" value="\$nothing" /></shape>"#, "");
    let mut definitions = Definitions::new();
    definitions.set("digit", "5");
    let scene = load_with(&text, &definitions);
    let sensor = &scene[scene.root().child(Category::Sensor).unwrap()];
    assert_eq!(sensor.float("fov"), Some(45.0));
    assert_eq!(scene[sensor.child(Category::Sampler).unwrap()].integer("sample_count"), Some(16));
    // The schema's defaults fill what the scene leaves out; they carry no location.
    assert_eq!(sensor.float("far_clip"), Some(1e4));
    assert_eq!(sensor.property("far_clip").unwrap().location, None);
    assert_eq!(sensor.property("fov").unwrap().location.as_ref().unwrap().line, 5);

    definitions.set("spp", "2");
    let scene = load_with(&text, &definitions);
    let sensor = &scene[scene.root().child(Category::Sensor).unwrap()];
    assert_eq!(scene[sensor.child(Category::Sampler).unwrap()].integer("sample_count"), Some(2));
}

#[test]
fn includes_bring_in_scene_children_and_object_roots() {
    let scene = load_file("tests/scenes/include/main.xml", &Definitions::new(), &schema())
        .unwrap_or_else(|e| panic!("{}", show(&e)));
    let root = scene.root();
    let shapes: Vec<_> = root.children(Category::Shape).map(|id| &scene[id]).collect();
    assert_eq!(shapes.iter().map(|s| s.plugin()).collect::<Vec<_>>(), ["sphere", "rectangle"]);
    let sphere = shapes[0];
    assert_eq!(sphere.float("radius"), Some(2.0));
    // The default declared two includes deep is in force after it.
    let material = scene.by_id("mat").unwrap();
    assert_eq!(sphere.child(Category::Bsdf), Some(material));
    assert_eq!(scene[material].rgb("reflectance"), Some([0.25; 3]));
    let location = sphere.location().unwrap();
    assert_eq!(
        (location.file.as_ref(), location.line, location.column),
        (Path::new("tests/scenes/include/parts/sphere.xml"), 1, 1)
    );
    assert_eq!(sphere.path(), "scene/shape[1]");
    let inner = &scene[shapes[1].child(Category::Bsdf).unwrap()];
    assert_eq!((inner.rgb("reflectance"), inner.path()), (Some([0.1, 0.2, 0.3]), "scene/shape[2]/bsdf"));

    // `$part` in the file name picks another file.
    let mut definitions = Definitions::new();
    definitions.set("part", "cube");
    let scene = load_file("tests/scenes/include/main.xml", &definitions, &schema()).unwrap();
    let first = scene.root().child(Category::Shape).unwrap();
    assert_eq!(scene[first].plugin(), "cube");
}

#[test]
fn references_share_one_object() {
    let scene = load(
        r#"<scene version="3.0.0">
            <shape type="sphere"><ref id="tex_user"/></shape>
            <texture type="checkerboard" id="checks"/>
            <bsdf type="diffuse" id="tex_user"><ref name="reflectance" id="checks"/></bsdf>
            <alias id="tex_user" as="other_name"/>
            <shape type="cube"><ref name="bsdf" id="other_name"/></shape>
            <bsdf type="twosided" id="two">
                <ref id="tex_user"/>
                <bsdf type="diffuse"><texture type="checkerboard" name="reflectance"/></bsdf>
            </bsdf>
        </scene>"#,
    );
    let root = scene.root();
    let shapes: Vec<_> = root.children(Category::Shape).collect();
    let bsdf = scene.by_id("tex_user").unwrap();
    // Forward reference, alias and named slot reference all reach the same object.
    assert_eq!(scene[shapes[0]].child(Category::Bsdf), Some(bsdf));
    assert_eq!(scene[shapes[1]].child(Category::Bsdf), Some(bsdf));
    assert_eq!(scene[shapes[1]].all_children()[0].name.as_deref(), Some("bsdf"));
    assert_eq!(scene.by_id("other_name"), Some(bsdf));
    assert_eq!(scene[bsdf].object("reflectance"), scene.by_id("checks"));
    let two = &scene[scene.by_id("two").unwrap()];
    let inner: Vec<_> = two.children(Category::Bsdf).collect();
    assert_eq!(inner[0], bsdf);
    let nested_texture = &scene[scene[inner[1]].object("reflectance").unwrap()];
    assert_eq!((nested_texture.plugin(), nested_texture.rgb("color0")), ("checkerboard", Some([0.4; 3])));
    assert_eq!(nested_texture.path(), "scene/bsdf[2]/bsdf/texture");
    // Six objects and the root: sharing made no copies.
    assert_eq!(scene.objects().count(), 8);
}

#[test]
fn file_names_resolve_against_the_scene_directory_and_search_paths() {
    let text = r#"<scene version="3.0.0">
        <shape type="obj"><string name="filename" value="meshes/triangle.obj"/></shape>
        <path value="meshes"/>
        <shape type="ply"><string name="filename" value="triangle.obj"/></shape>
    </scene>"#;
    let scene = load(text);
    let shapes: Vec<_> = scene.root().children(Category::Shape).map(|id| &scene[id]).collect();
    assert_eq!(shapes[0].filename("filename"), Some(Path::new("tests/scenes/meshes/triangle.obj")));
    assert_eq!(shapes[1].filename("filename"), Some(Path::new("tests/scenes/meshes/triangle.obj")));
    assert_eq!((shapes[0].boolean("face_normals"), shapes[0].boolean("flip_tex_coords")), (Some(false), Some(true)));
}

#[test]
fn every_native_plugin_loads_with_its_defaults() {
    let scene = load(
        r#"<scene version="3.0.0">
            <shape type="rectangle"/><shape type="disk"/><shape type="cube"><boolean name="flip_normals" value="true"/></shape>
            <shape type="sphere"><point name="center" value="1 2 3"/></shape>
            <sensor type="perspective"><film type="hdrfilm"><rfilter type="box"/></film><sampler type="stratified"/></sensor>
            <sensor type="perspective"><film type="hdrfilm"><rfilter type="tent"/></film></sensor>
            <emitter type="point"><point name="position" value="0 5 0"/></emitter>
            <emitter type="constant"/>
            <emitter type="envmap"><string name="filename" value="meshes/triangle.obj"/></emitter>
            <emitter type="directional"><vector name="direction" value="0 -1 0"/><spectrum name="irradiance" value="3"/></emitter>
        </scene>"#,
    );
    let get = |category, n: usize| &scene[scene.root().children(category).nth(n).unwrap()];
    assert_eq!(get(Category::Shape, 2).boolean("flip_normals"), Some(true));
    let sphere = get(Category::Shape, 3);
    assert_eq!((sphere.point("center"), sphere.float("radius")), (Some([1.0, 2.0, 3.0]), Some(1.0)));
    assert_eq!(sphere.transform("to_world"), Some(Transform::IDENTITY));
    let sensor = get(Category::Sensor, 0);
    assert_eq!((sensor.float("fov"), sensor.string("fov_axis")), (None, Some("x")));
    let film = &scene[sensor.child(Category::Film).unwrap()];
    assert_eq!(
        (film.integer("width"), film.integer("height"), film.string("pixel_format")),
        (Some(768), Some(576), Some("rgb"))
    );
    let sampler = &scene[sensor.child(Category::Sampler).unwrap()];
    assert_eq!((sampler.integer("sample_count"), sampler.boolean("jitter")), (Some(4), Some(true)));
    let tent = &scene[scene[get(Category::Sensor, 1).child(Category::Film).unwrap()].child(Category::Rfilter).unwrap()];
    assert_eq!(tent.float("radius"), Some(1.0));
    let point = get(Category::Emitter, 0);
    assert_eq!(
        (point.point("position"), point.rgb("intensity"), point.transform("to_world")),
        (Some([0.0, 5.0, 0.0]), Some([1.0; 3]), None)
    );
    assert_eq!(get(Category::Emitter, 1).value("radiance"), Some(&Value::Spectrum(1.0)));
    assert_eq!(get(Category::Emitter, 2).float("scale"), Some(1.0));
    let directional = get(Category::Emitter, 3);
    assert_eq!(
        (directional.vector("direction"), directional.rgb("irradiance")),
        (Some([0.0, -1.0, 0.0]), Some([3.0; 3]))
    );
}

#[test]
fn string_choices_ignore_case_and_are_stored_canonically() {
    let scene = load(
        r#"<scene version="3.0.0"><sensor type="perspective"><string name="fov_axis" value="Diagonal"/></sensor></scene>"#,
    );
    assert_eq!(scene[scene.root().child(Category::Sensor).unwrap()].string("fov_axis"), Some("diagonal"));
}

/// Plugin, element path, properties and child indices of one object.
type ObjectSummary = (String, String, Vec<(String, Value)>, Vec<usize>);

#[test]
fn the_builder_makes_the_same_scene_as_xml() {
    let xml = load(
        r#"<scene version="3.0.0">
            <bsdf type="diffuse" id="gray"><rgb name="reflectance" value="0.5 0.5 0.5"/></bsdf>
            <shape type="sphere"><float name="radius" value="2"/><ref id="gray"/></shape>
            <shape type="cube"><ref id="gray"/>
                <transform name="to_world"><translate x="1"/></transform></shape>
        </scene>"#,
    );
    let mut b = SceneBuilder::new();
    let root = b.root();
    let gray = b.add_object(root, Category::Bsdf, "diffuse");
    b.set(gray, "reflectance", Value::Rgb([0.5; 3])).set_id(gray, "gray");
    let sphere = b.add_object(root, Category::Shape, "sphere");
    b.set(sphere, "radius", 2_i64).set(sphere, "radius", 2.0);
    b.add_reference(sphere, gray);
    let cube = b.add_object(root, Category::Shape, "cube");
    b.add_reference(cube, gray);
    b.set(cube, "to_world", Transform::translate([1.0, 0.0, 0.0]));
    let built = b.build(&schema()).unwrap_or_else(|e| panic!("{}", show(&e)));

    let summary = |scene: &SceneDesc| -> Vec<ObjectSummary> {
        scene
            .objects()
            .map(|(_, o)| {
                let properties = o.properties().iter().map(|p| (p.name.clone(), p.value.clone())).collect();
                let children = o.all_children().iter().map(|c| c.object.index()).collect();
                (o.plugin().to_owned(), o.path().to_owned(), properties, children)
            })
            .collect()
    };
    assert_eq!(summary(&built), summary(&xml));
    assert_eq!(built.by_id("gray").map(|g| g.index()), Some(1));
}

#[test]
fn the_builder_reports_errors_without_locations() {
    let mut b = SceneBuilder::new();
    let root = b.root();
    let sphere = b.add_object(root, Category::Shape, "sphere");
    b.set(sphere, "radius", -1.0);
    let film = b.add_object(sphere, Category::Film, "hdrfilm");
    b.set_id(film, "x").set_id(sphere, "x");
    let errors: Vec<String> = b.build(&Schema::builtin()).unwrap_err().iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "error: duplicate id \"x\" (scene/shape/film)",
            "error: parameter \"radius\" of shape \"sphere\" must be > 0, found -1 (scene/shape)",
            "error: shape \"sphere\" cannot contain a <film> (scene/shape); expected <bsdf>, <emitter>",
        ]
    );
}

#[test]
fn the_registry_accepts_drs_plugins_and_rejects_incoherent_schemas() {
    let mut schema = Schema::builtin();
    assert!(schema.get(Category::Shape, "sphere").is_some());
    assert_eq!(schema.plugin_names(Category::Rfilter).collect::<Vec<_>>(), ["box", "gaussian", "tent"]);
    assert_eq!(schema.plugin_names(Category::Bsdf).count(), 0);
    let plugin = || {
        PluginSchema::new(Category::Bsdf, "rough")
            .param(ParamSchema::new("alpha", ParamKind::FloatTexture).default(0.1).range(Range::between(0.0, 1.0)))
            .param(ParamSchema::new("count", ParamKind::Integer).default(3_i64).range(Range::u32()))
    };
    schema.register(plugin()).unwrap();
    let rejected = |schema: &mut Schema, p: PluginSchema| schema.register(p).unwrap_err().to_string();
    assert_eq!(rejected(&mut schema, plugin()), "invalid plugin schema: bsdf \"rough\" is already registered");
    let bad = [
        (
            ParamSchema::new("a", ParamKind::Float).default(true),
            "default of parameter \"a\": <boolean> is not a <float>",
        ),
        (
            ParamSchema::new("a", ParamKind::Float).default(2.0).range(Range::between(0.0, 1.0)),
            "default of parameter \"a\": not in [0, 1]",
        ),
        (
            ParamSchema::new("a", ParamKind::String).default("z").choices(&["x"]),
            "default of parameter \"a\": \"z\" is not one of the choices",
        ),
        (
            ParamSchema::new("a", ParamKind::Boolean).range(Range::at_least(0.0)),
            "parameter \"a\" has a range but is not numeric",
        ),
        (
            ParamSchema::new("a", ParamKind::Float).required().default(1.0),
            "parameter \"a\" is required and has a default",
        ),
    ];
    for (param, message) in bad {
        let error = rejected(&mut schema, PluginSchema::new(Category::Bsdf, "bad").param(param));
        assert_eq!(error, format!("invalid plugin schema: bsdf \"bad\": {message}"));
    }
    let twice = PluginSchema::new(Category::Bsdf, "bad")
        .param(ParamSchema::new("a", ParamKind::Float))
        .param(ParamSchema::new("a", ParamKind::Float));
    assert!(rejected(&mut schema, twice).ends_with("parameter \"a\" is declared twice"));
    let rule = PluginSchema::new(Category::Bsdf, "bad").rule(Rule::NonZero("missing".into()));
    assert!(rejected(&mut schema, rule).ends_with("a rule names the undeclared parameter \"missing\""));
    assert!(schema.register(PluginSchema::new(Category::Scene, "scene")).is_err());
}

/// A float parameter with named values (Mitsuba's `int_ior="water"`): a name, in any case,
/// stands for its number; numbers still work; anything else is a located error listing the
/// names, and a number written as a `<string>` is no name (as in Mitsuba).
#[test]
fn named_values_give_their_numbers() {
    let mut schema = Schema::builtin();
    let ior = ParamSchema::new("int_ior", ParamKind::Float).default(1.5).named_values([("water", 1.333), ("air", 1.0)]);
    schema.register(PluginSchema::new(Category::Bsdf, "glass").param(ior)).unwrap();
    let load = |body: &str| {
        let text = format!("<scene version=\"3.0.0\">\n<bsdf type=\"glass\">{body}</bsdf></scene>");
        load_str(&text, "inline.xml", &Definitions::new(), &schema).map(|scene| {
            let (_, bsdf) = scene.objects().find(|(_, o)| o.category() == Category::Bsdf).unwrap();
            bsdf.value("int_ior").cloned()
        })
    };
    assert_eq!(load(r#"<string name="int_ior" value="WATER"/>"#).unwrap(), Some(Value::Float(1.333)));
    assert_eq!(load(r#"<float name="int_ior" value="1.7"/>"#).unwrap(), Some(Value::Float(1.7)));
    assert_eq!(load("").unwrap(), Some(Value::Float(1.5)));
    let error = |body: &str| show(&load(body).unwrap_err());
    assert_eq!(
        error(r#"<string name="int_ior" value="1.6"/>"#),
        "inline.xml:2:20: error: unknown name \"1.6\" for parameter \"int_ior\" of bsdf \"glass\" (scene/bsdf); \
         give a number, or one of: water, air"
    );
    assert_eq!(
        error(r#"<rgb name="int_ior" value="1, 1, 1"/>"#),
        "inline.xml:2:20: error: parameter \"int_ior\" of bsdf \"glass\" expects a <float> or the name of a value \
         (<string>), found <rgb> (scene/bsdf)"
    );
    let named_string = ParamSchema::new("s", ParamKind::String).named_values([("x", 1.0)]);
    assert_eq!(
        Schema::builtin()
            .register(PluginSchema::new(Category::Bsdf, "bad").param(named_string))
            .unwrap_err()
            .to_string(),
        "invalid plugin schema: bsdf \"bad\": parameter \"s\" has named values but is not a float"
    );
}
