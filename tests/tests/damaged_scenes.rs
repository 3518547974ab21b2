//! Damaged scenes never panic: the test scenes with values replaced by odd ones (negative,
//! huge, NaN, empty, not numbers), lines dropped or repeated, and attribute names and plugin
//! types swapped for others of the same file, then loaded and rendered (8x8, 1 spp). Each
//! either renders or fails with errors, and every error names the scene file with a line and
//! a column.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use drs_render::{Definitions, RenderOptions, Scene};
use drs_tests::stdlib_library;
use proptest::prelude::*;
use proptest::sample::{select, Index};

fn scenes_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenes")
}

/// The test scenes' paths and texts.
fn scenes() -> &'static [(PathBuf, String)] {
    static SCENES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    SCENES.get_or_init(|| {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(scenes_dir())
            .expect("tests/scenes")
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.extension().is_some_and(|e| e == "xml"))
            .collect();
        paths.sort();
        paths.into_iter().map(|path| (path.clone(), std::fs::read_to_string(&path).expect("a scene"))).collect()
    })
}

const ODD_VALUES: [&str; 16] = [
    "-1",
    "0",
    "-0",
    "1e30",
    "-1e30",
    "1e-40",
    "nan",
    "inf",
    "-inf",
    "",
    "abc",
    "2147483648",
    "4294967296",
    "1, 2",
    "1 2 3 4",
    "0, 0, 0",
];

#[derive(Clone, Debug)]
enum Damage {
    /// The value of the `n`th `value="..."` attribute replaced.
    Value(Index, &'static str),
    DropLine(Index),
    RepeatLine(Index),
    /// The `n`th `name="..."` (or `type="..."`) attribute given the text of the `m`th.
    SwapAttribute(&'static str, Index, Index),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<Index>(), select(&ODD_VALUES[..])).prop_map(|(i, v)| Damage::Value(i, v)),
        1 => any::<Index>().prop_map(Damage::DropLine),
        1 => any::<Index>().prop_map(Damage::RepeatLine),
        1 => (select(&["name", "type"][..]), any::<Index>(), any::<Index>())
            .prop_map(|(attr, i, j)| Damage::SwapAttribute(attr, i, j)),
    ]
}

/// The byte ranges of the values of every `attr="..."` in `text`.
fn attribute_values(text: &str, attr: &str) -> Vec<std::ops::Range<usize>> {
    let key = format!("{attr}=\"");
    text.match_indices(&key)
        .filter_map(|(at, _)| {
            let start = at + key.len();
            text[start..].find('"').map(|len| start..start + len)
        })
        .collect()
}

fn apply(text: &str, damage: &Damage) -> String {
    let replace =
        |range: std::ops::Range<usize>, with: &str| format!("{}{with}{}", &text[..range.start], &text[range.end..]);
    match damage {
        Damage::Value(i, value) => {
            let values = attribute_values(text, "value");
            if values.is_empty() {
                return text.to_owned();
            }
            replace(i.get(&values).clone(), value)
        }
        Damage::DropLine(i) | Damage::RepeatLine(i) => {
            let mut lines: Vec<&str> = text.lines().collect();
            let at = i.index(lines.len());
            if matches!(damage, Damage::DropLine(_)) {
                lines.remove(at);
            } else {
                lines.insert(at, lines[at]);
            }
            lines.join("\n")
        }
        Damage::SwapAttribute(attr, i, j) => {
            let values = attribute_values(text, attr);
            if values.is_empty() {
                return text.to_owned();
            }
            let with = text[j.get(&values).clone()].to_owned();
            replace(i.get(&values).clone(), &with)
        }
    }
}

/// Loads and renders `text` as if it were `path` (8x8, 1 spp): the errors if it fails.
fn load_and_render(path: &Path, text: &str) -> Result<(), Vec<String>> {
    let mut definitions = Definitions::new();
    for d in ["resx=8", "resy=8"] {
        definitions.parse_assignment(d).expect("a definition");
    }
    let scene = Scene::load_str(text, path, &definitions, stdlib_library())
        .map_err(|errors| errors.iter().map(ToString::to_string).collect::<Vec<_>>())?;
    let options = RenderOptions { spp: Some(1), threads: Some(1), ..RenderOptions::default() };
    scene.render(&options).map(|_| ()).map_err(|e| vec![e.to_string()])
}

/// Whether `error` starts with `path:LINE:COLUMN:`.
fn located(error: &str, path: &Path) -> bool {
    let Some(rest) = error.strip_prefix(&format!("{}:", path.display())) else { return false };
    let mut fields = rest.splitn(3, ':');
    fields.next().is_some_and(|line| line.parse::<u32>().is_ok())
        && fields.next().is_some_and(|column| column.parse::<u32>().is_ok())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn damaged_scenes_load_or_fail_with_located_errors(
        scene in any::<Index>(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let (path, text) = scene.get(scenes());
        let damaged = damages.iter().fold(text.clone(), |t, d| apply(&t, d));
        if let Err(errors) = load_and_render(path, &damaged) {
            prop_assert!(!errors.is_empty());
            for e in &errors {
                prop_assert!(located(e, path), "an error without file, line and column: {}", e);
            }
        }
    }
}

/// The scenes load and render undamaged, so the damage is what the test above exercises.
#[test]
fn the_undamaged_scenes_render() {
    assert!(scenes().len() >= 10, "the test scenes are missing");
    for (path, text) in scenes() {
        if let Err(errors) = load_and_render(path, text) {
            panic!("{}: {}", path.display(), errors.join("\n"));
        }
    }
}

/// A film whose pixels 32-bit pixel numbers cannot reach is refused where it is declared, not
/// when the render fails to allocate it.
#[test]
fn an_oversized_film_is_a_located_error() {
    let (path, text) = &scenes()[0];
    let huge = text.replace(r#"name="width" value="$resx""#, r#"name="width" value="2147483648""#);
    assert_ne!(&huge, text, "{} has no `$resx` width", path.display());
    let errors = load_and_render(path, &huge).expect_err("the film is refused");
    assert!(errors.iter().all(|e| located(e, path) && e.contains("film is not supported")), "{errors:?}");
}

/// A film can also fail when the render allocates it (too large for memory, e.g. 60000x60000
/// on a small machine), so the scene keeps the film element's place for that error.
#[test]
fn the_film_keeps_its_place_in_the_file_for_render_errors() {
    let (path, text) = &scenes()[0];
    let line = text.lines().position(|l| l.trim_start().starts_with("<film")).expect("a <film> element") + 1;
    let scene = Scene::load_str(text, path, &Definitions::new(), stdlib_library()).expect("the scene loads");
    let film = scene.film();
    assert_eq!(film.location.as_ref().map(|l| l.line as usize), Some(line));
    assert_eq!(film.element_path, "scene/sensor/film");
}
