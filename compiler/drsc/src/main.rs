//! `drsc`: the command line of the drs compiler.

use clap::{Parser, Subcommand, ValueEnum};
use drs_sema::LoadOptions;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "drsc", version, about = "Compiler for the drs differentiable rendering language")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type-check .drs files (directories are searched for .drs files).
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        #[command(flatten)]
        stdlib: StdlibArgs,
    },
}

#[derive(clap::Args)]
struct StdlibArgs {
    /// Standard library directory (default: $DRS_STDLIB, else the bundled stdlib/).
    #[arg(long, value_name = "DIR")]
    stdlib: Option<PathBuf>,
    /// Check without the standard library and its implicit prelude.
    #[arg(long, conflicts_with = "stdlib")]
    no_stdlib: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Rendered diagnostics with source excerpts.
    Human,
    /// One JSON object per diagnostic per line.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { files, format, stdlib } => check(&files, format, &stdlib),
    }
}

impl StdlibArgs {
    fn load_options(&self) -> LoadOptions {
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

fn check(inputs: &[PathBuf], format: Format, stdlib: &StdlibArgs) -> ExitCode {
    let options = stdlib.load_options();
    if let Some(dir) = &options.stdlib_dir {
        if !dir.is_dir() {
            eprintln!("error: the standard library directory `{}` does not exist", dir.display());
            return ExitCode::FAILURE;
        }
    }
    let mut files = Vec::new();
    for input in inputs {
        if let Err(e) = collect_sources(input, &mut files) {
            eprintln!("error: cannot read `{}`: {e}", input.display());
            return ExitCode::FAILURE;
        }
    }
    if files.is_empty() {
        eprintln!("error: no .drs files found in the given paths");
        return ExitCode::FAILURE;
    }
    let checked = match drs_sema::check_files(&files, &options) {
        Ok(checked) => checked,
        Err((path, e)) => {
            eprintln!("error: cannot read `{}`: {e}", path.display());
            return ExitCode::FAILURE;
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
        if format == Format::Human {
            let modules = checked.program.modules.len();
            println!(
                "checked {} file{} ({modules} modules with imports): no errors",
                files.len(),
                if files.len() == 1 { "" } else { "s" }
            );
        }
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
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
