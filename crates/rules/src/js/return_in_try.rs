//! JS009: `return promise` (without `await`) inside `try` of an async
//! function.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct ReturnInTry;

pub static META: RuleMeta = RuleMeta {
    id: "JS009",
    name: "return-without-await-in-try",
    category: Category::MissingAwait,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async function returns a promise from inside `try` without `await`: its rejection escapes the `catch`, and the `finally` runs before the work is done.",
    docs: r#"
`return promiseCall()` inside the `try` block of an async function whose
`try` has a `catch` or a `finally`. With only a `catch`, a call of an
async function of the file whose promise cannot reject (every await in it
caught, nothing thrown: a retry calling itself, say) is left alone: there
is nothing for the `catch` to miss. So is a call of the function every
`catch` also ends by returning (`return this.complete(true)` in the `try`,
`return this.complete(false)` in the `catch`): awaiting it would run that
finisher twice when it fails. Nor is a function that returns a call of
itself (a retry after re-authenticating): the inner call's own `catch`
handles what it throws, and awaiting it would handle the error twice.
Nor is a promise that cannot reject under a `catch` alone
(`Promise.resolve()`, a chain ending in `.catch(handler)`), or an
already settled `Promise.resolve(value)` whatever guards it.

## Why

Returning a promise from an async function does not wait for it inside the
`try`: the function leaves the `try` at once, and the promise settles later.
If it rejects, the `catch` never sees it (the fallback, the retry, the error
translation are skipped), and a `finally` that releases a lock, closes a
connection or stops a timer runs while the operation is still using them.

## Example

```javascript
async function loadProfile(id) {
  try {
    return fetch(`/api/profiles/${id}`);
  } catch (err) {
    return DEFAULT_PROFILE;
  }
}
```

## Fix

`return await` inside `try`.

```javascript
async function loadProfile(id) {
  try {
    return await fetch(`/api/profiles/${id}`);
  } catch (err) {
    return DEFAULT_PROFILE;
  }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ReturnInTry {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if !cx.func(f).is_async {
                continue;
            }
            for s in common::stmts_of(cx, f) {
                let StmtKind::Return(Some(v)) = cx.stmt(s).kind else {
                    continue;
                };
                let Some(why) = common::promise_expr(cx, v) else {
                    continue;
                };
                // `return res.json()` after the request succeeded: only the
                // body read is left, and the idiom is everywhere.
                if cx
                    .call(cx.model.strip(v))
                    .and_then(|c| c.target.as_deref())
                    .is_some_and(|t| t.starts_with("Response."))
                {
                    continue;
                }
                let Some(guard) = guarding_try(cx, s) else {
                    continue;
                };
                // A promise that cannot reject (`Promise.resolve()`, a chain
                // ending in `.catch(handler)`) gives a `catch` nothing to
                // miss; `Promise.resolve(value)` has no work left for a
                // `finally` to run before either.
                let returned = cx.call(cx.model.strip(v));
                if returned.is_some_and(|c| {
                    cannot_reject(cx, c)
                        && (guard == CATCH_ONLY || c.target.as_deref() == Some("Promise.resolve"))
                }) {
                    continue;
                }
                // With only a `catch` to miss: a function of the file whose
                // promise cannot reject (its awaits all caught, often this
                // very function retrying) gives the `catch` nothing to see.
                if guard == CATCH_ONLY
                    && cx.call(cx.model.strip(v)).is_some_and(|c| {
                        super::rejection::guarded_callee(cx, c)
                            || catch_finishes_alike(cx, s, c)
                            || super::rejection::local_callee(cx, c) == Some(f)
                    })
                {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.stmt(s).span,
                    format!(
                        "`{}` returns a promise ({why}) from inside `try` without awaiting it: the function leaves the `try` at once, so a rejection escapes the {guard} runs before the work finishes",
                        cx.snippet(cx.expr(v).span)
                    ),
                    "write `return await ...` inside `try` blocks",
                ));
            }
        }
    }
}

/// The promise `c` gives cannot reject: see
/// [`crate::index::js_settles_without_rejecting`], with a handler that
/// does not throw again (`.catch(err => { err.status = 400; throw err })`
/// rejects after all) and is written out, so that can be seen.
fn cannot_reject(cx: &FileCx, c: &Call) -> bool {
    if !crate::index::js_settles_without_rejecting(cx.model, c) {
        return false;
    }
    let handler = match (c.target.as_deref(), c.name.as_str()) {
        (Some(t), _) if t.starts_with("Promise") => return true,
        (_, "catch") => c.positional(0),
        (_, "then") => c.positional(1),
        _ => return true,
    };
    handler
        .and_then(|h| common::callback_fn(cx, h))
        .is_some_and(|f| {
            !cx.body_stmts(f)
                .iter()
                .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Raise(_)))
                && !cx.body_calls(f).any(|e| {
                    cx.call(e)
                        .is_some_and(|k| k.target.as_deref() == Some("Promise.reject"))
                })
        })
}

/// Every `catch` of the `try` around `s` ends by returning a call of the
/// same function (`try { ..; return this.complete(true) } catch (e) {
/// this.error = e; return this.complete(false) }`): that call is the
/// finisher of both paths, and awaiting it inside the `try` would run it a
/// second time, on the failure path, when it fails. Its rejection reaches
/// the caller either way.
fn catch_finishes_alike(cx: &FileCx, s: StmtId, c: &Call) -> bool {
    let Some(callee) = cx.model.dotted(c.func) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).find_map(|a| match &cx.stmt(a).kind {
        StmtKind::Try { body, handlers, .. } if common::block_contains(cx, body, s) => Some(handlers),
        _ => None,
    })
    .is_some_and(|handlers| {
        !handlers.is_empty()
            && handlers.iter().all(|h| {
                h.body.last().is_some_and(|&l| {
                    matches!(cx.stmt(l).kind, StmtKind::Return(Some(r))
                        if cx.call(cx.model.strip(r))
                            .is_some_and(|k| cx.model.dotted(k.func).as_deref() == Some(callee.as_str())))
                })
            })
    })
}

const CATCH_ONLY: &str = "`catch` (its handling never happens), and nothing";

/// The `try` whose body holds `s`, described by what it misses.
fn guarding_try(cx: &FileCx, s: StmtId) -> Option<&'static str> {
    for a in cx.tree.stmt_ancestors(s) {
        if let StmtKind::Try {
            body,
            handlers,
            finally,
            ..
        } = &cx.stmt(a).kind
            && common::block_contains(cx, body, s)
        {
            return Some(match (handlers.is_empty(), finally.is_some()) {
                (false, true) => "`catch`, and the `finally`",
                (false, false) => CATCH_ONLY,
                (true, true) => "error handling, and the `finally`",
                (true, false) => continue,
            });
        }
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
async function withConn(pool, sql) {
  const conn = await pool.connect();
  try {
    return conn.query(sql); // expect
  } finally {
    conn.release();
  }
}

async function load(id) {
  try {
    if (id) {
      return fetch(`/api/${id}`); // expect
    }
  } catch (e) {
    return null;
  }
}
"#,
        r#"
const { request } = require("undici");

async function probe(url, retries = 3) {
  try {
    const res = await request(url, { method: "HEAD" });
    if (res.statusCode === 429 && retries > 0) {
      await new Promise((r) => setTimeout(r, 1000));
      return fetchHead(url); // expect
    }
    return { url, ok: res.statusCode === 200 };
  } catch (err) {
    return { url, ok: false, error: err.message };
  }
}

async function fetchHead(url) {
  const res = await request(url, { method: "HEAD" });
  return { url, ok: res.statusCode === 200 };
}
"#,
        r#"
class Worker {
  async perform(job) {
    try {
      const result = await job.run();
      return this.complete(true, result); // expect
    } catch (err) {
      this.error = err;
      return this.retryLater(job);
    }
  }

  async complete(ok, result) {
    await this.queue.ack(this.job, ok, result);
  }
}
"#,
        r#"
class Transport {
  async send(message, retried = false) {
    try {
      const res = await fetch(this.url, { method: "POST", body: JSON.stringify(message) });
      if (res.status === 401 && !retried) {
        await this.reauthenticate();
        return this.sendWithToken(message); // expect
      }
      if (!res.ok) throw new Error(`send failed: ${res.status}`);
    } catch (error) {
      this.onerror?.(error);
      throw error;
    }
  }

  async sendWithToken(message) {
    const res = await fetch(this.url, { method: "POST", headers: { authorization: this.token }, body: JSON.stringify(message) });
    if (!res.ok) throw new Error(`send failed: ${res.status}`);
  }
}
"#,
        r#"
// `Promise.resolve(load(key))` adopts the call's promise, which may reject.
async function read(key) {
  try {
    return Promise.resolve(load(key)); // expect
  } catch (err) {
    return fallback;
  }
}
"#,
        r#"
// The handler throws again: the chain still rejects, past the audit.
async function enable(mod, promises) {
  try {
    return Promise.all(promises).then(() => info(mod)).catch((err) => { // expect
      err.status = 400;
      throw err;
    });
  } catch (error) {
    audit(mod, error);
    throw error;
  }
}
"#,
    ],
    pass: &[
        r#"
class Worker {
  async perform(job) {
    try {
      const result = await job.run();
      return this.complete(true, result);
    } catch (err) {
      this.error = err;
      return this.complete(false);
    }
  }

  async complete(ok, result) {
    await this.queue.ack(this.job, ok, result);
  }
}
"#,
        r#"
const { request } = require("undici");

async function probe(url, retries = 3) {
  try {
    const res = await request(url, { method: "HEAD" });
    if (res.statusCode === 429 && retries > 0) {
      await new Promise((r) => setTimeout(r, 1000));
      return probe(url, retries - 1);
    }
    return { url, ok: res.statusCode === 200 };
  } catch (err) {
    return { url, ok: false, error: err.message };
  }
}

async function fetchHead(url) {
  const res = await request(url, { method: "HEAD" });
  return { url, ok: res.statusCode === 200 };
}
"#,
        r#"
async function withConn(pool, sql) {
  const conn = await pool.connect();
  try {
    return await conn.query(sql);
  } finally {
    conn.release();
  }
}

async function load(id) {
  try {
    const res = await fetch(`/api/${id}`);
    return res.json();
  } catch (e) {
    return null;
  }
  return fetch("/fallback");
}

function plain(id) {
  try {
    return fetch(`/api/${id}`);
  } catch (e) {
    return null;
  }
}
"#,
        r#"
class Transport {
  async send(message, retried = false) {
    try {
      const res = await fetch(this.url, { method: "POST", body: JSON.stringify(message) });
      if (res.status === 401 && !retried) {
        await this.reauthenticate();
        return this.send(message, true);
      }
      if (!res.ok) throw new Error(`send failed: ${res.status}`);
    } catch (error) {
      this.onerror?.(error);
      throw error;
    }
  }
}
"#,
        r#"
// Nothing to miss: the promise returned cannot reject.
async function notify(data) {
  try {
    const res = await fetch(url, { method: "POST", body: JSON.stringify(data) });
    if (isNotification(data)) {
      return Promise.resolve();
    }
    return parse(await res.text());
  } catch (err) {
    return Promise.reject(err);
  }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ReturnInTry);
}
