//! Functions: kinds, names, parameters, decorators, nesting.

use super::*;
use unsnarl_model::{FnKind, StmtKind};

#[test]
fn def_and_async_def() {
    let src = "def f(a, b=2):\n    pass\n\nasync def g():\n    pass\n";
    let m = lower(src);
    assert_eq!(m.functions.len(), 3);
    let f = func(&m, "pkg.mod.f");
    assert_eq!(f.kind, FnKind::Function);
    assert_eq!(f.name, "f");
    assert!(!f.is_async);
    assert_eq!(f.parent, Some(FuncId(0)));
    assert_eq!(
        &src[f.name_span.start as usize..f.name_span.end as usize],
        "f"
    );
    assert_eq!(
        &src[f.span.start as usize..f.span.end as usize],
        "def f(a, b=2):\n    pass"
    );
    assert!(func(&m, "pkg.mod.g").is_async);
    // Module-level defs are `FuncDef` statements of the module.
    assert_dump(&m, &["fn#0 Module <module> ()", "def fn#1", "def fn#2"]);
}

#[test]
fn module_function_covers_the_file() {
    let src = "x = 1\n# trailing comment\n";
    let m = lower(src);
    let f = &m.functions[0];
    assert_eq!(f.kind, FnKind::Module);
    assert_eq!(f.span.end as usize, src.len());
    assert_eq!(f.parent, None);
}

#[test]
fn parameters_in_order_with_types_and_defaults() {
    let src = "import asyncio\ndef f(a, /, b: int, c: asyncio.Queue[str] = None, *args: str, d, e=len(x), **kw) -> 'asyncio.Task[None]':\n    pass\n";
    let m = lower(src);
    let f = func(&m, "pkg.mod.f");
    let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "*args", "d", "e", "**kw"]);
    let ty = |i: usize| f.params[i].ty.clone();
    assert_eq!(ty(0), None);
    let b = ty(1).unwrap();
    assert_eq!(
        (b.text.as_str(), b.resolved.as_deref()),
        ("int", Some("builtins.int"))
    );
    let c = ty(2).unwrap();
    assert_eq!(c.text, "asyncio.Queue[str]");
    assert_eq!(c.resolved.as_deref(), Some("asyncio.Queue"));
    assert!(f.params[2].default.is_some());
    assert!(f.params[3].default.is_none());
    // Defaults are lowered (in the enclosing scope).
    let e_default = f.params[5].default.unwrap();
    assert_eq!(
        m.call(e_default).unwrap().target.as_deref(),
        Some("builtins.len")
    );
    let r = f.returns.clone().unwrap();
    assert_eq!(r.text, "asyncio.Task[None]");
    assert_eq!(r.resolved.as_deref(), Some("asyncio.Task"));
    let p = &f.params[1];
    assert_eq!(&src[p.span.start as usize..p.span.end as usize], "b: int");
}

#[test]
fn decorators_resolve_without_arguments() {
    let src = "import tenacity\nfrom functools import lru_cache\nimport app_module\n\n@tenacity.retry(stop=tenacity.stop_after_attempt(3))\n@lru_cache\n@app.route('/x')\n@registry[0]\ndef f():\n    pass\n";
    let m = lower(src);
    let f = func(&m, "pkg.mod.f");
    assert_eq!(
        f.decorators,
        [
            "tenacity.retry",
            "functools.lru_cache",
            "app.route",
            "registry[0]"
        ]
    );
    // Only decorator *calls* are kept as expressions, with their arguments.
    assert_eq!(f.decorator_calls.len(), 2);
    let retry = m.call(f.decorator_calls[0]).unwrap();
    assert_eq!(retry.target.as_deref(), Some("tenacity.retry"));
    let stop = m.call(retry.kwarg("stop").unwrap()).unwrap();
    assert_eq!(stop.target.as_deref(), Some("tenacity.stop_after_attempt"));
    assert_eq!(m.call(f.decorator_calls[1]).unwrap().name, "route");
}

