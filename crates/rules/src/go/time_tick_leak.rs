//! GO027: `time.Tick` in a function that returns.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct TimeTickLeak;

pub static META: RuleMeta = RuleMeta {
    id: "GO027",
    name: "time-tick-leak",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`time.Tick` in a function that can return (not `main`, not a test, not an endless loop): its ticker can never be stopped.",
    docs: r#"
`time.Tick(d)` returns only the channel of a ticker that cannot be stopped.
It is fine in `main`, in tests, and in functions that loop forever; a
function that returns leaves the ticker behind. (Go 1.23 lets the garbage
collector reclaim unreferenced tickers; code built for older versions, or
that keeps the channel, still leaks.)

## Why

Each call creates a ticker that fires forever. A function called per
request or per connection accumulates tickers, each waking the runtime
every period: growing CPU and memory with nothing to show for it.

## Example

```go
package app

import "time"

func Watch(stop <-chan struct{}, check func()) {
	for {
		select {
		case <-time.Tick(time.Second):
			check()
		case <-stop:
			return
		}
	}
}
```

## Fix

```go
package app

import "time"

func Watch(stop <-chan struct{}, check func()) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			check()
		case <-stop:
			return
		}
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for TimeTickLeak {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test {
            return;
        }
        for (id, _) in cx.calls_to(&["time.Tick"]) {
            let e = cx.expr(id);
            let f = cx.func_of(id);
            if common::in_test(cx, f)
                || common::is_entry_point(cx, f)
                || endless(cx, f)
                || hands_back(cx, f, id)
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`time.Tick` creates a ticker that can never be stopped, and {} returns: every call leaves one more ticker firing",
                    cx.func_display(f)
                ),
                "use `t := time.NewTicker(d)` with `defer t.Stop()`, and read `t.C`",
            ));
        }
    }
}

/// The function is a wrapper that hands the ticker's channel back (`func
/// (realClock) Tick(d time.Duration) <-chan time.Time { return
/// time.Tick(d) }`): whether it leaks is up to its callers, where the
/// ticker is used.
fn hands_back(cx: &FileCx, f: FuncId, tick: ExprId) -> bool {
    let [only] = cx.func(f).body.as_slice() else {
        return false;
    };
    matches!(cx.stmt(*only).kind, StmtKind::Return(Some(v)) if cx.model.strip(v) == tick)
}

/// A function whose body never returns: no `return` anywhere, and it ends
/// in an unconditional loop with no `break`.
fn endless(cx: &FileCx, f: FuncId) -> bool {
    let body = &cx.func(f).body;
    let stmts = common::stmts_in(cx.model, body);
    if stmts
        .iter()
        .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Return(_)))
    {
        return false;
    }
    let Some(&end) = body.last() else {
        return false;
    };
    // `for c := time.Tick(d); ; <-c { .. }` is its init statement and the
    // loop in a block of their own.
    let mut last = end;
    while let StmtKind::Block(b) = &cx.stmt(last).kind {
        let Some(&l) = b.last() else { return false };
        last = l;
    }
    match &cx.stmt(last).kind {
        StmtKind::Loop { body } => !common::stmts_in(cx.model, body).into_iter().any(|s| {
            matches!(cx.stmt(s).kind, StmtKind::Break)
                && cx.source(cx.stmt(s).span).trim() != "break"
                || matches!(cx.stmt(s).kind, StmtKind::Break) && !in_select_or_switch(cx, s)
        }),
        StmtKind::For { iter, body, .. } => {
            // `for range time.Tick(d) {}`, or over a local bound to one.
            let tick = |e: ExprId| {
                cx.call(e)
                    .is_some_and(|c| c.target.as_deref() == Some("time.Tick"))
            };
            (tick(*iter)
                || cx.model.name_of(*iter).is_some_and(|n| {
                    let binds = common::bindings(cx, f, n);
                    !binds.is_empty() && binds.iter().all(|(_, v)| v.is_some_and(tick))
                }))
                && !common::stmts_in(cx.model, body).into_iter().any(|s| {
                    matches!(cx.stmt(s).kind, StmtKind::Break) && !in_select_or_switch(cx, s)
                })
        }
        _ => false,
    }
}

fn in_select_or_switch(cx: &FileCx, s: StmtId) -> bool {
    cx.tree
        .stmt_ancestors(s)
        .find(|&a| {
            matches!(
                cx.stmt(a).kind,
                StmtKind::Select { .. }
                    | StmtKind::Switch { .. }
                    | StmtKind::Loop { .. }
                    | StmtKind::While { .. }
                    | StmtKind::For { .. }
            )
        })
        .is_some_and(|a| {
            matches!(
                cx.stmt(a).kind,
                StmtKind::Select { .. } | StmtKind::Switch { .. }
            )
        })
        && cx.source(cx.stmt(s).span).trim() == "break"
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "time"

func Poll(stop <-chan struct{}) {
	tick := time.Tick(time.Minute) // expect
	for {
		select {
		case <-tick:
			refresh()
		case <-stop:
			return
		}
	}
}
"#],
    pass: &[
        r#"
package env

import (
	"log"
	"time"
)

// The goroutine reads its ticker for as long as the process runs.
func Export(oldest func() time.Time) {
	go func() {
		for c := time.Tick(10 * time.Second); ; <-c {
			log.Print(time.Since(oldest()))
		}
	}()
}
"#,
        r#"
package metrics

import (
	"log"
	"time"
)

type Pusher struct {
	Every time.Duration
	push  func(time.Time) error
}

func (p *Pusher) Run() {
	tick := time.Tick(p.Every)
	for now := range tick {
		if err := p.push(now); err != nil {
			log.Printf("push: %v", err)
		}
	}
}
"#,
        r#"
package clock

import "time"

type Clock interface {
	Tick(d time.Duration) <-chan time.Time
}

type real struct{}

func (real) Tick(d time.Duration) <-chan time.Time {
	return time.Tick(d)
}
"#,
        r#"
package app

import "time"

func main() {
	for range time.Tick(time.Second) {
		report()
	}
}

func loop() {
	for now := range time.Tick(time.Minute) {
		flush(now)
	}
}

func spin() {
	c := time.Tick(time.Second)
	for {
		<-c
		beat()
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(TimeTickLeak);
}
