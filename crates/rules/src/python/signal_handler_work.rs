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
    summary: "A handler installed with `signal.signal` does blocking I/O, logs, or takes a lock.",
    docs: r#"
In a function installed with `signal.signal(...)`: a blocking call (files,
sockets, HTTP, subprocess), a logging call or `print`, or taking a
`threading` lock (`with lock:` or `lock.acquire()`). A `time.sleep` takes
no lock and is left alone.

## Why

The handler runs on the main thread between two bytecodes of whatever it
was doing. If that code held a lock the handler needs (the logging
module's handler lock, a buffered file's lock, your own lock) the handler
waits for a lock its own thread holds: the process deadlocks on the
signal. Slow I/O in the handler delays everything the main thread does.

## Example

```python
import logging
import signal

log = logging.getLogger(__name__)

def on_term(signum, frame):
    log.info("shutting down")
    flush_state()

signal.signal(signal.SIGTERM, on_term)
```

## Fix

Only record that the signal arrived; do the work in the main loop.

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
            for (span, what) in v.found.into_iter().take(3) {
                out.push(cx.finding(
                    &META,
                    span,
                    format!(
                        "signal handler {} {what}: it runs between arbitrary bytecodes of the main thread, which may hold the same lock (logging and buffered files take locks), so the process can deadlock on the signal or fail with a reentrant-call error",
                        cx.func_display(f)
                    ),
                    "make the handler only set a flag or an `Event` (or `loop.call_soon_threadsafe(...)`), and do the work in the main loop",
                ));
            }
        }
    }
}

struct Work<'a, 'b> {
    cx: &'b FileCx<'a>,
    f: FuncId,
    found: Vec<(Span, String)>,
}

impl Visitor for Work<'_, '_> {
    fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
        if let StmtKind::With { items, .. } = &self.cx.stmt(id).kind {
            for it in items {
                if let Some(l) = lock_ref(self.cx, it.ctx, self.f)
                    && is_thread_lock(&l.kind)
                {
                    self.found.push((
                        self.cx.expr(it.ctx).span,
                        format!("takes the lock `{}`", l.display),
                    ));
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
        let what = if let Some(e) = cx.effect(c, Effect::Blocking) {
            Some(e.what.clone())
        } else if let Some(e) = cx.effect(c, Effect::Logging) {
            Some(e.what.clone())
        } else if c.name == "acquire"
            && c.receiver
                .and_then(|r| lock_ref(cx, r, self.f))
                .is_some_and(|l| is_thread_lock(&l.kind))
        {
            Some("acquires a lock".to_string())
        } else {
            None
        };
        if let Some(w) = what {
            self.found.push((
                cx.expr(id).span,
                format!("calls `{}`, which {w}", cx.callee_display(c)),
            ));
        }
        true
    }
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
}
