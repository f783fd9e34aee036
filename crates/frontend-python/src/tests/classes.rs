//! Classes: type declarations, fields, methods, `self` resolution.

use super::*;
use unsnarl_model::{FnKind, StmtKind, TypeRef};

fn field<'m>(m: &'m FileModel, class: &str, name: &str) -> &'m TypeRef {
    let t = m
        .types
        .iter()
        .find(|t| t.qualname == class)
        .unwrap_or_else(|| panic!("no type {class}:\n{}", dump(m)));
    &t.fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}:\n{}", dump(m)))
        .ty
}

const WORKER: &str = r#"import asyncio
import threading
from dataclasses import dataclass, field

class Worker(Base):
    """Docs."""
    lock: asyncio.Lock
    queue: "asyncio.Queue[int] | None" = None
    _shared = threading.Lock()
    count = 0

    def __init__(self, loop: asyncio.AbstractEventLoop, limit):
        self._lock = threading.Lock()
        self._loop = loop
        self._limit = limit
        self._tasks = set()
        self._items = []
        self._sem = asyncio.Semaphore(limit) if limit else None
        self._event: asyncio.Event = make_event()
        self.lock = asyncio.Lock()
        other.x = threading.Lock()

    async def run(self):
        await self.step()
        self.missing()
        helper = lambda: self.step()

    def step(self):
        self._lock.acquire()

    @staticmethod
    def util(x):
        return x

    @classmethod
    def create(cls):
        return cls.util(1)

    def later(self):
        self.set_up_later()
"#;

#[test]
fn class_gets_a_type_decl_and_a_classdef_statement() {
    let m = lower(WORKER);
    assert_eq!(m.types.len(), 1);
    let t = &m.types[0];
    assert_eq!(t.name, "Worker");
    assert_eq!(t.qualname, "pkg.mod.Worker");
    assert!(WORKER[t.span.start as usize..].starts_with("class Worker(Base):"));
    assert!(
        m.functions[0]
            .body
            .iter()
            .any(|s| matches!(m.stmt(*s).kind, StmtKind::ClassDef(_)))
    );
    assert_dump(&m, &["class pkg.mod.Worker"]);
}

#[test]
fn fields_from_class_annotations_class_attributes_and_init() {
    let m = lower(WORKER);
    let c = "pkg.mod.Worker";
    let lock = field(&m, c, "lock");
    // The class-level annotation comes first and is kept.
    assert_eq!(lock.text, "asyncio.Lock");
    assert_eq!(lock.resolved.as_deref(), Some("asyncio.Lock"));
    assert_eq!(
        field(&m, c, "queue").resolved.as_deref(),
        Some("asyncio.Queue")
    );
    assert_eq!(
        field(&m, c, "_shared").resolved.as_deref(),
        Some("threading.Lock")
    );
    let l = field(&m, c, "_lock");
    assert_eq!(l.text, "threading.Lock");
    assert_eq!(l.resolved.as_deref(), Some("threading.Lock"));
    // From the annotated parameter it is assigned from.
    assert_eq!(
        field(&m, c, "_loop").resolved.as_deref(),
        Some("asyncio.AbstractEventLoop")
    );
    assert_eq!(
        field(&m, c, "_tasks").resolved.as_deref(),
        Some("builtins.set")
    );
    assert_eq!(
        field(&m, c, "_items").resolved.as_deref(),
        Some("builtins.list")
    );
    assert_eq!(
        field(&m, c, "_sem").resolved.as_deref(),
        Some("asyncio.Semaphore")
    );
    // An annotation on `self.x` wins over the value.
    assert_eq!(
        field(&m, c, "_event").resolved.as_deref(),
        Some("asyncio.Event")
    );
    let names: Vec<&str> = m.types[0].fields.iter().map(|f| f.name.as_str()).collect();
    // No type known: not a field. Plain class constants: not fields.
    assert!(!names.contains(&"_limit"));
    assert!(!names.contains(&"count"));
    assert!(!names.contains(&"x"));
}

