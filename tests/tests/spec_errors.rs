//! Every error code in spec/errors.md has an example, and each example produces exactly
//! its code: the reference and the compiler cannot drift apart.

use drs_diagnostics::Code;
use drs_sema::{LoadOptions, RootSource};
use std::path::{Path, PathBuf};

struct Example {
    code: String,
    text: String,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The first ```drs block under each `## EXXXX: title` heading.
fn examples() -> Vec<Example> {
    let text = std::fs::read_to_string(workspace().join("spec/errors.md")).expect("spec/errors.md exists");
    let mut out = Vec::new();
    let mut code: Option<String> = None;
    let mut block: Option<String> = None;
    for line in text.lines() {
        if let Some(b) = block.as_mut() {
            if line.trim_start().starts_with("```") {
                let code = code.take().expect("a block is only collected under a heading");
                out.push(Example { code, text: block.take().unwrap_or_default() });
            } else {
                b.push_str(line);
                b.push('\n');
            }
        } else if let Some(rest) = line.strip_prefix("## ") {
            code = rest.split(':').next().map(str::to_string).filter(|c| c.starts_with('E'));
        } else if line.trim_start().starts_with("```drs") && code.is_some() {
            block = Some(String::new());
        }
    }
    out
}

/// Compiles an example following the conventions at the top of errors.md and returns the
/// codes it produced.
fn codes_of(example: &Example, scratch: &Path) -> Vec<String> {
    let no_prelude = example.text.starts_with("// compile: no-prelude");
    let options = LoadOptions { stdlib_dir: if no_prelude { None } else { Some(drs_sema::bundled_stdlib_dir()) } };
    let mut files: Vec<(String, String)> = Vec::new();
    for line in example.text.lines() {
        if let Some(name) = line.strip_prefix("// file: ") {
            files.push((name.trim().to_string(), String::new()));
        } else {
            if files.is_empty() {
                files.push(("example.drs".to_string(), String::new()));
            }
            let last = files.last_mut().expect("pushed above");
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    let dir = scratch.join(&example.code);
    std::fs::create_dir_all(&dir).expect("creating a scratch directory");
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).expect("writing an example file");
    }
    let (name, text) = &files[0];
    let root = RootSource { name: name.clone(), path: Some(dir.join(name)), text: text.clone() };
    let checked = drs_sema::check(vec![root], &options);
    checked.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect()
}

#[test]
fn every_code_is_documented_with_an_example() {
    let documented: Vec<String> = examples().into_iter().map(|e| e.code).collect();
    for code in Code::ALL {
        assert!(documented.iter().any(|d| d == code.as_str()), "spec/errors.md has no example for {code}");
    }
}

#[test]
fn every_example_produces_exactly_its_code() {
    let scratch = std::env::temp_dir().join(format!("drs-spec-errors-{}", std::process::id()));
    let mut failures = Vec::new();
    for example in examples() {
        let codes = codes_of(&example, &scratch);
        if codes.is_empty() || codes.iter().any(|c| *c != example.code) {
            failures.push(format!("{}: produced {codes:?}\n{}", example.code, example.text));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{} examples disagree with the compiler:\n\n{}", failures.len(), failures.join("\n"));
}
