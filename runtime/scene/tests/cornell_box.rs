//! The Cornell box scene loads with placeholder schemas standing in for the `.drs` plugins
//! `diffuse` and `path`, and the description holds what the file says.

use drs_scene::{
    load_file, Category, Definitions, ParamKind, ParamSchema, PluginSchema, Range, SceneDesc, Schema, Transform, Value,
};

/// The bundled example scene, shared with the renderer tests and the Mitsuba benchmark.
const SCENE: &str = "../../lang-examples/cornell_box.xml";

/// What the runtime will register from `stdlib`'s `diffuse.drs` and `path.drs` `param` lists.
fn schema() -> Schema {
    let mut schema = Schema::builtin();
    schema
        .register(
            PluginSchema::new(Category::Bsdf, "diffuse")
                .param(ParamSchema::new("reflectance", ParamKind::ColorTexture).default(Value::Spectrum(0.5))),
        )
        .unwrap();
    schema
        .register(
            PluginSchema::new(Category::Integrator, "path")
                .param(ParamSchema::new("max_depth", ParamKind::Integer).default(-1_i64).range(Range::at_least(-1.0)))
                .param(ParamSchema::new("rr_depth", ParamKind::Integer).default(5_i64).range(Range::at_least(1.0)))
                .param(ParamSchema::new("hide_emitters", ParamKind::Boolean).default(false)),
        )
        .unwrap();
    schema
}

fn load(definitions: &Definitions) -> SceneDesc {
    load_file(SCENE, definitions, &schema())
        .unwrap_or_else(|errors| panic!("{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")))
}

fn assert_close(a: [f64; 3], b: [f64; 3]) {
    assert!(a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12), "{a:?} != {b:?}");
}

#[test]
fn cornell_box_loads_with_everything_in_place() {
    let scene = load(&Definitions::new());
    let root = scene.root();
    assert_eq!(root.plugin(), "scene");

    let integrator = &scene[root.child(Category::Integrator).unwrap()];
    assert_eq!(
        (integrator.plugin(), integrator.integer("max_depth"), integrator.integer("rr_depth")),
        ("path", Some(8), Some(5))
    );

    let sensor = &scene[root.child(Category::Sensor).unwrap()];
    assert_eq!(sensor.float("fov"), Some(39.3077));
    assert_eq!(sensor.string("fov_axis"), Some("y"));
    assert_eq!(sensor.float("near_clip"), Some(0.01));
    let camera = Transform::from_rows([
        [1.0, 0.0, 0.0, 2.78],
        [0.0, 1.0, 0.0, 2.73],
        [0.0, 0.0, 1.0, -8.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);
    assert_eq!(sensor.transform("to_world"), Some(camera));

    let sampler = &scene[sensor.child(Category::Sampler).unwrap()];
    assert_eq!(
        (sampler.plugin(), sampler.integer("sample_count"), sampler.integer("seed")),
        ("independent", Some(64), Some(0))
    );
    let film = &scene[sensor.child(Category::Film).unwrap()];
    assert_eq!((film.integer("width"), film.integer("height")), (Some(256), Some(256)));
    assert_eq!(film.string("component_format"), Some("float16"));
    let rfilter = &scene[film.child(Category::Rfilter).unwrap()];
    assert_eq!((rfilter.plugin(), rfilter.float("stddev")), ("gaussian", Some(0.5)));

    let shapes: Vec<_> = root.children(Category::Shape).map(|id| &scene[id]).collect();
    let names: Vec<_> = shapes.iter().map(|s| s.id().unwrap()).collect();
    assert_eq!(
        names,
        ["floor", "ceiling", "back", "red_wall", "green_wall", "light_source", "short_block", "tall_block"]
    );
    // Every white surface refers to the one shared BSDF.
    let white = scene.by_id("white").unwrap();
    let white_users = shapes.iter().filter(|s| s.child(Category::Bsdf) == Some(white)).count();
    assert_eq!(white_users, 5);
    assert_eq!(scene[white].rgb("reflectance"), Some([0.725, 0.71, 0.68]));
    assert_eq!(scene[scene.by_id("green").unwrap()].rgb("reflectance"), Some([0.14, 0.45, 0.091]));
    assert_eq!(scene[scene.by_id("light").unwrap()].value("reflectance"), Some(&Value::Rgb([0.78; 3])));
    let bsdfs: Vec<_> = root.children(Category::Bsdf).collect();
    assert_eq!(bsdfs.len(), 4);
}

#[test]
fn cornell_box_light_sits_under_the_ceiling_facing_down() {
    let scene = load(&Definitions::new());
    let light = &scene[scene.by_id("light_source").unwrap()];
    let emitter = &scene[light.child(Category::Emitter).unwrap()];
    assert_eq!((emitter.plugin(), emitter.rgb("radiance")), ("area", Some([17.0, 12.0, 4.0])));
    let to_world = light.transform("to_world").unwrap();
    assert_close(to_world.transform_point([1.0, 1.0, 0.0]), [3.43, 5.487, 3.32]);
    assert_close(to_world.transform_point([-1.0, -1.0, 0.0]), [2.13, 5.487, 2.27]);
    assert_close(to_world.transform_vector([0.0, 0.0, 1.0]), [0.0, -1.0, 0.0]);
    assert_eq!(light.path(), "scene/shape[6]");
    assert_eq!(emitter.path(), "scene/shape[6]/emitter");

    // The walls face into the box.
    let normal =
        |id: &str| scene[scene.by_id(id).unwrap()].transform("to_world").unwrap().transform_vector([0.0, 0.0, 1.0]);
    assert_close(normal("floor"), [0.0, 1.0, 0.0]);
    assert_close(normal("back"), [0.0, 0.0, -1.0]);
    assert_close(normal("red_wall"), [-1.0, 0.0, 0.0]);
    assert_close(normal("green_wall"), [1.0, 0.0, 0.0]);
}

#[test]
fn cornell_box_defaults_yield_to_caller_definitions() {
    let mut definitions = Definitions::new();
    definitions.set("spp", "4").set("resx", "320").set("unused", "1");
    let scene = load(&definitions);
    let sensor = &scene[scene.root().child(Category::Sensor).unwrap()];
    let film = &scene[sensor.child(Category::Film).unwrap()];
    let sampler = &scene[sensor.child(Category::Sampler).unwrap()];
    assert_eq!(
        (film.integer("width"), film.integer("height"), sampler.integer("sample_count")),
        (Some(320), Some(256), Some(4))
    );
    assert_eq!(scene.unused_definitions(), ["unused=1"]);
}