#[test]
fn nested_functions_have_qualnames_parents_and_funcdefs() {
    let m = lower(
        "def outer():\n    x = 1\n    def inner():\n        def innermost():\n            pass\n        return innermost\n    return inner\n",
    );
    let outer = func_id(&m, "pkg.mod.outer");
    let inner = func_id(&m, "pkg.mod.outer.inner");
    let innermost = func(&m, "pkg.mod.outer.inner.innermost");
    assert_eq!(m.func(inner).parent, Some(outer));
    assert_eq!(innermost.parent, Some(inner));
    assert!(
        m.func(outer)
            .body
            .iter()
            .any(|s| matches!(m.stmt(*s).kind, StmtKind::FuncDef(f) if f == inner))
    );
    let tree = unsnarl_model::walk::Tree::build(&m);
    assert!(matches!(
        tree.func_site(inner),
        unsnarl_model::walk::Parent::Stmt(_)
    ));
}

#[test]
fn closures_inside_functions_have_the_function_as_parent() {
    let m = lower("def f(xs):\n    return sorted(xs, key=lambda x: x.k)\n");
    let f = func_id(&m, "pkg.mod.f");
    let lam = m
        .functions
        .iter()
        .position(|g| g.kind == FnKind::Closure)
        .unwrap();
    assert_eq!(m.functions[lam].parent, Some(f));
    let tree = unsnarl_model::walk::Tree::build(&m);
    let site = tree.func_site(FuncId(lam as u32));
    let unsnarl_model::walk::Parent::Expr(e) = site else {
        panic!("{site:?}")
    };
    assert_eq!(tree.expr_func(e), f);
}

#[test]
fn test_functions_are_marked() {
    let m = lower(
        "import pytest\n\ndef test_it():\n    def helper():\n        pass\n\ndef testing_tool():\n    pass\n\n@pytest.fixture\ndef db():\n    pass\n",
    );
    assert!(func(&m, "pkg.mod.test_it").is_test);
    assert!(func(&m, "pkg.mod.test_it.helper").is_test);
    assert!(!func(&m, "pkg.mod.testing_tool").is_test);
    assert!(func(&m, "pkg.mod.db").is_test);
    assert!(!m.functions[0].is_test);
}

#[test]
fn functions_redefined_keep_separate_entries() {
    let m = lower("def f():\n    pass\ndef f():\n    return 1\nf()\n");
    assert_eq!(m.functions.iter().filter(|f| f.name == "f").count(), 2);
    assert_eq!(target(&m, "f").as_deref(), Some("pkg.mod.f"));
}

#[test]
fn annotations_peel_optional_unions_and_wrappers() {
    let src = "from typing import Optional, Union, Annotated, ClassVar, Final\nimport asyncio, threading\n\
def f(\n    a: Optional[asyncio.Queue[int]],\n    b: asyncio.Lock | None,\n    c: Union[None, threading.Event],\n    d: Annotated[asyncio.Semaphore, 'x'],\n    e: 'Optional[asyncio.Event]',\n    g: int | str,\n    h: Union[int, str],\n    i: list[asyncio.Task],\n    j: Final[ClassVar[threading.Lock]],\n    k: typing.Optional[Foo],\n    l: Unknown,\n    m: 'not valid ((',\n):\n    pass\n";
    let m = lower(src);
    let f = func(&m, "pkg.mod.f");
    let res: Vec<Option<&str>> = f
        .params
        .iter()
        .map(|p| p.ty.as_ref().unwrap().resolved.as_deref())
        .collect();
    assert_eq!(
        res,
        [
            Some("asyncio.Queue"),
            Some("asyncio.Lock"),
            Some("threading.Event"),
            Some("asyncio.Semaphore"),
            Some("asyncio.Event"),
            None,
            None,
            Some("builtins.list"),
            Some("threading.Lock"),
            None,
            None,
            None,
        ]
    );
    assert_eq!(
        f.params[4].ty.as_ref().unwrap().text,
        "Optional[asyncio.Event]"
    );
    assert_eq!(f.params[1].ty.as_ref().unwrap().text, "asyncio.Lock | None");
}

#[test]
fn forward_references_to_classes_of_the_module_resolve() {
    let m = lower("def make() -> 'Pool':\n    return Pool()\nclass Pool:\n    pass\n");
    let f = func(&m, "pkg.mod.make");
    assert_eq!(
        f.returns.as_ref().unwrap().resolved.as_deref(),
        Some("pkg.mod.Pool")
    );
}
