//! PY028: tenacity `@retry` without a wait or a stop.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct TenacityUnbounded;

pub static META: RuleMeta = RuleMeta {
    id: "PY028",
    name: "retry-decorator-without-wait-or-stop",
    category: Category::RetryStorm,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "tenacity's `@retry` is used bare or without `wait=` or `stop=`: immediate retries, forever.",
    docs: r#"
A function decorated with tenacity's `@retry` (bare, or called without a
`wait=` or without a `stop=` argument). A single immediate retry
(`stop=stop_after_attempt(2)` with no `wait=`, the count also a
module-level constant) is not reported: one re-dial after a dropped
connection hammers nothing. Nor is a stopped retry with no `wait=` of
only a lost race on a unique key or a version
(`retry=retry_if_exception_type(DuplicateKeyError)`, `IntegrityError`):
the next attempt finds the other writer's row at once. Nor is a stop
strategy passed as the predicate (`retry=stop_after_attempt(3)`): it
says "do not retry" after the first attempt, so nothing repeats.

## Why

tenacity's defaults are "retry immediately" and "never stop". A failing
dependency is then called in a tight loop, from every instance at once,
for as long as it is down: a retry storm that turns a blip into an outage,
and a request that never returns to its caller.

## Example

```python
from tenacity import retry

@retry
def charge(card, amount):
    return gateway.charge(card, amount)
```

## Fix

Always bound the attempts and back off with jitter.

```python
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(5), wait=wait_random_exponential(multiplier=0.2, max=10))
def charge(card, amount):
    return gateway.charge(card, amount)
```
"#,
    examples: &EXAMPLES,
};

fn is_tenacity_retry(name: &str) -> bool {
    matches!(
        name,
        "tenacity.retry" | "tenacity.Retrying" | "tenacity.AsyncRetrying"
    )
}

impl Rule for TenacityUnbounded {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for fid in cx.model.function_ids() {
            let f = cx.func(fid);
            if f.is_test {
                continue;
            }
            // Called decorators: `@retry(...)`.
            let mut called = 0;
            for &d in &f.decorator_calls {
                let Some(c) = cx.call(d) else { continue };
                if !c.target.as_deref().is_some_and(is_tenacity_retry) {
                    continue;
                }
                called += 1;
                let missing: Vec<&str> = ["wait", "stop"]
                    .into_iter()
                    .filter(|k| c.kwarg(k).is_none())
                    .collect();
                if missing.is_empty()
                    || c.args.iter().any(|a| a.spread)
                    || stop_as_predicate(cx, c)
                    || (missing == ["wait"] && (single_retry(cx, c) || only_on_conflict(cx, c)))
                {
                    continue;
                }
                out.push(finding(cx, cx.expr(d).span, &missing));
            }
            // Bare `@retry`.
            let bare = f.decorators.iter().filter(|d| is_tenacity_retry(d)).count();
            if bare > called
                && let Some(span) = bare_decorator_span(cx, f)
            {
                out.push(finding(cx, span, &["wait", "stop"]));
            }
        }
    }
}

/// `stop=stop_after_attempt(2)` (the count also a module-level constant,
/// `MODEL_RETRIES = 2`): one retry right after a failure (a dropped
/// connection re-dialled once), not a loop that hammers.
fn single_retry(cx: &FileCx, c: &Call) -> bool {
    c.kwarg("stop")
        .and_then(|s| cx.call(s))
        .filter(|s| s.name == "stop_after_attempt")
        .and_then(|s| s.positional(0))
        .map(|n| crate::python::common::module_constant(cx, n).unwrap_or(n))
        .and_then(|n| cx.model.literal(n))
        .is_some_and(|n| matches!(n, Lit::Int(n) if *n <= 2))
}

/// `@retry(retry=stop_after_attempt(3))`: a stop strategy passed where the
/// retry predicate goes. It answers "do not retry" after the first
/// attempt, so the function never runs twice: a mistake, but no storm.
fn stop_as_predicate(cx: &FileCx, c: &Call) -> bool {
    c.kwarg("retry")
        .and_then(|r| cx.call(cx.model.strip(r)))
        .is_some_and(|r| r.name.starts_with("stop_"))
}

/// `retry=retry_if_exception_type(DuplicateKeyError)` with a stop: it
/// retries only a lost race on a unique key or a version (an upsert that
/// another writer beat), which the next attempt settles at once.
fn only_on_conflict(cx: &FileCx, c: &Call) -> bool {
    let conflict = |t: &str| {
        let last = t.rsplit('.').next().unwrap_or(t);
        last.contains("DuplicateKey")
            || last.contains("UniqueViolation")
            || last == "IntegrityError"
            || crate::python::retry_without_backoff::is_conflict(t)
    };
    c.kwarg("retry")
        .and_then(|r| cx.call(cx.model.strip(r)))
        .filter(|r| r.name == "retry_if_exception_type")
        .is_some_and(|r| {
            !r.args.is_empty()
                && r.args.iter().all(|a| {
                    let parts = match &cx.expr(cx.model.strip(a.value)).kind {
                        ExprKind::Collection { elems, .. } => elems.clone(),
                        _ => vec![a.value],
                    };
                    parts.iter().all(|&x| {
                        cx.model
                            .resolved(x)
                            .or_else(|| cx.model.name_of(x))
                            .is_some_and(conflict)
                    })
                })
        })
}

