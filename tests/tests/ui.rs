//! Diagnostic ("UI") tests.
//!
//! Every `tests/ui/invalid/*.drs` file is a small program with mistakes. Its first line lists
//! the codes it must produce (`// expect: E0201` or `// expect: E0201, E0204`); an optional
//! `// options: no-stdlib` line checks it without the standard library (for the errors that
//! the standard library's interfaces make unreachable). Each file is checked the way `drsc
//! check` does, and the rendering of its diagnostics is snapshotted in
//! `tests/tests/snapshots/ui__<file stem>.snap` (review changes with `cargo insta review`, or
//! run with `INSTA_UPDATE=always` and read the diff). Subdirectories of `invalid/` hold helper
//! modules that the test programs import; they are not test programs themselves.
//!
//! Every `tests/ui/valid/*.drs` file must check without any diagnostic.

use drs_diagnostics::{Code, Diagnostic, FileId, SourceMap};
use drs_sema::{bundled_stdlib_dir, check, Checked, LoadOptions, RootSource};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// `tests/ui/<kind>` as an absolute path.
fn ui_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ui").join(kind)
}

/// The `.drs` files directly in `dir` (not in subdirectories), sorted.
fn drs_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "drs"))
        .collect();
    files.sort();
    files
}

fn file_name(path: &Path) -> String {
    path.file_name().expect("a file").to_string_lossy().into_owned()
}

/// What a test program's header says.
struct Header {
    expected: Vec<Code>,
    no_stdlib: bool,
}

fn code_named(name: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| c.as_str() == name)
}

/// Reads the `// expect:` line (the first line) and the optional `// options:` line.
fn header(text: &str) -> Result<Header, String> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let list = first
        .strip_prefix("// expect:")
        .ok_or_else(|| format!("the first line must be `// expect: E....`, found `{first}`"))?;
    let mut expected = Vec::new();
    for name in list.split(',').map(str::trim) {
        expected.push(code_named(name).ok_or_else(|| format!("`{name}` in the expect line is not an error code"))?);
    }
    Ok(Header { expected, no_stdlib: no_stdlib_option(text)? })
}

/// Whether the leading comment has `// options: no-stdlib`.
fn no_stdlib_option(text: &str) -> Result<bool, String> {
    let mut no_stdlib = false;
    for line in text.lines().take_while(|l| l.starts_with("//")) {
        if let Some(options) = line.strip_prefix("// options:") {
            for option in options.split(',').map(str::trim) {
                match option {
                    "no-stdlib" => no_stdlib = true,
                    other => return Err(format!("unknown option `{other}`")),
                }
            }
        }
    }
    Ok(no_stdlib)
}

/// Checks one file as `drsc check` would: shown as `tests/ui/<kind>/<file>`, imports resolved
/// next to it and in the bundled stdlib.
fn check_file(kind: &str, path: &Path, text: &str, no_stdlib: bool) -> Checked {
    let options = LoadOptions { stdlib_dir: if no_stdlib { None } else { Some(bundled_stdlib_dir()) } };
    let root = RootSource {
        name: format!("tests/ui/{kind}/{}", file_name(path)),
        path: Some(path.to_path_buf()),
        text: text.to_string(),
    };
    check(vec![root], &options)
}

/// The rendering without colours, with machine-specific directories replaced so that the
/// snapshots do not depend on where the repository is checked out.
fn render(checked: &Checked, kind: &str) -> String {
    let text = drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, false);
    text.replace(&bundled_stdlib_dir().display().to_string(), "<stdlib>")
        .replace(&ui_dir(kind).display().to_string(), &format!("tests/ui/{kind}"))
}

/// Problems with the diagnostics' spans: the primary span must lie in the checked file, every
/// label inside its file.
fn span_problems(diagnostics: &[Diagnostic], sources: &SourceMap, root: FileId) -> Vec<String> {
    let mut problems = Vec::new();
    for d in diagnostics {
        if d.primary.span.file != root {
            problems.push(format!(
                "{} `{}` is reported in {}, not in the checked file",
                d.code,
                d.message,
                sources.get(d.primary.span.file).name
            ));
        }
        for label in std::iter::once(&d.primary).chain(&d.secondary) {
            let span = label.span;
            let in_range = (span.file.0 as usize) < sources.len() && {
                let text = &sources.get(span.file).text;
                span.start <= span.end
                    && span.end as usize <= text.len()
                    && text.is_char_boundary(span.start as usize)
                    && text.is_char_boundary(span.end as usize)
            };
            if !in_range {
                problems.push(format!(
                    "{} `{}` has a label outside its file: {:?} in file {}",
                    d.code, d.message, span, span.file.0
                ));
            }
        }
    }
    problems
}

