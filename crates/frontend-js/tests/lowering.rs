//! Statements, expressions, functions, classes and types.

mod common;
use common::*;
use unsnarl_model::{AssignOp, BinOp, CollKind, ExprKind, FnKind, Lit, LogicalOp, StmtKind, UnOp};

fn stmt_of<'m>(m: &'m unsnarl_model::FileModel, f: &str, i: usize) -> &'m StmtKind {
    &m.stmt(func(m, f).body[i]).kind
}

#[test]
fn declarations() {
    let m = js("var a = 1; let b; const c = f(); let d = 1, e = 2;");
    assert_eq!(module_kinds(&m), ["assign"; 5]);
    let ops: Vec<AssignOp> = m.functions[0]
        .body
        .iter()
        .map(|&s| match &m.stmt(s).kind {
            StmtKind::Assign { op, .. } => *op,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        ops,
        [
            AssignOp::Declare { mutable: true },
            AssignOp::Declare { mutable: true },
            AssignOp::Declare { mutable: false },
            AssignOp::Declare { mutable: true },
            AssignOp::Declare { mutable: true },
        ]
    );
    let StmtKind::Assign { value, .. } = &m.stmt(m.functions[0].body[1]).kind else {
        unreachable!()
    };
    assert!(value.is_none(), "`let b;` has no value");
}

#[test]
fn statement_spans_cover_the_statement() {
    let src = "const x = await f(a,\n b);\nlet p = 1, q = g();\nfoo.bar(1);";
    let m = js(src);
    let body = &m.functions[0].body;
    assert_eq!(
        text_of(src, m.stmt(body[0]).span),
        "const x = await f(a,\n b);"
    );
    assert_eq!(text_of(src, m.stmt(body[2]).span), "q = g()");
    assert_eq!(text_of(src, m.stmt(body[3]).span), "foo.bar(1);");
    let c = call_id(&m, "bar");
    assert_eq!(text_of(src, m.expr(c).span), "foo.bar(1)");
    let c = call_id(&m, "f");
    assert_eq!(text_of(src, m.expr(c).span), "f(a,\n b)");
}

#[test]
fn destructuring_targets_are_collections_of_names() {
    let m = js(
        "const { a, b: c, d = init(), ...rest } = obj;\nconst [x, , y = 2, ...zs] = arr;\n({ a, b: [c] } = o);\n[p, q] = [q, p];",
    );
    let StmtKind::Assign { targets, .. } = &m.stmt(m.functions[0].body[0]).kind else {
        panic!()
    };
    let ExprKind::Collection {
        kind, elems, keys, ..
    } = &m.expr(targets[0]).kind
    else {
        panic!()
    };
    assert_eq!(*kind, CollKind::Dict);
    assert_eq!(
        keys,
        &[Some("a".into()), Some("b".into()), Some("d".into()), None]
    );
    assert_eq!(m.name_of(elems[1]), Some("c"));
    // A default keeps its (call) value next to the name.
    let ExprKind::Other(kids) = &m.expr(elems[2]).kind else {
        panic!()
    };
    assert_eq!(m.name_of(kids[0]), Some("d"));
    assert!(m.call(kids[1]).is_some());
    assert!(matches!(m.expr(elems[3]).kind, ExprKind::Spread(_)));

    let StmtKind::Assign { targets, .. } = &m.stmt(m.functions[0].body[1]).kind else {
        panic!()
    };
    let ExprKind::Collection { kind, elems, .. } = &m.expr(targets[0]).kind else {
        panic!()
    };
    assert_eq!(*kind, CollKind::List);
    assert_eq!(elems.len(), 3);
    assert_eq!(module_kinds(&m), ["assign"; 4]);
    let StmtKind::Assign { targets, op, .. } = &m.stmt(m.functions[0].body[3]).kind else {
        panic!()
    };
    assert_eq!(*op, AssignOp::Plain);
    assert!(matches!(
        m.expr(targets[0]).kind,
        ExprKind::Collection {
            kind: CollKind::List,
            ..
        }
    ));
}

#[test]
fn assignments_and_updates() {
    let m = js(
        "x = 1; x += 2; x -= 1; x |= 4; x ||= y; x ??= z; x++; --x; a.b = c; arr[i] = v; y = (z = 3);",
    );
    let ops: Vec<AssignOp> = m.functions[0]
        .body
        .iter()
        .map(|&s| match &m.stmt(s).kind {
            StmtKind::Assign { op, .. } => *op,
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        ops,
        [
            AssignOp::Plain,
            AssignOp::Augmented(BinOp::Add),
            AssignOp::Augmented(BinOp::Sub),
            AssignOp::Augmented(BinOp::Bit),
            AssignOp::Augmented(BinOp::Other),
            AssignOp::Augmented(BinOp::Other),
            AssignOp::Augmented(BinOp::Add),
            AssignOp::Augmented(BinOp::Sub),
            AssignOp::Plain,
            AssignOp::Plain,
            AssignOp::Plain,
        ]
    );
    let d = dump(&m);
    assert!(d.contains("target: attr .b\n"), "{d}");
    assert!(d.contains("target: index"), "{d}");
    assert!(d.contains("value: assign-expr Plain"), "{d}");
    // `x++` used as a value is an assignment expression.
    let m = js("f(i++);");
    let c = call(&m, "f");
    assert!(matches!(
        m.expr(c.args[0].value).kind,
        ExprKind::AssignExpr {
            op: AssignOp::Augmented(BinOp::Add),
            ..
        }
    ));
}

#[test]
fn control_flow_statements() {
    let m = js("function f() {\n\
           if (a) { b(); } else if (c) d(); else { e(); }\n\
           while (x) { if (y) break; continue; }\n\
           do { g(); } while (h());\n\
           for (const k of ks) {}\n\
           for (const k in obj) {}\n\
           switch (v) { case 1: case 2: one(); break; default: other(); }\n\
           try { t(); } catch (err) { c1(); } finally { fin(); }\n\
           try { t2(); } catch { }\n\
           throw new Error('x');\n\
           { inner(); }\n\
           label: for (;;) { break label; }\n\
           ;\n\
           debugger;\n\
           return 1;\n\
         }");
    let f = func(&m, "f");
    assert_eq!(
        kinds(&m, &f.body),
        [
            "if", "while", "while", "for", "for", "switch", "try", "try", "raise", "block",
            "while", "return"
        ]
    );
    let StmtKind::If { orelse, .. } = stmt_of(&m, "f", 0) else {
        panic!()
    };
    assert_eq!(kinds(&m, orelse), ["if"], "else-if nests");
    let StmtKind::Switch { subject, cases } = stmt_of(&m, "f", 5) else {
        panic!()
    };
    assert!(subject.is_some());
    assert_eq!(cases.len(), 3);
    assert!(cases[0].body.is_empty(), "fallthrough case");
    assert_eq!(cases[1].patterns.len(), 1);
    assert!(cases[2].patterns.is_empty(), "default");
    assert_eq!(kinds(&m, &cases[1].body), ["expr", "break"]);
    let StmtKind::Try {
        handlers, finally, ..
    } = stmt_of(&m, "f", 6)
    else {
        panic!()
    };
    assert_eq!(handlers.len(), 1);
    assert!(handlers[0].types.is_empty());
    assert_eq!(handlers[0].name.as_deref(), Some("err"));
    assert!(finally.is_some());
    let StmtKind::Try {
        handlers, finally, ..
    } = stmt_of(&m, "f", 7)
    else {
        panic!()
    };
    assert_eq!(handlers[0].name, None);
    assert!(finally.is_none());
    // `for (;;)` loops forever: a `while (true)`.
    let StmtKind::While { cond, body, .. } = stmt_of(&m, "f", 10) else {
        panic!()
    };
    assert_eq!(m.literal(*cond), Some(&Lit::Bool(true)));
    assert_eq!(kinds(&m, body), ["break"]);
    let StmtKind::While { cond, .. } = stmt_of(&m, "f", 2) else {
        panic!()
    };
    assert!(m.call(*cond).is_some(), "do-while condition");
}

#[test]
fn c_style_for_loops() {
    let m =
        js("for (let i = 0, n = xs.length; i < n; i++) { work(xs[i]); }\nfor (i = 0; ; i += 2) {}");
    assert_eq!(
        module_kinds(&m),
        ["assign", "assign", "while", "assign", "while"]
    );
    let StmtKind::While { cond, body, .. } = &m.stmt(m.functions[0].body[2]).kind else {
        panic!()
    };
    assert!(matches!(
        m.expr(*cond).kind,
        ExprKind::Binary { op: BinOp::Lt, .. }
    ));
    assert_eq!(
        kinds(&m, body),
        ["expr", "assign"],
        "step at the end of the body"
    );
    let StmtKind::While { cond, body, .. } = &m.stmt(m.functions[0].body[4]).kind else {
        panic!()
    };
    assert_eq!(m.literal(*cond), Some(&Lit::Bool(true)));
    assert_eq!(kinds(&m, body), ["assign"]);
}

#[test]
fn for_of_and_for_await() {
    let m = js(
        "async function f() {\n  for await (const chunk of stream) { use(chunk); }\n  for (const [k, v] of Object.entries(o)) {}\n  for (x of xs) {}\n}",
    );
    let f = func(&m, "f");
    let fors: Vec<(bool, String)> = f
        .body
        .iter()
        .map(|&s| match &m.stmt(s).kind {
            StmtKind::For {
                is_async, target, ..
            } => (*is_async, format!("{:?}", target.map(|t| &m.expr(t).kind))),
            _ => panic!(),
        })
        .collect();
    assert!(fors[0].0);
    assert!(fors[0].1.contains("chunk"));
    assert!(!fors[1].0);
    assert!(fors[1].1.contains("Collection"));
    assert!(fors[2].1.contains("\"x\""));
    assert_eq!(target(&m, "entries"), Some("Object.entries"));
}

#[test]
fn expression_kinds() {
    let m = js("const v = [\n\
         a && b, a || b, a ?? b,\n\
         !a, -a, void a, typeof a, delete a.b, ~a, +a,\n\
         a === b, a !== b, a == b, a != b, a < b, a <= b, a > b, a >= b, a in b, a instanceof B,\n\
         a + b, a - b, a * b, a / b, a % b, a ** b, a << b, a & b,\n\
         c ? d : e,\n\
         (a, b),\n\
         `x${a}y${b}`, `plain`, 'str', 1, 1.5, true, null, /re/g, 10n,\n\
         ...rest,\n\
         import.meta, { k: 1, 'q': 2, [dyn]: 3, ...spread, short },\n\
       ];");
    let StmtKind::Assign { value: Some(v), .. } = &m.stmt(m.functions[0].body[0]).kind else {
        panic!()
    };
    let ExprKind::Collection { elems, .. } = &m.expr(*v).kind else {
        panic!()
    };
    let k = |i: usize| &m.expr(elems[i]).kind;
    assert!(matches!(
        k(0),
        ExprKind::Logical {
            op: LogicalOp::And,
            ..
        }
    ));
    assert!(matches!(
        k(1),
        ExprKind::Logical {
            op: LogicalOp::Or,
            ..
        }
    ));
    assert!(matches!(
        k(2),
        ExprKind::Logical {
            op: LogicalOp::Coalesce,
            ..
        }
    ));
    let unops = [
        UnOp::Not,
        UnOp::Neg,
        UnOp::Void,
        UnOp::Other,
        UnOp::Other,
        UnOp::Other,
        UnOp::Other,
    ];
    for (i, op) in unops.iter().enumerate() {
        assert!(
            matches!(k(3 + i), ExprKind::Unary { op: o, .. } if o == op),
            "{i}: {:?}",
            k(3 + i)
        );
    }
    let binops = [
        BinOp::Is,
        BinOp::IsNot,
        BinOp::Eq,
        BinOp::NotEq,
        BinOp::Lt,
        BinOp::LtE,
        BinOp::Gt,
        BinOp::GtE,
        BinOp::In,
        BinOp::Is,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Other,
        BinOp::Bit,
        BinOp::Bit,
    ];
    for (i, op) in binops.iter().enumerate() {
        assert!(
            matches!(k(10 + i), ExprKind::Binary { op: o, .. } if o == op),
            "{i}: {:?}",
            k(10 + i)
        );
    }
    assert!(matches!(k(28), ExprKind::Ternary { .. }));
    assert!(
        matches!(k(29), ExprKind::Other(kids) if kids.len() == 2),
        "sequence"
    );
    assert!(
        matches!(k(30), ExprKind::Other(kids) if kids.len() == 2),
        "template"
    );
    assert_eq!(m.literal(elems[31]), Some(&Lit::Str("plain".into())));
    assert_eq!(m.literal(elems[32]), Some(&Lit::Str("str".into())));
    assert_eq!(m.literal(elems[33]), Some(&Lit::Int(1)));
    assert_eq!(m.literal(elems[34]), Some(&Lit::Float(1.5)));
    assert_eq!(m.literal(elems[35]), Some(&Lit::Bool(true)));
    assert_eq!(m.literal(elems[36]), Some(&Lit::Null));
    assert_eq!(m.literal(elems[37]), Some(&Lit::Other));
    assert_eq!(m.literal(elems[38]), Some(&Lit::Other));
    assert!(matches!(k(39), ExprKind::Spread(_)));
    assert!(
        matches!(k(40), ExprKind::Other(kids) if kids.is_empty()),
        "import.meta"
    );
    let ExprKind::Collection {
        kind,
        keys,
        elems: vals,
        ..
    } = k(41)
    else {
        panic!()
    };
    assert_eq!(*kind, CollKind::Dict);
    assert_eq!(
        keys,
        &[
            Some("k".into()),
            Some("q".into()),
            None,
            None,
            Some("short".into())
        ]
    );
    assert!(matches!(m.expr(vals[3]).kind, ExprKind::Spread(_)));
    assert_eq!(m.name_of(vals[4]), Some("short"));
}

#[test]
fn member_access() {
    let m = ts("a.b.c; a[0]; a?.b; this.#secret; x!.y; (x as any).z; <Foo>w;");
    let d = dump(&m);
    assert!(
        d.contains("expr: attr .c\n    obj: attr .b\n      obj: name a"),
        "{d}"
    );
    assert!(
        d.contains("expr: index\n    obj: name a\n    idx: lit Int(0)"),
        "{d}"
    );
    assert!(d.contains("attr .#secret"), "{d}");
    assert!(
        d.contains("expr: attr .y\n    obj: cast\n      of: name x"),
        "{d}"
    );
    assert!(d.contains("expr: attr .z\n    obj: cast"), "{d}");
    assert!(d.contains("expr: cast\n    of: name w"), "{d}");
}

#[test]
fn ts_casts_are_transparent() {
    let m = ts(
        "import fs from 'fs';\n(fs as any).readFileSync('x');\nconst v = f() satisfies T;\nconst w = g()!;",
    );
    assert_eq!(target(&m, "readFileSync"), Some("fs.readFileSync"));
    let StmtKind::Assign { value: Some(v), .. } = &m.stmt(m.functions[0].body[1]).kind else {
        panic!()
    };
    assert!(matches!(m.expr(*v).kind, ExprKind::Cast(_)));
    assert!(m.call(m.strip(*v)).is_some());
}

#[test]
fn async_and_generators() {
    let m = js(
        "async function a() {}\nfunction* g() { yield 1; yield* other(); }\nasync function* ag() { yield await x; }\nconst arr = async () => {};\nconst fe = async function () {};\nclass C { async m() {} *gen() {} async *agen() {} get v() { return 1; } }\nconst o = { async om() {}, *og() {} };",
    );
    assert!(func(&m, "a").is_async);
    assert!(!func(&m, "a").is_generator);
    assert!(func(&m, "g").is_generator && !func(&m, "g").is_async);
    assert!(func(&m, "ag").is_generator && func(&m, "ag").is_async);
    assert!(func(&m, "arr").is_async);
    assert!(func(&m, "fe").is_async);
    assert!(func(&m, "m").is_async);
    assert!(func(&m, "gen").is_generator);
    assert!(func(&m, "agen").is_generator && func(&m, "agen").is_async);
    assert!(!func(&m, "v").is_async);
    assert!(func(&m, "om").is_async);
    assert!(func(&m, "og").is_generator);
    let g = func(&m, "g");
    let d = dump(&m);
    assert!(d.contains("expr: yield\n    of: lit Int(1)"), "{d}");
    assert_eq!(kinds(&m, &g.body), ["expr", "expr"]);
}

#[test]
fn closures() {
    let src = "items.forEach(async (item) => { await save(item); });\nconst double = x => x * 2;\nconst noop = () => {};\nsetTimeout(function () { tick(); }, 5);";
    let m = js(src);
    // Closures appear where written.
    let c = call(&m, "forEach");
    let ExprKind::Closure(fid) = m.expr(c.args[0].value).kind else {
        panic!()
    };
    let f = m.func(fid);
    assert_eq!(f.kind, FnKind::Closure);
    assert!(f.is_async);
    assert_eq!(f.parent, Some(unsnarl_model::FuncId(0)));
    assert_eq!(f.params[0].name, "item");
    assert_eq!(f.qualname, "");
    assert_eq!(text_of(src, f.name_span), "=>");
    assert_eq!(kinds(&m, &f.body), ["expr"]);
    // Expression bodies are a single return.
    let d = func(&m, "double");
    assert_eq!(kinds(&m, &d.body), ["return"]);
    let StmtKind::Return(Some(v)) = &m.stmt(d.body[0]).kind else {
        panic!()
    };
    assert!(matches!(
        m.expr(*v).kind,
        ExprKind::Binary { op: BinOp::Mul, .. }
    ));
    assert!(func(&m, "noop").body.is_empty());
    let anon = m
        .functions
        .iter()
        .find(|f| f.kind == FnKind::Closure && f.name.is_empty() && !f.is_async)
        .unwrap();
    assert_eq!(text_of(src, anon.name_span), "function");
}

#[test]
fn parameters_and_types() {
    let src = "import { Mutex } from 'async-mutex';\n\
               import http from 'http';\n\
               export async function handle(req: http.IncomingMessage, { signal, timeout = 5 }: Opts, m?: Mutex | null, ...rest: string[]): Promise<User> {}\n\
               function f(a = compute(), b: PromiseLike<void>, c: readonly Job[], d: Readonly<Mutex>, e: Map<string, number>): void {}\n\
               function g(x: string | number, y: T, z: Local) {}\n\
               class Local {}";
    let m = ts(src);
    let h = func(&m, "handle");
    let names: Vec<&str> = h.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["req", "{ signal, timeout = 5 }", "m", "...rest"]);
    let ty = |p: &unsnarl_model::Param| {
        let t = p.ty.as_ref().unwrap();
        (t.text.clone(), t.resolved.clone())
    };
    assert_eq!(
        ty(&h.params[0]),
        (
            "http.IncomingMessage".into(),
            Some("http.IncomingMessage".into())
        )
    );
    assert_eq!(ty(&h.params[1]), ("Opts".into(), None));
    assert_eq!(
        ty(&h.params[2]),
        ("Mutex | null".into(), Some("async-mutex.Mutex".into()))
    );
    assert_eq!(ty(&h.params[3]), ("string[]".into(), Some("Array".into())));
    let r = h.returns.as_ref().unwrap();
    assert_eq!(r.text, "Promise<User>");
    assert_eq!(r.resolved.as_deref(), Some("Promise"));
    assert_eq!(text_of(src, h.params[0].span), "req: http.IncomingMessage");

    let f = func(&m, "f");
    assert!(m.call(f.params[0].default.unwrap()).is_some());
    assert_eq!(f.params[0].ty, None);
    assert_eq!(ty(&f.params[1]).1.as_deref(), Some("Promise"));
    assert_eq!(ty(&f.params[2]).1.as_deref(), Some("Array"));
    assert_eq!(ty(&f.params[3]).1.as_deref(), Some("async-mutex.Mutex"));
    assert_eq!(ty(&f.params[4]).1.as_deref(), Some("Map"));
    assert_eq!(f.returns.as_ref().unwrap().resolved, None);

    let g = func(&m, "g");
    assert_eq!(ty(&g.params[0]).1, None, "a real union has no single type");
    assert_eq!(ty(&g.params[1]).1, None);
    assert_eq!(ty(&g.params[2]).1.as_deref(), Some("src/app.Local"));
    // The param default is reachable from the function.
    let tree = unsnarl_model::walk::Tree::build(&m);
    let default = f.params[0].default.unwrap();
    assert_eq!(tree.expr_func(default), func_id(&m, "f"));
}

#[test]
fn classes() {
    let src = "import { Mutex } from 'async-mutex';\n\
               import PQueue from 'p-queue';\n\
               export class Service extends Base {\n\
                 private lock: Mutex = new Mutex();\n\
                 queue = new PQueue({ concurrency: 2 });\n\
                 #cache = new Map();\n\
                 static instances = 0;\n\
                 count;\n\
                 onEvent = async (e) => { await this.process(e); };\n\
                 constructor(private readonly db: Db, name: string) {\n\
                   super(name);\n\
                   this.timer = setInterval(() => this.tick(), 1000);\n\
                   this.pending = [];\n\
                   this.sem = new Semaphore(4);\n\
                 }\n\
                 async process(e) { await this.lock.runExclusive(() => this.db.save(e)); }\n\
                 tick() {}\n\
                 get size() { return this.pending.length; }\n\
                 static { Service.instances = 1; }\n\
               }";
    let m = ts(src);
    assert_eq!(m.types.len(), 1);
    let t = &m.types[0];
    assert_eq!(t.name, "Service");
    assert_eq!(t.qualname, "src/app.Service");
    let fields: Vec<(&str, &str, Option<&str>)> = t
        .fields
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.ty.text.as_str(),
                f.ty.resolved.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            ("lock", "Mutex", Some("async-mutex.Mutex")),
            ("queue", "PQueue", Some("p-queue")),
            ("#cache", "Map", Some("Map")),
            ("count", "", None),
            ("db", "Db", None),
            ("timer", "", None),
            ("pending", "", None),
            ("sem", "Semaphore", None),
        ]
    );
    assert_eq!(module_kinds(&m), ["classdef", "assign", "block"]);
    let ctor = func(&m, "src/app.Service.constructor");
    assert_eq!(ctor.kind, FnKind::Method);
    assert_eq!(ctor.class.as_deref(), Some("src/app.Service"));
    assert_eq!(ctor.receiver.as_deref(), Some("this"));
    assert_eq!(ctor.parent, Some(unsnarl_model::FuncId(0)));
    // Field initializers run first in the constructor.
    assert_eq!(
        kinds(&m, &ctor.body),
        [
            "assign", "assign", "assign", "expr", "assign", "assign", "assign"
        ]
    );
    assert_eq!(target(&m, "PQueue"), Some("p-queue"));
    let on_event = func(&m, "onEvent");
    assert_eq!(on_event.kind, FnKind::Method);
    assert_eq!(on_event.qualname, "src/app.Service.onEvent");
    assert!(on_event.is_async);
    assert_eq!(target(&m, "process"), Some("src/app.Service.process"));
    assert_eq!(target(&m, "tick"), Some("src/app.Service.tick"));
    assert_eq!(target(&m, "runExclusive"), None);
    let size = func(&m, "size");
    assert_eq!(size.qualname, "src/app.Service.size");
    assert_eq!(target(&m, "super"), None);
}

