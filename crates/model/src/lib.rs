//! The shared vocabulary of unsnarl: the language-neutral file model that
//! front ends produce and rules read, findings and their catalog of
//! categories, and the per-language API knowledge tables.

pub mod builder;
pub mod finding;
pub mod ir;
pub mod knowledge;
pub mod span;
pub mod walk;

pub use finding::{Category, Finding, Related, Severity};
pub use ir::*;
pub use knowledge::{Effect, EffectSet, Entry, Knowledge, Table, Unbounded};
pub use span::{LineCol, LineIndex, Span};
pub mod dump;

/// What a front end needs to lower one file.
#[derive(Debug, Clone, Copy)]
pub struct SourceInput<'a> {
    /// The file's text (valid UTF-8; the pipeline rejects anything else).
    pub text: &'a str,
    /// The path relative to the scan root, with `/` separators. Front ends
    /// derive module names from it (`pkg/sub/mod.py` → `pkg.sub.mod`).
    pub rel_path: &'a str,
    pub language: Language,
}
