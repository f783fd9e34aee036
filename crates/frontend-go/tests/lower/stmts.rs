use super::*;
use unsnarl_model::{ArmKind, AssignOp, BinOp, StmtKind};

#[test]
fn assignments_of_every_form() {
    let m = lower_body(
        "",
        "x := 1\nx = 2\nx += 3\nx -= 1\nx *= 2\nx /= 2\nx %= 2\nx <<= 1\nx &^= 1\nx++\nx--\na, b := f()\na, b = b, a",
    );
    let body = body_of(&m, "f");
    let ops: Vec<AssignOp> = body
        .iter()
        .map(|&s| match &m.stmt(s).kind {
            StmtKind::Assign { op, .. } => *op,
            k => panic!("{k:?}"),
        })
        .collect();
    use AssignOp::*;
    assert_eq!(
        ops,
        vec![
            Declare { mutable: true },
            Plain,
            Augmented(BinOp::Add),
            Augmented(BinOp::Sub),
            Augmented(BinOp::Mul),
            Augmented(BinOp::Div),
            Augmented(BinOp::Rem),
            Augmented(BinOp::Bit),
            Augmented(BinOp::Bit),
            Augmented(BinOp::Add),
            Augmented(BinOp::Sub),
            Declare { mutable: true },
            Plain,
        ]
    );
    assert_dump_has(
        &m,
        "assign Augmented(Sub)
           target: name x
           value: lit Int(1)
         assign Declare { mutable: true }
           target: Tuple
             elem: name a
             elem: name b
           value: call f =pkg.f
         assign Plain
           target: Tuple
             elem: name a
             elem: name b
           value: Tuple
             elem: name b
             elem: name a",
    );
}

#[test]
fn statement_spans_cover_the_statement() {
    let src = "package pkg\nfunc f() {\n\tx := g(1)\n\tx++\n}\n";
    let m = lower(src);
    let body = body_of(&m, "f");
    let s = m.stmt(body[0]).span;
    assert_eq!(&src[s.start as usize..s.end as usize], "x := g(1)");
    let s = m.stmt(body[1]).span;
    assert_eq!(&src[s.start as usize..s.end as usize], "x++");
    let c = calls(&m)[0];
    let e = m
        .exprs
        .iter()
        .find(|e| matches!(&e.kind, unsnarl_model::ExprKind::Call(cc) if cc.name == c.name))
        .unwrap();
    assert_eq!(&src[e.span.start as usize..e.span.end as usize], "g(1)");
}

#[test]
fn if_with_init_else_if_and_else() {
    let m = lower_body(
        "",
        "if err := f(); err != nil {\n return\n} else if x {\n a()\n} else {\n b()\n}\nif y { c() }",
    );
    let body = body_of(&m, "f");
    assert_eq!(kinds(&m, body), vec!["block", "if"]);
    assert_dump_has(
        &m,
        "block
           assign Declare { mutable: true }
             target: name err
             value: call f =pkg.f
           if
             cond: binary NotEq
               l: name err
               r: lit Null
             then:
               return
             else:
               if
                 cond: name x =pkg.x
                 then:
                   expr: call a =pkg.a
                 else:
                   expr: call b =pkg.b",
    );
}

#[test]
fn the_four_for_forms() {
    let m = lower_body(
        "",
        "for { a() }\nfor x < 3 { b() }\nfor i := 0; i < n; i++ { c(i) }\nfor k, v := range m { d(k, v) }\nfor i := range 10 {}\nfor range ch {}\nfor ;; { e() }\nfor x = range xs {}",
    );
    let body = body_of(&m, "f");
    assert_eq!(
        kinds(&m, body),
        vec!["loop", "while", "block", "for", "for", "for", "loop", "for"]
    );
    assert_dump_has(
        &m,
        "loop
           expr: call a =pkg.a
         while
           cond: binary Lt
           body:
             expr: call b =pkg.b
         block
           assign Declare { mutable: true }
             target: name i
             value: lit Int(0)
           while
             cond: binary Lt
               l: name i
               r: name n =pkg.n
             body:
               expr: call c =pkg.c
                 arg: name i
               assign Augmented(Add)
                 target: name i
                 value: lit Int(1)
         for
           target: Tuple
             elem: name k
             elem: name v
           iter: name m =pkg.m
           body:
             expr: call d =pkg.d
               arg: name k
               arg: name v
         for
           target: name i
           iter: lit Int(10)
           body:
         for
           iter: name ch =pkg.ch
           body:",
    );
    // `for x = range xs` assigns to an existing (here: package) variable.
    assert_dump_has(&m, "for\n target: name x =pkg.x\n iter: name xs =pkg.xs");
}

#[test]
fn expression_switch_with_init_default_and_fallthrough() {
    let m = lower_body(
        "",
        "switch x := g(); x {\ncase 1, 2:\n a()\n fallthrough\ncase 3:\ndefault:\n b()\n}\nswitch {\ncase x > 1:\n}",
    );
    let body = body_of(&m, "f");
    assert_eq!(kinds(&m, body), vec!["block", "switch"]);
    assert_dump_has(
        &m,
        "block
           assign Declare { mutable: true }
           switch
             subject: name x
             case
               pattern: lit Int(1)
               pattern: lit Int(2)
               expr: call a =pkg.a
               pass
             case
               pattern: lit Int(3)
             case
               expr: call b =pkg.b
         switch
           case
             pattern: binary Gt",
    );
}

