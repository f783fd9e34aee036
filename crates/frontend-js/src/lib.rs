//! The JavaScript/TypeScript front end of unsnarl: parses a file with
//! `oxc_parser`, resolves names through its imports, `require`s and
//! module-level definitions, and lowers it into the language-neutral
//! [`FileModel`].
//!
//! Qualified names use `.` and name modules by their project path without
//! extension (`src/lib/db.query`), packages as written (`fs/promises.readFile`,
//! `@aws-sdk/client-s3.S3Client`).
//!
//! Conventions worth knowing when writing rules or knowledge:
//!
//! - A default import of a package is the package (`import axios from
//!   'axios'` → `axios`); of a project module, its `default` export
//!   (`import db from './db'` → `src/db.default`). `require('x')` is the
//!   module `x` either way.
//! - A definition exported only under another name is named by that name
//!   (`export default function App` → `<module>.default`, `export { run as
//!   start }` → `<module>.start`); `module.exports = X` / `export = X` make
//!   `X` the module itself, as `require` sees it.
//! - Member chains extend names of modules, functions, classes and globals
//!   (`fs.promises.readFile`, `Promise.all`), not of variables: for
//!   `const lock = new Mutex()`, `lock` resolves to `<module>.lock` but
//!   `lock.acquire()` is left to the semantic pass, which types `lock`.
//! - `this.m()` resolves to `<Class>.m` when the class defines `m`, else to
//!   `<Base>.m` when the class `extends` something known; `super.m()` too.
//! - Functions nested in functions are `<outer>.<name>`; a function, arrow
//!   or class assigned to a binding takes its name (`const run = async () =>
//!   {}` → `<module>.run`), and so do object-literal methods of a
//!   module-level `const` (`<module>.api.get`).
//! - Class field initializers run at the start of the constructor (an
//!   implicit one is created when needed); static initializers and static
//!   blocks follow the `ClassDef`. `using`/`await using` lower to `With`
//!   over the rest of the block.

mod collect;
mod lower;
mod paths;
mod scope;
mod types;

use oxc_allocator::Allocator;
use oxc_ast::ast::Program;
use oxc_parser::{ParseOptions, Parser, ParserReturn};
use oxc_span::SourceType;
use unsnarl_model::{FileModel, Language, SourceInput, Span, SyntaxError};

pub use paths::{is_test_path, module_name};

/// `text` with the bundler annotations `@__PURE__` / `#__PURE__` defused
/// (`@__pure__`, same length, so every span still holds). oxc 0.146 trips a
/// debug assertion (a panic in debug builds) on a pure comment before a
/// labeled statement, `/* #__PURE__ */ x: ...` (found by the `js` fuzz
/// target); the model has no use for the annotation.
fn without_pure_annotations(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("__PURE__") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for lead in ["@__PURE__", "#__PURE__"] {
        out = out.replace(lead, &lead.replace("PURE", "pure"));
    }
    std::borrow::Cow::Owned(out)
}

/// Lowers one JS/TS file. Never panics: syntax errors are recorded in
/// [`FileModel::syntax_errors`] and whatever oxc recovered is lowered.
pub fn lower(input: &SourceInput) -> FileModel {
    let text = input.text;
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    let mut model = FileModel::new(module_name(input.rel_path), Span::new(0, len));
    model.reserve_nodes(text.len(), 12, 62);
    model.is_test = is_test_path(input.rel_path);

    in_thread_arena(|allocator| parse_and_lower(input, allocator, model))
}

/// Runs `f` with this thread's parser arena, emptied first.
fn in_thread_arena<R>(f: impl FnOnce(&Allocator) -> R) -> R {
    ARENA.with(|arena| match arena.try_borrow_mut() {
        Ok(mut allocator) => {
            allocator.reset();
            let out = f(&allocator);
            if allocator.capacity() > ARENA_KEPT_BYTES {
                *allocator = Allocator::default();
            }
            out
        }
        // Only if a lowering ever lowered another file from inside itself.
        Err(_) => f(&Allocator::default()),
    })
}

thread_local! {
    /// The parser's arena, one per thread and reset between files: a fresh
    /// arena per file had its chunks freed, given back to the system (the
    /// binary's allocator returns freed memory after 1 ms) and faulted in
    /// again by the next file.
    static ARENA: std::cell::RefCell<Allocator> = std::cell::RefCell::new(Allocator::default());
}

/// An arena that grew past this (a file of a few megabytes) is dropped
/// rather than kept for the thread's next file, so that one large file does
/// not hold its memory for the rest of the scan.
const ARENA_KEPT_BYTES: usize = 8 << 20;