#[test]
fn methods_have_class_receiver_and_qualname() {
    let m = lower(WORKER);
    let run = func(&m, "pkg.mod.Worker.run");
    assert_eq!(run.kind, FnKind::Method);
    assert_eq!(run.class.as_deref(), Some("pkg.mod.Worker"));
    assert_eq!(run.receiver.as_deref(), Some("self"));
    assert_eq!(run.parent, Some(FuncId(0)));
    assert!(run.is_async);
    // The receiver is not among the parameters.
    let init = func(&m, "pkg.mod.Worker.__init__");
    let names: Vec<&str> = init.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["loop", "limit"]);
    let util = func(&m, "pkg.mod.Worker.util");
    assert_eq!(util.kind, FnKind::Method);
    assert_eq!(util.receiver, None);
    assert_eq!(util.params.len(), 1);
    assert_eq!(util.decorators, ["builtins.staticmethod"]);
    let create = func(&m, "pkg.mod.Worker.create");
    assert_eq!(create.receiver.as_deref(), Some("cls"));
    // Methods are not `FuncDef` statements of the module.
    assert!(
        !m.functions[0]
            .body
            .iter()
            .any(|s| matches!(m.stmt(*s).kind, StmtKind::FuncDef(_)))
    );
}

#[test]
fn self_and_cls_calls_resolve_to_methods_of_the_class() {
    let m = lower(WORKER);
    let steps = calls(&m, "step");
    assert_eq!(steps.len(), 2);
    // Also from a lambda inside the method.
    assert!(
        steps
            .iter()
            .all(|c| c.target.as_deref() == Some("pkg.mod.Worker.step"))
    );
    assert_eq!(target(&m, "util").as_deref(), Some("pkg.mod.Worker.util"));
    // Not defined in the class (and `Base` is unknown): unresolved, but the
    // receiver and name stay.
    let missing = call(&m, "missing");
    assert_eq!(missing.target, None);
    assert_eq!(m.name_of(missing.receiver.unwrap()), Some("self"));
    // Field method calls are for the semantic pass.
    assert_eq!(target(&m, "acquire"), None);
}

#[test]
fn self_calls_reach_methods_of_base_classes_in_the_file() {
    let m = lower(
        "class Base:\n    def ping(self):\n        pass\n\nclass Mid(Base):\n    pass\n\nclass Child(Mid):\n    def run(self):\n        self.ping()\n        self.pong()\n",
    );
    assert_eq!(target(&m, "ping").as_deref(), Some("pkg.mod.Base.ping"));
    assert_eq!(target(&m, "pong"), None);
}

#[test]
fn an_unknown_base_before_a_known_one_blocks_resolution() {
    let m = lower(
        "class Base:\n    def ping(self):\n        pass\n\nclass Child(external.Mixin, Base):\n    def run(self):\n        self.ping()\n",
    );
    assert_eq!(target(&m, "ping"), None);
}

#[test]
fn generic_and_object_bases_do_not_block_resolution() {
    let m = lower(
        "from typing import Generic, TypeVar\nT = TypeVar('T')\nclass Base(Generic[T]):\n    def ping(self):\n        pass\nclass Child(object, Base[int]):\n    def run(self):\n        self.ping()\n",
    );
    assert_eq!(target(&m, "ping").as_deref(), Some("pkg.mod.Base.ping"));
}

#[test]
fn class_method_calls_through_the_class_name() {
    let m = lower("class Pool:\n    def get(self):\n        pass\n\nPool.get(p)\nPool()\n");
    assert_eq!(target(&m, "get").as_deref(), Some("pkg.mod.Pool.get"));
    assert_eq!(target(&m, "Pool").as_deref(), Some("pkg.mod.Pool"));
}

#[test]
fn class_body_names_are_not_visible_in_methods() {
    let m =
        lower("import time\nclass C:\n    time = None\n    def m(self):\n        time.sleep(1)\n");
    assert_eq!(target(&m, "sleep").as_deref(), Some("time.sleep"));
}

#[test]
fn class_body_code_runs_in_a_block_after_the_classdef() {
    let m = lower(
        "import threading\nclass C:\n    lock = threading.Lock()\n    n: int\n    def m(self):\n        pass\n",
    );
    // Class-body assignments set class attributes, not variables of the
    // module.
    assert_dump(
        &m,
        &[
            "class pkg.mod.C",
            "block",
            "assign Plain",
            "target: attr .lock =pkg.mod.C.lock",
            "obj: name C =pkg.mod.C",
            "value: call Lock =threading.Lock",
            "assign Declare { mutable: true }",
            "target: attr .n =pkg.mod.C.n",
        ],
    );
}

