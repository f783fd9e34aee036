//! Never panic, stay bounded, keep the model well-formed: pathological
//! nesting, truncated and mangled files.

use super::*;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::walk::{Parent, Tree, Visitor, walk_block};
use unsnarl_model::{StmtId, StmtKind};

/// Runs `f` on a thread with the pipeline's 256 MiB stack.
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// The deepest statement/expression nesting of any function body.
fn max_depth(m: &FileModel) -> usize {
    struct Depth {
        cur: usize,
        max: usize,
    }
    impl Visitor for Depth {
        fn enter_stmt(&mut self, _m: &FileModel, _id: StmtId) -> bool {
            self.cur += 1;
            self.max = self.max.max(self.cur);
            true
        }
        fn exit_stmt(&mut self, _m: &FileModel, _id: StmtId) {
            self.cur -= 1;
        }
        fn enter_expr(&mut self, _m: &FileModel, _id: ExprId) -> bool {
            self.cur += 1;
            self.max = self.max.max(self.cur);
            true
        }
        fn exit_expr(&mut self, _m: &FileModel, _id: ExprId) {
            self.cur -= 1;
        }
    }
    let mut d = Depth { cur: 0, max: 0 };
    for f in &m.functions {
        walk_block(m, &f.body, &mut d);
    }
    d.max
}

/// Structural invariants every lowered model must satisfy.
#[track_caller]
fn check_invariants(m: &FileModel, text: &str) {
    let ok_span = |s: unsnarl_model::Span| {
        s.start <= s.end
            && (s.end as usize) <= text.len()
            && text.is_char_boundary(s.start as usize)
            && text.is_char_boundary(s.end as usize)
    };
    for (i, e) in m.exprs.iter().enumerate() {
        assert!(ok_span(e.span), "expr {i} span {:?}", e.span);
    }
    for (i, s) in m.stmts.iter().enumerate() {
        assert!(ok_span(s.span), "stmt {i} span {:?}", s.span);
    }
    for e in &m.syntax_errors {
        assert!(e.span.start <= e.span.end && e.span.end as usize <= text.len());
    }
    for (i, f) in m.functions.iter().enumerate() {
        assert!(ok_span(f.span) && ok_span(f.name_span), "fn {i}");
        match f.parent {
            None => assert_eq!(i, 0),
            Some(p) => assert!(p.index() < i, "fn {i} parent {p:?}"),
        }
    }
    // Every node is reachable from some function.
    let tree = Tree::build(m);
    for i in 0..m.exprs.len() {
        assert_ne!(
            tree.expr_parent(ExprId(i as u32)),
            Parent::Detached,
            "expr {i} detached: {:?}\n{}",
            m.exprs[i],
            dump(m)
        );
    }
    for i in 0..m.stmts.len() {
        assert_ne!(
            tree.stmt_parent(StmtId(i as u32)),
            Parent::Detached,
            "stmt {i} detached"
        );
    }
    let _ = dump(m);
}

