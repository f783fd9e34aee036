//! PY034: I/O, logging or locking inside a raw signal handler.

use crate::context::FileCx;
use crate::python::common::{is_thread_lock, local_callable, lock_ref};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

pub struct SignalHandlerWork;

pub static META: RuleMeta = RuleMeta {
    id: "PY034",
    name: "signal-handler-does-work",
    category: Category::SignalHandlerWork,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "A handler installed with `signal.signal` takes a lock, does blocking I/O, or writes output.",
    docs: r#"
In a function installed with `signal.signal(...)`: taking a `threading`
lock (`with lock:` or `lock.acquire()`), a blocking call (files, sockets,
HTTP, subprocess, joins), or writing output with `print` or the `logging`
module. A `time.sleep` takes no lock and is left alone, and so is output
inside a `try` of the handler that catches `RuntimeError` (or `Exception`,
or everything): a reentrant write fails there, not in the interrupted
code. Taking a lock and
blocking I/O are reported at medium severity; output alone at low.

## Why

Python runs the handler on the main thread, between two bytecodes of
whatever that thread was doing. If the interrupted code holds a lock the
handler takes (a plain `threading.Lock`, or a buffered file's internal
lock), the handler waits for its own thread: the process hangs on the
signal. Blocking I/O in the handler stops the main thread wherever it was
until the I/O finishes.

Output is the milder case. The logging module's locks are re-entrant, so
a log call cannot hang on them; but when the signal interrupts a write
that was blocked on the same stream (a slow pipe or terminal), the
handler's `print` or log record re-enters the stream's buffer and fails
with `RuntimeError: reentrant call`. A log record written to standard
error fails the same way inside `handleError`. The error is raised into
the interrupted code, where an `except Exception:` can catch it, so a
shutdown signal can be lost. Rare, which is why it is reported at low
severity.

## Example

```python
import signal
import threading

state_lock = threading.Lock()

def on_term(signum, frame):
    with state_lock:
        flush_state()

signal.signal(signal.SIGTERM, on_term)
```

## Fix

Only record that the signal arrived; do the work, and the logging, in the
main loop.

```python
import signal
import threading

stop = threading.Event()

def on_term(signum, frame):
    stop.set()

signal.signal(signal.SIGTERM, on_term)
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SignalHandlerWork {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut handlers: HashSet<FuncId> = HashSet::new();
        for (id, c) in cx.calls_to(&["signal.signal"]) {
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            if let Some(h) = c.positional(1).or_else(|| c.kwarg("handler"))
                && let Some(f) = local_callable(cx, h)
                && !cx.func(f).is_test
            {
                handlers.insert(f);
            }
        }
        let mut handlers: Vec<FuncId> = handlers.into_iter().collect();
        handlers.sort();
        for f in handlers {
            let mut v = Work {
                cx,
                f,
                found: Vec::new(),
            };
            walk_block(cx.model, &cx.func(f).body, &mut v);
            // The hazards that hang the process come first when a handler
            // has more than three (the sort is stable: in source order).
            v.found.sort_by_key(|h| h.kind);
            for hit in v.found.into_iter().take(3) {
                let (why, fix) = match hit.kind {
                    Hazard::Lock => (
                        "it runs on the main thread between two bytecodes of whatever that thread was doing, and if that code holds the lock the handler waits for its own thread: the process hangs on the signal",
                        "make the handler only set a flag or an `Event` (or `loop.call_soon_threadsafe(...)`), and take the lock in the main loop",
                    ),
                    Hazard::Blocking => (
                        "it runs on the main thread between two bytecodes of whatever that thread was doing, which stops there until the I/O finishes (and a buffered file the interrupted code is writing is still locked)",
                        "make the handler only set a flag or an `Event` (or `loop.call_soon_threadsafe(...)`), and do the I/O in the main loop",
                    ),
                    Hazard::Output => (
                        "if the signal interrupts a write blocked on the same stream, this write re-enters the stream's buffer and fails with `RuntimeError: reentrant call`, raised into the interrupted code (where an `except Exception:` can swallow the shutdown)",
                        "set a flag or an `Event` in the handler and print or log from the main loop when it sees it",
                    ),
                };
                let mut finding = cx.finding(
                    &META,
                    hit.span,
                    format!("signal handler {} {}: {why}", cx.func_display(f), hit.what),
                    fix,
                );
                if hit.kind == Hazard::Output {
                    finding.severity = Severity::Low;
                }
                out.push(finding);
            }
        }
    }
}

/// What a call in the handler risks, which sets the message and severity.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Hazard {
    /// Takes a thread lock the interrupted code may hold.
    Lock,
    /// Blocks the main thread on I/O.
    Blocking,
    /// Writes to a stream the interrupted code may be writing.
    Output,
}

struct Hit {
    span: Span,
    what: String,
    kind: Hazard,
}

struct Work<'a, 'b> {
    cx: &'b FileCx<'a>,
    f: FuncId,
    found: Vec<Hit>,
}

impl Visitor for Work<'_, '_> {
    fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
        if let StmtKind::With { items, .. } = &self.cx.stmt(id).kind {
            for it in items {
                if let Some(l) = lock_ref(self.cx, it.ctx, self.f)
                    && is_thread_lock(&l.kind)
                {
                    self.found.push(Hit {
                        span: self.cx.expr(it.ctx).span,
                        what: format!("takes the lock `{}`", l.display),
                        kind: Hazard::Lock,
                    });
                }
            }
        }
        true
    }

    fn enter_expr(&mut self, _m: &FileModel, id: ExprId) -> bool {
        let cx = self.cx;
        let Some(c) = cx.call(id) else { return true };
        // A sleep takes no lock the interrupted code could hold.
        if c.target.as_deref() == Some("time.sleep") {
            return true;
        }
        let hit = if let Some(e) = cx.effect(c, Effect::Blocking) {
            Some((e.what.clone(), Hazard::Blocking))
        } else if let Some(e) = cx.effect(c, Effect::Logging) {
            Some((e.what.clone(), Hazard::Output))
        } else if c.name == "acquire"
            && c.receiver
                .and_then(|r| lock_ref(cx, r, self.f))
                .is_some_and(|l| is_thread_lock(&l.kind))
        {
            Some(("acquires a lock".to_string(), Hazard::Lock))
        } else {
            None
        };
        // Output inside the handler's own `try` whose handler catches
        // `RuntimeError` (or anything wider): a reentrant write fails in
        // the handler, not in the code it interrupted.
        if matches!(hit, Some((_, Hazard::Output)))
            && crate::util::in_try_body_catching(cx, id, catches_reentrant_write)
        {
            return true;
        }
        if let Some((w, kind)) = hit {
            self.found.push(Hit {
                span: cx.expr(id).span,
                what: format!("calls `{}`, which {w}", cx.callee_display(c)),
                kind,
            });
        }
        true
    }
}

/// What catches the `RuntimeError` of a re-entered stream write.
fn catches_reentrant_write(t: &str) -> bool {
    matches!(
        t.strip_prefix("builtins.").unwrap_or(t),
        "RuntimeError" | "Exception" | "BaseException"
    )
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import logging
import signal
import threading

log = logging.getLogger(__name__)
state_lock = threading.Lock()

def on_term(signum, frame):
    log.info("shutting down")  # expect
    with state_lock:  # expect
        save()

signal.signal(signal.SIGTERM, on_term)
"#,
        r#"
import signal

class Server:
    def install(self):
        signal.signal(signal.SIGHUP, self.reload)

    def reload(self, signum, frame):
        with open(self.path) as f:  # expect
            self.config = f.read()
"#,
    ],
    pass: &[
        r#"
import signal
import sys
import time

def on_term(signum, frame):
    # Give in-flight work a moment, then leave: no lock is taken.
    time.sleep(0.1)
    sys.exit(0)

signal.signal(signal.SIGTERM, on_term)
"#,
        r#"
import logging
import signal
import threading

log = logging.getLogger(__name__)
stop = threading.Event()

def on_term(signum, frame):
    stop.set()

signal.signal(signal.SIGTERM, on_term)

def main():
    stop.wait()
    log.info("shutting down")
"#,
        r#"
import os
import signal

def on_term(signum, frame):
    try:
        print("shutting down", flush=True)
    except Exception:
        pass
    os._exit(0)

signal.signal(signal.SIGTERM, on_term)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SignalHandlerWork);

    #[test]
    fn says_what_the_call_does_as_the_knowledge_table_puts_it() {
        let found = crate::testing::messages(
            &SignalHandlerWork,
            Language::Python,
            r#"
import logging
import signal

log = logging.getLogger(__name__)

def on_int(signum, frame):
    print("interrupted")

def on_term(signum, frame):
    log.warning("terminated")

signal.signal(signal.SIGINT, on_int)
signal.signal(signal.SIGTERM, on_term)
"#,
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        crate::testing::message_with(
            &found,
            "signal handler `on_int` calls `builtins.print`, which prints to standard output",
        );
        crate::testing::message_with(&found, "which writes log output (handlers");
    }

    #[test]
    fn output_alone_is_low_and_a_lock_comes_first() {
        let found: Vec<Finding> = crate::testing::run_example(
            &SignalHandlerWork,
            Language::Python,
            r#"
import logging
import signal
import threading

log = logging.getLogger(__name__)
state_lock = threading.Lock()

def on_term(signum, frame):
    log.info("one")
    log.info("two")
    print("three")
    with state_lock:
        save()

signal.signal(signal.SIGTERM, on_term)
"#,
        )
        .0
        .into_iter()
        .map(|(_, f)| f)
        .collect();
        assert_eq!(found.len(), 3, "{found:#?}");
        let lock: Vec<_> = found
            .iter()
            .filter(|f| f.message.contains("takes the lock `state_lock`"))
            .collect();
        assert_eq!(lock.len(), 1, "{found:#?}");
        assert_eq!(lock[0].severity, Severity::Medium);
        assert!(lock[0].message.contains("the process hangs on the signal"));
        for f in found
            .iter()
            .filter(|f| !f.message.contains("takes the lock"))
        {
            assert_eq!(f.severity, Severity::Low, "{f:#?}");
            assert!(f.message.contains("reentrant call"), "{f:#?}");
        }
    }
}
