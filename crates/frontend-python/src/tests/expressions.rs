//! Expressions, and name resolution in them.

use super::*;
use unsnarl_model::{BinOp, CollKind, Lit, LogicalOp, StmtKind, UnOp};

/// The value of the first expression statement or assignment of the
/// module.
fn first_value(m: &FileModel) -> ExprId {
    m.functions[0]
        .body
        .iter()
        .find_map(|s| match &m.stmt(*s).kind {
            StmtKind::Expr(e) => Some(*e),
            StmtKind::Assign { value: Some(v), .. } => Some(*v),
            _ => None,
        })
        .expect("an expression statement")
}

#[test]
fn builtins_resolve_unless_shadowed() {
    let m = lower(
        "open(p)\nlen(x)\ninput()\n\ndef f(open):\n    open(q)\n\ndef g():\n    len = 3\n    len(y)\n",
    );
    let opens = calls(&m, "open");
    assert_eq!(opens[0].target.as_deref(), Some("builtins.open"));
    assert_eq!(opens[1].target, None);
    let lens = calls(&m, "len");
    assert_eq!(lens[0].target.as_deref(), Some("builtins.len"));
    assert_eq!(lens[1].target, None);
    assert_eq!(target(&m, "input").as_deref(), Some("builtins.input"));
}

#[test]
fn module_level_definitions_shadow_builtins() {
    let m = lower("def open(p):\n    pass\nopen(1)\n");
    assert_eq!(target(&m, "open").as_deref(), Some("pkg.mod.open"));
}

#[test]
fn module_level_functions_and_classes_resolve() {
    let m = lower(
        "def work():\n    pass\nclass Pool:\n    pass\nwork()\nPool()\nlater()\ndef later(): pass\n",
    );
    assert_eq!(target(&m, "work").as_deref(), Some("pkg.mod.work"));
    // A call of a class is its constructor.
    assert_eq!(target(&m, "Pool").as_deref(), Some("pkg.mod.Pool"));
    // Defined after the use: still module-level.
    assert_eq!(target(&m, "later").as_deref(), Some("pkg.mod.later"));
}

#[test]
fn locals_and_parameters_shadow_imports() {
    let m = lower(
        "import time\nimport queue\n\ndef f(time):\n    time.sleep(1)\n\ndef g():\n    queue = make()\n    queue.get()\n\ndef h():\n    for time in xs:\n        time.sleep(2)\n",
    );
    for c in calls(&m, "sleep") {
        assert_eq!(c.target, None);
    }
    assert_eq!(target(&m, "get"), None);
}

#[test]
fn a_local_assigned_after_use_still_shadows() {
    // Python: `time` is local to all of `f` (this raises UnboundLocalError).
    let m = lower("import time\ndef f():\n    time.sleep(1)\n    time = None\n");
    assert_eq!(target(&m, "sleep"), None);
}

#[test]
fn attribute_chains_on_modules_resolve() {
    let src = "import os\nimport asyncio\nimport concurrent.futures\nos.path.exists(p)\nq = asyncio.Queue()\nconcurrent.futures.ThreadPoolExecutor(max_workers=4)\n";
    let m = lower(src);
    assert_eq!(target(&m, "exists").as_deref(), Some("os.path.exists"));
    assert_eq!(target(&m, "Queue").as_deref(), Some("asyncio.Queue"));
    let ex = call(&m, "ThreadPoolExecutor");
    assert_eq!(
        ex.target.as_deref(),
        Some("concurrent.futures.ThreadPoolExecutor")
    );
    // The receiver chain is resolved too.
    let recv = ex.receiver.unwrap();
    assert_eq!(resolved(&m, recv), Some("concurrent.futures"));
    assert_eq!(text_of(&m, src, recv), "concurrent.futures");
    assert_eq!(m.int_value(ex.kwarg("max_workers").unwrap()), Some(4));
}

#[test]
fn method_calls_on_locals_keep_receiver_and_name() {
    let src = "def f(q):\n    q.items.put_nowait(1)\n";
    let m = lower(src);
    let c = call(&m, "put_nowait");
    assert_eq!(c.target, None);
    let recv = c.receiver.unwrap();
    assert_eq!(text_of(&m, src, recv), "q.items");
    assert_eq!(m.dotted(recv).as_deref(), Some("q.items"));
    assert!(matches!(m.expr(c.func).kind, ExprKind::Attr { .. }));
    assert_eq!(text_of(&m, src, c.func), "q.items.put_nowait");
}

#[test]
fn module_variables_resolve_as_names_but_not_through_attributes() {
    let m = lower("import threading\n_lock = threading.Lock()\ndef f():\n    _lock.acquire()\n");
    let c = call(&m, "acquire");
    assert_eq!(c.target, None);
    assert_eq!(resolved(&m, c.receiver.unwrap()), Some("pkg.mod._lock"));
}