fn deep_inputs() -> Vec<String> {
    const N: usize = 10_000;
    vec![
        format!("x = {}1{}\n", "(".repeat(N), ")".repeat(N)),
        format!("x = {}{}\n", "[".repeat(N), "]".repeat(N)),
        format!("x = {}{}\n", "{".repeat(N), "}".repeat(N)),
        format!("x = {}1{}\n", "f(".repeat(N), ")".repeat(N)),
        format!("x = {}\n", "(".repeat(N)),
        format!("x = {}\n", "[".repeat(N)),
        format!("x = 1{}\n", " + 1".repeat(N)),
        format!("x = 1{}\n", " or 1".repeat(N)),
        format!("x = a{}\n", ".b".repeat(N)),
        format!("x = a{}\n", "[0]".repeat(N)),
        format!("x = a{}\n", "()".repeat(N)),
        format!("x = {}1\n", "-".repeat(N)),
        format!("x = {}y\n", "not ".repeat(N)),
        format!("x = {}y\n", "await ".repeat(N)),
        format!("x = {}1\n", "lambda: ".repeat(N)),
        format!("x = 1{}\n", " if a else 1".repeat(N)),
        format!("x = {}1{}\n", "[x for x in ".repeat(N), "]".repeat(N)),
        format!("x: {}int{}\n", "Optional[".repeat(N), "]".repeat(N)),
        format!("x = f'{}'\n", "{f'".repeat(200)),
        format!("x = {}\n", "x := ".repeat(N)),
        (0..1_000)
            .map(|i| format!("{}if x:\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(1_000)
            + "pass\n",
        (0..1_000)
            .map(|i| format!("{}def f{i}():\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(1_000)
            + "pass\n",
        (0..1_000)
            .map(|i| format!("{}class C{i}:\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(1_000)
            + "pass\n",
        format!(
            "match x:\n    case {}1{}:\n        pass\n",
            "[".repeat(N),
            "]".repeat(N)
        ),
        format!(
            "def f(x: '{}int{}'): pass\n",
            "Optional[".repeat(N),
            "]".repeat(N)
        ),
        format!(
            "try:\n    pass\nexcept {}E{}:\n    pass\n",
            "(".repeat(N),
            ")".repeat(N)
        ),
    ]
}

#[test]
fn ten_thousand_levels_of_nesting_do_not_crash_and_stay_bounded() {
    let results = on_big_stack(|| {
        deep_inputs()
            .into_iter()
            .map(|src| {
                let m = lower(&src);
                check_invariants(&m, &src);
                (src.chars().take(24).collect::<String>(), max_depth(&m))
            })
            .collect::<Vec<_>>()
    });
    for (head, depth) in results {
        // Our own cut-off, plus the few levels a statement adds.
        assert!(
            depth <= MAX_NESTING as usize + 8,
            "{head:?}: model depth {depth}"
        );
    }
}

/// A file exercising most of the lowering, for the mangling tests.
const SAMPLE: &str = r#"#!/usr/bin/env python
"""Sample."""
from __future__ import annotations
import asyncio, threading as th
from .db import (query, Conn as C)
from typing import Optional

LOCK = th.Lock()
Alias = asyncio.Queue

@dataclass(frozen=True)
class Worker(Base, metaclass=Meta):
    q: Optional[asyncio.Queue[int]] = None
    def __init__(self, n: int = 3, *a, k=None, **kw) -> None:
        self._lock = th.Lock()
        self.q = Alias(maxsize=n)

    async def run(self):
        async with self._lock:
            async for x in self.q:
                await asyncio.sleep(0)
        try:
            r = [await f(y) for y in range(3) if y]
        except* (ValueError, asyncio.CancelledError) as eg:
            raise RuntimeError("x") from eg
        else:
            pass
        finally:
            self.q = None
        match r:
            case [1, *rest] | {"k": rest}:
                pass
            case Point(x=0) if rest:
                pass
            case _:
                pass
        return lambda z, *, w=1: (z, w, f"{z!r:>{w}}")

def gen(n):
    global LOCK
    while (m := n) > 0:
        yield m
        n -= 1
    else:
        assert n == 0, "done"
    del m
    with open("p") as fh, LOCK:
        return {k: v for k, v in fh}

if __name__ == "__main__":
    asyncio.run(Worker().run())
elif x:
    pass
else:
    print("é — ünïcode ✓", b"bytes", 1_000, 0x1F, 1e9, 2j, ...)
"#;

#[test]
fn the_sample_lowers_cleanly() {
    let m = lower(SAMPLE);
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    check_invariants(&m, SAMPLE);
    let mut targets: Vec<Option<&str>> = calls(&m, "run")
        .iter()
        .map(|c| c.target.as_deref())
        .collect();
    targets.sort();
    // `Worker().run()` is a method of a fresh instance: for the semantic pass.
    assert_eq!(targets, [None, Some("asyncio.run")]);
}

#[test]
fn every_truncation_of_a_file_lowers() {
    on_big_stack(|| {
        let mut cut = 0;
        while cut <= SAMPLE.len() {
            let text = &SAMPLE[..cut];
            let m = lower(text);
            check_invariants(&m, text);
            cut += 1;
            while !SAMPLE.is_char_boundary(cut) && cut < SAMPLE.len() {
                cut += 1;
            }
        }
    });
}

#[test]
fn deleting_or_duplicating_characters_never_panics() {
    on_big_stack(|| {
        let chars: Vec<(usize, char)> = SAMPLE.char_indices().collect();
        // Every 3rd character deleted, then duplicated, one at a time.
        for &(i, ch) in chars.iter().step_by(3) {
            let deleted = format!("{}{}", &SAMPLE[..i], &SAMPLE[i + ch.len_utf8()..]);
            check_invariants(&lower(&deleted), &deleted);
            let doubled = format!("{}{ch}{}", &SAMPLE[..i], &SAMPLE[i..]);
            check_invariants(&lower(&doubled), &doubled);
        }
    });
}

#[test]
fn garbage_inputs() {
    let inputs = [
        "\0\0\0",
        ")))]]]}}}",
        "def",
        "class",
        "async",
        "lambda",
        "@",
        "@x\n",
        "import",
        "from . import",
        "from",
        "match",
        "case x:",
        "try:",
        "except:",
        "with",
        "f(**)",
        "x = *",
        "if:\nelif:\nelse:",
        "\\\n\\\n",
        "'''unterminated",
        "f'{",
        "x = 1 +",
        "def f(self, self): return self.f()",
        "class C(C): pass",
        "class A(B): pass\nclass B(A):\n    def m(self): self.n()",
        "global x\nnonlocal y",
        "return\nyield\nawait x",
        "%matplotlib inline",
        "\u{2028}\u{85}x = 1",
        "é = ü = 'ö'",
    ];
    on_big_stack(move || {
        for text in inputs {
            check_invariants(&lower(text), text);
        }
    });
}

#[test]
fn class_hierarchy_cycles_do_not_loop() {
    let m = lower(
        "class A(B):\n    pass\nclass B(A):\n    def m(self):\n        self.n()\nclass A(B):\n    def k(self):\n        self.n()\n",
    );
    assert!(calls(&m, "n").iter().all(|c| c.target.is_none()));
}

#[test]
fn large_flat_files_lower() {
    let mut src = String::new();
    for i in 0..5_000u32 {
        src.push_str(&format!(
            "def f{i}(x):\n    if x:\n        return f{}(x - 1)\n    return [y for y in range(x)]\n\n",
            i.saturating_sub(1)
        ));
    }
    let m = lower(&src);
    assert_eq!(m.functions.len(), 5_001);
    assert_eq!(calls(&m, "f41")[0].target.as_deref(), Some("pkg.mod.f41"));
    let _ = StmtKind::Pass;
}

/// The benchmark's parser-only entry point parses as `lower` does: the
/// same syntax errors, stub files included.
#[test]
fn parse_only_counts_the_errors_lower_records() {
    for (path, text, broken) in [
        ("pkg/ok.py", "async def f():\n    await g()\n", false),
        ("pkg/bad.py", "def f(:\n    return\nclass :\n", true),
        ("pkg/stub.pyi", "def f(x: int) -> int: ...\n", false),
    ] {
        let input = SourceInput {
            text,
            rel_path: path,
            language: Language::Python,
        };
        let errors = crate::parse_only(&input);
        assert_eq!(errors, lower_at(path, text).syntax_errors.len(), "{path}");
        assert_eq!(errors > 0, broken, "{path}");
    }
}
