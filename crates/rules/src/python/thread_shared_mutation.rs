//! PY016: shared state read-modify-written by thread or executor targets
//! with no lock.

use crate::context::FileCx;
use crate::python::common::{module_vars, shared_state};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::{HashMap, HashSet};
use unsnarl_model::walk::{Visitor, exprs_under, walk_block};
use unsnarl_model::*;

pub struct ThreadSharedMutation;

pub static META: RuleMeta = RuleMeta {
    id: "PY016",
    name: "unlocked-update-in-thread",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A function run concurrently on several threads (`Thread(target=...)` in a loop, executor `map`/`submit`) does a read-modify-write of module-level or `self` state without a lock.",
    docs: r#"
A function of the file used as a thread target or executor task, started
several times (in a loop or comprehension, through `executor.map`, or from
several places), that updates shared state with a read-modify-write
(`total += n`, `stats["hits"] += 1`, `self.count = self.count + 1`,
`d[k] = d.get(k, 0) + 1`) outside any `with <lock>:`.

## Why

`+=` is several bytecodes: load, add, store. The GIL can switch threads
between them, so two threads load the same old value and one increment is
lost. It is rare enough to pass every test and common enough to make
counters, balances and aggregates drift in production (and free-threaded
CPython removes even the GIL's partial protection).

## Example

```python
import threading

stats = {"total": 0}

def record(order):
    stats["total"] += order.amount

def record_all(orders):
    threads = [threading.Thread(target=record, args=(o,)) for o in orders]
    for t in threads:
        t.start()
```

## Fix

Protect the whole read-modify-write with one lock (or give the state a
single owner and send it updates through a queue).

```python
import threading

stats = {"total": 0}
stats_lock = threading.Lock()

def record(order):
    with stats_lock:
        stats["total"] += order.amount

def record_all(orders):
    threads = [threading.Thread(target=record, args=(o,)) for o in orders]
    for t in threads:
        t.start()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ThreadSharedMutation {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let targets = concurrent_targets(cx);
        if targets.is_empty() {
            return;
        }
        let globals = module_vars(cx.model);
        for (f, how) in targets {
            let mut v = Updates {
                cx,
                globals: &globals,
                locked: 0,
                found: Vec::new(),
            };
            walk_block(cx.model, &cx.func(f).body, &mut v);
            for (s, key) in v.found {
                out.push(cx.finding(
                    &META,
                    cx.stmt(s).span,
                    format!(
                        "`{key}` is read, modified and written back by {} without a lock, and {how}: two threads can load the same old value and one update is lost",
                        cx.func_display(f)
                    ),
                    format!("wrap the update of `{key}` in `with <lock>:` (one `threading.Lock` shared by every writer), or send updates to a single owner through a queue"),
                ));
            }
        }
    }
}

/// Functions of this file that run on several threads at once, with how
/// they are started.
fn concurrent_targets(cx: &FileCx) -> Vec<(FuncId, String)> {
    let mut sites: HashMap<FuncId, (usize, bool, &'static str)> = HashMap::new();
    for (id, c) in cx.calls_to_or_named(&["threading.Thread"], &["map", "submit"]) {
        let (target, many, how) = match c.target.as_deref() {
            Some("threading.Thread") => (
                c.kwarg("target").or_else(|| c.positional(1)),
                false,
                "it runs as a thread target started more than once",
            ),
            _ if c.name == "map" && c.receiver.is_some_and(|r| is_executor(cx, r)) => (
                c.positional(0),
                true,
                "`executor.map` runs it on several worker threads at once",
            ),
            _ if c.name == "submit" && c.receiver.is_some_and(|r| is_executor(cx, r)) => (
                c.positional(0),
                false,
                "it is submitted to an executor more than once",
            ),
            _ => continue,
        };
        let Some(t) = target else { continue };
        let Some(name) = cx
            .model
            .resolved(t)
            .map(str::to_string)
            .or_else(|| cx.model.dotted(t))
        else {
            continue;
        };
        let Some(f) = cx.local_function(&name).or_else(|| {
            // `obj.method` on an untyped receiver: the only method of that
            // name in this file.
            let (_, m) = name.rsplit_once('.')?;
            let mut it = cx
                .model
                .function_ids()
                .filter(|&g| cx.func(g).class.is_some() && cx.func(g).name == m);
            let first = it.next()?;
            it.next().is_none().then_some(first)
        }) else {
            continue;
        };
        let in_loop = cx.in_loop(id)
            || cx
                .tree
                .expr_ancestors(id)
                .any(|a| matches!(cx.expr(a).kind, ExprKind::Comprehension { .. }));
        let entry = sites.entry(f).or_insert((0, false, how));
        entry.0 += 1;
        entry.1 |= many || in_loop;
    }
    sites
        .into_iter()
        .filter(|(_, (n, many, _))| *many || *n > 1)
        .map(|(f, (_, _, how))| (f, how.to_string()))
        .collect()
}

fn is_executor(cx: &FileCx, r: ExprId) -> bool {
    if let Some(t) = cx.sema.type_of(r)
        && t.starts_with("concurrent.futures.")
        && t.ends_with("ThreadPoolExecutor")
    {
        return true;
    }
    cx.model.dotted(r).is_some_and(|d| {
        let last = d.rsplit('.').next().unwrap_or(&d).to_ascii_lowercase();
        last.contains("executor") || last == "pool" || last.ends_with("_pool")
    })
}

struct Updates<'a, 'b> {
    cx: &'b FileCx<'a>,
    globals: &'b HashSet<String>,
    locked: u32,
    found: Vec<(StmtId, String)>,
}

impl Visitor for Updates<'_, '_> {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        match &m.stmt(id).kind {
            StmtKind::With { items, .. }
                if items.iter().any(|it| {
                    crate::python::common::lock_kind(self.cx, it.ctx).is_some()
                        || m.dotted(it.ctx)
                            .is_some_and(|d| d.to_ascii_lowercase().contains("lock"))
                }) =>
            {
                self.locked += 1;
            }
            StmtKind::Assign {
                targets,
                value: Some(v),
                op,
            } if self.locked == 0 => {
                if let [t] = targets.as_slice()
                    && let Some(key) = shared_state(self.cx, self.globals, *t)
                {
                    let rmw = matches!(op, AssignOp::Augmented(_))
                        || exprs_under(m, *v).into_iter().any(|x| {
                            matches!(
                                m.expr(x).kind,
                                ExprKind::Name { .. } | ExprKind::Attr { .. }
                            ) && shared_state(self.cx, self.globals, x).as_deref() == Some(&key)
                        });
                    if rmw {
                        self.found.push((id, key));
                    }
                }
            }
            _ => {}
        }
        true
    }

    fn exit_stmt(&mut self, m: &FileModel, id: StmtId) {
        if let StmtKind::With { items, .. } = &m.stmt(id).kind
            && items.iter().any(|it| {
                crate::python::common::lock_kind(self.cx, it.ctx).is_some()
                    || m.dotted(it.ctx)
                        .is_some_and(|d| d.to_ascii_lowercase().contains("lock"))
            })
        {
            self.locked -= 1;
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

stats = {"total": 0}
processed = 0

def record(order):
    global processed
    stats["total"] += order.amount  # expect
    processed = processed + 1  # expect

def record_all(orders):
    for o in orders:
        threading.Thread(target=record, args=(o,)).start()
"#,
        r#"
from concurrent.futures import ThreadPoolExecutor

class Crawler:
    def __init__(self):
        self.pages = 0

    def visit(self, url):
        body = download(url)
        self.pages += 1  # expect
        return body

    def crawl(self, urls):
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(self.visit, urls))
"#,
    ],
    pass: &[
        r#"
import threading

stats = {"total": 0}
stats_lock = threading.Lock()

def record(order):
    with stats_lock:
        stats["total"] += order.amount

def record_all(orders):
    for o in orders:
        threading.Thread(target=record, args=(o,)).start()
"#,
        r#"
import threading

counter = 0

def once():
    global counter
    counter += 1

def start():
    t = threading.Thread(target=once)
    t.start()
    t.join()

def pure(x):
    total = 0
    total += x
    return total

def run(pool, xs):
    return list(pool.map(pure, xs))
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ThreadSharedMutation);
}
