//! GO032: a reconnect or poll loop on a fixed period with no jitter.

use super::common;
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
reconnects, subscribes or polls (by name, or a known network call) and
waits with `time.Sleep` of a constant duration, with no random component
anywhere in the loop.

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

const REMOTE_WORDS: &[&str] = &[
    "dial",
    "connect",
    "reconnect",
    "subscribe",
    "poll",
    "fetch",
    "refresh",
    "sync",
    "heartbeat",
];

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
            let remote = calls.iter().any(|c| {
                let n = c.name.to_ascii_lowercase();
                REMOTE_WORDS
                    .iter()
                    .any(|w| n.starts_with(w) || n.ends_with(w))
                    || cx.effect(c, Effect::Blocking).is_some_and(|e| {
                        e.what.contains("network")
                            || e.what.contains("HTTP")
                            || e.what.contains("database")
                    })
            });
            if !remote {
                continue;
            }
            let Some(sleep) = exprs.iter().copied().find(|&e| {
                cx.call(e).is_some_and(|c| {
                    c.target.as_deref() == Some("time.Sleep")
                        && c.positional(0)
                            .is_some_and(|a| common::is_constant_expr(cx, a))
                })
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

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
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
"#],
    pass: &[r#"
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
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PollWithoutJitter);
}
