//! Helpers for the behavior tests.

use unsnarl_model::walk::{Parent, Tree, Visitor, walk_block, walk_expr};
use unsnarl_model::{Call, ExprId, ExprKind, FileModel, FnKind, FuncId, Function, Span, StmtId};

/// Lowers `text` as the file `rel_path`, calling the lowering directly (not
/// through `crate::lower`'s panic guard, so bugs surface as test failures),
/// and checks the model's structural invariants.
pub fn lower_at(rel_path: &str, text: &str) -> FileModel {
    let m = crate::lower::lower_file(text, rel_path);
    check_invariants(&m, text);
    m
}

pub fn lower(text: &str) -> FileModel {
    lower_at("src/lib.rs", text)
}

pub fn dump(m: &FileModel) -> String {
    unsnarl_model::dump::dump(m)
}

/// Every call in the model, in allocation order.
pub fn calls(m: &FileModel) -> Vec<(ExprId, &Call)> {
    m.exprs
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.kind {
            ExprKind::Call(c) => Some((ExprId(i as u32), &**c)),
            _ => None,
        })
        .collect()
}

/// The first call named `name`.
#[track_caller]
pub fn call<'m>(m: &'m FileModel, name: &str) -> &'m Call {
    m.call(call_id(m, name)).unwrap()
}

/// The id of the first call named `name`.
#[track_caller]
pub fn call_id(m: &FileModel, name: &str) -> ExprId {
    calls(m)
        .into_iter()
        .find(|(_, c)| c.name == name)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no call named {name} in\n{}", dump(m)))
}

/// The target of the first call named `name`.
#[track_caller]
pub fn target<'m>(m: &'m FileModel, name: &str) -> Option<&'m str> {
    call(m, name).target.as_deref()
}

/// The function with this name or qualname.
#[track_caller]
pub fn func<'m>(m: &'m FileModel, name: &str) -> (FuncId, &'m Function) {
    m.function_ids()
        .map(|id| (id, m.func(id)))
        .find(|(_, f)| f.name == name || f.qualname == name)
        .unwrap_or_else(|| panic!("no function {name} in\n{}", dump(m)))
}

/// The statement kinds of a block, as short names.
pub fn kinds(m: &FileModel, block: &[StmtId]) -> Vec<&'static str> {
    block.iter().map(|&s| m.stmt(s).kind.short_name()).collect()
}

/// The source text a span covers.
pub fn text_of(text: &str, span: Span) -> &str {
    &text[span.start as usize..span.end as usize]
}

/// Asserts that the dump contains each of `lines` (compared trimmed).
#[track_caller]
pub fn assert_dump_has(m: &FileModel, lines: &[&str]) {
    let d = dump(m);
    let have: Vec<&str> = d.lines().map(str::trim).collect();
    for l in lines {
        assert!(have.contains(&l.trim()), "missing line {l:?} in dump:\n{d}");
    }
}

/// Structural invariants every model must satisfy:
/// - spans lie inside the text, on character boundaries;
/// - every statement and expression is reached exactly once by the walks
///   of the functions (no orphans, no sharing);
/// - every function's parent exists; closures sit at a `Closure`
///   expression and named non-method functions at a `FuncDef`.
pub fn check_invariants(m: &FileModel, text: &str) {
    let ok_span = |s: Span| {
        s.start <= s.end
            && (s.end as usize) <= text.len()
            && text.is_char_boundary(s.start as usize)
            && text.is_char_boundary(s.end as usize)
    };
    for (i, e) in m.exprs.iter().enumerate() {
        assert!(ok_span(e.span), "expr {i} has bad span {:?}", e.span);
    }
    for (i, s) in m.stmts.iter().enumerate() {
        assert!(ok_span(s.span), "stmt {i} has bad span {:?}", s.span);
    }
    for f in &m.functions {
        assert!(
            ok_span(f.span) && ok_span(f.name_span),
            "bad function span in {}",
            f.qualname
        );
        if let Some(p) = f.parent {
            assert!(p.index() < m.functions.len());
        }
    }

    struct Count {
        exprs: Vec<u32>,
        stmts: Vec<u32>,
    }
    impl Visitor for Count {
        fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
            self.stmts[id.index()] += 1;
            true
        }
        fn enter_expr(&mut self, _m: &FileModel, id: ExprId) -> bool {
            self.exprs[id.index()] += 1;
            true
        }
    }
    let mut c = Count {
        exprs: vec![0; m.exprs.len()],
        stmts: vec![0; m.stmts.len()],
    };
    for fid in m.function_ids() {
        let f = m.func(fid);
        for &d in &f.decorator_calls {
            walk_expr(m, d, &mut c);
        }
        for p in &f.params {
            if let Some(d) = p.default {
                walk_expr(m, d, &mut c);
            }
        }
        walk_block(m, &f.body, &mut c);
    }
    for (i, n) in c.exprs.iter().enumerate() {
        assert_eq!(
            *n,
            1,
            "expr {i} ({:?}) visited {n} times in\n{}",
            m.exprs[i],
            dump(m)
        );
    }
    for (i, n) in c.stmts.iter().enumerate() {
        assert_eq!(
            *n,
            1,
            "stmt {i} ({:?}) visited {n} times in\n{}",
            m.stmts[i],
            dump(m)
        );
    }

    let tree = Tree::build(m);
    for fid in m.function_ids().skip(1) {
        let f = m.func(fid);
        let site = tree.func_site(fid);
        match f.kind {
            FnKind::Closure | FnKind::AsyncBlock => {
                assert!(
                    matches!(site, Parent::Expr(_)),
                    "closure fn#{} has no site",
                    fid.0
                )
            }
            FnKind::Function => {
                assert!(
                    matches!(site, Parent::Stmt(_)),
                    "fn {} has no FuncDef",
                    f.qualname
                )
            }
            FnKind::Method | FnKind::Module => {}
        }
    }
}
