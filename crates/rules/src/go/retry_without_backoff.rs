//! GO026: retry loops with no backoff, a constant backoff, or a sleep that
//! ignores the context.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{exprs_in_block, exprs_under};
use unsnarl_model::*;

pub struct RetryWithoutBackoff;

pub static META: RuleMeta = RuleMeta {
    id: "GO026",
    name: "retry-without-backoff",
    category: Category::RetryStorm,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A loop retrying an operation until `err == nil` with no wait between attempts, a constant sleep, or a `time.Sleep` that ignores the function's context.",
    docs: r#"
A retry loop (a counted or endless loop that leaves once the operation
returns `err == nil`, goes around again otherwise, and says it retries:
`attempt`/`retries`/`backoff` in its names, or a sleep between attempts)
that:

- retries immediately, with no sleep or backoff between attempts;
- sleeps a constant time (no growth, no jitter), unless it makes at most
  two attempts (`for i := 0; i < 2; i++`, or a bound the file sets to 2:
  `maxTries := 2`; one retry makes no waves);
- sleeps with `time.Sleep` in a function that has a context, so a
  cancelled caller still waits out every backoff.

A loop that only calls the machine's own file system, subprocesses and
clocks (`os.RemoveAll` until open handles close, `exec.Command(..).Run()`),
directly or through a function of the file, is not reported: there is no
shared dependency for the retries to overload.

## Why

When a dependency fails under load, every client retrying at once, at full
speed or in lockstep, multiplies the traffic exactly when it has the least
capacity: the outage feeds itself. A `time.Sleep` cannot be interrupted, so
cancelled requests keep retrying in the background for the whole budget.

## Example

```go
package app

import "time"

func Publish(c Client, msg []byte) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = c.Send(msg); err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
	return err
}
```

## Fix

Exponential backoff with full jitter, cancellable through the context.

```go
package app

import (
	"context"
	"math/rand"
	"time"
)

func Publish(ctx context.Context, c Client, msg []byte) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = c.Send(msg); err == nil {
			return nil
		}
		d := time.Duration(rand.Int63n(int64(100*time.Millisecond) << attempt))
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetryWithoutBackoff {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let Some(body) = retry_loop(cx, s) else {
                continue;
            };
            let f = cx.tree.stmt_func(s);
            let exprs = exprs_in_block(cx.model, body);
            if local_only(cx, &exprs) {
                continue;
            }
            let jitter = exprs.iter().any(|&e| {
                cx.call(e).is_some_and(|c| {
                    c.target
                        .as_deref()
                        .is_some_and(|t| t.starts_with("math/rand") || t.starts_with("crypto/rand"))
                        || c.name.to_ascii_lowercase().contains("jitter")
                })
            });
            let sleeps: Vec<(ExprId, &Call)> = exprs
                .iter()
                .filter_map(|&e| cx.call(e).map(|c| (e, c)))
                .filter(|(_, c)| c.target.as_deref() == Some("time.Sleep"))
                .collect();
            // The loop's own condition counts too: `for a :=
            // retry.Start(strategy, nil); a.Next(); { .. }` sleeps in `Next`.
            let header: Vec<ExprId> = match &cx.stmt(s).kind {
                StmtKind::While { cond, .. } => unsnarl_model::walk::exprs_under(cx.model, *cond),
                _ => Vec::new(),
            };
            let waits = exprs.iter().chain(&header).any(|&e| {
                cx.call(e).is_some_and(|c| {
                    let n = c.name.to_ascii_lowercase();
                    matches!(
                        c.target.as_deref(),
                        Some("time.After" | "time.NewTimer" | "time.Tick" | "time.NewTicker")
                    ) || n.contains("backoff")
                        || n.contains("sleep")
                        || n.contains("delay")
                        || n == "wait"
                        || n == "next"
                })
            }) || common::stmts_in(cx.model, body)
                .into_iter()
                .any(|x| matches!(cx.stmt(x).kind, StmtKind::Select { .. }));
            if sleeps.is_empty() && !waits {
                out.push(cx.finding(
                    &META,
                    st.span,
                    "this loop retries the failed operation immediately, with no wait between attempts: when the dependency is struggling, every caller hammers it at full speed and keeps it down",
                    "wait between attempts with exponential backoff and full jitter (`rand` up to `base << attempt`, capped), and give up when the context is done",
                ));
                continue;
            }
            let ctx = common::ctx_in_scope(cx, f);
            for (e, c) in sleeps {
                let constant = c
                    .positional(0)
                    .is_some_and(|a| common::is_constant_expr(cx, a));
                // A single retry after a fixed pause makes no waves.
                if constant && ctx.is_none() && at_most_two_attempts(cx, st) {
                    continue;
                }
                let msg = match (constant && !jitter, &ctx) {
                    (true, Some(ctx)) => format!(
                        "this retry loop sleeps a constant time between attempts, and `time.Sleep` ignores `{}`: retries from many callers stay in lockstep (a retry storm), and a cancelled caller still waits out every sleep",
                        ctx.expr()
                    ),
                    (true, None) => "this retry loop sleeps a constant time between attempts: clients that failed together retry together, in waves that keep the dependency overloaded".to_string(),
                    (false, Some(ctx)) => format!(
                        "`time.Sleep` in this retry loop ignores `{}`: after the caller is cancelled or past its deadline, the loop keeps sleeping and retrying",
                        ctx.expr()
                    ),
                    (false, None) => continue,
                };
                // The wait can only watch a context the function has.
                let fix = match &ctx {
                    Some(ctx) => format!(
                        "back off exponentially with full jitter, and wait with `select {{ case <-time.After(d): case <-{0}.Done(): return {0}.Err() }}`",
                        ctx.expr()
                    ),
                    // A `for {}` loop has no budget of its own.
                    None if matches!(st.kind, StmtKind::Loop { .. }) => "back off exponentially with full jitter (sleep a random time up to `base << attempt`, capped), and stop after a bounded number of attempts".to_string(),
                    None => "back off exponentially with full jitter (sleep a random time up to `base << attempt`, capped)".to_string(),
                };
                out.push(cx.finding(&META, cx.expr(e).span, msg, fix));
                break;
            }
        }
    }
}

