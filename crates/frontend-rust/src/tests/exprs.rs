//! Expressions.

use super::util::*;
use unsnarl_model::{BinOp, CollKind, ExprKind, Lit, LogicalOp, StmtKind, UnOp};

/// The value of the first `let` in `fn f`.
fn let_value(src: &str) -> (unsnarl_model::FileModel, unsnarl_model::ExprId) {
    let m = lower(&format!("fn f() {{ let x = {src}; }}"));
    let (_, f) = func(&m, "f");
    let StmtKind::Assign { value, .. } = &m.stmt(f.body[0]).kind else {
        panic!()
    };
    let v = value.unwrap();
    (m, v)
}

#[test]
fn literals() {
    let cases: &[(&str, Lit)] = &[
        ("1_000u64", Lit::Int(1000)),
        ("0xff", Lit::Int(255)),
        ("0b1010_i8", Lit::Int(10)),
        ("1.5e3f32", Lit::Float(1500.0)),
        ("2.", Lit::Float(2.0)),
        ("\"a\\nb\"", Lit::Str("a\nb".into())),
        ("r#\"raw \"x\"\"#", Lit::Str("raw \"x\"".into())),
        ("'c'", Lit::Str("c".into())),
        ("b'a'", Lit::Int(97)),
        ("b\"bytes\"", Lit::Other),
        ("true", Lit::Bool(true)),
        ("false", Lit::Bool(false)),
        ("()", Lit::Null),
    ];
    for (src, want) in cases {
        let (m, v) = let_value(src);
        assert_eq!(m.literal(v), Some(want), "{src}");
    }
    let (m, v) = let_value("-5");
    assert_eq!(m.int_value(v), Some(-5));
}

#[test]
fn unary_binary_logical() {
    let (m, v) = let_value("!a && (b || *c == -d) && &e != &mut f");
    let d = dump(&m);
    assert!(
        matches!(
            m.expr(v).kind,
            ExprKind::Logical {
                op: LogicalOp::And,
                ..
            }
        ),
        "{d}"
    );
    for line in [
        "logical Or",
        "binary Eq",
        "unary Deref",
        "unary Neg",
        "binary NotEq",
        "unary Ref",
        "unary Not",
    ] {
        assert!(d.contains(line), "{line} missing in {d}");
    }
    let (m, v) = let_value("a % b << 2");
    assert!(matches!(
        m.expr(v).kind,
        ExprKind::Binary { op: BinOp::Bit, .. }
    ));
    let (m, v) = let_value("a <= b");
    assert!(matches!(
        m.expr(v).kind,
        ExprKind::Binary { op: BinOp::LtE, .. }
    ));
}

#[test]
fn await_try_cast_index_field() {
    let (m, v) = let_value("client.get(u).send().await?.body[0] as u8");
    let ExprKind::Cast(inner) = m.expr(v).kind else {
        panic!()
    };
    let ExprKind::Index { obj, index } = m.expr(inner).kind else {
        panic!()
    };
    assert_eq!(m.int_value(index), Some(0));
    let ExprKind::Attr { obj, ref name, .. } = m.expr(obj).kind else {
        panic!()
    };
    assert_eq!(name, "body");
    let ExprKind::Try(awaited) = m.expr(obj).kind else {
        panic!()
    };
    let ExprKind::Await(call) = m.expr(awaited).kind else {
        panic!()
    };
    assert_eq!(m.call(call).unwrap().name, "send");
}

#[test]
fn tuple_field_access() {
    let (m, v) = let_value("self.0.lock()");
    let c = m.call(v).unwrap();
    assert_eq!(m.dotted(c.receiver.unwrap()).as_deref(), Some("self.0"));
}

#[test]
fn collections() {
    let (m, v) = let_value("(1, a)");
    assert!(
        matches!(&m.expr(v).kind, ExprKind::Collection { kind: CollKind::Tuple, elems, .. } if elems.len() == 2)
    );
    let (m, v) = let_value("[1, 2, 3]");
    assert!(
        matches!(&m.expr(v).kind, ExprKind::Collection { kind: CollKind::List, elems, .. } if elems.len() == 3)
    );
    let (m, v) = let_value("[0u8; 16]");
    assert!(matches!(&m.expr(v).kind, ExprKind::Other(k) if k.len() == 2));
}

#[test]
fn struct_literals() {
    let m = lower(
        "use std::sync::Mutex;\nstruct S { a: u8, b: Mutex<u8> }\nfn f(b: Mutex<u8>) { let s = S { a: 1, b, ..Default::default() }; }",
    );
    let d = dump(&m);
    assert!(d.contains("value: Struct S=crate::S"), "{d}");
    assert!(d.contains("[a]: lit Int(1)"), "{d}");
    assert!(d.contains("[b]: name b"), "{d}");
    assert!(d.contains("elem: spread"), "{d}");
}

#[test]
fn closures_in_expressions() {
    let (m, v) = let_value("xs.iter().map(|x| x * 2)");
    let c = m.call(v).unwrap();
    assert_eq!(c.name, "map");
    assert!(matches!(m.expr(c.args[0].value).kind, ExprKind::Closure(_)));
}

#[test]
fn return_and_break_inside_expressions() {
    let m = lower(
        "fn f() -> u8 { let x = opt.unwrap_or_else(|| return 0); let y = a.or(return 1); 2 }",
    );
    let d = dump(&m);
    assert!(d.contains("arg: other"), "{d}");
}

#[test]
fn ranges_and_paths() {
    let m = lower(
        "use std::sync::atomic::Ordering;\nfn f() { a.load(Ordering::SeqCst); let r = ..; let s = 1..=n; }",
    );
    let c = call(&m, "load");
    assert_eq!(
        m.resolved(c.args[0].value),
        Some("std::sync::atomic::Ordering::SeqCst")
    );
    assert!(
        matches!(&m.expr(c.args[0].value).kind, ExprKind::Path { text, .. } if text == "Ordering::SeqCst")
    );
}

#[test]
fn parens_are_transparent() {
    let (m, v) = let_value("((a))");
    assert_eq!(m.name_of(v), Some("a"));
}

#[test]
fn references_and_derefs_keep_dotted_names() {
    let (m, v) = let_value("&mut *self.inner");
    assert!(matches!(
        m.expr(v).kind,
        ExprKind::Unary { op: UnOp::Ref, .. }
    ));
    assert_eq!(m.dotted(v).as_deref(), Some("self.inner"));
}

#[test]
fn computed_callees() {
    let (m, v) = let_value("(self.cb)(1)");
    let c = m.call(v).unwrap();
    assert_eq!(c.name, "");
    assert_eq!(c.target, None);
    assert!(matches!(m.expr(c.func).kind, ExprKind::Attr { .. }));
    let (m, v) = let_value("make()()");
    assert!(m.call(v).is_some());
}

#[test]
fn non_ascii_identifiers_and_strings() {
    let text = "fn grüße(名前: &str) { let ß = \"héllo ✓\"; sënd(ß, 名前); }";
    let m = lower(text);
    let (_, f) = func(&m, "grüße");
    assert_eq!(f.qualname, "crate::grüße");
    assert_eq!(f.params[0].name, "名前");
    assert_eq!(text_of(text, f.name_span), "grüße");
    let id = call_id(&m, "sënd");
    assert_eq!(text_of(text, m.expr(id).span), "sënd(ß, 名前)");
    assert_dump_has(&m, &["value: lit Str(\"héllo ✓\")"]);
}
