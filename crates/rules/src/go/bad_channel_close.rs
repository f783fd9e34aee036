//! GO004: `close` from the receiving side, from several producers, or twice.

use super::common::{self, ChanUse};
use super::flow::{self, Flow};
use super::locks::evaluated_exprs;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::BTreeSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct BadChannelClose;

pub static META: RuleMeta = RuleMeta {
    id: "GO004",
    name: "bad-channel-close",
    category: Category::ChannelMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`close(ch)` by the receiving side, by each of several producer goroutines, or twice on one path.",
    docs: r#"
Flags `close(ch)` where it can panic:

- the receiving side closes a channel other goroutines send on (or closes it
  after ranging over it, when it is already closed); sends made before any
  goroutine starts (a one-slot channel filled with a token that whoever
  takes it closes) are over by then and do not count, and neither are
  sends the receiver has all taken: a loop starts N goroutines that each
  send once (directly, or through a closure the loop defines), and
  another loop with the same start and bound (`range xs` against `i <
  len(xs)`) receives N values before the close;
- the close sits in a goroutine started once per loop iteration (or in
  several goroutines), so every producer but the first closes a closed
  channel;
- the same channel is closed twice on one path (an explicit `close` next to
  a `defer close`).

## Why

Closing is a message from the (single) sender: "no more values". A send on
a closed channel panics, and so does a second close. When a receiver or one
of several producers closes, any producer still running crashes the
process, at a time that depends on scheduling.

## Example

```go
package app

func Produce(parts [][]int, out chan<- int) {
	for _, p := range parts {
		go func(p []int) {
			for _, v := range p {
				out <- v
			}
			close(out)
		}(p)
	}
}
```

## Fix

Let one owner close the channel after every producer is done: a
`sync.WaitGroup` and one closer goroutine.

```go
package app

import "sync"

func Produce(parts [][]int, out chan<- int) {
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func(p []int) {
			defer wg.Done()
			for _, v := range p {
				out <- v
			}
		}(p)
	}
	go func() {
		wg.Wait()
		close(out)
	}()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BadChannelClose {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let mut flagged: BTreeSet<ExprId> = BTreeSet::new();
        for f in cx.model.function_ids() {
            twice_on_a_path(cx, f, &mut flagged, out);
        }
        for e in cx
            .model
            .exprs
            .iter()
            .enumerate()
            .map(|(i, _)| ExprId(i as u32))
        {
            let Some(ch) = closed_channel(cx, e) else {
                continue;
            };
            if flagged.contains(&e) || in_once(cx, e) {
                continue;
            }
            let f = cx.func_of(e);
            if let Some(msg) = closed_by_many(cx, f, &ch) {
                flagged.insert(e);
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    msg,
                    "close the channel once, from a single owner: a `sync.WaitGroup` counting the producers and one goroutine that waits for it and then closes",
                ));
                continue;
            }
            if let Some(msg) = closed_by_receiver(cx, f, &ch, e) {
                flagged.insert(e);
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    msg,
                    "only the sending side closes a channel; a receiver that wants the producers to stop should cancel a context (or close a separate `done` channel) they select on",
                ));
            }
        }
    }
}

/// The channel (dotted) closed by a `close(ch)` call.
fn closed_channel(cx: &FileCx, e: ExprId) -> Option<String> {
    let c = cx.call(e)?;
    if c.target.as_deref() != Some("close") || c.args.len() != 1 {
        return None;
    }
    cx.model.dotted(c.positional(0)?)
}

/// A close inside `once.Do(func() { close(ch) })` happens once.
fn in_once(cx: &FileCx, e: ExprId) -> bool {
    cx.tree
        .func_ancestors(cx.model, cx.func_of(e))
        .any(|f| match cx.tree.func_site(f) {
            Parent::Expr(site) => matches!(cx.tree.expr_parent(site), Parent::Expr(p)
                if cx.call(p).is_some_and(|c| c.name == "Do" || c.name == "OnceFunc")),
            _ => false,
        })
}

/// A close in a goroutine started in a loop, or in two different
/// goroutines, of a channel made outside them.
fn closed_by_many(cx: &FileCx, f: FuncId, ch: &str) -> Option<String> {
    let g = cx
        .tree
        .func_ancestors(cx.model, f)
        .find(|&a| common::go_stmt_of_closure(cx, a).is_some())?;
    let go = common::go_stmt_of_closure(cx, g)?;
    let root = ch.split('.').next().unwrap_or(ch);
    // A close under a condition (`if atomic.AddInt32(&n, -1) == 0`, `if k
    // == last`) is meant for one of the goroutines only.
    if under_if(cx, close_expr_stmt(cx, f, ch)?) {
        return None;
    }
    // A channel made inside the goroutine or inside the loop body belongs
    // to one producer.
    if !matches!(
        common::name_scope(cx, g, root),
        common::NameScope::Captured(_) | common::NameScope::Package
    ) {
        return None;
    }
    if let Some(&lp) = common::enclosing_loops(cx, go).first()
        && !declared_in(cx, lp, root)
    {
        return Some(format!(
            "`{ch}` is closed by a goroutine started once per loop iteration: the second producer to finish closes a closed channel (panic), and any producer still sending panics too"
        ));
    }
    // Another goroutine of the same function closes it too.
    let parent = cx.func(g).parent?;
    let others = cx.with_nested(parent).into_iter().skip(1).filter(|&h| {
        h != g
            && !cx.tree.func_ancestors(cx.model, h).any(|a| a == g)
            && common::go_stmt_of_closure(cx, h).is_some()
            && cx.with_nested(h).into_iter().any(|k| {
                cx.body_exprs(k)
                    .iter()
                    .copied()
                    .any(|e| closed_channel(cx, e).as_deref() == Some(ch) && !in_once(cx, e))
            })
    });
    if others.count() > 0 {
        return Some(format!(
            "`{ch}` is closed by more than one goroutine: whichever closes second panics, and the other producer's sends panic too"
        ));
    }
    None
}