/// Everything the loop calls is local to the machine: file-system and
/// system calls of the standard library (`os.RemoveAll` while handles
/// close, `os.Rename` over a busy file), a subprocess, clocks, errors and
/// formatting, directly or in a function of the file.
/// There is no shared dependency for its retries to pile onto.
fn local_only(cx: &FileCx, exprs: &[ExprId]) -> bool {
    local_calls(cx, exprs, 1) == Some(true)
}

/// `Some(touches_local_resources)` when every call is local (`None` when
/// one is not): standard-library file and system calls, a subprocess
/// (`exec.Command(..).Run()`), or a function of the file, `depth` levels
/// down, whose own calls are.
fn local_calls(cx: &FileCx, exprs: &[ExprId], depth: u32) -> Option<bool> {
    let mut touches = false;
    for &e in exprs {
        let Some(c) = cx.call(e) else { continue };
        if depth > 0
            && let Some(g) = cx.callee_in_file(c)
        {
            touches |= local_calls(cx, cx.body_exprs(g), depth - 1)?;
            continue;
        }
        let t = c.target.as_deref()?;
        let pkg = t.rsplit_once('.').map_or(t, |(p, _)| p);
        match pkg {
            "os" | "syscall" | "golang.org/x/sys/unix" | "golang.org/x/sys/windows" => {
                touches = true
            }
            _ if pkg.starts_with("os/exec") => touches = true,
            "time" | "errors" | "fmt" | "path/filepath" | "path" | "strings" => {}
            _ if !t.contains('.') => {}
            _ => return None,
        }
    }
    Some(touches)
}

/// The body of a retry loop outside tests: a counted or endless loop that
/// leaves once the operation returns `err == nil`, goes around again
/// otherwise, and says it retries (`attempt`/`retries`/`backoff` in its
/// names, the same inputs each time, or a sleep between attempts). Loops
/// that search (the next candidate path, a bigger buffer) also stop at the
/// first success, and are not retries.
pub(crate) fn retry_loop<'a>(cx: &FileCx<'a>, s: StmtId) -> Option<&'a Block> {
    let st = cx.stmt(s);
    let body = match &st.kind {
        StmtKind::While { body, .. } | StmtKind::Loop { body } => body,
        StmtKind::For { iter, body, .. } if counted_range(cx, *iter) => body,
        _ => return None,
    };
    if common::in_test(cx, cx.tree.stmt_func(s)) {
        return None;
    }
    let explicit = is_retry_loop(cx, body)?;
    let head = cx
        .source(st.span)
        .split('{')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let vocabulary = |t: &str| {
        let t = t.to_ascii_lowercase();
        t.contains("retr") || t.contains("attempt") || t.contains("tries") || t.contains("backoff")
    };
    let exprs = exprs_in_block(cx.model, body);
    let named_retry = vocabulary(&head)
        || exprs.iter().any(|&e| match &cx.expr(e).kind {
            ExprKind::Name { id, .. } => vocabulary(id),
            ExprKind::Call(c) => vocabulary(&c.name),
            _ => false,
        });
    let sleeps = exprs.iter().any(|&e| {
        cx.call(e)
            .is_some_and(|c| c.target.as_deref() == Some("time.Sleep"))
    });
    (named_retry || explicit || sleeps).then_some(body)
}

