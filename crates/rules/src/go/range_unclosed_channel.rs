//! GO005: `for range ch` over a channel that no path closes.

use super::common::{self, ChanUse};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct RangeUnclosedChannel;

pub static META: RuleMeta = RuleMeta {
    id: "GO005",
    name: "range-over-unclosed-channel",
    category: Category::ChannelMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`for v := range ch` over a local channel that is never closed and has no other way out of the loop.",
    docs: r#"
A `for ... range ch` loop over a channel made in the same function, when
nothing ever calls `close(ch)` (the channel is not handed to any other
function either) and the loop body has no `break` or `return`.

## Why

A range over a channel ends only when the channel is closed. When no code
closes it, the loop receives every value and then waits forever for one
more: the function never returns (or the goroutine running it leaks), and
whoever waits for it hangs too.

## Example

```go
package app

func Sum(parts [][]int) int {
	results := make(chan int)
	for _, p := range parts {
		go func(p []int) { results <- add(p) }(p)
	}
	total := 0
	for r := range results {
		total += r
	}
	return total
}
```

## Fix

Close the channel once every producer is done (a `sync.WaitGroup` and a
closer goroutine), or receive exactly as many values as were sent.

```go
package app

func Sum(parts [][]int) int {
	results := make(chan int)
	for _, p := range parts {
		go func(p []int) { results <- add(p) }(p)
	}
	total := 0
	for range parts {
		total += <-results
	}
	return total
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RangeUnclosedChannel {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let StmtKind::For { iter, body, .. } = &st.kind else {
                continue;
            };
            let Some(name) = cx.model.name_of(*iter) else {
                continue;
            };
            let s = StmtId(i as u32);
            let f = cx.tree.stmt_func(s);
            let Some(made) = common::local_chan(cx, f, name) else {
                continue;
            };
            if has_exit(cx, body) {
                continue;
            }
            let uses = common::name_uses(cx, made.func, name);
            let closed_or_escapes = uses
                .iter()
                .any(|&u| matches!(common::chan_use(cx, u), ChanUse::Close | ChanUse::Escape));
            if closed_or_escapes {
                continue;
            }
            out.push(cx.finding(
                &META,
                st.span,
                format!(
                    "nothing ever closes `{name}`, so this range never ends: after the last value it waits forever and {} never returns",
                    cx.func_display(f)
                ),
                format!(
                    "close `{name}` once all senders are done (`wg.Wait(); close({name})` in a closer goroutine, or `defer close({name})` in the single producer), or receive a known number of values instead of ranging"
                ),
            ));
        }
    }
}

/// A `break`, `return` or no-return call in the loop body (not counting
/// those of nested loops and selects' own breaks).
fn has_exit(cx: &FileCx, body: &Block) -> bool {
    common::stmts_in(cx.model, body).into_iter().any(|s| {
        matches!(cx.stmt(s).kind, StmtKind::Return(_))
            // A plain break inside a nested switch/select leaves only that
            // statement; be generous and count any break.
            || matches!(cx.stmt(s).kind, StmtKind::Break)
            || matches!(&cx.stmt(s).kind, StmtKind::Expr(e)
                if cx.call(*e).is_some_and(common::is_noreturn_call))
            || cx.source(cx.stmt(s).span).starts_with("goto")
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

func Collect(urls []string) []string {
	out := make(chan string)
	for _, u := range urls {
		go func(u string) { out <- get(u) }(u)
	}
	var bodies []string
	for b := range out { // expect
		bodies = append(bodies, b)
	}
	return bodies
}
"#,
        r#"
package app

func Start() {
	jobs := make(chan Job, 16)
	go func() {
		for j := range jobs { // expect
			j.Run()
		}
	}()
	jobs <- Job{}
}
"#,
    ],
    pass: &[
        r#"
package app

import "sync"

func Collect(urls []string) []string {
	out := make(chan string)
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func(u string) { defer wg.Done(); out <- get(u) }(u)
	}
	go func() { wg.Wait(); close(out) }()
	var bodies []string
	for b := range out {
		bodies = append(bodies, b)
	}
	return bodies
}
"#,
        r#"
package app

func Worker(jobs chan Job) {
	for j := range jobs {
		j.Run()
	}
}

func Start(n int) {
	jobs := make(chan Job)
	go feed(jobs)
	for j := range jobs {
		j.Run()
	}
	results := make(chan int)
	go func() { results <- 1 }()
	for r := range results {
		if r > 0 {
			break
		}
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RangeUnclosedChannel);
}
