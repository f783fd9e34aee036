//! Behavior tests: small Python snippets lowered, then assertions on the
//! model (often through `unsnarl_model::dump::dump`).

mod classes;
mod expressions;
mod files;
mod functions;
mod imports;
mod robustness;
mod statements;

use unsnarl_model::dump::dump;
use unsnarl_model::{Call, ExprId, ExprKind, FileModel, FuncId, Function, Language, SourceInput};

pub(crate) fn lower_at(path: &str, text: &str) -> FileModel {
    crate::lower(&SourceInput {
        text,
        rel_path: path,
        language: Language::Python,
    })
}

pub(crate) fn lower(text: &str) -> FileModel {
    lower_at("pkg/mod.py", text)
}

/// All calls named `name`, in creation order.
pub(crate) fn calls<'m>(m: &'m FileModel, name: &str) -> Vec<&'m Call> {
    m.exprs
        .iter()
        .filter_map(|e| match &e.kind {
            ExprKind::Call(c) if c.name == name => Some(&**c),
            _ => None,
        })
        .collect()
}

/// The one call named `name`.
pub(crate) fn call<'m>(m: &'m FileModel, name: &str) -> &'m Call {
    let cs = calls(m, name);
    assert_eq!(cs.len(), 1, "calls named {name}:\n{}", dump(m));
    cs[0]
}

pub(crate) fn target(m: &FileModel, name: &str) -> Option<String> {
    call(m, name).target.as_deref().map(str::to_string)
}

/// The function with this qualified name (or, for anonymous ones, name).
pub(crate) fn func<'m>(m: &'m FileModel, qualname: &str) -> &'m Function {
    m.functions
        .iter()
        .find(|f| f.qualname == qualname)
        .unwrap_or_else(|| panic!("no function {qualname}:\n{}", dump(m)))
}

pub(crate) fn func_id(m: &FileModel, qualname: &str) -> FuncId {
    FuncId(
        m.functions
            .iter()
            .position(|f| f.qualname == qualname)
            .unwrap_or_else(|| panic!("no function {qualname}:\n{}", dump(m))) as u32,
    )
}

/// Asserts that the dump contains each of `lines` (trimmed), in order.
#[track_caller]
pub(crate) fn assert_dump(m: &FileModel, lines: &[&str]) {
    let d = dump(m);
    let mut rest = d.lines().map(str::trim);
    for want in lines {
        assert!(
            rest.any(|l| l == *want),
            "missing (or out of order) line {want:?} in dump:\n{d}"
        );
    }
}

/// The source text an expression spans.
pub(crate) fn text_of<'t>(m: &FileModel, text: &'t str, e: ExprId) -> &'t str {
    let s = m.expr(e).span;
    &text[s.start as usize..s.end as usize]
}

/// Resolved name of a `Name`/`Attr` expression.
pub(crate) fn resolved(m: &FileModel, e: ExprId) -> Option<&str> {
    m.resolved(e)
}