/// The loop runs at most twice (`for i := 0; i < 2; i++`, `for range
/// 2`, `maxTries := 2; for tries < maxTries`): one retry.
fn at_most_two_attempts(cx: &FileCx, st: &Stmt) -> bool {
    match &st.kind {
        StmtKind::For { iter, .. } => common::int_bound(cx, *iter).is_some_and(|n| n <= 2),
        StmtKind::While { cond, .. } => match &cx.expr(*cond).kind {
            ExprKind::Binary { op, right, .. } => {
                let n = common::int_bound(cx, *right);
                match op {
                    BinOp::Lt => n.is_some_and(|n| n <= 2),
                    BinOp::LtE => n.is_some_and(|n| n <= 1),
                    _ => false,
                }
            }
            _ => false,
        },
        _ => false,
    }
}

/// `for i := range 5` / `for range maxRetries`: a counted loop.
fn counted_range(cx: &FileCx, iter: ExprId) -> bool {
    if cx.model.int_value(iter).is_some() {
        return true;
    }
    cx.model.dotted(iter).is_some_and(|d| {
        let d = d.to_ascii_lowercase();
        d.contains("retr") || d.contains("attempt") || d.contains("tries")
    })
}

/// An `err` name compared with `nil`: `Some(true)` for `err == nil`,
/// `Some(false)` for `err != nil`.
fn err_check(cx: &FileCx, cond: ExprId) -> Option<bool> {
    let ExprKind::Binary { op, left, right } = &cx.expr(cond).kind else {
        return None;
    };
    let (name, other) = match (cx.model.name_of(*left), cx.model.name_of(*right)) {
        (Some(n), _) => (n, *right),
        (_, Some(n)) => (n, *left),
        _ => return None,
    };
    if !(name == "err" || name.ends_with("Err") || name.ends_with("err")) {
        return None;
    }
    if !matches!(cx.model.literal(other), Some(Lit::Null)) {
        return None;
    }
    match op {
        BinOp::Eq => Some(true),
        BinOp::NotEq => Some(false),
        _ => None,
    }
}

/// The top-level statements of a loop body, looking through `{}` blocks
/// and the `Block[init, if]` wrapping of `if x := ...; cond`.
fn top(cx: &FileCx, body: &Block) -> Vec<StmtId> {
    let mut out = Vec::new();
    for &s in body {
        match &cx.stmt(s).kind {
            StmtKind::Block(b) => out.extend(top(cx, b)),
            _ => out.push(s),
        }
    }
    out
}

fn ends_with(cx: &FileCx, b: &Block, pred: &dyn Fn(&StmtKind) -> bool) -> bool {
    b.last().is_some_and(|&s| pred(&cx.stmt(s).kind))
}

/// A loop that exits once an operation succeeds and goes around on error.
/// How a loop retries: `Some(true)` when the error path explicitly goes
/// around again (`if err != nil { ...; continue }` before the exit),
/// `Some(false)` when it only stops at the first success (which search
/// loops do too), `None` when it is no retry loop.
fn is_retry_loop(cx: &FileCx, body: &Block) -> Option<bool> {
    let stmts = top(cx, body);
    let exits = |k: &StmtKind| matches!(k, StmtKind::Return(_) | StmtKind::Break);
    let mut success_exit = false;
    let mut explicit = false;
    for (i, &s) in stmts.iter().enumerate() {
        let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind else {
            continue;
        };
        match err_check(cx, *cond) {
            Some(true) if ends_with(cx, then, &exits) => success_exit = true,
            Some(false) => {
                // `if err != nil { return err }`: errors end the loop, it
                // does not retry.
                if ends_with(cx, then, &|k| matches!(k, StmtKind::Return(_))) && orelse.is_empty() {
                    return None;
                }
                if ends_with(cx, then, &|k| matches!(k, StmtKind::Continue))
                    && stmts[i + 1..].iter().any(|&t| exits(&cx.stmt(t).kind))
                {
                    success_exit = true;
                    // Retrying means calling again with the same inputs; a
                    // loop whose inputs move on (parsing the next block)
                    // is a scan that skips bad items.
                    explicit |= same_inputs(cx, body, &stmts[..=i], *cond);
                }
                if ends_with(cx, orelse, &exits) {
                    success_exit = true;
                }
            }
            _ => {}
        }
    }
    success_exit.then_some(explicit)
}