#[test]
fn nested_classes_and_classes_in_functions() {
    let m = lower(
        "class Outer:\n    class Inner:\n        def m(self):\n            self.n()\n        def n(self):\n            pass\n\ndef factory():\n    class Local:\n        def go(self):\n            pass\n    return Local()\n",
    );
    let quals: Vec<&str> = m.types.iter().map(|t| t.qualname.as_str()).collect();
    assert_eq!(
        quals,
        [
            "pkg.mod.Outer",
            "pkg.mod.Outer.Inner",
            "pkg.mod.factory.Local"
        ]
    );
    let inner_m = func(&m, "pkg.mod.Outer.Inner.m");
    assert_eq!(inner_m.class.as_deref(), Some("pkg.mod.Outer.Inner"));
    assert_eq!(target(&m, "n").as_deref(), Some("pkg.mod.Outer.Inner.n"));
    let go = func(&m, "pkg.mod.factory.Local.go");
    assert_eq!(go.parent, Some(func_id(&m, "pkg.mod.factory")));
    assert_eq!(
        target(&m, "Local").as_deref(),
        Some("pkg.mod.factory.Local")
    );
}

#[test]
fn methods_in_conditional_blocks_of_a_class_are_methods() {
    let m = lower("class C:\n    if PY3:\n        def m(self):\n            pass\n");
    let f = func(&m, "pkg.mod.C.m");
    assert_eq!(f.kind, FnKind::Method);
    assert_eq!(f.receiver.as_deref(), Some("self"));
}

#[test]
fn test_classes_mark_their_methods() {
    let m = lower(
        "import unittest\nclass TestPool:\n    def helper(self):\n        pass\nclass PoolCase(unittest.IsolatedAsyncioTestCase):\n    async def asyncSetUp(self):\n        pass\nclass Pool:\n    def test_like(self):\n        pass\n    def get(self):\n        pass\n",
    );
    assert!(func(&m, "pkg.mod.TestPool.helper").is_test);
    assert!(func(&m, "pkg.mod.PoolCase.asyncSetUp").is_test);
    assert!(func(&m, "pkg.mod.Pool.test_like").is_test);
    assert!(!func(&m, "pkg.mod.Pool.get").is_test);
}

#[test]
fn dataclass_fields() {
    let m = lower(
        "import asyncio\nfrom dataclasses import dataclass, field\n@dataclass\nclass S:\n    q: asyncio.Queue = field(default_factory=asyncio.Queue)\n    n: int = 0\n",
    );
    assert_eq!(
        field(&m, "pkg.mod.S", "q").resolved.as_deref(),
        Some("asyncio.Queue")
    );
    assert_eq!(
        field(&m, "pkg.mod.S", "n").resolved.as_deref(),
        Some("builtins.int")
    );
}

#[test]
fn self_calls_reach_conditionally_defined_methods() {
    let m = lower(
        "class C:\n    if PY3:\n        def m(self):\n            pass\n    else:\n        def m(self):\n            pass\n    def run(self):\n        self.m()\n",
    );
    assert_eq!(target(&m, "m").as_deref(), Some("pkg.mod.C.m"));
}

#[test]
fn bound_methods_passed_as_callbacks_resolve() {
    let m = lower(
        "import asyncio\nclass Clock:\n    def tick(self):\n        pass\n    async def run(self, loop):\n        await asyncio.to_thread(self.tick)\n        loop.call_soon(self.tock)\n        super().run()\n",
    );
    let off = call(&m, "to_thread");
    assert_eq!(resolved(&m, off.args[0].value), Some("pkg.mod.Clock.tick"));
    // Not a method of the class: a field, or something inherited.
    let soon = call(&m, "call_soon");
    assert_eq!(resolved(&m, soon.args[0].value), None);
    // `super()` calls stay for the semantic pass.
    let sup = calls(&m, "run");
    assert!(sup.iter().all(|c| c.target.is_none()));
    assert_eq!(target(&m, "super").as_deref(), Some("builtins.super"));
}
