//! Broken scenes: the exact errors (message, line:column, element path) of every file in
//! `tests/scenes/errors/` are snapshots, and random mutations of a valid scene never panic
//! and only report positions inside the file.

use std::path::Path;

use drs_scene::{
    load_file, load_str, Category, Definitions, ParamKind, ParamSchema, PluginSchema, Range, Schema, Value,
};
use proptest::prelude::*;

/// The built-in schemas and placeholders for the `.drs` plugins the scenes use.
fn schema() -> Schema {
    let mut schema = Schema::builtin();
    let plugins = [
        PluginSchema::new(Category::Bsdf, "diffuse")
            .param(ParamSchema::new("reflectance", ParamKind::ColorTexture).default(Value::Spectrum(0.5))),
        PluginSchema::new(Category::Bsdf, "twosided").slot(Category::Bsdf, Some(2)),
        PluginSchema::new(Category::Integrator, "path")
            .param(ParamSchema::new("max_depth", ParamKind::Integer).default(-1_i64).range(Range::at_least(-1.0)))
            .param(ParamSchema::new("hide_emitters", ParamKind::Boolean).default(false)),
    ];
    for plugin in plugins {
        schema.register(plugin).unwrap();
    }
    schema
}

#[test]
fn broken_scenes_report_exact_errors() {
    let dir = Path::new("tests/scenes/errors");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    assert!(files.len() >= 25, "{} broken scenes", files.len());
    let schema = schema();
    for file in files {
        let errors = match load_file(&file, &Definitions::new(), &schema) {
            Ok(_) => panic!("{} loaded without errors", file.display()),
            Err(errors) => errors,
        };
        let rendered: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        let name = file.file_stem().unwrap().to_str().unwrap().to_owned();
        insta::assert_snapshot!(name, rendered.join("\n"));
    }
}

#[test]
fn a_missing_scene_file_is_an_error_not_a_panic() {
    let errors = load_file("tests/scenes/no_such_scene.xml", &Definitions::new(), &schema()).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].to_string().starts_with("error: cannot read scene file \"tests/scenes/no_such_scene.xml\": "));
}

/// A valid scene touching most elements, the seed of the mutations.
const VALID: &str = r#"<scene version="3.0.0">
    <default name="spp" value="8"/>
    <integrator type="path"><integer name="max_depth" value="4"/></integrator>
    <sensor type="perspective">
        <float name="fov" value="45"/>
        <transform name="to_world">
            <lookat origin="0, 0, 5" target="0, 0, 0" up="0, 1, 0"/>
            <rotate x="1" y="1" angle="10"/>
            <scale value="1 1 1"/>
            <matrix value="1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1"/>
        </transform>
        <sampler type="independent"><integer name="sample_count" value="$spp"/></sampler>
        <film type="hdrfilm"><integer name="width" value="64"/><rfilter type="gaussian"/></film>
    </sensor>
    <bsdf type="diffuse" id="gray"><rgb name="reflectance" value="0.5, 0.5, 0.5"/></bsdf>
    <alias id="gray" as="grey"/>
    <shape type="sphere">
        <point name="center" x="0" y="1" z="0"/>
        <float name="radius" value="0.5"/>
        <ref id="grey"/>
        <emitter type="area"><spectrum name="radiance" value="2"/></emitter>
    </shape>
    <shape type="rectangle"><boolean name="flip_normals" value="true"/><ref name="bsdf" id="gray"/></shape>
    <emitter type="directional"><vector name="direction" value="0 -1 0"/></emitter>
</scene>
"#;

/// Pieces of scene syntax that mutations insert anywhere.
const FRAGMENTS: &[&str] = &[
    "<",
    ">",
    "/>",
    "</shape>",
    "\"",
    "=",
    "$",
    "\\$",
    " id=\"gray\"",
    " name=\"bsdf\"",
    " x=\"1\"",
    "é",
    "<!--",
    "-->",
    "&amp;",
    "&bogus;",
    "<![CDATA[x]]>",
    "type",
    "\n",
];

/// Whole elements that mutations insert between elements.
const ELEMENTS: &[&str] = &[
    "<ref id=\"gray\"/>",
    "<ref id=\"x\"/>",
    "<ref name=\"reflectance\" id=\"gray\"/>",
    "<bsdf type=\"diffuse\"/>",
    "<float name=\"radius\" value=\"-1\"/>",
    "<rotate angle=\"1\"/>",
    "<include filename=\"x.xml\"/>",
    "<transform name=\"to_world\"><lookat origin=\"0 0 0\" target=\"0 0 0\"/></transform>",
    "<scene version=\"3.0.0\"/>",
    "<film type=\"hdrfilm\"/>",
    "<emitter type=\"area\"/>",
    "<default name=\"spp\" value=\"x\"/>",
    "<alias id=\"gray\" as=\"g\"/>",
    "<spectrum name=\"radiance\" value=\"400:1\"/>",
    "<path value=\".\"/>",
    "text",
    "<shape type=\"obj\"/>",
];

