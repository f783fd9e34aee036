//! Macro invocations: select!, expression-like macros, item macros.

use super::util::*;
use unsnarl_model::{ArmKind, ExprKind, StmtKind};

fn select_of(m: &unsnarl_model::FileModel) -> (&Vec<unsnarl_model::SelectArm>, bool) {
    for s in &m.stmts {
        if let StmtKind::Select { arms, biased } = &s.kind {
            return (arms, *biased);
        }
    }
    panic!("no select in\n{}", dump(m))
}

#[test]
fn tokio_select_arms() {
    let text = r#"
use tokio::sync::mpsc;
async fn f(mut rx: mpsc::Receiver<u8>, stop: Token) {
    loop {
        tokio::select! {
            biased;
            Some(v) = rx.recv(), if open => { handle(v).await; }
            _ = stop.cancelled() => break,
            res = async { work().await } => { return res; }
            else => return,
        }
    }
}
"#;
    let m = lower(text);
    let (arms, biased) = select_of(&m);
    assert!(biased);
    assert_eq!(arms.len(), 4);
    // Arm 1: pattern, future, precondition then handler.
    let ArmKind::Future { future, pattern } = &arms[0].kind else {
        panic!()
    };
    let fc = m.call(*future).unwrap();
    assert_eq!(fc.name, "recv");
    assert_eq!(m.name_of(fc.receiver.unwrap()), Some("rx"));
    assert_eq!(text_of(text, m.expr(*future).span), "rx.recv()");
    assert_eq!(text_of(text, m.expr(pattern.unwrap()).span), "Some(v)");
    assert_eq!(kinds(&m, &arms[0].body), vec!["expr", "expr"]);
    assert!(text_of(text, arms[0].span).starts_with("Some(v) = rx.recv()"));
    // Arm 2: expression handler `break`.
    assert_eq!(kinds(&m, &arms[1].body), vec!["break"]);
    // Arm 3: an async block future.
    let ArmKind::Future { future, .. } = &arms[2].kind else {
        panic!()
    };
    assert!(matches!(m.expr(*future).kind, ExprKind::Closure(_)));
    assert_eq!(kinds(&m, &arms[2].body), vec!["return"]);
    // else → default.
    assert!(matches!(arms[3].kind, ArmKind::Default));
    assert_eq!(kinds(&m, &arms[3].body), vec!["return"]);
    // Names bound by arm patterns are locals in the handler.
    assert_eq!(target(&m, "handle"), None);
    let handle = call(&m, "handle");
    assert_eq!(m.name_of(handle.args[0].value), Some("v"));
}

#[test]
fn imported_select_and_futures_select() {
    let m = lower("use tokio::select;\nasync fn f() { select! { _ = a() => {} _ = b() => {} } }");
    let (arms, biased) = select_of(&m);
    assert!(!biased);
    assert_eq!(arms.len(), 2);
    let m = lower("async fn f() { futures::select! { x = a => x, default => 0, complete => 1 } }");
    let (arms, _) = select_of(&m);
    assert_eq!(arms.len(), 3);
    assert!(matches!(arms[1].kind, ArmKind::Default));
    let m = lower("use futures::select_biased;\nasync fn f() { select_biased! { x = a => {} } }");
    assert!(select_of(&m).1);
}

#[test]
fn select_not_from_tokio_is_a_plain_macro_call() {
    let m = lower("macro_rules! select { () => {} }\nfn f() { select!(); }");
    let c = call(&m, "select");
    assert!(c.is_macro);
    assert_eq!(c.target.as_deref(), Some("crate::select"));
}

#[test]
fn select_in_expression_position() {
    let m = lower(
        "use tokio::select;\nasync fn f() -> u8 { let v = select! { x = a() => x, _ = b() => 0 }; v }",
    );
    let (_, f) = func(&m, "f");
    let StmtKind::Assign { value, .. } = &m.stmt(f.body[0]).kind else {
        panic!()
    };
    let ExprKind::Block(b) = &m.expr(value.unwrap()).kind else {
        panic!()
    };
    assert_eq!(kinds(&m, b), vec!["select"]);
    let (arms, _) = select_of(&m);
    assert_eq!(kinds(&m, &arms[0].body), vec!["tail"]);
}

#[test]
fn select_arm_with_nested_macros_maps_spans() {
    let text = "async fn f() { tokio::select! { v = rx.recv() => { println!(\"{}\", g(v)); } } }";
    let m = lower(text);
    let id = call_id(&m, "g");
    assert_eq!(text_of(text, m.expr(id).span), "g(v)");
    let p = call_id(&m, "println");
    assert_eq!(text_of(text, m.expr(p).span), "println!(\"{}\", g(v))");
}

