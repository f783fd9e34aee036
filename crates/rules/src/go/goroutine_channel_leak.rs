//! GO003: a goroutine blocked forever on a channel whose other side left.

use super::common::{self, ChanCap, ChanUse};
use super::flow::{self, Flow};
use super::locks::evaluated_exprs;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_in_block, exprs_under};
use unsnarl_model::*;

pub struct GoroutineChannelLeak;

pub static META: RuleMeta = RuleMeta {
    id: "GO003",
    name: "goroutine-channel-leak",
    category: Category::ChannelMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A goroutine sends on (or receives from) an unbuffered channel whose only other side can return without the matching receive (or send).",
    docs: r#"
A goroutine started by a function sends its result on an unbuffered channel
made by that function, but the function can return without receiving it: a
`select` that also waits on `ctx.Done()` or `time.After`, or an early error
return before the receive. The same holds the other way round for a
goroutine waiting to receive a value the function may never send. It also
flags a goroutine per loop iteration sending on a channel the function
receives from only once ("first answer wins").

## Why

An unbuffered send completes only when someone receives. Once the function
has returned, nobody ever will: the goroutine blocks forever, keeping its
stack, its connections and everything it references. Each timed-out or
failed request leaks one more goroutine until memory runs out. This is the
most common goroutine leak in real Go code.

## Example

```go
package app

import "context"

func Fetch(ctx context.Context, url string) (string, error) {
	ch := make(chan string)
	go func() {
		ch <- download(url)
	}()
	select {
	case body := <-ch:
		return body, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
```

## Fix

Give the channel room for the one value, so the send completes even when
nobody is left to receive it (or make the goroutine select on `ctx.Done()`
too).

```go
package app

import "context"

func Fetch(ctx context.Context, url string) (string, error) {
	ch := make(chan string, 1)
	go func() {
		ch <- download(url)
	}()
	select {
	case body := <-ch:
		return body, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GoroutineChannelLeak {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for g in cx.model.function_ids() {
            if cx.func(g).kind != FnKind::Closure || !common::runs_in_goroutine(cx, g) {
                continue;
            }
            let Some(parent) = cx.func(g).parent else {
                continue;
            };
            // A test that gives up on a hung goroutine after a timeout is
            // reporting a failure, not leaking in production.
            if common::in_test_func(cx, parent) {
                continue;
            }
            let Some(start) = spawn_stmt(cx, g) else {
                continue;
            };
            let mut seen = Vec::new();
            for (op, ch, is_send) in blocking_ops(cx, g) {
                if seen.contains(&ch) {
                    continue;
                }
                if let Some(f) = check_op(cx, g, parent, start, op, &ch, is_send) {
                    seen.push(ch);
                    out.push(f);
                }
            }
        }
    }
}

/// The statement of the parent that starts goroutine `g`: its `go`
/// statement, or the statement holding the group's `Go(...)` call.
fn spawn_stmt(cx: &FileCx, g: FuncId) -> Option<StmtId> {
    if let Some(s) = common::go_stmt_of_closure(cx, g) {
        return Some(s);
    }
    let Parent::Expr(site) = cx.tree.func_site(g) else {
        return None;
    };
    cx.tree.enclosing_stmt(site)
}

/// Channel operations in the goroutine's body that block until the other
/// side acts: plain sends and receives on a named channel, outside any
/// `select` (a select has other ways out).
fn blocking_ops(cx: &FileCx, g: FuncId) -> Vec<(ExprId, String, bool)> {
    let mut out = Vec::new();
    for e in exprs_in_block(cx.model, &cx.func(g).body) {
        let (chan, is_send) = match &cx.expr(e).kind {
            ExprKind::Send { channel, .. } => (*channel, true),
            ExprKind::Recv(channel) => (*channel, false),
            _ => continue,
        };
        let Some(name) = cx.model.name_of(chan) else {
            continue;
        };
        out.push((e, name.to_string(), is_send));
    }
    out
}

fn check_op(
    cx: &FileCx,
    g: FuncId,
    parent: FuncId,
    start: StmtId,
    op: ExprId,
    ch: &str,
    is_send: bool,
) -> Option<Finding> {
    let made = common::local_chan(cx, g, ch)?;
    // The channel must belong to the spawning function (or enclose it).
    if !cx
        .tree
        .func_ancestors(cx.model, parent)
        .any(|a| a == made.func)
    {
        return None;
    }
    // Who else touches the channel: only the spawning function's own body
    // may be the other side; any other receiver/sender, or the channel
    // escaping, means we cannot tell.
    let mut own_other_side = 0;
    let mut own_in_loop = false;
    let mut ranged = false;
    for u in common::name_uses(cx, made.func, ch) {
        let uf = cx.func_of(u);
        if uf == g || cx.tree.func_ancestors(cx.model, uf).any(|a| a == g) {
            if common::chan_use(cx, u) == ChanUse::Escape {
                return None;
            }
            continue;
        }
        let kind = common::chan_use(cx, u);
        let satisfies = match kind {
            ChanUse::Recv | ChanUse::Range => is_send,
            ChanUse::Send | ChanUse::Close => !is_send,
            ChanUse::Escape => return None,
            ChanUse::Inspect => false,
        };
        if uf != parent {
            if satisfies {
                return None;
            }
            continue;
        }
        if satisfies {
            own_other_side += 1;
            if kind == ChanUse::Range {
                ranged = true;
            }
            if let Some(s) = cx.tree.enclosing_stmt(u)
                && !common::enclosing_loops(cx, s).is_empty()
            {
                own_in_loop = true;
            }
        }
    }
    if own_other_side == 0 || deferred_serve(cx, parent, ch, is_send) {
        // Nobody receives at all: reported as an orphan goroutine.
        return None;
    }
    let op_line = cx.expr(op).span;
    let verb = if is_send { "sends on" } else { "receives from" };
    let other = if is_send { "receiving from" } else { "sending on" };
    let fname = cx.func_display(parent);
    // First answer wins: a sender per iteration, one receive.
    let spawned_in_loop = !common::enclosing_loops(cx, start).is_empty();
    if is_send && spawned_in_loop && !own_in_loop && !ranged {
        let blocks = match made.cap {
            ChanCap::Unbuffered => true,
            ChanCap::Buffered(_) => true,
            ChanCap::Unknown => false,
        };
        if blocks && !loop_is_constant(cx, start) {
            return Some(cx.finding(
                &META,
                op_line,
                format!(
                    "a goroutine is started per loop iteration and each {verb} `{ch}`, but {fname} receives from it only once: every other goroutine blocks on this send forever and leaks"
                ),
                format!(
                    "receive once per goroutine, or make the channel hold every result (`make(chan T, len(items))`), or let the losers give up by selecting on a context cancelled when {fname} returns"
                ),
            ));
        }
    }
    if made.cap != ChanCap::Unbuffered {
        return None;
    }
    let mut fl = Pending {
        ch,
        start,
        is_send,
        leaks: Vec::new(),
    };
    flow::run_function(cx, &mut fl, &cx.func(parent).body, false);
    let exit = fl.leaks.first().copied()?;
    let at = match exit {
        Some(s) => format!("the return at line {}", common::line_of(cx, cx.stmt(s).span)),
        None => "the end of the function".to_string(),
    };
    Some(cx.finding(
        &META,
        op_line,
        format!(
            "this goroutine {verb} unbuffered channel `{ch}`, but {fname} can reach {at} without {other} it (another `select` case or an early return): the goroutine then blocks here forever and leaks"
        ),
        if is_send {
            format!(
                "make the channel buffered (`make(chan T, 1)`) so this send completes even after {fname} has returned, or select on `ctx.Done()` around the send"
            )
        } else {
            format!(
                "close `{ch}` (or send) on every path of {fname}, e.g. `defer close({ch})`, or select on `ctx.Done()` around the receive"
            )
        },
    ))
}

/// `defer close(ch)` (or a deferred func literal that sends/receives/closes
/// `ch`) serves the goroutine on every exit.
fn deferred_serve(cx: &FileCx, parent: FuncId, ch: &str, is_send: bool) -> bool {
    common::stmts_in(cx.model, &cx.func(parent).body)
        .into_iter()
        .any(|s| {
            let StmtKind::Defer(call) = cx.stmt(s).kind else {
                return false;
            };
            let mut exprs = vec![call];
            if let Some(g) = common::go_closure(cx, call) {
                exprs.extend(exprs_in_block(cx.model, &cx.func(g).body));
            }
            exprs.into_iter().any(|e| {
                let named = |x: ExprId| cx.model.name_of(x) == Some(ch);
                match &cx.expr(e).kind {
                    ExprKind::Call(c) => {
                        !is_send
                            && c.target.as_deref() == Some("close")
                            && c.positional(0).is_some_and(named)
                    }
                    ExprKind::Recv(x) => is_send && named(*x),
                    ExprKind::Send { channel, .. } => !is_send && named(*channel),
                    _ => false,
                }
            })
        })
}

/// A loop over a literal list or with a constant bound: the number of
/// senders is known and small.
fn loop_is_constant(cx: &FileCx, s: StmtId) -> bool {
    let Some(&l) = common::enclosing_loops(cx, s).first() else {
        return false;
    };
    match &cx.stmt(l).kind {
        StmtKind::For { iter, .. } => matches!(
            cx.expr(*iter).kind,
            ExprKind::Collection { .. } | ExprKind::Literal(_)
        ),
        StmtKind::While { cond, .. } => match &cx.expr(*cond).kind {
            ExprKind::Binary { right, .. } => cx.model.int_value(*right).is_some(),
            _ => false,
        },
        _ => false,
    }
}

/// Whether the goroutine is started and its channel not yet served.
struct Pending<'a> {
    ch: &'a str,
    start: StmtId,
    is_send: bool,
    leaks: Vec<Option<StmtId>>,
}

impl Pending<'_> {
    fn serves(&self, cx: &FileCx, e: ExprId) -> bool {
        let named = |x: ExprId| cx.model.name_of(x) == Some(self.ch);
        match &cx.expr(e).kind {
            ExprKind::Recv(x) => self.is_send && named(*x),
            ExprKind::Send { channel, .. } => !self.is_send && named(*channel),
            ExprKind::Call(c) => {
                !self.is_send
                    && c.target.as_deref() == Some("close")
                    && c.positional(0).is_some_and(named)
            }
            _ => false,
        }
    }
}

impl Flow for Pending<'_> {
    type S = bool;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut bool) {
        if s == self.start {
            *st = true;
            return;
        }
        if evaluated_exprs(cx, s).into_iter().any(|e| self.serves(cx, e)) {
            *st = false;
        }
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut bool) {
        if self.is_send && cx.model.name_of(e) == Some(self.ch) {
            // `for v := range ch`.
            *st = false;
        }
        if exprs_under(cx.model, e).into_iter().any(|x| self.serves(cx, x)) {
            *st = false;
        }
    }
    fn arm(&mut self, cx: &FileCx, arm: &SelectArm, st: &mut bool) {
        let named = |x: ExprId| cx.model.name_of(x) == Some(self.ch);
        match &arm.kind {
            ArmKind::Recv { channel, .. } if self.is_send && named(*channel) => *st = false,
            ArmKind::Send { channel, .. } if !self.is_send && named(*channel) => *st = false,
            _ => {}
        }
    }
    fn exit(&mut self, _cx: &FileCx, ret: Option<StmtId>, st: &bool) {
        if *st {
            self.leaks.push(ret);
        }
    }
    fn join(&self, a: &bool, b: &bool) -> bool {
        *a || *b
    }
    fn zero_trip_loops(&self) -> bool {
        false
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

func Query(ctx context.Context, q string) (Rows, error) {
	res := make(chan Rows)
	go func() {
		res <- runQuery(q) // expect
	}()
	select {
	case r := <-res:
		return r, nil
	case <-time.After(2 * time.Second):
		return nil, errTimeout
	}
}
"#,
        r#"
package app

func Load(id string) (Item, error) {
	done := make(chan Item)
	go func() { done <- fetchItem(id) }() // expect
	if err := validate(id); err != nil {
		return Item{}, err
	}
	return <-done, nil
}
"#,
        r#"
package app

func First(urls []string) string {
	out := make(chan string)
	for _, u := range urls {
		go func(u string) {
			out <- get(u) // expect
		}(u)
	}
	return <-out
}
"#,
        r#"
package app

func Start(cfg Config) error {
	ready := make(chan Config)
	go func() {
		c := <-ready // expect
		serve(c)
	}()
	if err := cfg.Validate(); err != nil {
		return err
	}
	ready <- cfg
	return nil
}
"#,
    ],
    pass: &[
        r#"
package app

import "context"

func Query(ctx context.Context, q string) (Rows, error) {
	res := make(chan Rows, 1)
	go func() {
		res <- runQuery(q)
	}()
	select {
	case r := <-res:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
"#,
        r#"
package app

import "context"

func Query(ctx context.Context, q string) (Rows, error) {
	res := make(chan Rows)
	go func() {
		select {
		case res <- runQuery(q):
		case <-ctx.Done():
		}
	}()
	select {
	case r := <-res:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
"#,
        r#"
package app

func All(urls []string) []string {
	out := make(chan string)
	for _, u := range urls {
		go func(u string) { out <- get(u) }(u)
	}
	var bodies []string
	for range urls {
		bodies = append(bodies, <-out)
	}
	return bodies
}
"#,
        r#"
package app

import "sync"

func Pipeline(items []int) []int {
	out := make(chan int)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func(it int) {
			defer wg.Done()
			out <- it * 2
		}(it)
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	var res []int
	for v := range out {
		res = append(res, v)
	}
	return res
}
"#,
        r#"
package app

func Run() error {
	errc := make(chan error)
	go func() { errc <- serve() }()
	return <-errc
}

func Stream(items []int) <-chan int {
	ch := make(chan int)
	go func() {
		defer close(ch)
		for _, it := range items {
			ch <- it
		}
	}()
	return ch
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GoroutineChannelLeak);
}