/// The statement of `f` closing `ch`.
fn close_expr_stmt(cx: &FileCx, f: FuncId, ch: &str) -> Option<StmtId> {
    cx.body_exprs(f)
        .iter()
        .copied()
        .find(|&e| closed_channel(cx, e).as_deref() == Some(ch))
        .and_then(|e| cx.tree.enclosing_stmt(e))
}

/// Inside an `if`/`switch`/`select` of its function.
fn under_if(cx: &FileCx, s: StmtId) -> bool {
    cx.tree.stmt_ancestors(s).any(|a| {
        matches!(
            cx.stmt(a).kind,
            StmtKind::If { .. } | StmtKind::Switch { .. } | StmtKind::Select { .. }
        )
    })
}

/// True when `name` is declared inside loop `lp`.
fn declared_in(cx: &FileCx, lp: StmtId, name: &str) -> bool {
    let body = match &cx.stmt(lp).kind {
        StmtKind::For { target, body, .. } => {
            if target.is_some_and(|t| common::names_in_target(cx, t).contains(&name)) {
                return true;
            }
            body
        }
        StmtKind::While { body, .. } | StmtKind::Loop { body } => body,
        _ => return false,
    };
    common::stmts_in(cx.model, body).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, op: AssignOp::Declare { .. }, .. }
            if targets.iter().any(|&t| common::names_in_target(cx, t).contains(&name)))
    })
}

/// A close by a function that receives from the channel while some other
/// goroutine of the file sends on it, or a close after `for range ch`.
fn closed_by_receiver(cx: &FileCx, f: FuncId, ch: &str, close: ExprId) -> Option<String> {
    if ch.contains('.') {
        return None;
    }
    let at = cx.expr(close).span.start;
    // `wg.Wait(); close(ch)`: the senders are done, closing is safe (the
    // usual "collect, then drain" pattern).
    if cx.body_exprs(f).iter().any(|&e| {
        cx.expr(e).span.start < at
            && cx
                .call(e)
                .is_some_and(|c| c.name == "Wait" && c.args.is_empty())
    }) {
        return None;
    }
    let own: Vec<ExprId> = cx
        .body_exprs(f)
        .iter()
        .copied()
        .filter(|&e| cx.model.name_of(e) == Some(ch))
        .collect();
    let uses: Vec<ChanUse> = own.iter().map(|&u| common::chan_use(cx, u)).collect();
    if uses.contains(&ChanUse::Send) || uses.contains(&ChanUse::Escape) {
        return None;
    }
    let receives = uses
        .iter()
        .any(|u| matches!(u, ChanUse::Recv | ChanUse::Range));
    if !receives {
        return None;
    }
    // Where the channel is declared: every function that sees it.
    let scope_root = match common::name_scope(cx, f, ch) {
        common::NameScope::Own => f,
        common::NameScope::Captured(a) => a,
        _ => return None,
    };
    // Closing before any receive of our own is "close, then drain what is
    // buffered", not a receiver closing mid-stream.
    let received_before = own
        .iter()
        .zip(&uses)
        .any(|(&u, k)| matches!(k, ChanUse::Recv | ChanUse::Range) && cx.expr(u).span.start < at);
    if !received_before {
        return None;
    }
    // A close after a completed `for range ch` loop (not inside it).
    let ranged = own.iter().zip(&uses).any(|(&u, k)| {
        *k == ChanUse::Range
            && cx
                .tree
                .enclosing_stmt(u)
                .is_some_and(|s| cx.stmt(s).span.end < at)
    });
    // A send the declaring function makes before it starts any goroutine
    // (`token <- struct{}{}` filling a one-slot channel) is over before
    // anyone can close it.
    let first_go = cx
        .body_stmts(scope_root)
        .iter()
        .filter(|&&s| matches!(cx.stmt(s).kind, StmtKind::Go(_)))
        .map(|&s| cx.stmt(s).span.start)
        .min();
    let senders = cx
        .with_nested(scope_root)
        .into_iter()
        .filter(|&h| h != f)
        .any(|h| {
            cx.body_exprs(h).iter().any(|&e| {
                cx.model.name_of(e) == Some(ch)
                    && common::chan_use(cx, e) == ChanUse::Send
                    && !(h == scope_root && first_go.is_some_and(|g| cx.expr(e).span.end <= g))
            })
        });
    if senders && !counted_drain(cx, f, scope_root, ch, &own, &uses) {
        return Some(format!(
            "`{ch}` is closed by the side that receives from it while another goroutine sends on it: the next send panics with \"send on closed channel\""
        ));
    }
    if ranged {
        return Some(format!(
            "`{ch}` is closed after ranging over it: the range only ends once the channel is closed, so this second close panics"
        ));
    }
    None
}