/// Attribute values that mutations put in place of one.
const VALUES: &[&str] = &[
    "",
    "-1",
    "0",
    "1e999",
    "nan",
    "abc",
    "1 2",
    "1, 2, 3, 4",
    "$spp",
    "$undefined",
    "\\$",
    "gray",
    "grey",
    "true",
    "x",
    "400:0.5",
    "sphere",
    "diffuse",
    "3.0.0",
    "2.0.0",
    "é",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    InsertElement { at: usize, element: usize },
    ReplaceValue { at: usize, value: usize },
    DeleteLine { at: usize },
    DuplicateLine { at: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..20usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 0..FRAGMENTS.len()).prop_map(|(at, fragment)| Mutation::Insert { at, fragment }),
        (any::<usize>(), 0..ELEMENTS.len()).prop_map(|(at, element)| Mutation::InsertElement { at, element }),
        (any::<usize>(), 0..VALUES.len()).prop_map(|(at, value)| Mutation::ReplaceValue { at, value }),
        any::<usize>().prop_map(|at| Mutation::DeleteLine { at }),
        any::<usize>().prop_map(|at| Mutation::DuplicateLine { at }),
    ]
}

/// The byte offsets in `text` just after each match of `pattern`.
fn offsets_after(text: &str, pattern: &str) -> Vec<usize> {
    text.match_indices(pattern).map(|(i, m)| i + m.len()).collect()
}

/// Applies a mutation; positions are taken modulo what `text` offers.
fn apply(text: &str, mutation: &Mutation) -> String {
    let boundary = |at: usize| {
        let mut i = at % (text.len() + 1);
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let pick = |candidates: Vec<usize>, at: usize| candidates.get(at % candidates.len().max(1)).copied();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    match *mutation {
        Mutation::Delete { at, len } => {
            let a = boundary(at);
            let b = boundary(a + len).max(a);
            format!("{}{}", &text[..a], &text[b..])
        }
        Mutation::Insert { at, fragment } => {
            let a = boundary(at);
            format!("{}{}{}", &text[..a], FRAGMENTS[fragment], &text[a..])
        }
        Mutation::InsertElement { at, element } => match pick(offsets_after(text, ">"), at) {
            Some(a) => format!("{}{}{}", &text[..a], ELEMENTS[element], &text[a..]),
            None => text.to_owned(),
        },
        Mutation::ReplaceValue { at, value } => match pick(offsets_after(text, "=\""), at) {
            Some(a) => {
                let end = text[a..].find('"').map_or(a, |e| a + e);
                format!("{}{}{}", &text[..a], VALUES[value], &text[end..])
            }
            None => text.to_owned(),
        },
        Mutation::DeleteLine { at } => {
            let skip = at % lines.len().max(1);
            lines.iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, l)| *l).collect()
        }
        Mutation::DuplicateLine { at } => {
            let twice = at % lines.len().max(1);
            lines
                .iter()
                .enumerate()
                .flat_map(|(i, l)| std::iter::repeat_n(*l, if i == twice { 2 } else { 1 }))
                .collect()
        }
    }
}

#[test]
fn the_mutation_seed_is_valid() {
    let scene = load_str(VALID, "tests/scenes/fuzz.xml", &Definitions::new(), &schema()).unwrap();
    assert_eq!(scene.root().children(Category::Shape).count(), 2);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenes_never_panic_and_errors_point_inside_the_file(
        mutations in proptest::collection::vec(mutation(), 1..6)
    ) {
        let text = mutations.iter().fold(VALID.to_owned(), |t, m| apply(&t, m));
        let path = Path::new("tests/scenes/fuzz.xml");
        let lines: Vec<&str> = text.split('\n').collect();
        if let Err(errors) = load_str(&text, path, &Definitions::new(), &schema()) {
            prop_assert!(!errors.is_empty());
            for error in &errors {
                let rendered = error.to_string();
                prop_assert!(!error.message.is_empty());
                let location = error.location.as_ref();
                prop_assert!(location.is_some(), "no location: {}", rendered);
                let location = location.unwrap();
                prop_assert_eq!(location.file.as_ref(), path, "{}", rendered);
                let line = location.line as usize;
                prop_assert!(line >= 1 && line <= lines.len(), "{}", rendered);
                let width = lines[line - 1].chars().count() + 1;
                prop_assert!(location.column >= 1 && location.column as usize <= width, "{}", rendered);
            }
        }
    }
}
