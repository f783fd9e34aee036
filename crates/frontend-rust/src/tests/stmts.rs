//! Statements and control flow.

use super::util::*;
use unsnarl_model::{AssignOp, BinOp, ExprKind, StmtKind};

fn body_of<'m>(m: &'m unsnarl_model::FileModel, name: &str) -> &'m Vec<unsnarl_model::StmtId> {
    &func(m, name).1.body
}

#[test]
fn let_forms() {
    let m = lower(
        "fn f() { let a = 1; let mut b: u8 = 2; let (c, mut d) = pair(); let _ = g(); let e; let Some(x) = o else { return; }; }",
    );
    let b = body_of(&m, "f");
    assert_eq!(
        kinds(&m, b),
        vec![
            "assign", "assign", "assign", "assign", "assign", "assign", "if"
        ]
    );
    let ops: Vec<_> = b[..6]
        .iter()
        .map(|&s| match &m.stmt(s).kind {
            StmtKind::Assign { op, value, .. } => (*op, value.is_some()),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            (AssignOp::Declare { mutable: false }, true),
            (AssignOp::Declare { mutable: true }, true),
            (AssignOp::Declare { mutable: true }, true),
            (AssignOp::Declare { mutable: false }, true),
            (AssignOp::Declare { mutable: false }, false),
            (AssignOp::Declare { mutable: false }, true),
        ]
    );
    let target = |i: usize| match &m.stmt(b[i]).kind {
        StmtKind::Assign { targets, .. } => targets[0],
        _ => unreachable!(),
    };
    assert_eq!(m.name_of(target(0)), Some("a"));
    assert!(matches!(
        m.expr(target(2)).kind,
        ExprKind::Collection {
            kind: unsnarl_model::CollKind::Tuple,
            ..
        }
    ));
    assert_eq!(m.name_of(target(3)), Some("_"));
    assert!(matches!(m.expr(target(5)).kind, ExprKind::Other(_)));
    // let-else: the else block follows as an `if` on an opaque condition.
    let StmtKind::If { then, orelse, .. } = &m.stmt(b[6]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, then), vec!["return"]);
    assert!(orelse.is_empty());
}

#[test]
fn expression_statements_and_assignment() {
    let m = lower("fn f() { g(); x = 1; y += 2; z |= 4; self.a.b = c; _ = h(); }");
    let b = body_of(&m, "f");
    assert_eq!(
        kinds(&m, b),
        vec!["expr", "assign", "assign", "assign", "assign", "assign"]
    );
    let op = |i: usize| match &m.stmt(b[i]).kind {
        StmtKind::Assign { op, .. } => *op,
        _ => unreachable!(),
    };
    assert_eq!(op(1), AssignOp::Plain);
    assert_eq!(op(2), AssignOp::Augmented(BinOp::Add));
    assert_eq!(op(3), AssignOp::Augmented(BinOp::Bit));
    let StmtKind::Assign { targets, .. } = &m.stmt(b[4]).kind else {
        panic!()
    };
    assert_eq!(m.dotted(targets[0]).as_deref(), Some("self.a.b"));
}

#[test]
fn if_else_chains_and_if_let() {
    let m = lower("fn f() { if a { x(); } else if let Some(v) = b { y(v); } else { z(); } }");
    assert_dump_has(
        &m,
        &[
            "if",
            "cond: name a",
            "then:",
            "expr: call x",
            "else:",
            "cond: let",
            "pat: other",
            "child: name v",
            "value: name b",
            "expr: call y",
            "expr: call z",
        ],
    );
    let b = body_of(&m, "f");
    let StmtKind::If { orelse, .. } = &m.stmt(b[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, orelse), vec!["if"]);
}

#[test]
fn let_chains() {
    let m = lower("fn f() { if let Some(a) = x && let Ok(b) = a.get() && b > 1 { use_(b); } }");
    assert_dump_has(
        &m,
        &[
            "cond: logical And",
            "l: logical And",
            "l: let",
            "r: let",
            "r: binary Gt",
        ],
    );
}

#[test]
fn loops() {
    let m = lower(
        "fn f() { loop { if done() { break; } continue; } while running() { tick(); } while let Some(j) = q.pop() { run(j); } for (i, x) in xs.iter().enumerate() { use_(i, x); } 'outer: for _ in 0..3 { break 'outer; } }",
    );
    let b = body_of(&m, "f");
    assert_eq!(kinds(&m, b), vec!["loop", "while", "while", "for", "for"]);
    let StmtKind::Loop { body } = &m.stmt(b[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, body), vec!["if", "continue"]);
    let StmtKind::While { cond, .. } = &m.stmt(b[2]).kind else {
        panic!()
    };
    assert!(matches!(m.expr(*cond).kind, ExprKind::Let { .. }));
    let StmtKind::For {
        target,
        iter,
        is_async,
        ..
    } = &m.stmt(b[3]).kind
    else {
        panic!()
    };
    assert!(!is_async);
    assert!(matches!(
        m.expr(target.unwrap()).kind,
        ExprKind::Collection { .. }
    ));
    assert!(matches!(
        m.call(*iter).map(|c| c.name.as_str()),
        Some("enumerate")
    ));
    // `0..3` is an `Other` with its bounds.
    let StmtKind::For { iter, .. } = &m.stmt(b[4]).kind else {
        panic!()
    };
    assert!(matches!(&m.expr(*iter).kind, ExprKind::Other(k) if k.len() == 2));
}

