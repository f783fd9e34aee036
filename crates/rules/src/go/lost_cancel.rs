//! GO010: the cancel function of `context.WithCancel`/`WithTimeout`/
//! `WithDeadline` discarded, or not called on every path.

use super::common;
use super::flow::{self, Flow};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Child, exprs_under, for_each_stmt_child};
use unsnarl_model::*;

pub struct LostCancel;

pub static META: RuleMeta = RuleMeta {
    id: "GO010",
    name: "lost-cancel",
    category: Category::ContextSevered,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "The cancel function of `context.WithCancel`/`WithTimeout`/`WithDeadline` is discarded (`_`) or not called on some path.",
    docs: r#"
The `cancel` returned by `context.WithCancel`, `WithTimeout`, `WithDeadline`
(and their `Cause` variants) is assigned to `_`, or some return path of the
function never calls (or defers, or hands on) it.

## Why

A derived context holds resources until it is cancelled: a timer for the
deadline and a link in the parent's list of children (and, for
`WithCancel`, a goroutine watching the parent in some cases). Without the
call they live until the parent is cancelled, which for a long-lived parent
is never: a leak per call, and work below the context is not stopped when
this function is done with it.

## Example

```go
package app

import (
	"context"
	"time"
)

func Ping(ctx context.Context, c Client) error {
	ctx, _ = context.WithTimeout(ctx, time.Second)
	return c.Ping(ctx)
}
```

## Fix

Defer the cancel right after creating the context.

```go
package app

import (
	"context"
	"time"
)

func Ping(ctx context.Context, c Client) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return c.Ping(ctx)
}
```
"#,
    examples: &EXAMPLES,
};

const WITH: &[&str] = &[
    "context.WithCancel",
    "context.WithTimeout",
    "context.WithDeadline",
    "context.WithCancelCause",
    "context.WithTimeoutCause",
    "context.WithDeadlineCause",
    "os/signal.NotifyContext",
];

impl Rule for LostCancel {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &st.kind
            else {
                continue;
            };
            let Some(c) = cx.call(*v) else { continue };
            let Some(api) = c.target.as_deref().filter(|t| WITH.contains(t)) else {
                continue;
            };
            let [t] = targets.as_slice() else { continue };
            let ExprKind::Collection { elems, .. } = &cx.expr(*t).kind else {
                continue;
            };
            let Some(&cancel) = elems.get(1) else {
                continue;
            };
            let short = common::short_name(api);
            // Only the deadline kinds start a timer; every kind stays in its
            // parent's list of children (and NotifyContext keeps its signal
            // registration).
            // `Background()`/`TODO()` keep no list of children: a context
            // derived from them holds only what it made itself.
            let root_parent = c.positional(0).and_then(|p| cx.call(p)).is_some_and(|p| {
                matches!(
                    p.target.as_deref(),
                    Some("context.Background" | "context.TODO")
                )
            });
            let held = match (
                api.contains("Timeout") || api.contains("Deadline"),
                api == "os/signal.NotifyContext",
                root_parent,
            ) {
                (true, _, true) => "its timer",
                (true, _, false) => "its timer and its place among the parent's children",
                (_, true, true) => "its signal registration",
                (_, true, false) => {
                    "its signal registration and its place among the parent's children"
                }
                (_, _, true) => "its cancellation channel",
                _ => "its place among the parent's children",
            };
            let Some(name) = cx.model.name_of(cancel) else {
                continue;
            };
            let s = StmtId(i as u32);
            let f = cx.tree.stmt_func(s);
            // A deadline frees its context when it passes; other kinds only
            // when the parent is cancelled.
            let until = if api.contains("Timeout") || api.contains("Deadline") {
                "until its deadline passes or the parent is cancelled"
            } else {
                "until the parent is cancelled"
            };
            // A context the function hands back must outlive it: its cancel
            // goes with it, to whoever ends its use.
            let returned = elems
                .first()
                .and_then(|&c| cx.model.name_of(c))
                .is_some_and(|ctx| returns_name(cx, f, ctx));
            if name == "_" {
                out.push(cx.finding(
                    &META,
                    st.span,
                    format!(
                        "the cancel function of `{short}` is discarded: the context keeps {held} {until}, and nothing stops the work below it when this function is done"
                    ),
                    if returned {
                        "keep the cancel function and return it with the context, so that the caller calls it once it is done with the context (a `defer cancel()` here would cancel the context before it is used)"
                    } else {
                        "keep the cancel function and `defer cancel()` right after this line"
                    },
                ));
                continue;
            }
            let mut fl = Pending {
                name,
                start: s,
                leaks: Vec::new(),
            };
            flow::run_function(cx, &mut fl, &cx.func(f).body, false);
            let Some(exit) = fl.leaks.first().copied() else {
                continue;
            };
            let (span, at) = match exit {
                Some(r) => (cx.stmt(r).span, "this return".to_string()),
                None => (st.span, "the end of the function".to_string()),
            };
            out.push(cx.finding(
                &META,
                span,
                format!(
                    "{at} can be reached without calling `{name}` from `{short}` (line {}): the derived context keeps {held} {until}",
                    common::line_of(cx, st.span)
                ),
                if returned {
                    format!("return `{name}` with the context (or call it on the paths that do not return the context), so that whoever ends the context's use cancels it")
                } else {
                    format!("`defer {name}()` right after creating the context")
                },
            ));
        }
    }
}