#[test]
fn join_and_expression_macros() {
    let text = "use tracing::info;\nasync fn f() { let (a, b) = tokio::join!(one(), two(x)); info!(\"done\"); log::warn!(\"x {}\", y); assert_eq!(a, b); let s = format!(\"{a}\"); tokio::pin!(fut); }";
    let m = lower(text);
    let j = call(&m, "join");
    assert!(j.is_macro);
    assert_eq!(j.target.as_deref(), Some("tokio::join"));
    let names: Vec<_> = j
        .args
        .iter()
        .map(|a| m.call(a.value).unwrap().name.as_str())
        .collect();
    assert_eq!(names, vec!["one", "two"]);
    assert_eq!(target(&m, "info"), Some("tracing::info"));
    assert_eq!(target(&m, "warn"), Some("log::warn"));
    assert_eq!(call(&m, "warn").args.len(), 2);
    assert_eq!(target(&m, "assert_eq"), Some("std::assert_eq"));
    assert_eq!(target(&m, "format"), Some("std::format"));
    assert_eq!(target(&m, "pin"), Some("tokio::pin"));
    let one = call_id(&m, "one");
    assert_eq!(text_of(text, m.expr(one).span), "one()");
}

#[test]
fn vec_and_matches() {
    let m = lower(
        "fn f() { let a = vec![g(), h()]; let b = vec![0u8; n]; let c = matches!(x.state(), State::A | State::B); }",
    );
    let calls_named = |n: &str| {
        calls(&m)
            .into_iter()
            .filter(|(_, c)| c.name == n)
            .map(|(_, c)| c)
            .collect::<Vec<_>>()
    };
    let vecs = calls_named("vec");
    assert_eq!(vecs[0].args.len(), 2);
    assert_eq!(vecs[1].args.len(), 2);
    let mt = call(&m, "matches");
    assert_eq!(mt.args.len(), 1);
    assert_eq!(m.call(mt.args[0].value).unwrap().name, "state");
}

#[test]
fn unparseable_macro_input_gives_no_args() {
    let m = lower(
        "fn f() { tracing::info!(target: \"x\", %y, \"msg\"); my_dsl!(a => b; c); html! { <div/> } }",
    );
    assert!(call(&m, "info").args.is_empty());
    assert!(call(&m, "my_dsl").args.is_empty());
    assert!(call(&m, "html").args.is_empty());
    assert_eq!(call(&m, "my_dsl").target, None);
}

#[test]
fn non_expression_macros_are_not_reparsed() {
    let m = lower("fn f() { let s = stringify!(g()); }");
    assert!(call(&m, "stringify").args.is_empty());
    assert!(calls(&m).iter().all(|(_, c)| c.name != "g"));
}

#[test]
fn macro_use_crates() {
    let m = lower("#[macro_use]\nextern crate log;\nfn f() { info!(\"x\"); }");
    assert_eq!(target(&m, "info"), Some("log::info"));
}

#[test]
fn statement_macros_at_module_level() {
    let m = lower("my_items!(a, b);\nfn f() {}");
    let c = call(&m, "my_items");
    assert!(c.is_macro);
    assert_eq!(kinds(&m, &m.functions[0].body), vec!["expr", "funcdef"]);
}

#[test]
fn thread_local_and_lazy_static() {
    let text = "use std::cell::RefCell;\nthread_local! { static CACHE: RefCell<u8> = RefCell::new(0); }\nlazy_static! { pub static ref POOL: Mutex<Pool> = Mutex::new(make()); }";
    let m = lower(text);
    assert_dump_has(
        &m,
        &[
            "target: name CACHE =crate::CACHE",
            "value: call new =std::cell::RefCell::new",
            "target: name POOL =crate::POOL",
            "arg: call make",
        ],
    );
    let id = call_id(&m, "make");
    assert_eq!(text_of(text, m.expr(id).span), "make()");
}

#[test]
fn deeply_nested_macros_stay_bounded() {
    let mut src = String::from("1");
    for _ in 0..50 {
        src = format!("vec![{src}]");
    }
    let m = lower(&format!("fn f() {{ let v = {src}; }}"));
    // Re-parsing stops after a few levels; the rest is an opaque call.
    let n = calls(&m).len();
    assert!((2..=50).contains(&n), "{n}");
}

#[test]
fn macro_tail_is_returned() {
    let m = lower("fn f() -> String { format!(\"x\") }");
    let (_, f) = func(&m, "f");
    assert_eq!(kinds(&m, &f.body), vec!["return"]);
}

#[test]
fn batched_macro_bodies_keep_their_own_spans_and_errors() {
    let text = "fn f() {\n  assert_eq!(a(1), b());\n  weird!(=> ; ==);\n  write!(out, \"{}\", c(x.y))?;\n  v = vec![d(); 3];\n  m!([e()]);\n}";
    let m = lower(text);
    for (name, want) in [
        ("a", "a(1)"),
        ("b", "b()"),
        ("c", "c(x.y)"),
        ("d", "d()"),
        ("e", "e()"),
    ] {
        let id = call_id(&m, name);
        assert_eq!(text_of(text, m.expr(id).span), want);
    }
    assert!(call(&m, "weird").args.is_empty());
    assert_eq!(call(&m, "write").args.len(), 3);
    assert_eq!(call(&m, "vec").args.len(), 2);
}