fn finding(cx: &FileCx, span: Span, missing: &[&str]) -> Finding {
    let what = match missing {
        [_, _] => "retries immediately and forever (no `wait=`, no `stop=`)",
        ["wait"] => "retries immediately, with no wait between attempts (no `wait=`)",
        _ => "never stops retrying (no `stop=`)",
    };
    // With a wait, nothing is hammered: the call just never gives up, and
    // its caller waits for as long as the dependency is down.
    let (why, fix) = if missing.contains(&"wait") {
        (
            "a failing dependency is hammered in a tight loop from every caller at once",
            "pass `stop=stop_after_attempt(n)` (or `stop_after_delay`) and `wait=wait_random_exponential(...)`",
        )
    } else {
        (
            "while the dependency is down, the call never returns and its caller waits with it",
            "pass `stop=stop_after_attempt(n)` or `stop=stop_after_delay(seconds)`, and let the caller handle the final error",
        )
    };
    cx.finding(
        &META,
        span,
        format!("this tenacity `@retry` {what}: {why}"),
        fix,
    )
}

/// The `@retry` line of a function whose decorator is not called: the
/// decorator lines are the ones right above `def` (or inside the
/// function's span, depending on the parser's range).
fn bare_decorator_span(cx: &FileCx, f: &Function) -> Option<Span> {
    let end = f.name_span.start as usize;
    let head = cx.text.get(..end)?;
    // Walk back line by line from the `def` line.
    let mut line_end = head.rfind('\n')?;
    for _ in 0..16 {
        let start = head[..line_end].rfind('\n').map_or(0, |i| i + 1);
        let line = &head[start..line_end];
        let t = line.split('#').next().unwrap_or("").trim();
        if let Some(rest) = t.strip_prefix('@') {
            let name = rest.trim();
            if (name == "retry" || name.ends_with(".retry")) && !name.contains('(') {
                let at = start + line.find('@').unwrap_or(0);
                return Some(Span::new(at as u32, (at + 1 + name.len()) as u32));
            }
        } else if !t.is_empty() && !t.starts_with(')') && !t.ends_with(',') {
            return None;
        }
        if start == 0 {
            return None;
        }
        line_end = start - 1;
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[r#"
import tenacity
from tenacity import retry, stop_after_attempt

@retry  # expect
def charge(card, amount):
    return gateway.charge(card, amount)

@retry(stop=stop_after_attempt(3))  # expect
async def refresh(token):
    return await idp.refresh(token)

@tenacity.retry(reraise=True)  # expect
def sync_user(uid):
    return api.get(uid)
"#],
    pass: &[
        r#"
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(5), wait=wait_random_exponential(multiplier=0.2, max=10))
def charge(card, amount):
    return gateway.charge(card, amount)

"#,
        r#"
def retry(f):
    return f

@retry
def local_decorator():
    pass
"#,
        r#"
from tenacity import retry, stop_after_attempt

@retry(stop=stop_after_attempt(2))
async def reconnect(link):
    # One immediate retry after a dropped connection.
    return await link.open()
"#,
        r#"
import tenacity
from pymongo.errors import DuplicateKeyError

MODEL_RETRIES = 2

@tenacity.retry(stop=tenacity.stop_after_attempt(MODEL_RETRIES))
async def chat_completion(client, messages):
    return await client.complete(messages)

async def upsert_history(collection, owner, doc):
    # Two first writers race on the unique index: the loser finds the row.
    @tenacity.retry(
        retry=tenacity.retry_if_exception_type(DuplicateKeyError),
        stop=tenacity.stop_after_attempt(3),
        reraise=True,
    )
    async def _upsert():
        return await collection.find_one_and_update({"owner": owner}, {"$setOnInsert": doc}, upsert=True)
    return await _upsert()
"#,
        r#"
from tenacity import retry, stop_after_attempt, wait_fixed

class Spider:
    # `stop_after_attempt` in the predicate's place: it never retries.
    @retry(retry=stop_after_attempt(3), wait=wait_fixed(1))
    async def fetch(self, client, url):
        return await client.get(url)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(TenacityUnbounded);

    /// A retry that waits between attempts but never stops is not a tight
    /// loop: the message says what does go wrong (the caller never gets an
    /// answer).
    #[test]
    fn a_wait_without_a_stop_is_not_called_a_tight_loop() {
        let found = crate::testing::messages(
            &TenacityUnbounded,
            Language::Python,
            "from tenacity import retry, wait_exponential\n\n\
             @retry(wait=wait_exponential(min=3, max=30))\n\
             def run(self):\n    self.connect()\n\n\
             @retry\n\
             def charge(card):\n    return gateway.charge(card)\n",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        let waits = crate::testing::message_with(&found, "never stops");
        assert!(!waits.contains("tight loop"), "{waits}");
        assert!(waits.contains("never returns"), "{waits}");
        let bare = crate::testing::message_with(&found, "immediately and forever");
        assert!(bare.contains("tight loop"), "{bare}");
    }
}
