//! Errors of scene loading and validation, each with its place in the scene file.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::desc::ObjectId;

/// A position in a scene file: 1-based line and column (the column counts characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: Arc<Path>,
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// One problem with a scene.
///
/// Displays as `scene.xml:12:5: error: MESSAGE (ELEMENT PATH); HINT`. Scenes built in code have
/// no location, and errors about a whole file (it cannot be read) have no element path.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneError {
    pub location: Option<Location>,
    /// Where in the scene tree, e.g. `scene/shape[2]/bsdf`.
    pub element_path: Option<String>,
    pub message: String,
    /// What would be accepted instead, e.g. `expected one of: reflectance`.
    pub hint: Option<String>,
}

impl SceneError {
    pub fn new(location: Option<Location>, message: impl Into<String>) -> Self {
        SceneError { location, element_path: None, message: message.into(), hint: None }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(location) = &self.location {
            write!(f, "{location}: ")?;
        }
        write!(f, "error: {}", self.message)?;
        if let Some(path) = &self.element_path {
            write!(f, " ({path})")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SceneError {}

/// Errors collected while loading, each tied to the object it concerns so that its element
/// path can be filled in once the whole tree (and so every sibling index) is known.
#[derive(Default)]
pub(crate) struct ErrorSink {
    entries: Vec<(Option<ObjectId>, SceneError)>,
}

impl ErrorSink {
    pub fn push(&mut self, object: Option<ObjectId>, error: SceneError) {
        self.entries.push((object, error));
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Fills in element paths and orders the errors by file (in loading order) and position.
    pub fn finish(self, path_of: impl Fn(ObjectId) -> Option<String>, files: &[Arc<Path>]) -> Vec<SceneError> {
        let mut errors: Vec<SceneError> = self
            .entries
            .into_iter()
            .map(|(object, mut error)| {
                if error.element_path.is_none() {
                    error.element_path = object.and_then(&path_of);
                }
                error
            })
            .collect();
        let file_rank = |location: &Option<Location>| match location {
            Some(l) => (files.iter().position(|f| Arc::ptr_eq(f, &l.file)).unwrap_or(files.len()), l.line, l.column),
            None => (usize::MAX, 0, 0),
        };
        errors.sort_by_key(|e| file_rank(&e.location));
        errors
    }
}
