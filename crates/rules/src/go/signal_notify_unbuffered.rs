//! GO030: `signal.Notify` on an unbuffered channel.

use super::common::{self, ChanCap};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct SignalNotifyUnbuffered;

pub static META: RuleMeta = RuleMeta {
    id: "GO030",
    name: "signal-notify-unbuffered",
    category: Category::SignalHandlerWork,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`signal.Notify(c, ...)` where `c` is an unbuffered channel: signals arriving while nobody is receiving are dropped.",
    docs: r#"
`os/signal.Notify` is given a channel made without a buffer.

## Why

The signal package never blocks when delivering: if the channel cannot take
the value right now, the signal is dropped. With an unbuffered channel any
signal that arrives while the program is not parked in the receive (still
starting up, busy handling the previous signal) is lost, so a `SIGTERM`
can be ignored and the process killed without a graceful shutdown.

## Example

```go
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal)
	signal.Notify(sigs, syscall.SIGTERM)
	start()
	<-sigs
	shutdown()
}
```

## Fix

```go
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	start()
	<-sigs
	shutdown()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SignalNotifyUnbuffered {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (id, c) in cx.calls_to(&["os/signal.Notify"]) {
            let e = cx.expr(id);
            let Some(ch) = c.positional(0) else { continue };
            let unbuffered = match cx.call(ch) {
                Some(mk) => {
                    mk.target.as_deref() == Some("make")
                        && common::makes_chan(cx, mk)
                        && mk
                            .positional(1)
                            .is_none_or(|n| cx.model.int_value(n) == Some(0))
                }
                None => cx.model.name_of(ch).is_some_and(|n| {
                    common::local_chan(cx, cx.func_of(id), n)
                        .is_some_and(|m| m.cap == ChanCap::Unbuffered)
                }),
            };
            if !unbuffered {
                continue;
            }
            let name = cx.source(cx.expr(ch).span);
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{name}` is unbuffered, and `signal.Notify` never blocks: a signal arriving while nobody is waiting in the receive is dropped (a lost SIGTERM means no graceful shutdown)"
                ),
                "give the channel a buffer of at least 1: `make(chan os.Signal, 1)`",
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package main

import (
	"os"
	"os/signal"
)

func main() {
	c := make(chan os.Signal)
	signal.Notify(c, os.Interrupt) // expect
	<-c
}
"#],
    pass: &[r#"
package main

import (
	"os"
	"os/signal"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
}

func watch(c chan os.Signal) {
	signal.Notify(c, os.Interrupt)
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SignalNotifyUnbuffered);
}