/// The receiver takes exactly as many values as there are senders before
/// it closes: `for i := 0; i < jobs; i++ { go func() { ch <- work() }() }`
/// then `for i := 0; i < jobs; i++ { <-ch }`, both loops bounded by the same
/// expression, each goroutine sending at most once (its send in no loop).
/// By the close every send has been received, so none can hit it.
fn counted_drain(
    cx: &FileCx,
    f: FuncId,
    scope_root: FuncId,
    ch: &str,
    own: &[ExprId],
    uses: &[ChanUse],
) -> bool {
    // `i < bound` of the loop right around a statement (no other loop
    // between): where the counter starts, and the bound as source text; a
    // `range xs` loop runs from 0 to `len(xs)`.
    let bound_of = |s: StmtId| -> Option<(i128, String)> {
        let lp = common::enclosing_loops(cx, s).into_iter().next()?;
        match &cx.stmt(lp).kind {
            StmtKind::While { cond, .. } => match &cx.expr(*cond).kind {
                ExprKind::Binary {
                    op: BinOp::Lt,
                    left,
                    right,
                } => Some((
                    counter_start(cx, lp, cx.model.name_of(*left)?)?,
                    cx.source(cx.expr(*right).span).to_string(),
                )),
                _ => None,
            },
            StmtKind::For { iter, .. } => {
                Some((0, format!("len({})", cx.source(cx.expr(*iter).span))))
            }
            _ => None,
        }
    };
    let mut recv_bound = None;
    for (&u, k) in own.iter().zip(uses) {
        if *k != ChanUse::Recv {
            continue;
        }
        let Some(b) = cx.tree.enclosing_stmt(u).and_then(bound_of) else {
            return false;
        };
        if recv_bound.as_ref().is_some_and(|r| *r != b) {
            return false;
        }
        recv_bound = Some(b);
    }
    let Some(bound) = recv_bound else {
        return false;
    };
    cx.with_nested(scope_root)
        .into_iter()
        .filter(|&h| h != f)
        .all(|h| {
            let sends: Vec<ExprId> = cx
                .body_exprs(h)
                .iter()
                .copied()
                .filter(|&e| {
                    cx.model.name_of(e) == Some(ch) && common::chan_use(cx, e) == ChanUse::Send
                })
                .collect();
            match sends.as_slice() {
                [] => true,
                [send] => {
                    !cx.in_loop(*send)
                        && spawn_of(cx, h).and_then(bound_of).as_ref() == Some(&bound)
                }
                _ => false,
            }
        })
}

/// The `go` statement that runs closure `h`: `go func() {..}()`, or `go
/// work(x)` beside `work := func(..) {..}` in the same block.
fn spawn_of(cx: &FileCx, h: FuncId) -> Option<StmtId> {
    if let Some(s) = common::go_stmt_of_closure(cx, h) {
        return Some(s);
    }
    let Parent::Expr(site) = cx.tree.func_site(h) else {
        return None;
    };
    let assign = cx.tree.enclosing_stmt(site)?;
    let name = match &cx.stmt(assign).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if *v == site && targets.len() == 1 => cx.model.name_of(targets[0])?,
        _ => return None,
    };
    crate::util::containing_block(cx, assign)?
        .iter()
        .copied()
        .find(|&s| {
            matches!(cx.stmt(s).kind, StmtKind::Go(g)
                if cx.call(g).is_some_and(|c| cx.model.name_of(c.func) == Some(name)))
        })
}

