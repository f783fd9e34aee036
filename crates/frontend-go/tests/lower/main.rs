//! Behavior tests of the Go front end: source snippets in, assertions on
//! the file model out. One test binary with a module per topic (linking a
//! binary per file costs more than the tests).

mod decls;
mod differential;
mod exprs;
mod files;
mod imports;
mod resolution;
mod stmts;

use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::{
    Call, ExprId, ExprKind, FileModel, FuncId, Function, Language, SourceInput, StmtKind,
};

/// Lowers `src` as `pkg/x.go` (module `pkg`).
pub fn lower(src: &str) -> FileModel {
    lower_at("pkg/x.go", src)
}

pub fn lower_at(rel_path: &str, src: &str) -> FileModel {
    unsnarl_frontend_go::lower(&SourceInput {
        text: src,
        rel_path,
        language: Language::Go,
    })
}

/// Lowers a function body: `src` is wrapped in `func f() { ... }` after a
/// package clause and the given imports.
pub fn lower_body(imports: &str, body: &str) -> FileModel {
    lower(&format!(
        "package pkg\n{imports}\nfunc f() {{\n{body}\n}}\n"
    ))
}

pub fn dump(m: &FileModel) -> String {
    unsnarl_model::dump::dump(m)
}

/// Every call in the model, in arena order.
pub fn calls(m: &FileModel) -> Vec<&Call> {
    m.exprs
        .iter()
        .filter_map(|e| match &e.kind {
            ExprKind::Call(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

/// The first call named `name`.
#[track_caller]
pub fn call<'a>(m: &'a FileModel, name: &str) -> &'a Call {
    calls(m)
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no call named {name} in\n{}", dump(m)))
}

/// The first function named `name`.
#[track_caller]
pub fn func<'a>(m: &'a FileModel, name: &str) -> (FuncId, &'a Function) {
    m.function_ids()
        .map(|id| (id, m.func(id)))
        .find(|(_, f)| f.name == name)
        .unwrap_or_else(|| panic!("no function named {name} in\n{}", dump(m)))
}

/// The kinds of the statements of a block, as short names.
pub fn kinds(m: &FileModel, block: &[unsnarl_model::StmtId]) -> Vec<&'static str> {
    block.iter().map(|&s| m.stmt(s).kind.short_name()).collect()
}

/// The body of function `f` (see [`lower_body`]).
pub fn body_of<'a>(m: &'a FileModel, name: &str) -> &'a [unsnarl_model::StmtId] {
    &func(m, name).1.body
}

/// The source text an expression spans.
pub fn text<'a>(src: &'a str, m: &FileModel, e: ExprId) -> &'a str {
    let s = m.expr(e).span;
    &src[s.start as usize..s.end as usize]
}

/// Asserts that the dump contains every line of `expected` (trimmed), in
/// order, each as a whole line modulo indentation.
#[track_caller]
pub fn assert_dump_has(m: &FileModel, expected: &str) {
    let d = dump(m);
    let lines: Vec<&str> = d.lines().map(str::trim).collect();
    let mut at = 0;
    for want in expected.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match lines[at..].iter().position(|l| *l == want) {
            Some(i) => at += i + 1,
            None => panic!("dump lacks line `{want}` (in order) in\n{d}"),
        }
    }
}

/// Every expression reachable from the bodies of all functions.
pub fn all_exprs(m: &FileModel) -> Vec<ExprId> {
    m.function_ids()
        .flat_map(|f| exprs_in_block(m, &m.func(f).body))
        .collect()
}