#[test]
fn implicit_constructor_holds_field_initializers() {
    let src = "class Cache {\n  store = new Map();\n  timer = setInterval(() => this.sweep(), 1000);\n  sweep() {}\n}";
    let m = js(src);
    let ctor = func(&m, "src/app.Cache.constructor");
    assert_eq!(ctor.kind, FnKind::Method);
    assert_eq!(kinds(&m, &ctor.body), ["assign", "assign"]);
    assert_eq!(text_of(src, ctor.name_span), "Cache");
    assert_eq!(target(&m, "sweep"), Some("src/app.Cache.sweep"));
    // No initializers, no constructor.
    let m = js("class Plain { run() {} }");
    assert_eq!(m.functions.len(), 2);
}

#[test]
fn class_expressions_and_nested_classes() {
    let m = js(
        "const Repo = class { find() { return this.all(); } all() {} static n = count();};\n\
         function make() { class Inner { go() {} } return new Inner(); }\n\
         export const mixin = (B) => class extends B { m() {} };",
    );
    assert_eq!(m.types[0].qualname, "src/app.Repo");
    assert_eq!(target(&m, "all"), Some("src/app.Repo.all"));
    assert_eq!(target(&m, "count"), None);
    assert_eq!(func(&m, "go").qualname, "src/app.make.Inner.go");
    assert_eq!(target(&m, "Inner"), Some("src/app.make.Inner"));
    let anon = m.types.iter().find(|t| t.name.is_empty()).unwrap();
    assert_eq!(anon.qualname, "");
    let mm = func(&m, "m");
    assert_eq!(mm.qualname, "");
    assert_eq!(mm.class, None);
}

