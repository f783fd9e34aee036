//! GO014: goroutines writing shared variables (maps, counters, slices)
//! with no lock.

use super::common::{self, NameScope};
use super::flow::{self, Flow};
use super::locks::{self, HeldSet};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::BTreeSet;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct GoroutineSharedWrite;

pub static META: RuleMeta = RuleMeta {
    id: "GO014",
    name: "goroutine-shared-write",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "Goroutines write a captured map, counter (`++`, `+=`) or slice (`append`) with no mutex held.",
    docs: r#"
A goroutine (started per loop iteration, or alongside other goroutines
touching the same variable) writes a variable it shares with them: a map
assignment or `delete`, `x++`/`x += n`, `s = append(s, v)`, with no lock
held at that point.

## Why

These are read-modify-write steps, not atomic ones. Two goroutines
interleaving them lose updates (`count` ends too low, `append` drops
elements or corrupts the slice header), and concurrent map writes make the
Go runtime abort the whole process with `fatal error: concurrent map
writes`, a crash `recover` cannot catch.

## Example

```go
package app

import "sync"

func Index(docs []Doc) map[string]int {
	counts := map[string]int{}
	var wg sync.WaitGroup
	for _, d := range docs {
		wg.Add(1)
		go func(d Doc) {
			defer wg.Done()
			counts[d.Lang]++
		}(d)
	}
	wg.Wait()
	return counts
}
```

## Fix

Guard the shared variable with a mutex (or give each goroutine its own
slot / result and merge after `Wait`).

```go
package app

import "sync"

func Index(docs []Doc) map[string]int {
	counts := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, d := range docs {
		wg.Add(1)
		go func(d Doc) {
			defer wg.Done()
			mu.Lock()
			counts[d.Lang]++
			mu.Unlock()
		}(d)
	}
	wg.Wait()
	return counts
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GoroutineSharedWrite {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let goroutines: Vec<FuncId> = cx
            .model
            .function_ids()
            .filter(|&g| cx.func(g).kind == FnKind::Closure && common::runs_in_goroutine(cx, g))
            .collect();
        for &g in &goroutines {
            let Some(parent) = cx.func(g).parent else {
                continue;
            };
            let spawn = common::spawn_stmt(cx, g);
            let spawn_loop = spawn.and_then(|s| common::enclosing_loops(cx, s).first().copied());
            let mut fl = Writes {
                g,
                found: Vec::new(),
            };
            flow::run_function(cx, &mut fl, &cx.func(g).body, HeldSet::new());
            let mut seen = BTreeSet::new();
            for (stmt, var, what) in fl.found {
                if !seen.insert(var.clone()) {
                    continue;
                }
                let root = var.split(['.', '[']).next().unwrap_or(&var).to_string();
                let shared_with_sibling = goroutines
                    .iter()
                    .any(|&h| h != g && cx.func(h).parent == Some(parent) && touches(cx, h, &root));
                // A variable declared inside the loop is one per goroutine.
                let in_loop = spawn_loop.is_some_and(|lp| !declared_inside(cx, parent, &root, lp));
                if !in_loop && !shared_with_sibling {
                    continue;
                }
                let who = if in_loop {
                    "a goroutine started per loop iteration"
                } else {
                    "this goroutine and another one"
                };
                out.push(cx.finding(
                    &META,
                    cx.stmt(stmt).span,
                    format!(
                        "{what} `{var}` from {who} with no lock held: concurrent read-modify-writes lose updates{}",
                        if what.starts_with("writes map") {
                            ", and concurrent map writes crash the process (`fatal error: concurrent map writes`)"
                        } else {
                            ""
                        }
                    ),
                    format!(
                        "guard `{root}` with a `sync.Mutex` held around every access, use `sync/atomic` for counters, or have each goroutine return its result (a channel or its own slice index) and combine after waiting"
                    ),
                ));
            }
        }
    }
}

/// `name` is declared (`:=`, `var`, range variable) inside loop `lp`.
fn declared_inside(cx: &FileCx, f: FuncId, name: &str, lp: StmtId) -> bool {
    common::bindings(cx, f, name).into_iter().any(|(s, _)| {
        let declares = matches!(
            cx.stmt(s).kind,
            StmtKind::Assign {
                op: AssignOp::Declare { .. },
                ..
            } | StmtKind::For { .. }
        );
        declares && (s == lp || cx.tree.stmt_ancestors(s).any(|a| a == lp))
    })
}

/// Whether goroutine `h` mentions variable `root`.
fn touches(cx: &FileCx, h: FuncId, root: &str) -> bool {
    cx.with_nested(h).into_iter().any(|k| {
        cx.body_exprs(k)
            .iter()
            .copied()
            .any(|e| cx.model.name_of(e) == Some(root))
    })
}

/// Unlocked writes to captured state found in a goroutine body.
struct Writes {
    g: FuncId,
    found: Vec<(StmtId, String, &'static str)>,
}

impl Writes {
    /// A name (or the root of `s.f`) captured from outside the goroutine.
    fn shared_root(&self, cx: &FileCx, e: ExprId) -> bool {
        let Some(root) = common::root_name(cx, e) else {
            return false;
        };
        let Some(name) = cx.model.name_of(root) else {
            return false;
        };
        matches!(
            common::name_scope(cx, self.g, name),
            NameScope::Captured(_) | NameScope::Package
        )
    }

    fn is_map(cx: &FileCx, e: ExprId) -> bool {
        cx.sema.type_of(e) == Some("map")
    }
}

impl Flow for Writes {
    type S = HeldSet;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut HeldSet) {
        let unlocked = st.is_empty();
        if unlocked {
            match &cx.stmt(s).kind {
                StmtKind::Assign { targets, value, op } => {
                    for &t in targets {
                        let t = cx.model.strip(t);
                        match &cx.expr(t).kind {
                            ExprKind::Index { obj, .. }
                                if Self::is_map(cx, *obj) && self.shared_root(cx, *obj) =>
                            {
                                if let Some(d) = cx.model.dotted(*obj) {
                                    self.found.push((s, d, "writes map"));
                                }
                            }
                            ExprKind::Name { .. } | ExprKind::Attr { .. }
                                if self.shared_root(cx, t) =>
                            {
                                let Some(d) = cx.model.dotted(t) else {
                                    continue;
                                };
                                let appended = value.and_then(|v| cx.call(v)).is_some_and(|c| {
                                    c.target.as_deref() == Some("append")
                                        && c.positional(0)
                                            .and_then(|a| cx.model.dotted(a))
                                            .is_some_and(|a| a == d)
                                });
                                if matches!(op, AssignOp::Augmented(_)) {
                                    self.found.push((s, d, "updates"));
                                } else if appended {
                                    self.found.push((s, d, "appends to"));
                                }
                            }
                            _ => {}
                        }
                    }
                }
                StmtKind::Expr(e) => {
                    if let Some(c) = cx.call(*e)
                        && c.target.as_deref() == Some("delete")
                        && let Some(m) = c.positional(0)
                        && Self::is_map(cx, m)
                        && self.shared_root(cx, m)
                        && let Some(d) = cx.model.dotted(m)
                    {
                        self.found.push((s, d, "writes map"));
                    }
                }
                _ => {}
            }
        }
        locks::apply(cx, s, st, &mut |_, _| {});
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut HeldSet) {
        for x in exprs_under(cx.model, e) {
            locks::apply_expr(cx, x, st, &mut |_, _| {});
        }
    }
    fn join(&self, a: &HeldSet, b: &HeldSet) -> HeldSet {
        // A write after a branch that may have locked is not reported.
        let mut v = a.clone();
        for h in b {
            if !v.iter().any(|x| x.op.instance == h.op.instance) {
                v.push(h.clone());
            }
        }
        v
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

func Tally(events []Event) (int, map[string]bool) {
	total := 0
	seen := make(map[string]bool)
	var wg sync.WaitGroup
	for _, ev := range events {
		wg.Add(1)
		go func(ev Event) {
			defer wg.Done()
			total += ev.Size // expect
			seen[ev.ID] = true // expect
		}(ev)
	}
	wg.Wait()
	return total, seen
}
"#,
        r#"
package app

import "sync"

func Both(a, b Source) []Item {
	var items []Item
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		items = append(items, a.Load()...) // expect
	}()
	go func() {
		defer wg.Done()
		items = append(items, b.Load()...) // expect
	}()
	wg.Wait()
	return items
}
"#,
    ],
    pass: &[
        r#"
package app

import "sync"

func Tally(events []Event) (int, map[string]bool) {
	var mu sync.Mutex
	total := 0
	seen := make(map[string]bool)
	var wg sync.WaitGroup
	for _, ev := range events {
		wg.Add(1)
		go func(ev Event) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			total += ev.Size
			seen[ev.ID] = true
		}(ev)
	}
	wg.Wait()
	return total, seen
}
"#,
        r#"
package app

import (
	"context"

	"golang.org/x/sync/errgroup"
)

func FetchAll(ctx context.Context, urls []string) ([]Result, error) {
	g, ctx := errgroup.WithContext(ctx)
	results := make([]Result, len(urls))
	for i, u := range urls {
		g.Go(func() error {
			r, err := fetch(ctx, u)
			results[i] = r
			return err
		})
	}
	return results, g.Wait()
}

func Once(cfg Config) {
	loaded := 0
	go func() {
		loaded++
	}()
}

func PerIteration(items []int) {
	for _, it := range items {
		n := 0
		done := make(chan bool)
		go func() {
			n += it
			close(done)
		}()
		<-done
		use(n)
	}
}

func Local(items []int) {
	for _, it := range items {
		go func(it int) {
			m := map[int]int{}
			n := 0
			m[it] = it
			n++
			use(m, n)
		}(it)
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GoroutineSharedWrite);
}