#[test]
fn module_level_aliases_resolve_to_what_they_alias() {
    let m = lower(
        "import threading, time\nLock = threading.Lock\nnap = time.sleep\nnap2 = nap\nLock()\nnap(1)\nnap2(2)\n",
    );
    assert_eq!(target(&m, "Lock").as_deref(), Some("threading.Lock"));
    let naps = calls(&m, "nap");
    assert_eq!(naps[0].target.as_deref(), Some("time.sleep"));
    assert_eq!(target(&m, "nap2").as_deref(), Some("time.sleep"));
}

#[test]
fn names_assigned_twice_at_module_level_are_not_aliases() {
    let m = lower("import time\nnap = time.sleep\nif x:\n    nap = other\nnap(1)\n");
    assert_eq!(target(&m, "nap").as_deref(), Some("pkg.mod.nap"));
}

#[test]
fn global_declarations_reach_the_module_scope() {
    let m = lower(
        "import time\ndef f():\n    global time\n    time.sleep(1)\n    time = 3\n\ndef g():\n    global _state\n    _state = 1\n",
    );
    assert_eq!(target(&m, "sleep").as_deref(), Some("time.sleep"));
    let g = func(&m, "pkg.mod.g");
    let StmtKind::Assign { targets, .. } = &m.stmt(g.body[1]).kind else {
        panic!()
    };
    assert_eq!(resolved(&m, targets[0]), Some("pkg.mod._state"));
}

#[test]
fn closures_see_enclosing_locals_not_module_names() {
    let m = lower("import time\ndef f(time):\n    def g():\n        time.sleep(1)\n    return g\n");
    assert_eq!(target(&m, "sleep"), None);
}

#[test]
fn nonlocal_names_are_the_enclosing_functions() {
    let m = lower(
        "import time\ndef f():\n    time = 0\n    def g():\n        nonlocal time\n        time.sleep(1)\n",
    );
    assert_eq!(target(&m, "sleep"), None);
}

#[test]
fn nested_function_calls_resolve_to_the_nested_qualname() {
    let m = lower("def outer():\n    def helper():\n        pass\n    helper()\n");
    assert_eq!(
        target(&m, "helper").as_deref(),
        Some("pkg.mod.outer.helper")
    );
}

#[test]
fn call_arguments_keywords_and_spreads() {
    let src = "f(1, *rest, key=2, **opts)\n";
    let m = lower(src);
    let c = call(&m, "f");
    assert_eq!(c.args.len(), 4);
    assert_eq!((c.args[0].name.as_deref(), c.args[0].spread), (None, false));
    assert_eq!((c.args[1].name.as_deref(), c.args[1].spread), (None, true));
    assert_eq!(text_of(&m, src, c.args[1].value), "rest");
    assert_eq!(
        (c.args[2].name.as_deref(), c.args[2].spread),
        (Some("key"), false)
    );
    assert_eq!(
        (c.args[3].name.as_deref(), c.args[3].spread),
        (Some("**"), true)
    );
    assert_eq!(text_of(&m, src, c.args[3].value), "opts");
    assert!(c.has_spread());
    assert_eq!(m.int_value(c.positional(0).unwrap()), Some(1));
    assert!(c.positional(1).is_none());
}

#[test]
fn call_spans_cover_the_whole_call() {
    let src = "x = obj.method(a, b=(1, 2))  # trailing\n";
    let m = lower(src);
    let id = first_value(&m);
    assert_eq!(text_of(&m, src, id), "obj.method(a, b=(1, 2))");
}

#[test]
fn computed_callees_have_an_empty_name() {
    let src = "handlers[0](x)\nmake()()\n";
    let m = lower(src);
    let computed: Vec<&Call> = calls(&m, "");
    assert_eq!(computed.len(), 2);
    assert!(
        computed
            .iter()
            .all(|c| c.receiver.is_none() && c.target.is_none())
    );
    assert_dump(&m, &["expr: call ?", "func: index"]);
}

#[test]
fn await_and_async_calls() {
    let m = lower("import asyncio\nasync def f():\n    await asyncio.sleep(1)\n");
    assert_dump(
        &m,
        &[
            "fn#1 Function async pkg.mod.f parent=fn#0 ()",
            "expr: await",
            "of: call sleep =asyncio.sleep",
        ],
    );
}

