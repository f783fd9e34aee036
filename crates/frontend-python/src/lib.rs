//! The Python front end of unsnarl: parses a file with `ruff_python_parser`
//! (error-recovering, so broken files are still lowered), resolves names
//! through the file's imports and module-level definitions, and lowers the
//! syntax tree into the language-neutral [`FileModel`].
//!
//! Layout:
//! - [`path`]: module name, package, test-file and generated-file detection;
//! - [`scope`]: bindings, scopes and name lookup (with Python's builtins);
//! - [`collect`]: the pre-pass that finds what each scope binds before its
//!   body is lowered (Python names are local to the whole function);
//! - [`types`]: annotations to [`TypeRef`](unsnarl_model::TypeRef);
//! - [`lower`]: statements, expressions, functions and classes.

mod collect;
mod lower;
mod path;
mod scope;
mod types;

#[cfg(test)]
mod tests;

use ruff_python_ast::{ModModule, PySourceType};
use ruff_python_parser::Parsed;
use ruff_text_size::TextRange;
use unsnarl_model::{FileModel, SourceInput, Span, SyntaxError};

/// Lowers one Python file into its file model. Never panics; syntax errors
/// are recorded in [`FileModel::syntax_errors`] and the parser's recovered
/// tree is lowered as far as it goes.
pub fn lower(input: &SourceInput) -> FileModel {
    let source_type = source_type(input);
    // SAFETY: the parser keeps nothing it allocates beyond its result (no
    // global or thread-local caches, no thread pool): the tree is built in
    // the thread's region and forgotten once lowered.
    unsafe {
        unsnarl_alloc::in_region(
            || ruff_python_parser::parse_unchecked_source(input.text, source_type),
            |parsed| lower_parsed(input, parsed),
        )
    }
}

fn lower_parsed(input: &SourceInput, parsed: &Parsed<ModModule>) -> FileModel {
    let names = path::ModulePath::new(input.rel_path);
    let is_test = path::is_test_path(input.rel_path);

    // The module function covers the whole file (the module node's range
    // can stop short of trailing comments).
    let mut model = FileModel::new(names.module.clone(), Span::new(0, input.text.len() as u32));
    model.reserve_nodes(input.text.len(), 11, 52);
    model.functions[0].name_span = Span::new(0, 0);
    model.functions[0].is_test = is_test;
    model.is_test = is_test;
    model.is_generated = path::is_generated(input.text);
    model.syntax_errors = parsed
        .errors()
        .iter()
        .map(|e| SyntaxError {
            span: span(e.location),
            message: e.error.to_string(),
        })
        .collect();

    lower::Lowerer::new(input.text, model, names).lower_module(&parsed.syntax().body)
}

/// The dotted name of the package a file defines, if it is one's
/// `__init__.py` (or stub): `pkg.config` for `pkg/config/__init__.py`,
/// named as [`lower`] names its module. The project index uses them to
/// keep a module inside a package from answering for a top-level import
/// of the same name.
pub fn package_defined_by(rel_path: &str) -> Option<String> {
    let file = rel_path.rsplit('/').next().unwrap_or(rel_path);
    if file != "__init__.py" && file != "__init__.pyi" {
        return None;
    }
    let module = path::ModulePath::new(rel_path).module;
    (!module.is_empty()).then_some(module)
}

/// The module name of a file that sits in a folder whose name is not an
/// identifier (`scx-code-agent/config.py` is `config`): that folder cannot
/// be imported, so the module is only ever top-level `config`, never the
/// `config` of some package (`kubernetes.config`). `None` for other files.
pub fn unimportable_folder_module(rel_path: &str) -> Option<String> {
    let module = path::ModulePath::new(rel_path).module;
    let in_folder = rel_path.trim_start_matches("./").contains('/');
    (in_folder && !module.is_empty() && !module.contains('.')).then_some(module)
}

/// A top-level module of a file at the scan's root (`config.py`), which
/// may be a package's module seen from inside the package.
pub fn root_module(rel_path: &str) -> Option<String> {
    let module = path::ModulePath::new(rel_path).module;
    let at_root = !rel_path.trim_start_matches("./").contains('/');
    (at_root && !module.is_empty()).then_some(module)
}

/// Parses a file and discards the tree, without lowering it; returns the
/// number of syntax errors. For the benchmark (`benches/frontends.rs`),
/// which compares the parser's cost with the whole front end's.
#[doc(hidden)]
pub fn parse_only(input: &SourceInput) -> usize {
    let source_type = source_type(input);
    // SAFETY: as in `lower`.
    unsafe {
        unsnarl_alloc::in_region(
            || ruff_python_parser::parse_unchecked_source(input.text, source_type),
            |parsed| parsed.errors().len(),
        )
    }
}

fn source_type(input: &SourceInput) -> PySourceType {
    if input.rel_path.ends_with(".pyi") {
        PySourceType::Stub
    } else {
        PySourceType::Python
    }
}

pub(crate) fn span(r: TextRange) -> Span {
    Span::new(r.start().to_u32(), r.end().to_u32())
}
