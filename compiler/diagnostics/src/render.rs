use crate::{Diagnostic, SourceMap};
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind};

/// Renders one diagnostic for people: code, message, the source line with the span underlined,
/// secondary labels and the help line.
pub fn render(diagnostic: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let name = |span: crate::Span| sources.get(span.file).name.clone();
    let primary = &diagnostic.primary;
    let mut report = Report::build(ReportKind::Error, (name(primary.span), primary.span.range()))
        .with_config(Config::default().with_color(color).with_index_type(IndexType::Byte))
        .with_code(diagnostic.code.as_str())
        .with_message(&diagnostic.message);
    let mut label = Label::new((name(primary.span), primary.span.range())).with_color(Color::Red);
    if !primary.message.is_empty() {
        label = label.with_message(&primary.message);
    }
    report = report.with_label(label);
    for secondary in &diagnostic.secondary {
        report = report.with_label(
            Label::new((name(secondary.span), secondary.span.range()))
                .with_message(&secondary.message)
                .with_color(Color::Blue),
        );
    }
    if let Some(help) = &diagnostic.help {
        report = report.with_help(help);
    }
    let cache = ariadne::sources(sources.iter().map(|(_, f)| (f.name.clone(), f.text.clone())));
    let mut out = Vec::new();
    // Writing to a Vec cannot fail, and every span refers to a file in `sources`.
    report.finish().write(cache, &mut out).expect("rendering a diagnostic into memory");
    String::from_utf8_lossy(&out).into_owned()
}

/// Renders every diagnostic followed by a summary line.
pub fn render_all(diagnostics: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut out: String = diagnostics.iter().map(|d| render(d, sources, color)).collect();
    match diagnostics.len() {
        0 => {}
        1 => out.push_str("error: could not compile: 1 error\n"),
        n => out.push_str(&format!("error: could not compile: {n} errors\n")),
    }
    out
}

/// One diagnostic as a JSON object on one line, for editors and scripts. Lines and columns are
/// one-based; `end` is the position just after the span.
pub fn to_json_line(diagnostic: &Diagnostic, sources: &SourceMap) -> String {
    let span = diagnostic.primary.span;
    let file = sources.get(span.file);
    let start = file.line_col(span.start as usize);
    let end = file.line_col(span.end as usize);
    serde_json::json!({
        "code": diagnostic.code.as_str(),
        "severity": "error",
        "message": diagnostic.message,
        "label": diagnostic.primary.message,
        "help": diagnostic.help,
        "file": file.name,
        "line": start.line,
        "column": start.column,
        "end": { "line": end.line, "column": end.column },
    })
    .to_string()
}
