//! Byte spans and the line index that turns them into 1-based line/column.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` in the source text.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    pub fn contains(self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }

    pub fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    pub fn len(self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// Line starts of a source text, for offset → line/column conversion.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0u32];
        starts.extend(memchr_iter(b'\n', text.as_bytes()).map(|i| (i + 1) as u32));
        LineIndex { starts }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The 0-based line of a byte offset.
    pub fn line_of(&self, offset: u32) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// Byte offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> u32 {
        self.starts[line.min(self.starts.len() - 1)]
    }

    /// The 1-based line/column of a byte offset in `text`.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let offset = (offset as usize).min(text.len()) as u32;
        let line = self.line_of(offset);
        let start = self.starts[line] as usize;
        let mut end = offset as usize;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let column = text[start..end].chars().count() as u32 + 1;
        LineCol {
            line: line as u32 + 1,
            column,
        }
    }

    /// The text of 0-based `line` without its line terminator.
    pub fn line_text<'a>(&self, text: &'a str, line: usize) -> &'a str {
        if line >= self.starts.len() {
            return "";
        }
        let start = self.starts[line] as usize;
        let end = self
            .starts
            .get(line + 1)
            .map(|&e| e as usize)
            .unwrap_or(text.len());
        text.get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }
}

fn memchr_iter(needle: u8, haystack: &[u8]) -> impl Iterator<Item = usize> + '_ {
    haystack
        .iter()
        .enumerate()
        .filter(move |(_, b)| **b == needle)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_chars() {
        let text = "ab\ncé d\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(idx.line_col(text, 3), LineCol { line: 2, column: 1 });
        // 'd' is after "cé " (é is two bytes).
        let d = text.find('d').unwrap() as u32;
        assert_eq!(idx.line_col(text, d), LineCol { line: 2, column: 4 });
        assert_eq!(idx.line_text(text, 1), "cé d");
    }
}