#[test]
fn method_overloads_and_abstract_methods() {
    let m = ts(
        "abstract class A {\n  run(x: string): void;\n  run(x: number): void;\n  run(x: any) { work(); }\n  abstract stop(): Promise<void>;\n}\n\
         function over(a: string): void;\nfunction over(a: any) {}\n\
         declare function ext(): Promise<number>;",
    );
    let runs: Vec<_> = m.functions.iter().filter(|f| f.name == "run").collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(kinds(&m, &runs[0].body), ["expr"]);
    let stop = func(&m, "stop");
    assert!(stop.body.is_empty());
    assert_eq!(
        stop.returns.as_ref().unwrap().resolved.as_deref(),
        Some("Promise")
    );
    assert_eq!(m.functions.iter().filter(|f| f.name == "over").count(), 1);
    let ext = func(&m, "ext");
    assert_eq!(ext.qualname, "src/app.ext");
    assert_eq!(ext.returns.as_ref().unwrap().text, "Promise<number>");
}

#[test]
fn interfaces() {
    let m = ts(
        "import { Pool } from 'pg';\nexport interface Repo {\n  db: Pool;\n  find(id: string): Promise<User>;\n  readonly name?: string;\n}",
    );
    let t = &m.types[0];
    assert_eq!(t.qualname, "src/app.Repo");
    assert_eq!(t.fields[0].name, "db");
    assert_eq!(t.fields[0].ty.resolved.as_deref(), Some("pg.Pool"));
    assert_eq!(t.fields[1].name, "name");
    let find = func(&m, "find");
    assert_eq!(find.kind, FnKind::Method);
    assert_eq!(find.qualname, "src/app.Repo.find");
    assert_eq!(find.class.as_deref(), Some("src/app.Repo"));
    assert_eq!(
        find.returns.as_ref().unwrap().resolved.as_deref(),
        Some("Promise")
    );
    assert!(m.functions[0].body.is_empty());
}

