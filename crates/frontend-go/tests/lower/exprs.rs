use super::*;
use unsnarl_model::{CollKind, ExprKind, Lit, UnOp};

/// The value of the first `_ = <expr>` in f's body.
fn discarded(m: &FileModel, i: usize) -> ExprId {
    let body = body_of(m, "f");
    match &m.stmt(body[i]).kind {
        StmtKind::Assign { value: Some(v), .. } => *v,
        k => panic!("{k:?}"),
    }
}

#[test]
fn literals() {
    let m = lower_body(
        "",
        "_ = 42\n_ = 1_000_000\n_ = 0x1F\n_ = 0o17\n_ = 0b11\n_ = 1.5\n_ = \"a\\tb\"\n_ = `raw\\n`\n_ = 'x'\n_ = nil\n_ = true\n_ = false\n_ = 2i\n_ = '\\n'",
    );
    let lits: Vec<Lit> = (0..14)
        .map(|i| m.literal(discarded(&m, i)).cloned().unwrap())
        .collect();
    assert_eq!(
        lits,
        vec![
            Lit::Int(42),
            Lit::Int(1_000_000),
            Lit::Int(31),
            Lit::Int(15),
            Lit::Int(3),
            Lit::Float(1.5),
            Lit::Str("a\tb".into()),
            Lit::Str("raw\\n".into()),
            Lit::Int('x' as i64),
            Lit::Null,
            Lit::Bool(true),
            Lit::Bool(false),
            Lit::Other,
            Lit::Int(10),
        ]
    );
}

#[test]
fn iota_is_other() {
    let m = lower("package pkg\nconst A = iota\n");
    assert_dump_has(&m, "value: other");
}

#[test]
fn unary_and_binary_operators() {
    let m = lower_body(
        "",
        "_ = !a\n_ = -b\n_ = *p\n_ = &v\n_ = <-ch\n_ = ^x\n_ = a && b || c\n_ = a + b*c\n_ = a == b\n_ = x &^ y\n_ = a >= b",
    );
    let un = |i| match &m.expr(discarded(&m, i)).kind {
        ExprKind::Unary { op, .. } => Some(*op),
        _ => None,
    };
    assert_eq!(un(0), Some(UnOp::Not));
    assert_eq!(un(1), Some(UnOp::Neg));
    assert_eq!(un(2), Some(UnOp::Deref));
    assert_eq!(un(3), Some(UnOp::Ref));
    assert!(matches!(m.expr(discarded(&m, 4)).kind, ExprKind::Recv(_)));
    assert_eq!(un(5), Some(UnOp::Other));
    assert_dump_has(
        &m,
        "value: logical Or
           l: logical And
         value: binary Add
           l: name a =pkg.a
           r: binary Mul
         value: binary Eq
         value: binary Bit
         value: binary GtE",
    );
}

#[test]
fn composite_literals() {
    let src = r#"package pkg
import "sync"
func f() {
	_ = Config{Name: "x", Timeout: 5}
	_ = &sync.WaitGroup{}
	_ = map[string]int{"a": 1, "b": 2}
	_ = []int{1, 2, 3}
	_ = [...]string{"x"}
	_ = []Point{{1, 2}, {X: 3}}
	_ = map[string]*Point{"o": {X: 0}}
	_ = struct{ n int }{n: 1}
}
"#;
    let m = lower(src);
    let coll = |i| match &m.expr(m.strip(discarded(&m, i))).kind {
        ExprKind::Collection {
            kind,
            elems,
            keys,
            ty,
        } => (*kind, elems.clone(), keys.clone(), ty.clone()),
        ExprKind::Unary {
            op: UnOp::Ref,
            operand,
        } => match &m.expr(*operand).kind {
            ExprKind::Collection {
                kind,
                elems,
                keys,
                ty,
            } => (*kind, elems.clone(), keys.clone(), ty.clone()),
            k => panic!("{k:?}"),
        },
        k => panic!("{k:?}"),
    };
    let (kind, elems, keys, ty) = coll(0);
    assert_eq!(kind, CollKind::Struct);
    assert_eq!(elems.len(), 2);
    assert_eq!(keys, vec![Some("Name".into()), Some("Timeout".into())]);
    assert_eq!(ty.unwrap().resolved.as_deref(), Some("pkg.Config"));
    let (kind, elems, _, ty) = coll(1);
    assert_eq!(kind, CollKind::Struct);
    assert!(elems.is_empty());
    assert_eq!(ty.unwrap().resolved.as_deref(), Some("sync.WaitGroup"));
    assert!(matches!(
        m.expr(discarded(&m, 1)).kind,
        ExprKind::Unary { op: UnOp::Ref, .. }
    ));
    let (kind, _, keys, _) = coll(2);
    assert_eq!(kind, CollKind::Dict);
    assert_eq!(keys, vec![Some("a".into()), Some("b".into())]);
    let (kind, elems, keys, _) = coll(3);
    assert_eq!(kind, CollKind::List);
    assert_eq!(elems.len(), 3);
    assert!(keys.is_empty());
    assert_eq!(coll(4).0, CollKind::List);
    assert_dump_has(
        &m,
        "value: List []Point
           elem: Struct Point=pkg.Point
             elem: lit Int(1)
             elem: lit Int(2)
           elem: Struct Point=pkg.Point
             [X]: lit Int(3)
         value: Dict map[string]*Point
           [o]: Struct *Point=pkg.Point
             [X]: lit Int(0)
         value: Struct struct{ n int }
           [n]: lit Int(1)",
    );
}