#[test]
fn literals() {
    let m = lower("x = [1, 2.5, 'é', True, None, b'x', ..., 1j, 99999999999999999999999999]\n");
    let ExprKind::Collection { kind, elems, .. } = &m.expr(first_value(&m)).kind else {
        panic!()
    };
    assert_eq!(*kind, CollKind::List);
    let lits: Vec<Lit> = elems
        .iter()
        .map(|e| m.literal(*e).cloned().unwrap())
        .collect();
    assert_eq!(
        lits,
        [
            Lit::Int(1),
            Lit::Float(2.5),
            Lit::Str("é".into()),
            Lit::Bool(true),
            Lit::Null,
            Lit::Other,
            Lit::Other,
            Lit::Other,
            // Beyond 64 bits: kept as Other rather than guessed.
            Lit::Other,
        ]
    );
}

#[test]
fn implicitly_concatenated_strings_join() {
    let m = lower("x = 'a' 'b'\n");
    assert_eq!(m.literal(first_value(&m)), Some(&Lit::Str("ab".into())));
}

#[test]
fn f_strings_keep_their_interpolations() {
    let src = "x = f'{a} and {b():>{width}}'\n";
    let m = lower(src);
    let ExprKind::Other(children) = &m.expr(first_value(&m)).kind else {
        panic!()
    };
    let texts: Vec<&str> = children.iter().map(|c| text_of(&m, src, *c)).collect();
    assert_eq!(texts, ["a", "b()", "width"]);
    assert_eq!(calls(&m, "b").len(), 1);
}

#[test]
fn operators() {
    let m = lower("x = (-a + b * c) // d % e\ny = not a or b and c\nz = a is not None\nw = ~a\n");
    assert_dump(
        &m,
        &[
            "value: binary Rem",
            "l: binary Div",
            "l: binary Add",
            "l: unary Neg",
            "r: binary Mul",
            "value: logical Or",
            "l: unary Not",
            "r: logical And",
            "value: binary IsNot",
            "value: unary Other",
        ],
    );
    let _ = (BinOp::Add, UnOp::Neg, LogicalOp::Or);
}

#[test]
fn bool_op_chains_nest_left() {
    let src = "x = a or b or c\n";
    let m = lower(src);
    let v = first_value(&m);
    let ExprKind::Logical { left, right, .. } = &m.expr(v).kind else {
        panic!()
    };
    assert_eq!(text_of(&m, src, v), "a or b or c");
    assert_eq!(text_of(&m, src, *left), "a or b");
    assert_eq!(text_of(&m, src, *right), "c");
}

#[test]
fn chained_comparisons_keep_each_operand_once() {
    let src = "x = 0 <= f() < n\n";
    let m = lower(src);
    let ExprKind::Other(children) = &m.expr(first_value(&m)).kind else {
        panic!()
    };
    assert_eq!(children.len(), 3);
    assert_eq!(calls(&m, "f").len(), 1);
}

#[test]
fn membership_and_identity() {
    let m = lower("a in b\na not in b\na is b\na == b\na != b\na < b\na >= b\n");
    assert_dump(
        &m,
        &[
            "expr: binary In",
            "expr: binary NotIn",
            "expr: binary Is",
            "expr: binary Eq",
            "expr: binary NotEq",
            "expr: binary Lt",
            "expr: binary GtE",
        ],
    );
}

#[test]
fn ternary_subscript_slice_and_starred() {
    let m = lower("x = a if c else b\ny = xs[1:f()]\nfirst, *rest = xs\n");
    assert_dump(
        &m,
        &[
            "value: ternary",
            "cond: name c",
            "then: name a",
            "else: name b",
            "value: index",
            "obj: name xs",
            "idx: other",
            "child: lit Int(1)",
            "child: call f",
            "target: Tuple",
            // Module-level variables resolve to `<module>.<name>`.
            "elem: name first =pkg.mod.first",
            "elem: spread",
        ],
    );
}

#[test]
fn dict_displays_keep_string_keys_and_spreads() {
    let src = "d = {'a': 1, k: 2, **base, f(): 3, 4: 5}\n";
    let m = lower(src);
    let ExprKind::Collection {
        kind, elems, keys, ..
    } = &m.expr(first_value(&m)).kind
    else {
        panic!()
    };
    assert_eq!(*kind, CollKind::Dict);
    assert_eq!(keys.len(), elems.len());
    assert_eq!(keys[0].as_deref(), Some("a"));
    assert!(keys[1..].iter().all(Option::is_none));
    assert!(matches!(m.expr(elems[2]).kind, ExprKind::Spread(_)));
    // The computed key's call is not lost.
    assert_eq!(calls(&m, "f").len(), 1);
    assert_eq!(text_of(&m, src, elems[3]), "f(): 3");
}

#[test]
fn collections() {
    let m = lower("a = [1]\nb = (1,)\nc = {1}\nd = {}\n");
    assert_dump(
        &m,
        &["value: List", "value: Tuple", "value: Set", "value: Dict"],
    );
}

