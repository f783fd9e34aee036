//! GO032: a reconnect or poll loop on a fixed period with no jitter.

use super::{common, retry_without_backoff};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct PollWithoutJitter;

pub static META: RuleMeta = RuleMeta {
    id: "GO032",
    name: "poll-without-jitter",
    category: Category::ThunderingHerd,
    severity: Severity::Low,
    languages: &[Language::Go],
    summary: "An endless loop that reconnects to or polls a remote service and sleeps a constant period, with no random jitter.",
    docs: r#"
An endless `for` loop that calls something that connects, dials,
reconnects, subscribes or polls (by name, or a known dial, lookup, HTTP or
database call; not reads and writes on a connection opened before the
loop, which reconnect nothing, nor `Accept` on the program's own
listener; a function of the same file by what its body calls) and
waits with `time.Sleep` of a constant duration, with no random component
anywhere in the loop, nor a random delay before it (each instance then
keeps a phase of its own). A loop that stops at the first success is a retry,
left to GO026, and a sleep directly followed by `return` or `break` is a
pause on the way out, not the loop's period.

## Why

Every instance of the service runs the same loop with the same period.
After a deploy or a broker restart they all (re)connect or poll at the same
instants, in synchronized waves that spike the server exactly when it is
recovering. A little randomness spreads them out.

## Example

```go
package app

import "time"

func Maintain(addr string) {
	for {
		conn, err := dialBroker(addr)
		if err != nil {
			time.Sleep(5 * time.Second)
			continue
		}
		serve(conn)
	}
}
```

## Fix

Add jitter to the period (and back off while the peer stays down).

```go
package app

import (
	"math/rand"
	"time"
)

func Maintain(addr string) {
	for {
		conn, err := dialBroker(addr)
		if err != nil {
			time.Sleep(5*time.Second + time.Duration(rand.Int63n(int64(2*time.Second))))
			continue
		}
		serve(conn)
	}
}
```
"#,
    examples: &EXAMPLES,
};

/// Names that say a call works over the network wherever they appear.
const NETWORK_WORDS: &[&str] = &[
    "dial",
    "connect",
    "reconnect",
    "subscribe",
    "poll",
    "heartbeat",
];

/// Names that say so only of a call in the loop itself: a function of the
/// file calling them is as often doing local work (`syncDir`).
const LOOP_WORDS: &[&str] = &["fetch", "refresh", "sync"];

impl Rule for PollWithoutJitter {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let StmtKind::Loop { body } = &st.kind else {
                continue;
            };
            let f = cx.tree.stmt_func(StmtId(i as u32));
            if common::in_test(cx, f) {
                continue;
            }
            let exprs = exprs_in_block(cx.model, body);
            let calls: Vec<&Call> = exprs.iter().filter_map(|&e| cx.call(e)).collect();
            if calls.iter().any(|c| {
                c.target
                    .as_deref()
                    .is_some_and(|t| t.starts_with("math/rand") || t.starts_with("crypto/rand"))
                    || c.name.to_ascii_lowercase().contains("jitter")
                    || c.name.to_ascii_lowercase().contains("backoff")
            }) {
                continue;
            }
            // A random delay before the loop (`time.Sleep(time.Duration(
            // rand.Int()%20000) * time.Millisecond)` "to desync the
            // probing") gives each instance its own phase, which a fixed
            // period then keeps.
            if cx.body_calls(f).any(|e| {
                cx.expr(e).span.end <= st.span.start
                    && cx.call(e).is_some_and(|c| {
                        c.target.as_deref().is_some_and(|t| {
                            t.starts_with("math/rand") || t.starts_with("crypto/rand")
                        })
                    })
            }) {
                continue;
            }
            if !calls.iter().any(|c| reaches_remote(cx, c, 2)) {
                continue;
            }
            // A loop that stops at the first success is a retry, which
            // GO026 judges (with its own exemptions): not a period.
            if retry_without_backoff::retry_loop(cx, StmtId(i as u32)).is_some() {
                continue;
            }
            let Some(sleep) = exprs.iter().copied().find(|&e| {
                cx.call(e).is_some_and(|c| {
                    c.target.as_deref() == Some("time.Sleep")
                        && c.positional(0)
                            .is_some_and(|a| common::is_constant_expr(cx, a))
                }) && !leaves_after(cx, e)
            }) else {
                continue;
            };
            out.push(cx.finding(
                &META,
                cx.expr(sleep).span,
                "this loop reconnects to or polls a remote service on a fixed period with no jitter: every instance does it in lockstep, and after an outage they all hit the service at the same instants",
                "add random jitter to the period (e.g. `d + rand.N(d/2)`), and back off exponentially while the peer keeps failing",
            ));
        }
    }
}

/// The sleep is the last thing before leaving the loop (`time.Sleep(10 *
/// time.Millisecond); return StartPlay`): a pause on the way out, not the
/// loop's period.
fn leaves_after(cx: &FileCx, sleep: ExprId) -> bool {
    cx.tree
        .enclosing_stmt(sleep)
        .and_then(|s| crate::util::next_stmt(cx, s))
        .is_some_and(|n| matches!(cx.stmt(n).kind, StmtKind::Return(_) | StmtKind::Break))
}