#[test]
fn break_with_value() {
    let m = lower("fn f() { let v = loop { break rx.recv(); }; }");
    assert_dump_has(&m, &["loop", "expr: call recv", "break"]);
}

#[test]
fn match_statement() {
    let m = lower(
        "fn f(x: Option<u8>) { match x { Some(1) | Some(2) => a(), Some(n) if n > 3 => { b(n); } None => return, _ => {} }; }",
    );
    let b = body_of(&m, "f");
    assert_eq!(kinds(&m, b), vec!["switch"]);
    let StmtKind::Switch { subject, cases } = &m.stmt(b[0]).kind else {
        panic!()
    };
    assert_eq!(m.name_of(subject.unwrap()), Some("x"));
    assert_eq!(cases.len(), 4);
    assert_eq!(cases[0].patterns.len(), 2);
    assert_eq!(kinds(&m, &cases[0].body), vec!["expr"]);
    // A guard wraps the body in an `if`.
    assert_eq!(kinds(&m, &cases[1].body), vec!["if"]);
    assert_eq!(kinds(&m, &cases[2].body), vec!["return"]);
    assert!(cases[3].patterns.is_empty(), "`_` is the default case");
    assert!(cases[3].body.is_empty());
}

#[test]
fn blocks_and_unsafe() {
    let m = lower("fn f() { { let g = m.lock(); } unsafe { raw(); } 'l: { break 'l; } }");
    let b = body_of(&m, "f");
    assert_eq!(kinds(&m, b), vec!["block", "block", "block"]);
    let StmtKind::Block(inner) = &m.stmt(b[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, inner), vec!["assign"]);
}

#[test]
fn returns() {
    let m = lower("fn f() -> u8 { if a { return 1; } return 2 }\nfn g() { return; }");
    let b = body_of(&m, "f");
    assert_eq!(kinds(&m, b), vec!["if", "return"]);
    let StmtKind::Return(Some(v)) = m.stmt(b[1]).kind else {
        panic!()
    };
    assert_eq!(m.int_value(v), Some(2));
    let g = body_of(&m, "g");
    assert!(matches!(m.stmt(g[0]).kind, StmtKind::Return(None)));
}

#[test]
fn function_tail_is_returned_through_branches() {
    let m = lower(
        "fn f() -> J { if c { spawn(a) } else { match d { X => spawn(b), _ => { spawn(c) } } } }",
    );
    let b = body_of(&m, "f");
    assert_eq!(kinds(&m, b), vec!["if"]);
    let StmtKind::If { then, orelse, .. } = &m.stmt(b[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, then), vec!["return"]);
    let StmtKind::Switch { cases, .. } = &m.stmt(orelse[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, &cases[0].body), vec!["return"]);
    assert_eq!(kinds(&m, &cases[1].body), vec!["return"]);
}

#[test]
fn control_flow_as_values() {
    let m = lower(
        "fn f() { let x = if c { a() } else { b() }; let v = match y { _ => 1 }; let g = { let t = 1; t + 1 }; let u = unsafe { raw() }; }",
    );
    let b = body_of(&m, "f");
    let value = |i: usize| match &m.stmt(b[i]).kind {
        StmtKind::Assign { value, .. } => value.unwrap(),
        _ => unreachable!(),
    };
    let ExprKind::Block(blk) = &m.expr(value(0)).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, blk), vec!["if"]);
    let StmtKind::If { then, .. } = &m.stmt(blk[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, then), vec!["tail"]);
    let ExprKind::Block(blk) = &m.expr(value(1)).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, blk), vec!["switch"]);
    let ExprKind::Block(blk) = &m.expr(value(2)).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, blk), vec!["assign", "tail"]);
    let ExprKind::Block(blk) = &m.expr(value(3)).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, blk), vec!["tail"]);
}

#[test]
fn statement_position_tails_are_discarded() {
    let m = lower("fn f() { if c { g() } h(); }");
    let b = body_of(&m, "f");
    let StmtKind::If { then, .. } = &m.stmt(b[0]).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, then), vec!["expr"]);
}

#[test]
fn statement_spans() {
    let text = "fn f() {\n    let g = m.lock();\n    g.push(1);\n    loop { tick(); }\n}";
    let m = lower(text);
    let b = body_of(&m, "f");
    let spans: Vec<_> = b.iter().map(|&s| text_of(text, m.stmt(s).span)).collect();
    assert_eq!(
        spans,
        vec!["let g = m.lock();", "g.push(1);", "loop { tick(); }"]
    );
    let (id, c) = (call_id(&m, "push"), call(&m, "push"));
    assert_eq!(text_of(text, m.expr(id).span), "g.push(1)");
    assert_eq!(text_of(text, m.expr(c.func).span), "g.push");
}

#[test]
fn items_in_blocks() {
    let m = lower(
        "fn f() { struct S { a: u8 } const K: u8 = 1; use std::thread; thread::yield_now(); }",
    );
    let b = body_of(&m, "f");
    assert_eq!(kinds(&m, b), vec!["classdef", "assign", "expr"]);
    assert_eq!(m.types[0].qualname, "crate::f::S");
    assert_eq!(target(&m, "yield_now"), Some("std::thread::yield_now"));
}