/// One invalid program: its snapshot and its assertions.
fn check_invalid(path: &Path) -> Result<(), String> {
    let name = file_name(path);
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let header = header(&text)?;
    // The file name starts with one of the codes it expects: `e0201_...`.
    let prefix = name.get(..5).unwrap_or_default().to_uppercase();
    if !header.expected.iter().any(|c| c.as_str() == prefix) {
        return Err(format!("the name starts with `{prefix}`, which the expect line does not list"));
    }
    let checked = catch_unwind(AssertUnwindSafe(|| check_file("invalid", path, &text, header.no_stdlib)))
        .map_err(|_| "the checker panicked".to_string())?;
    let rendered = render(&checked, "invalid");
    let stem = name.trim_end_matches(".drs").to_string();
    let snapshot = catch_unwind(AssertUnwindSafe(|| {
        insta::with_settings!({
            snapshot_path => "snapshots",
            omit_expression => true,
            description => format!("tests/ui/invalid/{name}"),
        }, {
            insta::assert_snapshot!(stem, rendered);
        });
    }));
    let mut problems = Vec::new();
    if snapshot.is_err() {
        problems.push("the rendering differs from the snapshot".to_string());
    }
    if checked.diagnostics.is_empty() {
        problems.push("no diagnostic at all".to_string());
    }
    let produced: BTreeSet<Code> = checked.diagnostics.iter().map(|d| d.code).collect();
    for code in &header.expected {
        if !produced.contains(code) {
            let found: Vec<&str> = produced.iter().map(|c| c.as_str()).collect();
            problems.push(format!("expected {code}, found only [{}]", found.join(", ")));
        }
    }
    // The root is the first file loaded.
    problems.extend(span_problems(&checked.diagnostics, &checked.sources, FileId(0)));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{rendered}", problems.join("\n")))
    }
}

#[test]
fn invalid_programs_report_their_errors() {
    let files = drs_files(&ui_dir("invalid"));
    assert!(files.len() >= 70, "expected at least 70 invalid programs, found {}", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| check_invalid(path).err().map(|why| format!("tests/ui/invalid/{}: {why}", file_name(path))))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} invalid programs failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_error_code_has_an_invalid_program() {
    let mut covered = BTreeSet::new();
    for path in drs_files(&ui_dir("invalid")) {
        let text = std::fs::read_to_string(&path).expect("readable test program");
        let header = header(&text).unwrap_or_else(|why| panic!("{}: {why}", file_name(&path)));
        covered.extend(header.expected);
    }
    let missing: Vec<&str> = Code::ALL.iter().filter(|c| !covered.contains(c)).map(|c| c.as_str()).collect();
    assert!(missing.is_empty(), "no file in tests/ui/invalid expects these codes: {}", missing.join(", "));
}

#[test]
fn valid_programs_have_no_diagnostics() {
    let mut failures = Vec::new();
    for path in drs_files(&ui_dir("valid")) {
        let text = std::fs::read_to_string(&path).expect("readable test program");
        let no_stdlib = no_stdlib_option(&text).unwrap_or_else(|why| panic!("{}: {why}", file_name(&path)));
        let checked = match catch_unwind(AssertUnwindSafe(|| check_file("valid", &path, &text, no_stdlib))) {
            Ok(checked) => checked,
            Err(_) => {
                failures.push(format!("tests/ui/valid/{}: the checker panicked", file_name(&path)));
                continue;
            }
        };
        if !checked.diagnostics.is_empty() {
            failures.push(format!("tests/ui/valid/{}:\n{}", file_name(&path), render(&checked, "valid")));
        }
    }
    assert!(failures.is_empty(), "{} valid programs have diagnostics:\n\n{}", failures.len(), failures.join("\n\n"));
}