/// The call talks to a remote service: a known network, HTTP or database
/// call, or a name that says so (`dial`, `reconnect`, `pollUpdates`). A
/// function of this file is judged by its body instead (`refreshServerDate`
/// that only formats the time), `depth` levels down.
fn reaches_remote(cx: &FileCx, c: &Call, depth: u32) -> bool {
    reaches_remote_from(cx, c, depth, &[NETWORK_WORDS, LOOP_WORDS])
}

fn reaches_remote_from(cx: &FileCx, c: &Call, depth: u32, words: &[&[&str]]) -> bool {
    // Dials, lookups, HTTP and database calls; not stream copies, which are
    // as often of a file, nor `Accept` on the program's own listener (a
    // pause after a temporary accept error is local backoff).
    if c.name == "Accept" {
        return false;
    }
    if cx.effect(c, Effect::Blocking).is_some_and(|e| {
        e.what.starts_with("waits on the network")
            || e.what.contains("HTTP")
            || e.what.contains("database")
    }) {
        return true;
    }
    if let Some(g) = cx.callee_in_file(c) {
        return depth > 0
            && cx.with_nested(g).into_iter().any(|h| {
                cx.body_calls(h)
                    .filter_map(|e| cx.call(e))
                    .any(|d| reaches_remote_from(cx, d, depth - 1, &[NETWORK_WORDS]))
            });
    }
    let n = c.name.to_ascii_lowercase();
    words
        .iter()
        .flat_map(|list| list.iter())
        .any(|w| n.starts_with(w) || n.ends_with(w))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "time"

func (w *Watcher) Run() {
	for {
		if err := w.pollUpdates(); err != nil {
			w.log(err)
		}
		time.Sleep(30 * time.Second) // expect
	}
}
"#,
        r#"
package app

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

var remoteDate atomic.Value

func updateRemoteDate(url string) {
	go func() {
		for {
			time.Sleep(time.Second) // expect
			storeRemoteDate(url)
		}
	}()
}

func redial(addr string) {
	for {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Write([]byte("ping"))
			conn.Close()
		}
		time.Sleep(time.Second) // expect
	}
}

// Named for storing, but it polls a remote service.
func storeRemoteDate(url string) {
	resp, err := http.Get(url)
	if err != nil {
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	remoteDate.Store(string(b))
}
"#,
    ],
    pass: &[
        r#"
package monitor

import (
	"math/rand"
	"net/smtp"
	"time"
)

// A random start gives every prober its own phase.
func monitor(addr string) {
	time.Sleep(time.Duration(rand.Int()%20000) * time.Millisecond)
	for {
		if c, err := smtp.Dial(addr); err == nil {
			c.Quit()
		}
		time.Sleep(30 * time.Second)
	}
}
"#,
        r#"
package app

import (
	"net"
	"net/http"
	"os"
	"time"
)

// Retries until the download succeeds: a retry loop, GO026's to judge.
func download(url string) (*http.Response, error) {
	for i := 1; ; i++ {
		res, err := http.Get(url)
		if err != nil && i > 3 {
			return nil, err
		}
		if err == nil {
			return res, nil
		}
		time.Sleep(time.Second)
	}
}

// The pause before leaving shows the choice; it is no period.
func (ui *menu) Choose(addr string) int {
	for {
		ev := ui.PollEvent()
		if ev.key == "q" {
			ui.Highlight()
			time.Sleep(10 * time.Millisecond)
			return 0
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			os.Exit(1)
		}
		ui.Send(conn, ev)
	}
}
"#,
        r#"
package app

import (
	"math/rand"
	"time"
)

func (w *Watcher) Run() {
	for {
		if err := w.pollUpdates(); err != nil {
			w.log(err)
		}
		time.Sleep(30*time.Second + time.Duration(rand.Intn(5000))*time.Millisecond)
	}
}

func (w *Watcher) Tick() {
	for {
		w.compact()
		time.Sleep(time.Minute)
	}
}
"#,
        r#"
package app

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

var serverDate atomic.Value

// One connection, dialed once; the loop only writes and reads on it.
func ping(addr string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	buf := make([]byte, 4)
	for {
		if _, err := conn.Write([]byte("ping")); err != nil {
			return err
		}
		if _, err := io.ReadFull(conn, buf); err != nil {
			return err
		}
		time.Sleep(time.Second)
	}
}

// The server's own listener: a pause after a temporary accept error is
// local backoff, nothing remote is polled.
func acceptConn(ln net.Listener) (net.Conn, error) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				time.Sleep(time.Second)
				continue
			}
			return nil, err
		}
		return c, nil
	}
}

// Named for refreshing, but it only formats the clock.
func refreshServerDate() {
	serverDate.Store(time.Now().UTC().Format(http.TimeFormat))
}

func updateServerDate() {
	refreshServerDate()
	go func() {
		for {
			time.Sleep(time.Second)
			refreshServerDate()
		}
	}()
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PollWithoutJitter);
}
