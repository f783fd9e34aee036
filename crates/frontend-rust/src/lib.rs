//! The Rust front end of unsnarl: parses a file with rust-analyzer's parser
//! (`ra_ap_syntax`) and lowers it into the language-neutral file model.
//!
//! See `lower` for the conventions (module paths, name resolution, how
//! macros such as `tokio::select!` are recovered).

mod file;
mod lower;
mod parse;
mod resolve;

#[cfg(test)]
mod tests;

use unsnarl_model::{FileModel, SourceInput, Span, SyntaxError};

/// Lowers one Rust file into the file model.
///
/// Never panics: syntax errors are recorded in `FileModel::syntax_errors`
/// and the recovered tree is lowered as far as it goes. As a last line of
/// defence against bugs in the parser or here, a panic during lowering is
/// caught and yields an empty model with an error entry instead of taking
/// the whole scan down.
pub fn lower(input: &SourceInput) -> FileModel {
    let crlf = with_lf_endings(input.text);
    let text = crlf.as_deref().unwrap_or(input.text);
    let rel_path = input.rel_path;
    match std::panic::catch_unwind(|| lower::lower_file(text, rel_path)) {
        Ok(m) => m,
        Err(_) => {
            let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
            let mut m = FileModel::new(file::module_path(rel_path), Span::new(0, len));
            m.is_test = file::is_test_path(rel_path);
            m.syntax_errors.push(SyntaxError {
                span: Span::new(0, 0),
                message: "internal error: the Rust front end could not lower this file".into(),
            });
            m
        }
    }
}

/// The text with every CRLF written as two LFs, if it has any. rustc reads
/// CRLF as LF, but rust-analyzer's lexer does not (its IDE normalizes line
/// endings before parsing): a `\` that ends a line of a string before CRLF
/// was "an unknown character escape". Two LFs keep every byte offset, so
/// spans still point into the file as it is; the extra line breaks fall
/// where a line break already was.
fn with_lf_endings(text: &str) -> Option<String> {
    text.contains("\r\n").then(|| text.replace("\r\n", "\n\n"))
}

/// How far [`run_stage`] takes a text.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Stage {
    /// rust-analyzer's lexer.
    Lex,
    /// The lexer and the parser's event stream, no tree.
    Parse,
    /// The syntax tree, as lowering gets it (macro bodies not re-parsed).
    Tree,
}

/// Runs the front end's first stages on a text and drops what they made;
/// returns a count (tokens, events or syntax errors) so that the work is
/// not optimized away. For the benchmark (`benches/frontends.rs`), which
/// splits the Rust front end's cost into its stages.
#[doc(hidden)]
pub fn run_stage(text: &str, stage: Stage) -> usize {
    match stage {
        Stage::Lex => parse::lex_and_parse_only(text, false),
        Stage::Parse => parse::lex_and_parse_only(text, true),
        Stage::Tree => parse::parse(text).errors.len(),
    }
}