#[test]
fn comprehensions_and_generator_expressions() {
    let m = lower(
        "a = [f(x) for x in xs if x]\nb = {x for x in xs}\nc = {k: v for k, v in d.items()}\ne = sum(x for x in xs)\n\
         async def g():\n    return [await y async for y in ys]\n",
    );
    assert_dump(
        &m,
        &[
            "value: comprehension List",
            "elt: call f",
            "arg: name x",
            "for",
            "target: name x",
            "iter: name xs",
            "if: name x",
            "value: comprehension Set",
            "value: comprehension Dict",
            "elt: other",
            "arg: comprehension Generator",
            "return: comprehension List",
            "elt: await",
            "for async",
        ],
    );
}

#[test]
fn comprehension_targets_shadow_imports() {
    let m = lower(
        "import time\nx = [time.sleep(1) for time in clocks]\ny = [t for t in time.ticks()]\n",
    );
    assert_eq!(target(&m, "sleep"), None);
    // The first iterable is evaluated outside the comprehension.
    assert_eq!(target(&m, "ticks").as_deref(), Some("time.ticks"));
}

#[test]
fn walrus_binds_a_local() {
    let m = lower("import time\ndef f():\n    if (time := get()):\n        time.sleep(1)\n");
    assert_dump(
        &m,
        &[
            "cond: assign-expr Plain",
            "target: name time",
            "value: call get",
        ],
    );
    assert_eq!(target(&m, "sleep"), None);
}

#[test]
fn lambdas_are_closures_returning_their_body() {
    let src = "import asyncio\nhandler = lambda loop, x=1: loop.call_soon(asyncio.sleep, x)\n";
    let m = lower(src);
    let v = first_value(&m);
    let ExprKind::Closure(fid) = m.expr(v).kind else {
        panic!()
    };
    let f = m.func(fid);
    assert_eq!(f.kind, unsnarl_model::FnKind::Closure);
    assert_eq!(f.name, "");
    assert_eq!(f.qualname, "");
    assert_eq!(f.parent, Some(FuncId(0)));
    let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["loop", "x"]);
    assert!(f.params[1].default.is_some());
    assert_eq!(
        &src[f.name_span.start as usize..f.name_span.end as usize],
        "lambda"
    );
    assert_eq!(f.body.len(), 1);
    let StmtKind::Return(Some(ret)) = m.stmt(f.body[0]).kind else {
        panic!()
    };
    assert_eq!(m.call(ret).unwrap().name, "call_soon");
    // Inside the lambda, `asyncio` still resolves, `loop` is a parameter.
    let c = call(&m, "call_soon");
    assert_eq!(c.target, None);
    assert_eq!(resolved(&m, c.args[0].value), Some("asyncio.sleep"));
}

#[test]
fn yield_makes_a_generator_but_not_of_the_enclosing_function() {
    let m = lower(
        "def outer():\n    def gen():\n        yield 1\n    x = (y for y in gen())\n    return x\n\
         async def agen():\n    yield\n\ndef delegate():\n    yield from gen2()\n",
    );
    assert!(!func(&m, "pkg.mod.outer").is_generator);
    assert!(func(&m, "pkg.mod.outer.gen").is_generator);
    let agen = func(&m, "pkg.mod.agen");
    assert!(agen.is_generator && agen.is_async);
    assert!(func(&m, "pkg.mod.delegate").is_generator);
    assert_dump(&m, &["expr: yield", "of: call gen2"]);
}

#[test]
fn non_ascii_identifiers_and_strings() {
    let src = "import données as dé\nπ = 3.14\ndef grüße(名前):\n    return dé.charger(\"ß→ü\", 名前) + π\n";
    let m = lower_at("paquet/modulé.py", src);
    assert_eq!(m.module, "paquet.modulé");
    let c = call(&m, "charger");
    assert_eq!(c.target.as_deref(), Some("données.charger"));
    assert_eq!(text_of(&m, src, c.args[1].value), "名前");
    assert_eq!(m.literal(c.args[0].value), Some(&Lit::Str("ß→ü".into())));
    let f = func(&m, "paquet.modulé.grüße");
    assert_eq!(
        &src[f.name_span.start as usize..f.name_span.end as usize],
        "grüße"
    );
    assert_dump(&m, &["r: name π =paquet.modulé.π"]);
}

#[test]
fn a_generic_parameterized_with_a_type_is_still_its_callee() {
    let m = lower(
        "import asyncio\nimport anyio\nq = asyncio.Queue[int]()\ns, r = anyio.create_memory_object_stream[bytes](5)\nhandlers[kind](x)\n",
    );
    assert_eq!(target(&m, "Queue").as_deref(), Some("asyncio.Queue"));
    assert_eq!(
        target(&m, "create_memory_object_stream").as_deref(),
        Some("anyio.create_memory_object_stream")
    );
    // A lookup in a table of callables is not a call of the table.
    assert!(calls(&m, "handlers").is_empty());
}
