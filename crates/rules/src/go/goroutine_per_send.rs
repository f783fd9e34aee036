//! GO008: `go func() { ch <- v }()`: a goroutine per send, an unbounded
//! buffer in disguise.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct GoroutinePerSend;

pub static META: RuleMeta = RuleMeta {
    id: "GO008",
    name: "goroutine-per-send",
    category: Category::UnboundedFanout,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "A goroutine whose only job is one channel send (`go func() { ch <- v }()`), used so the sender never blocks.",
    docs: r#"
A `go` statement whose goroutine does nothing but send one already computed
value on a channel.

## Why

This is an unbounded queue built out of goroutines: when the receiver falls
behind, each send parks one more goroutine (with its stack) instead of
slowing the producer down. Memory grows without limit, values are delivered
in random order, and if the receiver stops for good every one of these
goroutines leaks.

## Example

```go
package app

func (b *Bus) Publish(e Event) {
	go func() { b.events <- e }()
}
```

## Fix

Send directly and let a bounded channel push back, or drop (and count)
what does not fit.

```go
package app

func (b *Bus) Publish(e Event) bool {
	select {
	case b.events <- e:
		return true
	default:
		b.dropped.Add(1)
		return false
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GoroutinePerSend {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for st in &cx.model.stmts {
            let StmtKind::Go(call) = st.kind else {
                continue;
            };
            let Some(g) = common::go_closure(cx, call) else {
                continue;
            };
            if common::in_test(cx, g) {
                continue;
            }
            let body = &cx.func(g).body;
            let [only] = body.as_slice() else {
                continue;
            };
            let StmtKind::Expr(e) = cx.stmt(*only).kind else {
                continue;
            };
            let ExprKind::Send { channel, value } = cx.expr(e).kind else {
                continue;
            };
            // `go func() { out <- compute() }()` does work; that is a worker,
            // not a parked send.
            if exprs_under(cx.model, value)
                .into_iter()
                .any(|x| matches!(cx.expr(x).kind, ExprKind::Call(_) | ExprKind::Recv(_)))
            {
                continue;
            }
            let ch = cx.source(cx.expr(channel).span);
            out.push(cx.finding(
                &META,
                st.span,
                format!(
                    "a goroutine per send on `{ch}`: when the receiver is slow these goroutines pile up without limit (an unbounded queue with random order), and they all leak if it stops"
                ),
                format!(
                    "send on `{ch}` directly so a full channel pushes back, or `select` with a `default` case that drops and counts the value"
                ),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

func (s *Server) onEvent(ev Event) {
	go func() { s.queue <- ev }() // expect
}

func relay(in <-chan int, out chan<- int) {
	for v := range in {
		go func(v int) { // expect
			out <- v
		}(v)
	}
}
"#],
    pass: &[r#"
package app

func (s *Server) onEvent(ev Event) {
	select {
	case s.queue <- ev:
	default:
	}
}

func fetchAll(urls []string) chan string {
	out := make(chan string, len(urls))
	for _, u := range urls {
		go func(u string) { out <- get(u) }(u)
	}
	return out
}

func watch(done chan struct{}) {
	go func() {
		wait()
		done <- struct{}{}
	}()
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GoroutinePerSend);
}