/// The value the counter of loop `lp` starts from: its init clause (`for i
/// := 0; ...`), else the last plain value the function gave it before the
/// loop (`var i int` is 0).
fn counter_start(cx: &FileCx, lp: StmtId, counter: &str) -> Option<i128> {
    let value_of = |s: StmtId| match &cx.stmt(s).kind {
        StmtKind::Assign { targets, value, op }
            if targets.len() == 1 && common::names_in_target(cx, targets[0]) == [counter] =>
        {
            Some(match value {
                // `i++` / `i += n` before the loop: not a plain start.
                _ if matches!(op, AssignOp::Augmented(_)) => None,
                Some(v) => match &cx.expr(*v).kind {
                    ExprKind::Collection {
                        ty: Some(t), elems, ..
                    } if elems.is_empty() && t.text == "int" => Some(0),
                    _ => cx.model.int_value(*v),
                },
                None => None,
            })
        }
        _ => None,
    };
    let at = cx.stmt(lp).span.start;
    let f = cx.tree.stmt_func(lp);
    cx.body_stmts(f)
        .iter()
        .copied()
        .filter(|&s| cx.stmt(s).span.start < at || matches!(cx.tree.stmt_parent(lp), Parent::Stmt(b) if cx.tree.stmt_ancestors(s).next() == Some(b)))
        .filter(|&s| s != lp)
        .filter_map(value_of)
        .last()
        .flatten()
}

/// Two closes of one channel on one path (including a deferred close).
fn twice_on_a_path(cx: &FileCx, f: FuncId, flagged: &mut BTreeSet<ExprId>, out: &mut Vec<Finding>) {
    let mut fl = Closes { found: Vec::new() };
    flow::run_function(cx, &mut fl, &cx.func(f).body, Vec::new());
    for (e, ch, first) in fl.found {
        if !flagged.insert(e) {
            continue;
        }
        out.push(cx.finding(
            &META,
            cx.expr(e).span,
            format!(
                "`{ch}` is already closed on this path (line {}): closing it again panics",
                common::line_of(cx, first)
            ),
            "close each channel exactly once: keep either the `defer close(...)` or the explicit close",
        ));
    }
}

/// Channels closed so far on a path: (channel, where, deferred).
struct Closes {
    found: Vec<(ExprId, String, Span)>,
}