/// The call that produced the checked error (the last assignment of the
/// error variable before the check) takes only inputs the loop does not
/// change.
fn same_inputs(cx: &FileCx, body: &Block, before: &[StmtId], cond: ExprId) -> bool {
    let ExprKind::Binary { left, right, .. } = &cx.expr(cond).kind else {
        return false;
    };
    let Some(err) = cx.model.name_of(*left).or_else(|| cx.model.name_of(*right)) else {
        return false;
    };
    let producer = before
        .iter()
        .rev()
        .copied()
        .find_map(|s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if targets
                .iter()
                .any(|&t| common::names_in_target(cx, t).contains(&err)) =>
            {
                cx.call(*v).map(|c| (s, c))
            }
            _ => None,
        });
    let Some((producer, call)) = producer else {
        return false;
    };
    let mut inputs: Vec<&str> = Vec::new();
    for e in std::iter::once(call.func).chain(call.args.iter().map(|a| a.value)) {
        for x in exprs_under(cx.model, e) {
            if let Some(n) = cx.model.name_of(x) {
                inputs.push(n);
            }
        }
    }
    // Nothing else in the loop assigns an input of the call.
    !common::stmts_in(cx.model, body).into_iter().any(|s| {
        s != producer
            && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. }
                if targets.iter().any(|&t| {
                    let root = cx.model.dotted(t).map(|d| d.split('.').next().unwrap_or("").to_string());
                    common::names_in_target(cx, t).iter().any(|n| inputs.contains(n))
                        || root.is_some_and(|r| inputs.contains(&r.as_str()))
                }))
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

func Connect(addr string) (Conn, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ { // expect
		c, err := dial(addr)
		if err == nil {
			return c, nil
		}
	}
	return nil, err
}
"#,
        r#"
package app

func Subscribe(b Broker, topic string) Sub {
	for { // expect
		sub, err := b.Subscribe(topic)
		if err != nil {
			continue
		}
		return sub
	}
}
"#,
        r#"
package app

import (
	"context"
	"time"
)

func Save(ctx context.Context, s Store, rec Record) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = s.Put(ctx, rec)
		if err != nil {
			time.Sleep(2 * time.Second) // expect
			continue
		}
		return nil
	}
	return err
}

func Load(ctx context.Context, s Store, id string, backoff time.Duration) (Record, error) {
	for {
		r, err := s.Get(ctx, id)
		if err == nil {
			return r, nil
		}
		time.Sleep(backoff) // expect
		backoff *= 2
	}
}

func Ping(s Store) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = s.Ping(); err == nil {
			return nil
		}
		time.Sleep(time.Second) // expect
	}
	return err
}
"#,
        r#"
package app

import (
	"os"
	"time"
)

func publish(dir string, c *Client) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ { // expect
		os.MkdirAll(dir, 0o755)
		if err = c.Upload(dir); err == nil {
			return nil
		}
	}
	return err
}
"#,
        r#"
package app

import (
	"net"
	"time"
)

