//! Statement kinds.

use super::*;
use unsnarl_model::{AssignOp, BinOp, StmtKind};

fn body_kinds(m: &FileModel, f: FuncId) -> Vec<&StmtKind> {
    m.func(f).body.iter().map(|s| &m.stmt(*s).kind).collect()
}

#[test]
fn assignments() {
    let m = lower("a = b = f()\nx, y = t\nn += 1\ns |= {1}\nz: int = 3\nw: str\n");
    let kinds = body_kinds(&m, FuncId(0));
    let StmtKind::Assign { targets, value, op } = kinds[0] else {
        panic!()
    };
    assert_eq!(targets.len(), 2);
    assert!(value.is_some());
    assert_eq!(*op, AssignOp::Plain);
    assert!(matches!(
        kinds[2],
        StmtKind::Assign {
            op: AssignOp::Augmented(BinOp::Add),
            ..
        }
    ));
    assert!(matches!(
        kinds[3],
        StmtKind::Assign {
            op: AssignOp::Augmented(BinOp::Bit),
            ..
        }
    ));
    assert!(matches!(
        kinds[4],
        StmtKind::Assign {
            op: AssignOp::Declare { mutable: true },
            value: Some(_),
            ..
        }
    ));
    // A bare annotation declares without a value.
    assert!(matches!(
        kinds[5],
        StmtKind::Assign {
            op: AssignOp::Declare { .. },
            value: None,
            ..
        }
    ));
    assert_dump(
        &m,
        &[
            "assign Plain",
            "target: Tuple",
            "elem: name x =pkg.mod.x",
            "elem: name y =pkg.mod.y",
            "value: name t",
        ],
    );
}

#[test]
fn if_elif_else_nests_in_orelse() {
    let src = "if a:\n    f()\nelif b:\n    g()\nelif c:\n    pass\nelse:\n    h()\n";
    let m = lower(src);
    let StmtKind::If { cond, then, orelse } = &m.stmt(m.functions[0].body[0]).kind else {
        panic!()
    };
    assert_eq!(m.name_of(*cond), Some("a"));
    assert_eq!(then.len(), 1);
    assert_eq!(orelse.len(), 1);
    let elif = m.stmt(orelse[0]);
    assert_eq!(
        &src[elif.span.start as usize..elif.span.end as usize],
        "elif b:\n    g()\nelif c:\n    pass\nelse:\n    h()"
    );
    let StmtKind::If { orelse: o2, .. } = &elif.kind else {
        panic!()
    };
    let StmtKind::If {
        cond: c3,
        orelse: o3,
        ..
    } = &m.stmt(o2[0]).kind
    else {
        panic!()
    };
    assert_eq!(m.name_of(*c3), Some("c"));
    assert!(matches!(m.stmt(o3[0]).kind, StmtKind::Expr(_)));
}

#[test]
fn very_long_elif_chains_become_a_switch() {
    let mut src = String::from("if x == 0:\n    f0()\n");
    for i in 1..200 {
        src.push_str(&format!("elif x == {i}:\n    f{i}()\n"));
    }
    src.push_str("else:\n    other()\n");
    let m = lower(&src);
    let StmtKind::Switch { subject, cases } = &m.stmt(m.functions[0].body[0]).kind else {
        panic!("{}", dump(&m))
    };
    assert!(subject.is_none());
    assert_eq!(cases.len(), 201);
    assert_eq!(cases[0].patterns.len(), 1);
    assert!(cases[200].patterns.is_empty());
    assert_eq!(calls(&m, "f199").len(), 1);
    assert_eq!(calls(&m, "other").len(), 1);
}

#[test]
fn while_with_else() {
    let m = lower("while running():\n    step()\n    continue\nelse:\n    done()\n");
    assert_dump(
        &m,
        &[
            "while",
            "cond: call running",
            "body:",
            "expr: call step",
            "continue",
            "else:",
            "expr: call done",
        ],
    );
}

#[test]
fn for_and_async_for() {
    let m = lower(
        "for i, x in enumerate(xs):\n    break\nelse:\n    after()\nasync def f():\n    async for m in stream():\n        pass\n",
    );
    assert_dump(
        &m,
        &[
            "for",
            "target: Tuple",
            "iter: call enumerate =builtins.enumerate",
            "break",
            // The `else` block follows the loop.
            "expr: call after",
            "for async",
            "iter: call stream",
        ],
    );
    let kinds = body_kinds(&m, FuncId(0));
    assert!(matches!(
        kinds[0],
        StmtKind::For {
            is_async: false,
            ..
        }
    ));
    // As a block of its own: a `raise` in it does not end what follows.
    let StmtKind::Block(orelse) = &kinds[1] else {
        panic!("{:?}", kinds[1])
    };
    assert!(matches!(m.stmt(orelse[0]).kind, StmtKind::Expr(_)));
}

