//! JS019: shared state read before an `await` and written after it from
//! what was read (a lost update).

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashMap;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct ReadAwaitWrite;

pub static META: RuleMeta = RuleMeta {
    id: "JS019",
    name: "read-await-write",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async function reads module, `this` or captured state, awaits, then writes the state from the value it read (`total += await f()`, `const n = this.count; await save(); this.count = n + 1`): concurrent calls lose updates.",
    docs: r#"
In an async function: a write of module-level, `this` or captured state
whose new value was computed from a read of the same state taken before an
`await` — `x += await f()` (the `+=` reads `x` first), `x = x + await f()`,
`this.items = await merge(this.items, more)`, or a local copy read before
the await and written back after it. Storing back what the state itself
resolves to (`mod = await mod`, a memoized promise replaced by its value)
is not reported: every call writes the same value. Nor is an `await` in
a branch that leaves the function before the write (`case "closed": await
run(); return r;`, the write in another case): no path runs both.

## Why

JavaScript has no data races, but every `await` lets other calls run. Two
requests that both read the counter (or the balance, the list) before
awaiting both write back their own "old value plus change", and one update
is lost. No lock, no crash: the totals are just wrong under load.

## Example

```javascript
let balance = 0;

export async function deposit(amount) {
  const current = balance;
  await ledger.append({ amount });
  balance = current + amount;
}
```

## Fix

Read and write with no await in between (apply the change after the await,
from the current value), or serialize the updates (a queue, a mutex, the
database).

```javascript
let balance = 0;

export async function deposit(amount) {
  await ledger.append({ amount });
  balance += amount;
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ReadAwaitWrite {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if !cx.func(f).is_async
                || common::in_test(cx, f)
                || uses_lock(cx, f)
                || runs_once(cx, f)
            {
                continue;
            }
            // Locals holding a read of shared state: name → (state key, span).
            let mut copies: HashMap<String, (String, Span)> = HashMap::new();
            let awaits = crate::util::awaits_in_block(cx.model, &cx.func(f).body);
            if awaits.is_empty() {
                continue;
            }
            for s in common::stmts_of(cx, f) {
                let StmtKind::Assign {
                    targets,
                    value: Some(v),
                    op,
                } = &cx.stmt(s).kind
                else {
                    continue;
                };
                let Some(&t) = targets.first() else { continue };
                if let AssignOp::Declare { .. } = op {
                    // `const n = state.count` (a plain read, not a call result).
                    if let Some(name) = cx.model.name_of(t)
                        && let Some(key) = plain_shared_read(cx, f, *v)
                    {
                        copies.insert(name.to_string(), (key, cx.stmt(s).span));
                    }
                    continue;
                }
                // `x ??= await f()` / `x ||= ...` only fill a gap (a
                // check-then-act, not a read-modify-write).
                if matches!(op, AssignOp::Augmented(BinOp::Other)) {
                    continue;
                }
                if !matches!(
                    common::shared_state(cx, f, t),
                    Some("module state" | "instance state")
                ) {
                    continue;
                }
                // A promise chain stored back (`p = p.then(...)`) serializes
                // on purpose.
                if cx
                    .call(cx.model.strip(*v))
                    .is_some_and(common::is_chain_call)
                {
                    continue;
                }
                let Some(key) = common::chain_key(cx, t) else {
                    continue;
                };
                // `mod = await mod`: a memoized promise replaced by what it
                // resolves to. Every call stores the same value, whatever
                // the order, so no update is lost.
                if op == &AssignOp::Plain
                    && let ExprKind::Await(inner) = cx.expr(cx.model.strip(*v)).kind
                    && common::chain_key(cx, cx.model.strip(inner)).as_deref() == Some(&key)
                {
                    continue;
                }
                let wspan = cx.stmt(s).span;
                let value_exprs = exprs_under(cx.model, *v);
                let await_in_value = value_exprs
                    .iter()
                    .find(|&&x| matches!(cx.expr(x).kind, ExprKind::Await(_)))
                    .map(|&x| cx.expr(x).span);
                let mut reason = None;
                if let Some(aw) = await_in_value {
                    if matches!(op, AssignOp::Augmented(_)) {
                        reason = Some(format!(
                            "`{key}` is read for the compound assignment before the await"
                        ));
                    } else if value_exprs.iter().any(|&x| {
                        cx.expr(x).span.end <= aw.end
                            && common::chain_key(cx, x).as_deref() == Some(&key)
                    }) {
                        reason = Some(format!(
                            "`{key}` is read before the await in this expression"
                        ));
                    }
                }
                if reason.is_none() {
                    // A copy read before an await and written back after it.
                    for &x in &value_exprs {
                        let Some(n) = cx.model.name_of(x) else {
                            continue;
                        };
                        let Some((k, rspan)) = copies.get(n) else {
                            continue;
                        };
                        if *k != key {
                            continue;
                        }
                        if awaits.iter().any(|a| {
                            a.start > rspan.end
                                && a.end <= wspan.start
                                && !leaves_before(cx, f, *a, wspan)
                        }) {
                            reason = Some(format!(
                                "`{n}` was read from `{key}` on line {} and other calls can change `{key}` during the await",
                                common::line_of(cx, rspan.start)
                            ));
                            break;
                        }
                    }
                }
                let Some(reason) = reason else { continue };
                out.push(cx.finding(
                    &META,
                    wspan,
                    format!(
                        "`{key}` ({}) is written from a value read before an `await`: {reason}, so concurrent calls overwrite each other's updates",
                        common::shared_state(cx, f, t).unwrap_or("shared state")
                    ),
                    "compute the new value from the current state after the await (`x += delta` with no await in the expression), or serialize the updates",
                ));
            }
        }
    }
}

/// The await at `aw` sits in a branch that ends by leaving the function
/// (`case Closed: await run(); return r;`) and does not hold the write at
/// `write`: no path goes from that await to the write.
fn leaves_before(cx: &FileCx, f: FuncId, aw: Span, write: Span) -> bool {
    common::stmts_of(cx, f)
        .filter(|&s| cx.stmt(s).span.contains(aw))
        .any(|s| {
            crate::util::containing_block(cx, s).is_some_and(|b| {
                !b.iter().any(|&x| cx.stmt(x).span.contains(write))
                    && b.last().is_some_and(|&l| {
                        matches!(cx.stmt(l).kind, StmtKind::Return(_) | StmtKind::Raise(_))
                    })
            })
        })
}

/// `state.count`, `this.total`, `counter`: a plain read of shared state.
fn plain_shared_read(cx: &FileCx, f: FuncId, v: ExprId) -> Option<String> {
    let v = cx.model.strip(v);
    if !matches!(
        cx.expr(v).kind,
        ExprKind::Name { .. } | ExprKind::Attr { .. } | ExprKind::Index { .. }
    ) {
        return None;
    }
    if !matches!(
        common::shared_state(cx, f, v)?,
        "module state" | "instance state"
    ) {
        return None;
    }
    common::chain_key(cx, v)
}

/// `if (this.#state.started) return this.#state.ready; this.#state.started
/// = true; ...`: a guard at the top that sends every call after the first
/// back, its flag set before the first `await`. No two runs of the body
/// overlap, so none can overwrite another's update.
fn runs_once(cx: &FileCx, f: FuncId) -> bool {
    let Some((&first, rest)) = cx.func(f).body.split_first() else {
        return false;
    };
    let StmtKind::If { cond, then, .. } = &cx.stmt(first).kind else {
        return false;
    };
    if !then
        .last()
        .is_some_and(|&s| matches!(cx.stmt(s).kind, StmtKind::Return(_)))
    {
        return false;
    }
    let flags: Vec<String> = unsnarl_model::walk::exprs_under(cx.model, *cond)
        .into_iter()
        .filter(|&e| matches!(cx.expr(e).kind, ExprKind::Attr { .. }))
        .filter(|&e| common::shared_state(cx, f, e).is_some())
        .filter_map(|e| common::chain_key(cx, e))
        .collect();
    for &s in rest {
        if !crate::util::awaits_in_block(cx.model, &vec![s]).is_empty() {
            return false;
        }
        if let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
            && targets
                .first()
                .and_then(|&t| common::chain_key(cx, t))
                .is_some_and(|k| flags.contains(&k))
        {
            return true;
        }
    }
    false
}

fn uses_lock(cx: &FileCx, f: FuncId) -> bool {
    common::calls_of(cx, f).any(|e| {
        let c = cx.call(e).unwrap();
        matches!(c.name.as_str(), "acquire" | "runExclusive" | "lock")
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
let total = 0;
const stats = { orders: 0 };

export async function record(order) {
  total += await priceOf(order); // expect
  const n = stats.orders;
  await db.save(order);
  stats.orders = n + 1; // expect
}

class Inventory {
  async restock(sku, qty) {
    this.counts = await merge(this.counts, sku, qty); // expect
  }

  async reconnect() {
    this.client = await reopen(this.client); // expect
  }
}

class Breaker {
  async execute(fn) {
    const state = this.innerState;
    switch (state.value) {
      case "closed":
        await fn();
        break;
      case "open":
        await this.cooldown();
        this.innerState = { value: "half-open", attempt: state.attempt + 1 }; // expect
        return "probing";
    }
  }
}
"#,
        r#"
class App {
  #state = { started: false, log: null };

  // The flag is only set after the await: two early calls both pass the
  // guard and both write the log.
  async start() {
    if (this.#state.started) {
      return;
    }
    this.#state.log = this.#state.log || (await openLog()); // expect
    this.#state.started = true;
  }
}
"#,
    ],
    pass: &[
        r#"
let total = 0;
const stats = { orders: 0 };

export async function record(order) {
  const price = await priceOf(order);
  total += price;
  await db.save(order);
  stats.orders += 1;
  const n = stats.orders;
  stats.orders = n + 1;
}

async function local(order) {
  let sum = 0;
  sum += await priceOf(order);
  return sum;
}

class Driver {
  async afterConnect(runner) {
    this.version ??= await runner.getVersion();
    this.queue = this.queue.then(() => runner.flush());
  }
}

let kafka = loadPackage("kafkajs");

class Assigner {
  async assign(group) {
    kafka = await kafka;
    this.client = await this.client;
    return kafka.assign(this.client, group);
  }
}

class Breaker {
  async execute(fn) {
    const state = this.innerState;
    switch (state.value) {
      case "closed":
        await fn();
        return "ran";
      case "open":
        this.innerState = { value: "half-open", attempt: state.attempt + 1 };
        return "probing";
    }
  }
}
"#,
        r#"
class App {
  #state = { started: false, log: null, ready: Promise.withResolvers() };

  // Every call after the first returns at the guard, whose flag is set
  // before the first await: the body never runs twice at once.
  async #start() {
    if (this.#state.started) {
      return this.#state.ready.promise;
    }
    this.#state.started = true;
    try {
      this.#state.log = this.#state.log || (await openLog());
      this.#state.ready.resolve();
    } catch (err) {
      this.#state.ready.reject(err);
    }
  }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ReadAwaitWrite);
}