func listenThrice(addr string) (net.Listener, error) {
	var err error
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond) // expect
		}
		var ln net.Listener
		if ln, err = dialHub(addr); err == nil {
			return ln, nil
		}
	}
	return nil, err
}
"#,
    ],
    pass: &[
        r#"
package collector

import (
	"database/sql"
	"time"
)

// Two tries in all: one retry after a pause.
func lastTimestamp(db *sql.DB) (int64, error) {
	var (
		err   error
		ts    int64
		tries int
	)
	maxTries := 2
	for tries < maxTries {
		err = db.QueryRow("SELECT max(ts) FROM oplog").Scan(&ts)
		if err != nil {
			tries++
			time.Sleep(500 * time.Millisecond)
		} else {
			return ts, nil
		}
	}
	return 0, err
}
"#,
        r#"
package cookiejar

import (
	"io"
	"time"

	"gopkg.in/retry.v1"
)

var attempt = retry.LimitTime(3*time.Second, retry.Exponential{
	Initial:  100 * time.Microsecond,
	Factor:   1.5,
	MaxDelay: 100 * time.Millisecond,
})

// `Next` sleeps with the strategy's backoff before each attempt.
func lockFile(path string, lock func(string) (io.Closer, error)) (io.Closer, error) {
	var lastErr error
	for a := retry.Start(attempt, nil); a.Next(); {
		locker, err := lock(path)
		if err == nil {
			return locker, nil
		}
		lastErr = err
	}
	return nil, lastErr
}
"#,
        r#"
package app

import (
	"net"
	"time"
)

// One retry after a pause: the port may still be held by the last run.
func listenTwice(addr string) (net.Listener, error) {
	var err error
	for i := 0; i < 2; i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		var ln net.Listener
		if ln, err = dialHub(addr); err == nil {
			return ln, nil
		}
	}
	return nil, err
}
"#,
        r#"
package app

import (
	"os"
	"time"
)

func wipe(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	limit := time.Now().Add(time.Second)
	for time.Now().Before(limit) {
		time.Sleep(10 * time.Millisecond)
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
	}
	return err
}
"#,
        r#"
package app

import (
	"context"
	"math/rand"
	"time"
)

func Save(ctx context.Context, s Store, rec Record) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = s.Put(ctx, rec); err == nil {
			return nil
		}
		d := time.Duration(rand.Int63n(int64(100*time.Millisecond) << attempt))
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}
"#,
        r#"
package app

import "io"

func ReadAll(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

func Grow(n int) ([]byte, error) {
	for {
		b := make([]byte, n)
		err := fill(b)
		if err == nil {
			return b, nil
		}
		n *= 2
	}
}

func Blocks(data []byte) *Block {
	rest := data
	for {
		blk, next, err := parseBlock(rest)
		if err != nil {
			rest = next
			continue
		}
		return blk
	}
}

func First(addrs []string) (Conn, error) {
	for _, a := range addrs {
		c, err := dial(a)
		if err == nil {
			return c, nil
		}
	}
	return nil, errNoAddr
}
"#,
        r#"
package runner

import "os/exec"

func (s *suite) compile() error {
	cmd := exec.Command("go", "test", "-c", "-o", s.out, ".")
	cmd.Dir = s.dir
	return cmd.Run()
}

// Parallel builds sometimes clash on the build cache: try again.
func compileAll(suites []*suite) error {
	for _, s := range suites {
		var err error
		for retries := 0; retries <= 5; retries++ {
			if err = s.compile(); err == nil {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetryWithoutBackoff);

    /// The fix waits on the function's own context, and offers no context
    /// to a function that has none.
    #[test]
    fn the_fix_uses_a_context_only_where_there_is_one() {
        let fixes = crate::testing::fixes(&RetryWithoutBackoff, Language::Go, EXAMPLES.fail[2]);
        assert_eq!(fixes.len(), 3, "{fixes:#?}");
        assert!(fixes[0].contains("<-ctx.Done()"), "{fixes:#?}");
        assert!(!fixes[2].contains("ctx"), "{fixes:#?}");
    }

    /// Only a loop with no budget of its own is told to stop after a
    /// bounded number of attempts.
    #[test]
    fn only_endless_loops_are_told_to_stop() {
        let src = "package p\n\nimport \"time\"\n\nfunc a(c *Client) error {\n\tvar err error\n\tfor attempt := 0; attempt < 5; attempt++ {\n\t\tif err = c.Call(); err == nil {\n\t\t\treturn nil\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n\treturn err\n}\n\nfunc b(c *Client) {\n\tfor {\n\t\tif err := c.Call(); err == nil {\n\t\t\treturn\n\t\t}\n\t\ttime.Sleep(time.Second)\n\t}\n}\n";
        let fixes = crate::testing::fixes(&RetryWithoutBackoff, Language::Go, src);
        assert_eq!(fixes.len(), 2, "{fixes:#?}");
        assert!(!fixes[0].contains("bounded number"), "{}", fixes[0]);
        assert!(fixes[1].contains("bounded number"), "{}", fixes[1]);
    }
}