/// Some `return` of `f` hands back the value of the variable `name`.
fn returns_name(cx: &FileCx, f: FuncId, name: &str) -> bool {
    cx.body_stmts(f).iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Return(Some(v)) => unsnarl_model::walk::exprs_under(cx.model, *v)
            .into_iter()
            .any(|e| cx.model.name_of(e) == Some(name)),
        _ => false,
    })
}

/// Whether the cancel function was created and not yet used on the path.
struct Pending<'a> {
    name: &'a str,
    start: StmtId,
    leaks: Vec<Option<StmtId>>,
}

impl Pending<'_> {
    /// Any mention of the name (call, defer, hand-off, closure capture) in
    /// the statement, closures included, other than re-binding it.
    fn mentions(&self, cx: &FileCx, s: StmtId) -> bool {
        let mentioned_in = |e: ExprId| {
            exprs_under(cx.model, e)
                .into_iter()
                .any(|x| match &cx.expr(x).kind {
                    ExprKind::Name { id, .. } => id == self.name,
                    ExprKind::Closure(f) => cx.with_nested(*f).into_iter().any(|g| {
                        cx.body_exprs(g)
                            .iter()
                            .copied()
                            .any(|x| cx.model.name_of(x) == Some(self.name))
                    }),
                    _ => false,
                })
        };
        match &cx.stmt(s).kind {
            StmtKind::Assign { value, .. } => value.is_some_and(mentioned_in),
            _ => {
                let mut found = false;
                for_each_stmt_child(cx.model, s, &mut |ch| {
                    if let Child::Expr(e) = ch {
                        found = found || mentioned_in(e);
                    }
                });
                found
            }
        }
    }
}

impl Flow for Pending<'_> {
    type S = bool;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut bool) {
        if s == self.start {
            *st = true;
        } else if *st && self.mentions(cx, s) {
            *st = false;
        }
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut bool) {
        if exprs_under(cx.model, e)
            .into_iter()
            .any(|x| cx.model.name_of(x) == Some(self.name))
        {
            *st = false;
        }
    }
    fn exit(&mut self, cx: &FileCx, ret: Option<StmtId>, st: &bool) {
        if !*st {
            return;
        }
        // A bare `return` hands back named results: `(ctx context.Context,
        // cancel func())`.
        let f = cx.tree.stmt_func(self.start);
        let named_result = cx.func(f).returns.as_ref().is_some_and(|r| {
            r.text
                .trim_matches(|c| c == '(' || c == ')')
                .split(',')
                .any(|part| part.split_whitespace().next() == Some(self.name))
        });
        if named_result {
            return;
        }
        self.leaks.push(ret);
    }
    fn join(&self, a: &bool, b: &bool) -> bool {
        *a || *b
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import (
	"context"
	"time"
)

func Ping(ctx context.Context, c Client) error {
	ctx, _ = context.WithTimeout(ctx, time.Second) // expect
	return c.Ping(ctx)
}
"#,
        r#"
package app

import (
	"context"
	"time"
)

func Fetch(ctx context.Context, c Client, id string) (Item, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if id == "" {
		return Item{}, errEmpty // expect
	}
	it, err := c.Get(ctx, id)
	cancel()
	return it, err
}
"#,
    ],
    pass: &[
        r#"
package app

import (
	"context"
	"time"
)

func Ping(ctx context.Context, c Client) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return c.Ping(ctx)
}

func Derive(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, cancel
}

func Watch(ctx context.Context, stop <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-stop
		cancel()
	}()
	return ctx
}
"#,
        r#"
package app

import "context"

type Worker struct {
	cancel context.CancelFunc
}

func (w *Worker) Start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	go w.loop(ctx)
}

func (w *Worker) Run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	go w.loop(ctx)
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LostCancel);

    /// Only a context with a deadline has a timer to leak.
    #[test]
    fn messages_name_a_timer_only_for_deadlines() {
        let found = crate::testing::messages(
            &LostCancel,
            Language::Go,
            "package p\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n\nfunc a(p context.Context) {\n\tctx, _ := context.WithCancel(p)\n\tuse(ctx)\n}\n\nfunc b(p context.Context) {\n\tctx, _ := context.WithTimeout(p, time.Second)\n\tuse(ctx)\n}\n",
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].contains("WithCancel`") && !found[0].contains("timer"),
            "{found:#?}"
        );
        assert!(
            found[1].contains("WithTimeout`") && found[1].contains("its timer"),
            "{found:#?}"
        );
    }

    /// A context the function returns needs its cancel returned too: a
    /// deferred cancel would end it before the caller uses it.
    #[test]
    fn a_returned_context_hands_its_cancel_back() {
        let src = "package p\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n\nfunc perCall(p context.Context) context.Context {\n\tctx, _ := context.WithTimeout(p, time.Second)\n\treturn ctx\n}\n\nfunc run(p context.Context) {\n\tctx, _ := context.WithTimeout(p, time.Second)\n\tuse(ctx)\n}\n";
        let fixes = crate::testing::fixes(&LostCancel, Language::Go, src);
        assert_eq!(fixes.len(), 2, "{fixes:#?}");
        assert!(
            fixes[0].contains("return it with the context"),
            "{}",
            fixes[0]
        );
        assert!(fixes[1].contains("`defer cancel()`"), "{}", fixes[1]);
        let found = crate::testing::messages(&LostCancel, Language::Go, src);
        assert!(
            found[0].contains("until its deadline passes"),
            "{}",
            found[0]
        );
    }
}
