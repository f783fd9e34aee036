//! Helpers shared by the front-end tests: lowering snippets and finding
//! things in the resulting model.

#![allow(dead_code)]

use unsnarl_model::walk::{Parent, Tree};
use unsnarl_model::{Call, ExprId, ExprKind, FileModel, FuncId, Function, Language, SourceInput};

/// Lowers `src` as the file `path` and checks the model's structural
/// invariants (every node reachable from a function, spans in range).
pub fn lower_at(path: &str, src: &str) -> FileModel {
    let language = if path.contains(".ts") || path.ends_with(".mts") || path.ends_with(".cts") {
        Language::TypeScript
    } else {
        Language::JavaScript
    };
    let m = unsnarl_frontend_js::lower(&SourceInput {
        text: src,
        rel_path: path,
        language,
    });
    check_invariants(&m, src);
    m
}

pub fn js(src: &str) -> FileModel {
    lower_at("src/app.js", src)
}

pub fn ts(src: &str) -> FileModel {
    lower_at("src/app.ts", src)
}

pub fn tsx(src: &str) -> FileModel {
    lower_at("src/app.tsx", src)
}

pub fn dump(m: &FileModel) -> String {
    unsnarl_model::dump::dump(m)
}

/// Every expression and statement is reached from some function, every
/// function but the module has a parent, and all spans lie in the text.
pub fn check_invariants(m: &FileModel, src: &str) {
    let tree = Tree::build(m);
    for i in 0..m.exprs.len() {
        assert_ne!(
            tree.expr_parent(ExprId(i as u32)),
            Parent::Detached,
            "detached expr #{i}: {:?}\n{}",
            m.exprs[i],
            dump(m)
        );
    }
    for i in 0..m.stmts.len() {
        assert_ne!(
            tree.stmt_parent(unsnarl_model::StmtId(i as u32)),
            Parent::Detached,
            "detached stmt #{i}: {:?}",
            m.stmts[i]
        );
    }
    let len = src.len() as u32;
    for (i, f) in m.functions.iter().enumerate() {
        if i == 0 {
            assert!(f.parent.is_none());
        } else {
            let p = f.parent.expect("nested functions have a parent");
            assert!(p.index() < m.functions.len());
        }
        assert!(
            f.span.end <= len && f.name_span.end <= len,
            "span out of range: {f:?}"
        );
    }
    for e in &m.exprs {
        assert!(
            e.span.start <= e.span.end && e.span.end <= len,
            "bad span {e:?}"
        );
    }
    for s in &m.stmts {
        assert!(
            s.span.start <= s.span.end && s.span.end <= len,
            "bad span {s:?}"
        );
    }
}

pub fn calls(m: &FileModel) -> Vec<&Call> {
    m.exprs
        .iter()
        .filter_map(|e| match &e.kind {
            ExprKind::Call(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

/// The first call (in source order of lowering) whose name is `name`.
pub fn call<'m>(m: &'m FileModel, name: &str) -> &'m Call {
    calls(m)
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no call named {name}:\n{}", dump(m)))
}

/// The id of the first call expression named `name`.
pub fn call_id(m: &FileModel, name: &str) -> ExprId {
    (0..m.exprs.len() as u32)
        .map(ExprId)
        .find(|&id| m.call(id).is_some_and(|c| c.name == name))
        .unwrap_or_else(|| panic!("no call named {name}:\n{}", dump(m)))
}

pub fn target<'m>(m: &'m FileModel, name: &str) -> Option<&'m str> {
    call(m, name).target.as_deref()
}

/// Targets of all calls named `name`, in order.
pub fn targets<'m>(m: &'m FileModel, name: &str) -> Vec<Option<&'m str>> {
    calls(m)
        .into_iter()
        .filter(|c| c.name == name)
        .map(|c| c.target.as_deref())
        .collect()
}

/// The function whose name or qualname is `name`.
pub fn func<'m>(m: &'m FileModel, name: &str) -> &'m Function {
    m.functions
        .iter()
        .find(|f| f.qualname == name || f.name == name)
        .unwrap_or_else(|| panic!("no function {name}:\n{}", dump(m)))
}

pub fn func_id(m: &FileModel, name: &str) -> FuncId {
    m.function_ids()
        .find(|&id| m.func(id).qualname == name || m.func(id).name == name)
        .unwrap_or_else(|| panic!("no function {name}:\n{}", dump(m)))
}

/// The statement kinds of a block, as short labels.
pub fn kinds(m: &FileModel, block: &[unsnarl_model::StmtId]) -> Vec<&'static str> {
    block.iter().map(|&s| m.stmt(s).kind.short_name()).collect()
}

/// The module body's statement kinds.
pub fn module_kinds(m: &FileModel) -> Vec<&'static str> {
    kinds(m, &m.functions[0].body)
}

/// The text a span covers.
pub fn text_of(src: &str, span: unsnarl_model::Span) -> &str {
    &src[span.start as usize..span.end as usize]
}

/// Runs `f` on a thread with the pipeline's 256 MiB stack.
pub fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic on the big stack")
}