#[test]
fn make_and_new_take_types_as_paths() {
    let m = lower_body(
        "import \"sync\"",
        "ch := make(chan int, 10)\ndone := make(chan struct{})\nbuf := make([]byte, 0, 64)\nmu := new(sync.Mutex)\n_, _, _, _ = ch, done, buf, mu",
    );
    let makes: Vec<&Call> = calls(&m).into_iter().filter(|c| c.name == "make").collect();
    assert_eq!(makes.len(), 3);
    match &m.expr(makes[0].args[0].value).kind {
        ExprKind::Path { text, resolved } => {
            assert_eq!(text, "chan int");
            assert_eq!(resolved, &None);
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(m.int_value(makes[0].args[1].value), Some(10));
    assert_eq!(makes[1].args.len(), 1);
    assert_eq!(makes[2].args.len(), 3);
    let new = call(&m, "new");
    match &m.expr(new.args[0].value).kind {
        ExprKind::Path { text, resolved } => {
            assert_eq!(text, "sync.Mutex");
            assert_eq!(resolved.as_deref(), Some("sync.Mutex"));
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn index_slice_assertion_and_spread() {
    let src =
        "package pkg\nfunc f() {\n\t_ = xs[i]\n\t_ = xs[1:n]\n\t_ = v.(Stringer)\n\tg(xs...)\n}\n";
    let m = lower(src);
    assert!(matches!(
        m.expr(discarded(&m, 0)).kind,
        ExprKind::Index { .. }
    ));
    match &m.expr(discarded(&m, 1)).kind {
        ExprKind::Other(parts) => assert_eq!(parts.len(), 3),
        k => panic!("{k:?}"),
    }
    let cast = discarded(&m, 2);
    assert!(matches!(m.expr(cast).kind, ExprKind::Cast(_)));
    assert_eq!(m.name_of(cast), Some("v"), "strip looks through casts");
    assert_eq!(text(src, &m, cast), "v.(Stringer)");
    let g = call(&m, "g");
    assert!(g.has_spread());
    assert_eq!(g.positional(0), None);
    assert_eq!(m.name_of(g.args[0].value), Some("xs"));
}

#[test]
fn parentheses_are_transparent() {
    let m = lower_body("import \"time\"", "(time.Sleep)(1)\n_ = ((x))");
    assert_eq!(call(&m, "Sleep").target.as_deref(), Some("time.Sleep"));
    assert_eq!(m.name_of(discarded(&m, 1)), Some("x"));
}

#[test]
fn non_ascii_identifiers_and_strings() {
    let src = "package pkg\n\nfunc 処理(名前 string) {\n\tメッセージ := \"héllo, 世界 🎉\"\n\tprintln(名前, メッセージ)\n\tgo 処理(\"ü\")\n}\n";
    let m = lower(src);
    let (_, f) = func(&m, "処理");
    assert_eq!(f.qualname, "pkg.処理");
    assert_eq!(f.params[0].name, "名前");
    let ns = f.name_span;
    assert_eq!(&src[ns.start as usize..ns.end as usize], "処理");
    assert_dump_has(
        &m,
        "assign Declare { mutable: true }
           target: name メッセージ
           value: lit Str(\"héllo, 世界 🎉\")
         expr: call println =println
           arg: name 名前
           arg: name メッセージ
         go: call 処理 =pkg.処理",
    );
    // Every span lies on character boundaries.
    for e in &m.exprs {
        assert!(src.is_char_boundary(e.span.start as usize));
        assert!(src.is_char_boundary(e.span.end as usize));
    }
}