#[test]
fn declaration_files() {
    let m = lower_at(
        "types/client.d.ts",
        "export declare function fetchUser(id: string): Promise<User>;\n\
         export declare class Client { connect(): Promise<void>; close(): void; }\n\
         declare module 'legacy-lib' { export function run(): Promise<void>; }\n\
         declare global { function gtag(): void; }",
    );
    assert_eq!(m.module, "types/client");
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    let f = func(&m, "fetchUser");
    assert_eq!(f.qualname, "types/client.fetchUser");
    assert_eq!(
        f.returns.as_ref().unwrap().resolved.as_deref(),
        Some("Promise")
    );
    assert_eq!(func(&m, "connect").qualname, "types/client.Client.connect");
    assert_eq!(func(&m, "run").qualname, "legacy-lib.run");
    assert_eq!(func(&m, "gtag").qualname, "types/client.gtag");
}

#[test]
fn namespaces() {
    let m = ts(
        "namespace Outer.Inner { export function f() { g(); } }\nnamespace NS { export async function h() {} }",
    );
    assert_eq!(func(&m, "f").qualname, "src/app.Outer.Inner.f");
    assert_eq!(func(&m, "h").qualname, "src/app.NS.h");
    assert!(func(&m, "h").is_async);
    assert_eq!(module_kinds(&m), ["block", "block"]);
}

