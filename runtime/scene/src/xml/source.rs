//! A loaded scene file and the mapping from byte offsets to line and column.

use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

use crate::error::Location;

pub(crate) struct SourceFile {
    pub path: Arc<Path>,
    pub text: String,
    line_starts: Vec<usize>,
    /// The last offset asked for and its column, to count on from there: offsets come
    /// mostly in document order, and counting from the line start each time is quadratic
    /// on long lines.
    last: Cell<(usize, usize)>,
}

impl SourceFile {
    pub fn new(path: Arc<Path>, text: String) -> Self {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { path, text, line_starts, last: Cell::new((0, 1)) }
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn location(&self, offset: usize) -> Location {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        let (last_offset, last_column) = self.last.get();
        let (from, from_column) =
            if (start..=offset).contains(&last_offset) { (last_offset, last_column) } else { (start, 1) };
        let column = from_column + self.text.get(from..offset).map_or(offset - from, |s| s.chars().count());
        self.last.set((offset, column));
        Location { file: self.path.clone(), line: line as u32, column: column as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines_and_character_columns() {
        let file = SourceFile::new(Path::new("a.xml").into(), "ab\n\u{e9}x\n".to_owned());
        let at = |offset| {
            let l = file.location(offset);
            (l.line, l.column)
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3));
        assert_eq!(at(3), (2, 1));
        assert_eq!(at(5), (2, 2)); // after the two-byte 'é'
        assert_eq!(at(7), (3, 1));
        assert_eq!(at(99), (3, 1));
        // Asking again, backwards and forwards, gives the same answers.
        assert_eq!((at(5), at(4), at(1), at(5)), ((2, 2), (2, 2), (1, 2), (2, 2)));
    }
}
