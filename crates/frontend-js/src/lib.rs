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
use oxc_parser::{ParseOptions, Parser};
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

    let allocator = Allocator::default();
    let options = ParseOptions {
        // CommonJS scripts may `return` at top level; it is not our job to
        // reject them.
        allow_return_outside_function: true,
        // Parentheses carry no meaning for the model; dropping them also
        // keeps `((((x))))` from costing nesting depth.
        preserve_parens: false,
        ..ParseOptions::default()
    };
    let parse_text = without_pure_annotations(text);
    let ret = Parser::new(&allocator, &parse_text, source_type(input))
        .with_options(options)
        .parse();
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
