//! Mesh file loaders. Both return [`MeshData`](crate::MeshData) in object space with texture
//! coordinates as the file stores them (see [`MeshData::flip_tex_coords`](crate::MeshData::flip_tex_coords)
//! for Mitsuba's `flip_tex_coords`), and report malformed input with the file and the line and
//! column (text) or byte offset (binary) where it goes wrong.

pub mod obj;
pub mod ply;

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LoadError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}:{location}: {message}", path.display())]
    Malformed { path: PathBuf, location: Location, message: String },
}

/// Where in a file a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// 1-based line and column (in bytes) of a text file.
    Text { line: usize, column: usize },
    /// Offset from the start of a binary file.
    Byte(usize),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Text { line, column } => write!(f, "{line}:{column}"),
            Location::Byte(offset) => write!(f, "byte {offset}"),
        }
    }
}

impl LoadError {
    /// Where a malformed file goes wrong (`None` for I/O errors).
    pub fn location(&self) -> Option<Location> {
        match self {
            LoadError::Io { .. } => None,
            LoadError::Malformed { location, .. } => Some(*location),
        }
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|source| LoadError::Io { path: path.to_owned(), source })
}

/// The whitespace-separated words of a line with their 1-based columns.
fn words(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut start = 0;
    std::iter::from_fn(move || {
        while start < line.len() && line[start].is_ascii_whitespace() {
            start += 1;
        }
        if start == line.len() {
            return None;
        }
        let begin = start;
        while start < line.len() && !line[start].is_ascii_whitespace() {
            start += 1;
        }
        Some((begin + 1, &line[begin..start]))
    })
}

/// The lines of `bytes` (split at `\n`, a trailing `\r` removed) with their 1-based numbers,
/// starting at `first_line`, and the byte offset each starts at.
fn lines(bytes: &[u8], first_line: usize) -> impl Iterator<Item = (usize, usize, &[u8])> {
    let mut offset = 0;
    bytes.split(|&b| b == b'\n').enumerate().map(move |(i, line)| {
        let start = offset;
        offset += line.len() + 1;
        (first_line + i, start, line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// A word for messages: at most 32 characters, lossily decoded.
fn show(word: &[u8]) -> String {
    let text = String::from_utf8_lossy(&word[..word.len().min(32)]).into_owned();
    if word.len() > 32 {
        text + "…"
    } else {
        text
    }
}