#[test]
fn decorators() {
    let m = ts(
        "import { Get, Injectable } from '@nestjs/common';\nimport * as deco from './deco';\n\
         @Injectable()\nclass C {\n  @Get('/users')\n  @deco.logged\n  @local\n  async list() {}\n}",
    );
    let f = func(&m, "list");
    assert_eq!(
        f.decorators,
        ["@nestjs/common.Get", "src/deco.logged", "local"]
    );
    assert_eq!(f.decorator_calls.len(), 1);
    let c = m.call(f.decorator_calls[0]).unwrap();
    assert_eq!(c.target.as_deref(), Some("@nestjs/common.Get"));
    assert_eq!(m.literal(c.args[0].value), Some(&Lit::Str("/users".into())));
}

#[test]
fn jsx_reaches_closures_and_calls() {
    let m = tsx("export function List({ items }: Props) {\n\
           return (<ul className=\"x\" onClick={async () => { await save(); }} {...rest}>\n\
             {items.map(i => <Item key={i.id} render={() => <b>{format(i)}</b>} />)}\n\
             <>{frag()}</>\n\
           </ul>);\n\
         }");
    let closures: Vec<_> = m
        .functions
        .iter()
        .filter(|f| f.kind == FnKind::Closure)
        .collect();
    assert_eq!(closures.len(), 3);
    assert!(closures[0].is_async);
    for name in ["save", "map", "format", "frag"] {
        call(&m, name);
    }
    let list = func(&m, "List");
    assert_eq!(kinds(&m, &list.body), ["return"]);
    // JSX in a .js file parses too (React code often uses .js).
    let m = js("const el = <div onClick={() => go()} />;");
    assert!(m.syntax_errors.is_empty());
    call(&m, "go");
}