#[test]
fn with_and_async_with() {
    let src = "import threading\nlock = threading.Lock()\nwith lock, open(p) as f, ctx() as (a, b):\n    f.read()\nasync def g(sem):\n    async with sem:\n        pass\n";
    let m = lower(src);
    let StmtKind::With {
        items,
        is_async,
        body,
    } = &m.stmt(m.functions[0].body[2]).kind
    else {
        panic!()
    };
    assert!(!is_async);
    assert_eq!(items.len(), 3);
    assert_eq!(resolved(&m, items[0].ctx), Some("pkg.mod.lock"));
    assert!(items[0].target.is_none());
    assert_eq!(
        m.call(items[1].ctx).unwrap().target.as_deref(),
        Some("builtins.open")
    );
    assert_eq!(m.name_of(items[1].target.unwrap()), Some("f"));
    assert_eq!(text_of(&m, src, items[2].target.unwrap()), "(a, b)");
    assert_eq!(body.len(), 1);
    assert_dump(&m, &["with async", "item: name sem"]);
}

#[test]
fn try_except_else_finally() {
    let src = "import asyncio\nfrom asyncio import CancelledError as CE\ntry:\n    work()\nexcept (asyncio.CancelledError, KeyboardInterrupt) as e:\n    raise\nexcept BaseException:\n    pass\nexcept CE:\n    pass\nexcept:\n    log()\nelse:\n    ok()\nfinally:\n    cleanup()\n";
    let m = lower(src);
    let StmtKind::Try {
        body,
        handlers,
        orelse,
        finally,
    } = &m.stmt(m.functions[0].body[2]).kind
    else {
        panic!()
    };
    assert_eq!(body.len(), 1);
    assert_eq!(handlers.len(), 4);
    assert_eq!(
        handlers[0].types,
        ["asyncio.CancelledError", "KeyboardInterrupt"]
    );
    assert_eq!(handlers[0].name.as_deref(), Some("e"));
    assert!(!handlers[0].is_star);
    assert!(matches!(
        m.stmt(handlers[0].body[0]).kind,
        StmtKind::Raise(None)
    ));
    // Builtin exceptions stay bare, not `builtins.`.
    assert_eq!(handlers[1].types, ["BaseException"]);
    assert_eq!(handlers[2].types, ["asyncio.CancelledError"]);
    // A bare `except:` catches everything: no types.
    assert!(handlers[3].types.is_empty());
    assert_eq!(
        &src[handlers[3].span.start as usize..handlers[3].span.end as usize],
        "except:\n    log()"
    );
    assert_eq!(orelse.len(), 1);
    assert_eq!(finally.as_ref().map(Vec::len), Some(1));
}

#[test]
fn try_finally_without_handlers_and_try_except_without_finally() {
    let m = lower("try:\n    a()\nfinally:\n    b()\ntry:\n    a()\nexcept E:\n    pass\n");
    let kinds = body_kinds(&m, FuncId(0));
    assert!(
        matches!(kinds[0], StmtKind::Try { handlers, finally: Some(_), .. } if handlers.is_empty())
    );
    assert!(matches!(kinds[1], StmtKind::Try { finally: None, .. }));
}

#[test]
fn except_star_and_unresolved_handler_types() {
    let m = lower(
        "try:\n    pass\nexcept* (ValueError, errors.Timeout):\n    pass\nexcept* get_type():\n    pass\n",
    );
    let StmtKind::Try { handlers, .. } = &m.stmt(m.functions[0].body[0]).kind else {
        panic!()
    };
    assert!(handlers.iter().all(|h| h.is_star));
    assert_eq!(handlers[0].types, ["ValueError", "errors.Timeout"]);
    assert_eq!(handlers[1].types, ["get_type()"]);
}

#[test]
fn a_shadowed_builtin_exception_name_is_not_the_builtin() {
    let m =
        lower("from errors import TimeoutError\ntry:\n    pass\nexcept TimeoutError:\n    pass\n");
    let StmtKind::Try { handlers, .. } = &m.stmt(m.functions[0].body[1]).kind else {
        panic!()
    };
    assert_eq!(handlers[0].types, ["errors.TimeoutError"]);
}

#[test]
fn raise_forms() {
    let m = lower("raise\nraise ValueError('x')\nraise Err from exc\n");
    assert_dump(
        &m,
        &[
            "raise",
            "raise: call ValueError =builtins.ValueError",
            "raise: name Err",
        ],
    );
}

#[test]
fn return_break_continue_pass() {
    let m = lower(
        "def f():\n    for x in y:\n        if x:\n            break\n        continue\n    pass\n    return\n",
    );
    assert_dump(&m, &["break", "continue", "pass", "return"]);
}

