//! Language dispatch: the only place that names the front-end crates.
//!
//! The pipeline takes any [`Frontend`], so tests can drive the whole
//! application (selection, suppressions, reporters, exit codes) with a tiny
//! front end of their own.

use unsnarl_model::{FileModel, Language, SourceInput};

/// Lowers one source file into the file model.
pub trait Frontend: Sync {
    fn lower(&self, input: &SourceInput) -> FileModel;

    /// Names the front end in the results cache's key (a cache made with
    /// one front end is not read with another).
    fn name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// The real front ends: ruff's parser for Python, oxc for JavaScript and
/// TypeScript, tree-sitter for Go, rust-analyzer's parser for Rust.
#[derive(Debug, Default, Clone, Copy)]
pub struct Builtin;

impl Frontend for Builtin {
    fn lower(&self, input: &SourceInput) -> FileModel {
        match input.language {
            Language::Python => unsnarl_frontend_python::lower(input),
            Language::JavaScript | Language::TypeScript => unsnarl_frontend_js::lower(input),
            Language::Go => unsnarl_frontend_go::lower(input),
            Language::Rust => unsnarl_frontend_rust::lower(input),
        }
    }
}