/// Parses a file the way [`lower`] does, into `allocator`.
fn parse<'a>(input: &SourceInput, allocator: &'a Allocator, text: &'a str) -> ParserReturn<'a> {
    let options = ParseOptions {
        // CommonJS scripts may `return` at top level; it is not our job to
        // reject them.
        allow_return_outside_function: true,
        // Parentheses carry no meaning for the model; dropping them also
        // keeps `((((x))))` from costing nesting depth.
        preserve_parens: false,
        ..ParseOptions::default()
    };
    Parser::new(allocator, text, source_type(input))
        .with_options(options)
        .parse()
}

/// Parses a file as [`lower`] does and drops the tree, without lowering
/// it; returns the number of syntax errors. For the benchmark
/// (`benches/frontends.rs`), which compares the parser's cost with the
/// whole front end's.
#[doc(hidden)]
pub fn parse_only(input: &SourceInput) -> usize {
    let text = without_pure_annotations(input.text);
    in_thread_arena(|allocator| parse(input, allocator, &text).diagnostics.errors().count())
}

fn parse_and_lower(input: &SourceInput, allocator: &Allocator, mut model: FileModel) -> FileModel {
    let text = input.text;
    let parse_text = without_pure_annotations(text);
    let ret = parse(input, allocator, &parse_text);
    for d in ret.diagnostics.errors() {
        let span = d
            .labels
            .iter()
            .find(|l| l.primary())
            .or_else(|| d.labels.first())
            .map_or(Span::new(0, 0), |l| {
                Span::new(l.offset(), l.offset().saturating_add(l.len()))
            });
        model.syntax_errors.push(SyntaxError {
            span,
            message: d.message.to_string(),
        });
    }
    model.is_generated = is_generated(text, &ret.program);
    if ret.panicked {
        // The program is empty when the parser gave up: only the errors are
        // worth reporting.
        return model;
    }
    lower::Lowerer::new(text, input.rel_path, model).lower_program(&ret.program)
}

/// The parser configuration for a file, from its extension (falling back on
/// the language the walker detected). JSX is enabled for `.js` files too,
/// since React code often uses `.js`.
fn source_type(input: &SourceInput) -> SourceType {
    let path = input.rel_path;
    let file = path.rsplit('/').next().unwrap_or(path);
    let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
    let st = match ext {
        "js" | "jsx" => SourceType::unambiguous().with_jsx(true),
        "mjs" => SourceType::mjs().with_jsx(true),
        "cjs" => SourceType::cjs().with_jsx(true),
        "ts" => SourceType::ts(),
        "mts" => SourceType::ts().with_module(true),
        "cts" => SourceType::ts().with_commonjs(true),
        "tsx" => SourceType::tsx(),
        _ => match input.language {
            Language::TypeScript => SourceType::ts(),
            _ => SourceType::unambiguous().with_jsx(true),
        },
    };
    let declaration = [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|suffix| file.ends_with(suffix));
    if declaration {
        st.with_typescript_definition(true)
    } else {
        st
    }
}

/// A file is generated when a comment before its first statement says so
/// (`@generated`, `Code generated ... DO NOT EDIT`).
fn is_generated(text: &str, program: &Program<'_>) -> bool {
    let first_code = program
        .body
        .first()
        .map(|s| oxc_span::GetSpan::span(s).start)
        .unwrap_or(u32::MAX);
    program
        .comments
        .iter()
        .take_while(|c| c.span.start < first_code)
        .any(|c| {
            let t = text
                .get(c.span.start as usize..c.span.end as usize)
                .unwrap_or("");
            t.contains("@generated")
                || t.find("Code generated")
                    .is_some_and(|i| t[i..].contains("DO NOT EDIT"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(path: &'a str, text: &'a str) -> SourceInput<'a> {
        SourceInput {
            text,
            rel_path: path,
            language: Language::JavaScript,
        }
    }

    /// Source large enough that its arena outgrows `ARENA_KEPT_BYTES`.
    fn big_source() -> String {
        (0..30_000)
            .map(|i| {
                format!("async function g{i}(a) {{ await h(a, [1, 2], {{ k: `${{a}}` }}); }}\n")
            })
            .collect()
    }

    #[test]
    fn a_thread_does_not_keep_the_arena_of_a_large_file() {
        let big = big_source();
        let src = input("src/big.js", &big);
        let fresh = Allocator::default();
        let model = parse_and_lower(&src, &fresh, FileModel::new("big", Span::new(0, 0)));
        assert_eq!(model.functions.len(), 30_001);
        assert!(
            fresh.capacity() > ARENA_KEPT_BYTES,
            "the sample no longer outgrows the cap ({} bytes): make it larger",
            fresh.capacity()
        );
        std::thread::spawn(move || {
            let big = big_source();
            lower(&input("src/big.js", &big));
            let kept = ARENA.with(|a| a.borrow().capacity());
            assert!(kept <= ARENA_KEPT_BYTES, "kept {kept} bytes");
            // The thread's next file gets a working arena.
            let m = lower(&input("src/a.js", "async function f() { await g(); }\n"));
            assert_eq!(m.functions.len(), 2);
        })
        .join()
        .unwrap();
    }
}