#[test]
fn using_declarations_are_context_managers() {
    let m = ts(
        "async function f() {\n  await using conn = await pool.connect();\n  using lock = mutex.lock();\n  conn.query('x');\n}\nfunction g() { pre(); using r = open(); }",
    );
    let f = func(&m, "f");
    assert_eq!(kinds(&m, &f.body), ["with"]);
    let StmtKind::With {
        items,
        is_async,
        body,
    } = &m.stmt(f.body[0]).kind
    else {
        panic!()
    };
    assert!(*is_async);
    assert_eq!(m.name_of(items[0].target.unwrap()), Some("conn"));
    assert_eq!(kinds(&m, body), ["with"]);
    let StmtKind::With { is_async, body, .. } = &m.stmt(body[0]).kind else {
        panic!()
    };
    assert!(!*is_async);
    assert_eq!(kinds(&m, body), ["expr"]);
    let g = func(&m, "g");
    assert_eq!(kinds(&m, &g.body), ["expr", "with"]);
}

#[test]
fn with_statement_is_not_a_context_manager() {
    let m = lower_at("legacy.js", "with (obj) { f(); }");
    assert_eq!(module_kinds(&m), ["expr", "block"]);
}

#[test]
fn await_and_promise_chains() {
    let m = js(
        "async function f() {\n  const r = await fetch(url).then(res => res.json()).catch(e => null);\n  await Promise.all(xs.map(async x => g(x)));\n}",
    );
    let then = call(&m, "then");
    assert!(
        m.call(then.receiver.unwrap())
            .is_some_and(|c| c.name == "fetch")
    );
    let catch = call(&m, "catch");
    assert!(
        m.call(catch.receiver.unwrap())
            .is_some_and(|c| c.name == "then")
    );
    let d = dump(&m);
    assert!(d.contains("value: await\n      of: call catch"), "{d}");
    assert!(
        d.contains("expr: await\n    of: call all =Promise.all"),
        "{d}"
    );
}