#[test]
fn type_switch() {
    let m = lower_body(
        "import \"context\"",
        "switch v := x.(type) {\ncase nil:\ncase int, *T:\n use(v)\ncase context.Context:\ndefault:\n}",
    );
    assert_dump_has(
        &m,
        "switch
           subject: cast
             of: name x =pkg.x
           case
             pattern: lit Null
           case
             pattern: path int =int
             pattern: path *T =pkg.T
             expr: call use =pkg.use
               arg: name v
           case
             pattern: path context.Context =context.Context
           case",
    );
}

#[test]
fn select_arms() {
    let m = lower_body(
        "import \"time\"",
        "select {\ncase v, ok := <-ch:\n use(v, ok)\ncase msg := <-in:\n _ = msg\ncase out <- 1:\ncase <-time.After(time.Second):\n return\ncase x = <-ch:\ndefault:\n}\nselect {}",
    );
    let body = body_of(&m, "f");
    let StmtKind::Select { arms, biased } = &m.stmt(body[0]).kind else {
        panic!("{}", dump(&m))
    };
    assert!(!biased);
    assert_eq!(arms.len(), 6);
    match &arms[0].kind {
        ArmKind::Recv { channel, binding } => {
            assert_eq!(m.name_of(*channel), Some("ch"));
            assert!(binding.is_some());
        }
        k => panic!("{k:?}"),
    }
    assert!(matches!(arms[2].kind, ArmKind::Send { .. }));
    match &arms[3].kind {
        ArmKind::Recv { channel, binding } => {
            assert_eq!(
                m.call(*channel).unwrap().target.as_deref(),
                Some("time.After")
            );
            assert!(binding.is_none());
        }
        k => panic!("{k:?}"),
    }
    assert!(matches!(arms[5].kind, ArmKind::Default));
    assert_dump_has(
        &m,
        "arm recv
           chan: name ch =pkg.ch
           bind: Tuple
             elem: name v
             elem: name ok
           expr: call use =pkg.use
             arg: name v
             arg: name ok
         arm recv
           chan: name in =pkg.in
           bind: name msg
         arm send
           chan: name out =pkg.out
           value: lit Int(1)
         arm recv
         arm recv
           chan: name ch =pkg.ch
           bind: name x =pkg.x
         arm default",
    );
    let StmtKind::Select { arms, .. } = &m.stmt(body[1]).kind else {
        panic!()
    };
    assert!(arms.is_empty());
}

#[test]
fn go_defer_return_break_continue_goto_labels() {
    let m = lower_body(
        "",
        "go worker(ch)\ndefer wg.Done()\nouter:\nfor {\n for {\n  break outer\n }\n continue\n}\ngoto end\nend:\nreturn",
    );
    let body = body_of(&m, "f");
    assert_eq!(
        kinds(&m, body),
        vec!["go", "defer", "loop", "pass", "return"]
    );
    let StmtKind::Go(g) = m.stmt(body[0]).kind else {
        unreachable!()
    };
    assert_eq!(m.call(g).unwrap().target.as_deref(), Some("pkg.worker"));
    let StmtKind::Defer(d) = m.stmt(body[1]).kind else {
        unreachable!()
    };
    assert_eq!(m.call(d).unwrap().name, "Done");
    assert_dump_has(&m, "loop\n loop\n break\n continue");
}

#[test]
fn returns_of_zero_one_and_many_values() {
    let m = lower(
        "package pkg\nfunc a() { return }\nfunc b() int { return 1 }\nfunc c() (int, error) { return 1, nil }\n",
    );
    assert_dump_has(
        &m,
        "fn#1 Function pkg.a parent=fn#0 ()
           return
         fn#2 Function pkg.b parent=fn#0 () -> int
           return: lit Int(1)
         fn#3 Function pkg.c parent=fn#0 () -> (int, error)
           return: Tuple
             elem: lit Int(1)
             elem: lit Null",
    );
}

#[test]
fn send_and_blocks_and_empty_statements() {
    let m = lower_body("", "ch <- v;\n{\n x := 1\n _ = x\n}\n;");
    let body = body_of(&m, "f");
    assert_eq!(kinds(&m, body), vec!["expr", "block"]);
    assert_dump_has(
        &m,
        "expr: send
           chan: name ch =pkg.ch
           value: name v =pkg.v
         block
           assign Declare { mutable: true }",
    );
}

#[test]
fn local_var_and_const_declarations() {
    let m = lower_body("", "var (\n a = 1\n b string\n)\nconst c, d = 1, 2");
    assert_dump_has(
        &m,
        "assign Declare { mutable: true }
           target: name a
           value: lit Int(1)
         assign Declare { mutable: true }
           target: name b
           value: Struct string
         assign Declare { mutable: false }
           target: Tuple
           value: Tuple",
    );
}
