//! JS003: an async mutex held across awaited I/O.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::is_io_method_call;
use unsnarl_model::*;

pub struct LockAcrossAwait;

pub static META: RuleMeta = RuleMeta {
    id: "JS003",
    name: "mutex-held-across-io",
    category: Category::LockAcrossAwait,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async mutex is acquired (`await mutex.acquire()`/`lock()`, `runExclusive`, `lock.acquire(key, fn)`) and network or disk I/O is awaited before it is released.",
    docs: r#"
An `async-mutex`-style lock taken with `await lock.acquire()` (or
`lock.lock()`), followed by an awaited I/O call (`fetch`, a database or HTTP
client, `fs/promises`) before the matching `release()`; or a critical
section passed as a callback (`mutex.runExclusive(async () => ...)`,
`lock.acquire(key, async () => ...)` of `async-lock`) that awaits I/O.

## Why

While the lock is held across the I/O, every other caller that needs it
queues behind the full network round trip: the lock serializes the service
on its slowest dependency, and a hung request holds it forever. If the
awaited work itself needs the lock (directly or through a callback), it
never completes.

## Example

```javascript
import { Mutex } from "async-mutex";

const mutex = new Mutex();

export async function refresh() {
  const release = await mutex.acquire();
  const res = await fetch("https://api.example/token");
  state.token = await res.json();
  release();
}
```

## Fix

Do the I/O without the lock; take the lock only to publish the result (or
share one in-flight promise instead of locking).

```javascript
import { Mutex } from "async-mutex";

const mutex = new Mutex();

export async function refresh() {
  const res = await fetch("https://api.example/token");
  const token = await res.json();
  const release = await mutex.acquire();
  try {
    state.token = token;
  } finally {
    release();
  }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for LockAcrossAwait {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if super::common::skip_file(cx) {
            return;
        }
        check_callbacks(cx, out);
        for fid in cx.model.function_ids() {
            if !cx.func(fid).is_async {
                continue;
            }
            let exprs = cx.body_exprs(fid);
            for (i, &e) in exprs.iter().enumerate() {
                let Some(lock) = acquired_lock(cx, e) else {
                    continue;
                };
                // Scan forward (source order) for awaited I/O before a release.
                for &later in &exprs[i + 1..] {
                    if is_release(cx, later, &lock) {
                        break;
                    }
                    if let ExprKind::Await(inner) = cx.expr(later).kind
                        && awaits_io(cx, inner)
                    {
                        if own_connection(cx, &lock, inner) {
                            break;
                        }
                        let mut f = cx.finding(
                            &META,
                            cx.expr(e).span,
                            format!(
                                "`{lock}` is held while awaiting I/O (`{}`): every other caller waits for the whole round trip, and a hung peer holds the lock forever",
                                cx.snippet(cx.expr(inner).span)
                            ),
                            "do the I/O before acquiring (or after releasing) the lock and hold it only to read or publish state; release in a `finally`",
                        );
                        f.related.push(Related {
                            file: None,
                            span: cx.expr(later).span,
                            message: "awaits I/O with the lock held".into(),
                        });
                        out.push(f);
                        break;
                    }
                }
            }
        }
    }
}

/// `mutex.runExclusive(async () => ...)` / `lock.acquire(key, async () =>
/// ...)` whose callback awaits I/O.
fn check_callbacks(cx: &FileCx, out: &mut Vec<Finding>) {
    for (e, c) in cx.calls_named(&["runExclusive", "acquire"]) {
        let ex = cx.expr(e);
        let Some(recv) = c.receiver else { continue };
        let cb = match c.name.as_str() {
            "runExclusive" => c.positional(0),
            "acquire" => c.positional(1),
            _ => None,
        };
        let Some(f) = cb.and_then(|a| super::common::callback_fn(cx, a)) else {
            continue;
        };
        let Some(lock) = lock_name(cx, recv) else {
            continue;
        };
        let io =
            cx.body_exprs(f).iter().copied().find(
                |&x| matches!(cx.expr(x).kind, ExprKind::Await(inner) if awaits_io(cx, inner)),
            );
        let Some(io) = io else { continue };
        let mut f = cx.finding(
            &META,
            ex.span,
            format!(
                "`{lock}` is held while this critical section awaits I/O (`{}`): every other caller waits for the whole round trip, and a hung peer holds the lock forever",
                cx.snippet(cx.expr(io).span)
            ),
            "do the I/O outside the critical section and keep only the read/update of shared state inside it",
        );
        f.related.push(Related {
            file: None,
            span: cx.expr(io).span,
            message: "awaits I/O with the lock held".into(),
        });
        out.push(f);
    }
}

/// The name of an async lock receiver (typed by a lock constructor, or
/// named like one).
fn lock_name(cx: &FileCx, recv: ExprId) -> Option<String> {
    let name = cx.model.dotted(recv)?;
    let typed = cx
        .sema
        .type_of(recv)
        .and_then(|t| cx.kb.find(Effect::Lock, Some(t), ""))
        .is_some();
    let lower = name.to_ascii_lowercase();
    let named = lower.ends_with("mutex")
        || lower.ends_with("lock")
        || lower.ends_with("semaphore")
        || lower.ends_with("sem");
    (typed || named).then_some(name)
}

/// A lock of the instance (`this.lock`) held while the I/O goes over a
/// connection or socket: the object wraps one connection that carries one
/// exchange at a time, and the lock exists to serialize exactly that round
/// trip.
fn own_connection(cx: &FileCx, lock: &str, io: ExprId) -> bool {
    if !lock.starts_with("this.") {
        return false;
    }
    let text = cx.source(cx.expr(io).span);
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .any(|w| {
            let w = w.to_ascii_lowercase();
            w.ends_with("connection") || w == "conn" || w.ends_with("socket")
        })
}

/// `await X.acquire()` / `await X.lock()` on an async lock: the lock's name.
fn acquired_lock(cx: &FileCx, e: ExprId) -> Option<String> {
    let ExprKind::Await(inner) = cx.expr(e).kind else {
        return None;
    };
    let c = cx.call(cx.model.strip(inner))?;
    if !matches!(c.name.as_str(), "acquire" | "lock" | "waitForUnlock") {
        return None;
    }
    if !c.args.is_empty() {
        return None;
    }
    lock_name(cx, c.receiver?)
}

/// `release()`, `X.release()`, `X.unlock()`.
fn is_release(cx: &FileCx, e: ExprId, lock: &str) -> bool {
    let Some(c) = cx.call(e) else { return false };
    match c.receiver {
        None => c.name == "release" || c.name == "unlock",
        Some(r) => {
            matches!(c.name.as_str(), "release" | "unlock")
                && cx.model.dotted(r).as_deref() == Some(lock)
        }
    }
}

fn awaits_io(cx: &FileCx, inner: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(inner)) else {
        return false;
    };
    if let Some(e) = cx.effect(c, Effect::AsyncApi) {
        return e.kind.as_deref() == Some("io");
    }
    // Any awaited method of a network or database client.
    const CLIENTS: &[&str] = &[
        "ioredis",
        "redis.",
        "pg.",
        "mysql2",
        "mongodb.",
        "@prisma/client.",
        "amqplib.",
        "kafkajs.",
        "@aws-sdk/",
        "axios",
        "undici",
        "got",
        "node-fetch",
        "ky",
        "fs/promises.",
        "fs.promises.",
    ];
    if let Some(t) = c.target.as_deref()
        && CLIENTS.iter().any(|p| t.starts_with(p))
    {
        return true;
    }
    is_io_method_call(c)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
import { Mutex } from "async-mutex";
const lock = new Mutex();

async function update(db, id) {
  const release = await lock.acquire(); // expect
  const row = await db.query("select * from t where id = $1", [id]);
  release();
  return row;
}
"#,
        r#"
import { Mutex } from "async-mutex";
import AsyncLock from "async-lock";
import fs from "node:fs";
const mutex = new Mutex();
const lock = new AsyncLock();

export function refresh(key) {
  return mutex.runExclusive(async () => { // expect
    const res = await fetch(`https://api.example/${key}`);
    cache.set(key, await res.json());
  });
}

export function save(key, value) {
  return lock.acquire(key, async () => { // expect
    await fs.promises.writeFile(`/data/${key}`, value);
  });
}
"#,
    ],
    pass: &[
        r#"
import { Mutex } from "async-mutex";

// One connection carries one statement at a time: the lock serializes them.
class SerialSession {
  constructor(connection) {
    this.connection = connection;
    this.lock = new Mutex();
  }

  async run(sql, params) {
    const release = await this.lock.acquire();
    try {
      return await this.connection.query(sql, params);
    } finally {
      release();
    }
  }
}
"#,
        r#"
import { Mutex } from "async-mutex";
const lock = new Mutex();
let counter = 0;

async function bump() {
  const release = await lock.acquire();
  counter += 1;
  release();
  await fetch("/notify");
}
"#,
        r#"
import { Mutex } from "async-mutex";
const mutex = new Mutex();

export async function refresh(key) {
  const res = await fetch(`https://api.example/${key}`);
  const value = await res.json();
  await mutex.runExclusive(() => {
    cache.set(key, value);
  });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LockAcrossAwait);
}
