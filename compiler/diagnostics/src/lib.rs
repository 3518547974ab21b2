//! Source files, spans and coded diagnostics shared by every stage of the drs compiler.
//!
//! Every error the compiler reports is a [`Diagnostic`] with a stable [`Code`]; the codes and
//! their meaning are listed in `spec/errors.md`. Diagnostics render for people through ariadne
//! ([`render`]) and for tools as JSON lines ([`to_json_line`]).

mod code;
mod render;
mod source;

pub use code::Code;
pub use render::{render, render_all, to_json_line};
pub use source::{FileId, LineCol, SourceFile, SourceMap, Span};

/// One labelled source range inside a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// An error found in a `.drs` program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    /// The range the error is about; its message is printed under the underline.
    pub primary: Label,
    /// Related places (the earlier definition, the declared type, ...).
    pub secondary: Vec<Label>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> Self {
        let message = message.into();
        Diagnostic { code, primary: Label { span, message: String::new() }, message, secondary: Vec::new(), help: None }
    }

    /// Sets the text printed under the primary underline.
    pub fn with_label(mut self, message: impl Into<String>) -> Self {
        self.primary.message = message.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label { span, message: message.into() });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Sorts diagnostics by file and position so that output is stable and reads top to bottom.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| (d.primary.span.file, d.primary.span.start, d.primary.span.end, d.code));
}