impl Flow for Closes {
    type S = Vec<(String, Span)>;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut Self::S) {
        if let StmtKind::Defer(e) = &cx.stmt(s).kind {
            if let Some(ch) = closed_channel(cx, *e) {
                if let Some((_, first)) = st.iter().find(|(c, _)| *c == ch) {
                    self.found.push((*e, ch, *first));
                } else {
                    st.push((ch, cx.expr(*e).span));
                }
            }
            return;
        }
        for e in evaluated_exprs(cx, s) {
            if let Some(ch) = closed_channel(cx, e) {
                if let Some((_, first)) = st.iter().find(|(c, _)| *c == ch) {
                    self.found.push((e, ch, *first));
                } else {
                    st.push((ch, cx.expr(e).span));
                }
            }
        }
        // Re-assigning the channel makes a new one (also among several:
        // `ch, _ = obj.(Chan)`).
        if let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind {
            for &t in targets {
                if let Some(d) = cx.model.dotted(t) {
                    st.retain(|(c, _)| *c != d);
                }
                for n in common::names_in_target(cx, t) {
                    st.retain(|(c, _)| c != n);
                }
            }
        }
    }
    fn join(&self, a: &Self::S, b: &Self::S) -> Self::S {
        a.iter()
            .filter(|(c, _)| b.iter().any(|(d, _)| d == c))
            .cloned()
            .collect()
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

func Merge(srcs []Source) <-chan Item {
	out := make(chan Item)
	for _, s := range srcs {
		go func(s Source) {
			for it := range s.Items() {
				out <- it
			}
			close(out) // expect
		}(s)
	}
	return out
}
"#,
        r#"
package app

func Consume(n int) {
	jobs := make(chan int)
	go func() {
		for i := 0; i < n; i++ {
			jobs <- i
		}
	}()
	for j := range jobs {
		if j > 10 {
			close(jobs) // expect
			return
		}
	}
}
"#,
        r#"
package app

func Emit(vals []int) <-chan int {
	ch := make(chan int, len(vals))
	defer close(ch)
	for _, v := range vals {
		ch <- v
	}
	close(ch) // expect
	return ch
}
"#,
        r#"
package app

func Drain(ch chan int) int {
	sum := 0
	for v := range ch {
		sum += v
	}
	close(ch) // expect
	return sum
}
"#,
        r#"
package sftp

import "net"

// The token is put back after the goroutine may have taken it and closed
// the channel.
func pair(l net.Listener) (net.Conn, error) {
	token := make(chan struct{}, 1)
	token <- struct{}{}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
		if _, ok := <-token; ok {
			l.Close()
			close(token) // expect
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	<-accepted
	token <- struct{}{}
	return c, err
}
"#,
        r#"
package app

// One value short: the last worker can still be sending when the channel closes.
func Sum(parts [][]int) int {
	results := make(chan int)
	for i := 0; i < len(parts); i++ {
		go func(p []int) {
			results <- total(p)
		}(parts[i])
	}
	sum := 0
	for i := 1; i < len(parts); i++ {
		sum += <-results
	}
	close(results) // expect
	return sum
}
"#,
    ],
    pass: &[
        r#"
package app

// The second close is of a new channel, taken out of an interface.
func Reopen(get func() interface{}) {
	ch, ok := get().(chan int)
	if !ok {
		return
	}
	close(ch)
	ch, _ = get().(chan int)
	close(ch)
}
"#,
        r#"
package app

// One goroutine per directory, each sending once; as many receives.
func Walk(dirs []string, visit func(string) []string) []string {
	results := make(chan []string, len(dirs))
	for _, d := range dirs {
		work := func(d string) {
			results <- visit(d)
		}
		go work(d)
	}
	var out []string
	for i := 0; i < len(dirs); i++ {
		out = append(out, <-results...)
	}
	close(results)
	return out
}
"#,
        r#"
package app

// As many receives as workers, each sending once: every send is over by the close.
func Sum(parts [][]int) int {
	var i int
	results := make(chan []int)
	for ; i < len(parts); i++ {
		go func(p []int) {
			results <- squares(p)
		}(parts[i])
	}
	sum := 0
	for i = 0; i < len(parts); i++ {
		for _, v := range <-results {
			sum += v
		}
	}
	close(results)
	return sum
}
"#,
        r#"
package sftp

import "net"

// The token is put in before the goroutine starts; whichever side takes it
// closes the listener and the channel, the other finds it closed.
func pair(l net.Listener) (net.Conn, error) {
	token := make(chan struct{}, 1)
	token <- struct{}{}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
		if _, ok := <-token; ok {
			l.Close()
			close(token)
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		if _, ok := <-token; ok {
			l.Close()
			close(token)
		}
		return nil, err
	}
	<-accepted
	return c, nil
}
"#,
        r#"
package app

import "sync"

func Merge(srcs []Source) <-chan Item {
	out := make(chan Item)
	var wg sync.WaitGroup
	for _, s := range srcs {
		wg.Add(1)
		go func(s Source) {
			defer wg.Done()
			for it := range s.Items() {
				out <- it
			}
		}(s)
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}
"#,
        r#"
package app

func Workers(n int) {
	for i := 0; i < n; i++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			work()
		}()
		<-done
	}
}
"#,
        r#"
package app

import "sync"

type Stopper struct {
	once sync.Once
	stop chan struct{}
}

func (s *Stopper) Stop() {
	for i := 0; i < 3; i++ {
		go func() {
			s.once.Do(func() { close(s.stop) })
		}()
	}
}
"#,
        r#"
package app

import (
	"sync"
	"sync/atomic"
)

func Gen(n int) <-chan int {
	ch := make(chan int)
	go func() {
		defer close(ch)
		for i := 0; i < n; i++ {
			ch <- i
		}
	}()
	return ch
}

func Collect(srcs []Source) []Item {
	out := make(chan Item, len(srcs))
	var wg sync.WaitGroup
	for _, s := range srcs {
		wg.Add(1)
		go func(s Source) { defer wg.Done(); out <- s.One() }(s)
	}
	wg.Wait()
	close(out)
	var items []Item
	for it := range out {
		items = append(items, it)
	}
	return items
}

func Last(n int) {
	done := make(chan struct{})
	var left int32 = int32(n)
	for i := 0; i < n; i++ {
		go func() {
			if atomic.AddInt32(&left, -1) == 0 {
				close(done)
			}
		}()
	}
	<-done
}

func Toggle(ok bool) {
	ch := make(chan int)
	if ok {
		close(ch)
	} else {
		close(ch)
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BadChannelClose);
}