#[test]
fn match_becomes_a_switch() {
    let src = "match cmd:\n    case 'go' | 'run':\n        go()\n    case Point(x=0, y=yy):\n        pass\n    case [first, *others] if first:\n        pass\n    case {'k': v, **rest}:\n        pass\n    case None:\n        pass\n    case other:\n        pass\n    case _:\n        fallback()\n";
    let m = lower(src);
    let StmtKind::Switch { subject, cases } = &m.stmt(m.functions[0].body[0]).kind else {
        panic!()
    };
    assert_eq!(m.name_of(subject.unwrap()), Some("cmd"));
    assert_eq!(cases.len(), 7);
    // Or-patterns: one pattern per alternative.
    assert_eq!(cases[0].patterns.len(), 2);
    // Class patterns are never calls.
    assert!(matches!(
        m.expr(cases[1].patterns[0]).kind,
        ExprKind::Other(_)
    ));
    assert!(calls(&m, "Point").is_empty());
    // A guard wraps the body in an `If`.
    assert!(matches!(m.stmt(cases[2].body[0]).kind, StmtKind::If { .. }));
    assert!(matches!(
        m.expr(cases[3].patterns[0]).kind,
        ExprKind::Collection { .. }
    ));
    assert_eq!(
        m.literal(cases[4].patterns[0]),
        Some(&unsnarl_model::Lit::Null)
    );
    assert_eq!(m.name_of(cases[5].patterns[0]), Some("other"));
    // The wildcard is the default case.
    assert!(cases[6].patterns.is_empty());
    assert_eq!(
        &src[cases[6].span.start as usize..cases[6].span.end as usize],
        "case _:\n        fallback()"
    );
}

#[test]
fn match_captures_shadow_imports() {
    let m = lower(
        "import time\ndef f(x):\n    match x:\n        case [time]:\n            time.sleep(1)\n",
    );
    assert_eq!(target(&m, "sleep"), None);
}

#[test]
fn assert_becomes_if_raise() {
    let m = lower("assert ready(), f'not ready {x}'\nassert y\n");
    assert_dump(
        &m,
        &[
            "if",
            "cond: call ready",
            "then:",
            "raise: other",
            "if",
            "cond: name y",
            "then:",
            "raise",
        ],
    );
}

#[test]
fn global_and_nonlocal() {
    let m = lower("def f():\n    global a, b\n    def g():\n        nonlocal c\n");
    let f = func_id(&m, "pkg.mod.f");
    assert!(matches!(
        body_kinds(&m, f)[0],
        StmtKind::Global { names, nonlocal: false } if names == &["a", "b"]
    ));
    assert_dump(&m, &["global a, b", "nonlocal c"]);
}

#[test]
fn pass_type_aliases_and_docstrings_are_pass() {
    let m = lower("\"\"\"Module docstring.\"\"\"\npass\ntype X = int\n");
    let kinds = body_kinds(&m, FuncId(0));
    assert_eq!(kinds.len(), 3);
    assert!(kinds.iter().all(|k| matches!(k, StmtKind::Pass)));
}

#[test]
fn del_keeps_its_targets() {
    let m = lower("del a[0], self.b\n");
    assert_dump(
        &m,
        &[
            "del",
            "target: index",
            "obj: name a",
            "idx: lit Int(0)",
            "target: attr .b",
            "obj: name self",
        ],
    );
}

#[test]
fn expression_statements() {
    let m = lower("f()\nx\n");
    let kinds = body_kinds(&m, FuncId(0));
    assert!(kinds.iter().all(|k| matches!(k, StmtKind::Expr(_))));
}

#[test]
fn statement_spans_cover_the_statement() {
    let src = "x = 1\nwith a:\n    b()\n";
    let m = lower(src);
    let spans: Vec<&str> = m.functions[0]
        .body
        .iter()
        .map(|s| {
            let sp = m.stmt(*s).span;
            &src[sp.start as usize..sp.end as usize]
        })
        .collect();
    assert_eq!(spans, ["x = 1", "with a:\n    b()"]);
}

#[test]
fn annotated_assignments_declare_the_type_of_their_name() {
    let src = "import httpx\n\nclass Gateway: ...\n\ndef f(state):\n    gw: Gateway | None = state['gw']\n    client: httpx.Client = make()\n    self_x: 'unknown_thing' = 1\n    self.y: Gateway = g\n";
    let m = lower(src);
    let declared: Vec<(&str, &str)> = m
        .declared_types
        .iter()
        .map(|(e, t)| {
            (
                m.name_of(*e).unwrap_or("?"),
                t.resolved.as_deref().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        declared,
        vec![("gw", "pkg.mod.Gateway"), ("client", "httpx.Client")],
        "a name with an annotation that resolves is declared; an attribute target is a field, not a name"
    );
}