#[test]
fn non_ascii_identifiers_and_strings() {
    let src = "const café = 'naïve ☕';\nfunction grüß(名前) { return log(`héllo ${名前}`); }\ngrüß('日本');";
    let m = js(src);
    let f = func(&m, "grüß");
    assert_eq!(f.qualname, "src/app.grüß");
    assert_eq!(text_of(src, f.name_span), "grüß");
    assert_eq!(f.params[0].name, "名前");
    assert_eq!(target(&m, "grüß"), Some("src/app.grüß"));
    let c = call_id(&m, "grüß");
    assert_eq!(text_of(src, m.expr(c).span), "grüß('日本')");
    let d = dump(&m);
    assert!(d.contains("lit Str(\"naïve ☕\")"), "{d}");
}

#[test]
fn dump_of_a_small_module() {
    let m = js(
        "import fs from 'fs';\nexport async function load(p) {\n  const data = await fs.promises.readFile(p);\n  return JSON.parse(data);\n}",
    );
    let expected = "\
module src/app
import fs = fs
fn#0 Module <module> ()
  def fn#1
fn#1 Function async src/app.load parent=fn#0 (p)
  assign Declare { mutable: false }
    target: name data
    value: await
      of: call readFile =fs.promises.readFile
        recv: attr .promises =fs.promises
          obj: name fs =fs
        arg: name p
  return: call parse =JSON.parse
    recv: name JSON =JSON
    arg: name data
";
    assert_eq!(dump(&m), expected);
}

