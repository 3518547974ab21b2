//! The front end as the commands use it: where the stdlib is, which files to read, and
//! printing diagnostics.

use crate::{Format, StdlibArgs};
use drs_sema::{Checked, LoadOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

impl StdlibArgs {
    pub fn load_options(&self) -> LoadOptions {
        let stdlib_dir = if self.no_stdlib {
            None
        } else {
            self.stdlib
                .clone()
                .or_else(|| std::env::var_os("DRS_STDLIB").map(PathBuf::from))
                .or_else(|| Some(drs_sema::bundled_stdlib_dir()).filter(|d| d.is_dir()))
        };
        LoadOptions { stdlib_dir }
    }
}

/// The checked program of the command's input files.
pub struct Frontend {
    pub checked: Checked,
    pub files: Vec<PathBuf>,
}

/// Reads and checks `inputs` (files or directories of .drs files), printing diagnostics in
/// `format`. Returns the program only when it has no errors.
pub fn run(inputs: &[PathBuf], format: Format, stdlib: &StdlibArgs) -> Result<Frontend, ExitCode> {
    let options = stdlib.load_options();
    if let Some(dir) = &options.stdlib_dir {
        if !dir.is_dir() {
            eprintln!("error: the standard library directory `{}` does not exist", dir.display());
            return Err(ExitCode::FAILURE);
        }
    }
    let mut files = Vec::new();
    for input in inputs {
        if let Err(e) = collect_sources(input, &mut files) {
            eprintln!("error: cannot read `{}`: {e}", input.display());
            return Err(ExitCode::FAILURE);
        }
    }
    if files.is_empty() {
        eprintln!("error: no .drs files found in the given paths");
        return Err(ExitCode::FAILURE);
    }
    let checked = match drs_sema::check_files(&files, &options) {
        Ok(checked) => checked,
        Err((path, e)) => {
            eprintln!("error: cannot read `{}`: {e}", path.display());
            return Err(ExitCode::FAILURE);
        }
    };
    let stderr = std::io::stderr();
    let mut out = stderr.lock();
    match format {
        Format::Human => {
            let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let _ =
                out.write_all(drs_diagnostics::render_all(&checked.diagnostics, &checked.sources, color).as_bytes());
        }
        Format::Json => {
            for d in &checked.diagnostics {
                let _ = writeln!(out, "{}", drs_diagnostics::to_json_line(d, &checked.sources));
            }
        }
    }
    if checked.diagnostics.is_empty() {
        Ok(Frontend { checked, files })
    } else {
        Err(ExitCode::FAILURE)
    }
}

/// `drsc check`.
pub fn check(inputs: &[PathBuf], format: Format, stdlib: &StdlibArgs) -> ExitCode {
    match run(inputs, format, stdlib) {
        Ok(fe) => {
            if format == Format::Human {
                let (files, modules) = (fe.files.len(), fe.checked.program.modules.len());
                println!(
                    "checked {files} file{} ({modules} modules with imports): no errors",
                    if files == 1 { "" } else { "s" }
                );
            }
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// Adds `path` if it is a file, or every `.drs` file below it (sorted) if it is a directory.
fn collect_sources(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect_sources(&entry, out)?;
        } else if entry.extension().is_some_and(|e| e == "drs") {
            out.push(entry);
        }
    }
    Ok(())
}