#[test]
fn name_spans() {
    let src = "class Store {\n  async get(key) {}\n  #hidden() {}\n  handler = () => {};\n}\nexport default function () {}\nconst o = { method() {} };\nconst a = async (x): Promise<void> => {};";
    let m = ts(src);
    assert_eq!(text_of(src, func(&m, "get").name_span), "get");
    assert_eq!(text_of(src, func(&m, "#hidden").name_span), "#hidden");
    assert_eq!(text_of(src, func(&m, "handler").name_span), "handler");
    assert_eq!(
        text_of(src, func(&m, "src/app.default").name_span),
        "function"
    );
    assert_eq!(text_of(src, func(&m, "method").name_span), "method");
    assert_eq!(text_of(src, func(&m, "a").name_span), "=>");
    let get = func(&m, "get");
    assert_eq!(text_of(src, get.span), "async get(key) {}");
    assert_eq!(
        text_of(src, m.types[0].span).lines().next(),
        Some("class Store {")
    );
}

#[test]
fn enums_and_type_aliases_are_names_not_code() {
    let m = ts(
        "enum Color { Red, Green = f() }\ntype Handler = () => Promise<void>;\nconst c = Color.Red;\nfunction run(h: Handler) {}",
    );
    assert_eq!(module_kinds(&m), ["assign", "funcdef"]);
    let d = dump(&m);
    assert!(d.contains("attr .Red =src/app.Color.Red"), "{d}");
    let p = &func(&m, "run").params[0];
    assert_eq!(
        p.ty.as_ref().unwrap().resolved.as_deref(),
        Some("src/app.Handler")
    );
}

#[test]
fn every_function_of_a_test_file_is_test_code() {
    let m = lower_at(
        "src/__tests__/queue.test.ts",
        "describe('q', () => { it('works', async () => { await run(); }); });",
    );
    assert!(m.is_test);
    assert_eq!(m.functions.len(), 3);
    assert!(m.functions.iter().all(|f| f.is_test));
}
