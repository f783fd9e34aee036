//! JS017: shared state checked, an `await`, then set: memoizing a value
//! instead of the promise, `if (!cache.has(k)) { await ...; cache.set(k, v) }`.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct CheckThenAwait;

pub static META: RuleMeta = RuleMeta {
    id: "JS017",
    name: "check-await-set",
    category: Category::CheckThenAct,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "Shared state (module, `this` or captured) is checked for absence, then set after an `await`: every caller arriving during the await passes the check too (memoize the promise, not the value).",
    docs: r#"
An async function tests module-level, `this` or captured state for absence
(`if (!conn)`, `if (!cache.has(key))`, `if (!this.token)`, `if (cache[k] ===
undefined)`, or returns early when it is present), then awaits, then writes
that state: `conn = await connect()`, `cache.set(key, await load(key))`.
Only a read of shared state, an await, and a write of the same state guarded
by the read are reported (`store.get("version")` and `store.set("scope", ..)`
are different entries of one store). A value that only awaits a dynamic
`import(..)` (directly, as compiled to CommonJS, `Promise.resolve().then(()
=> __importStar(require(x)))`, or through a helper of the file whose only
awaits are `import(..)`) is not: the module loader loads the module once, and every
racer stores the same namespace. Nor is a function that runs under a
lock: one that takes it (`await mutex.acquire()`), the callback a lock
runs (`mutex.runExclusive(async () => ...)`, `exclusiveRun`), or a private
method (`#resolve`) that its class calls only from such code.

## Why

The await lets other callers run between the check and the write. All of
them see the state still missing and start their own connection, token
refresh or load: N concurrent first calls open N connections (the last one
wins, the others leak), hit the backend N times, or overwrite each other's
fresher values.

## Example

```javascript
let client;

export async function getClient() {
  if (!client) {
    client = await createClient(process.env.REDIS_URL);
  }
  return client;
}
```

## Fix

Store the promise synchronously, before any await, so concurrent callers
share it; forget it if it fails.

```javascript
let clientPromise;

export function getClient() {
  if (!clientPromise) {
    clientPromise = createClient(process.env.REDIS_URL).catch((err) => {
      clientPromise = undefined;
      throw err;
    });
  }
  return clientPromise;
}
```
"#,
    examples: &EXAMPLES,
};

/// What an absence test is about.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    /// A variable or member (`conn`, `this.token`, `cache[k]`).
    Value(String),
    /// A collection tested for a key (`cache.has(k)`, `k in cache`), with
    /// the key when it is a string literal (`config.get("scope")`).
    Container(String, Option<String>),
}

impl Rule for CheckThenAwait {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if !cx.func(f).is_async || common::in_test(cx, f) || uses_lock(cx, f) {
                continue;
            }
            for s in common::stmts_of(cx, f) {
                let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind else {
                    continue;
                };
                // `if (!x) { ...act... }` or `if (x) return x; ...act...`.
                let (targets, region, region_start) = if let Some(t) = tests(cx, f, *cond, true) {
                    (t, then.clone(), cx.expr(*cond).span.end)
                } else if let Some(t) = tests(cx, f, *cond, false)
                    && orelse.is_empty()
                    && then
                        .last()
                        .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_)))
                {
                    (t, rest_of_block(cx, s), cx.stmt(s).span.end)
                } else {
                    continue;
                };
                // A lazily created value is handed out (`return conn`); a
                // one-time initializer that returns nothing is not a getter.
                let targets: Vec<Target> = targets
                    .into_iter()
                    .filter(|t| matches!(t, Target::Container(..)) || returns_state(cx, f, t))
                    .collect();
                if targets.is_empty() {
                    continue;
                }
                if let Some((write, await_span)) =
                    act_after_await(cx, &targets, &region, region_start, *cond)
                {
                    let mut finding = cx.finding(
                        &META,
                        cx.stmt(write).span,
                        format!(
                            "`{}` is checked and then set after an `await`: callers arriving during the await all see it missing and each start their own work (duplicate connections or loads, and the last write wins)",
                            cx.snippet(cx.expr(*cond).span)
                        ),
                        "store the promise before awaiting (`p ??= load().catch(e => { p = undefined; throw e; })`, `cache.set(k, promise)`) so concurrent callers await the same one",
                    );
                    finding.related.push(Related {
                        file: None,
                        span: await_span,
                        message: "other callers run here, between the check and the write".into(),
                    });
                    out.push(finding);
                }
            }
        }
    }
}

/// `f` returns the state (`return conn`, `return this.client`).
fn returns_state(cx: &FileCx, f: FuncId, t: &Target) -> bool {
    let Target::Value(key) = t else { return true };
    common::stmts_of(cx, f).any(|s| {
        matches!(cx.stmt(s).kind, StmtKind::Return(Some(v))
            if exprs_under(cx.model, v).into_iter().any(|x| common::chain_key(cx, x).as_deref() == Some(key)))
    })
}

/// The function runs under a lock, so the check is protected: it takes one
/// itself, it is the callback a lock runs (`mutex.runExclusive(async () =>
/// ...)`), or it is a private method (`#resolve`) that the class only
/// calls under one (`this.#mutex.exclusiveRun(() => this.#resolve(x))`).
fn uses_lock(cx: &FileCx, f: FuncId) -> bool {
    takes_lock(cx, f) || run_by_lock(cx, f) || private_under_lock(cx, f)
}

/// Calls that take a lock, or run their callback holding one
/// (async-mutex's `runExclusive`, hardhat's `exclusiveRun`).
fn is_lock_call(c: &Call) -> bool {
    matches!(
        c.name.as_str(),
        "acquire" | "runExclusive" | "exclusiveRun" | "lock" | "withLock"
    )
}

fn takes_lock(cx: &FileCx, f: FuncId) -> bool {
    common::calls_of(cx, f).any(|e| is_lock_call(cx.call(e).unwrap()))
}

/// `f` is a callback passed straight to a lock call.
fn run_by_lock(cx: &FileCx, f: FuncId) -> bool {
    common::closure_call_site(cx, f)
        .and_then(|(site, _)| cx.call(site))
        .is_some_and(is_lock_call)
}

/// `f` is a private method, and each call of it in the file is made by a
/// function that runs under a lock.
fn private_under_lock(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if !func.name.starts_with('#') || func.class.is_none() {
        return false;
    }
    let calls = cx.calls_named(&[func.name.as_str()]);
    !calls.is_empty()
        && calls.iter().all(|(e, _)| {
            let from = cx.func_of(*e);
            from != f && (takes_lock(cx, from) || run_by_lock(cx, from))
        })
}

/// The shared state `cond` tests for absence (`absent`) or presence.
fn tests(cx: &FileCx, f: FuncId, cond: ExprId, absent: bool) -> Option<Vec<Target>> {
    let cond = cx.model.strip(cond);
    let mut out = Vec::new();
    match &cx.expr(cond).kind {
        ExprKind::Logical {
            op: LogicalOp::Or,
            left,
            right,
        } if absent => {
            for side in [*left, *right] {
                if let Some(t) = tests(cx, f, side, true) {
                    out.extend(t);
                }
            }
        }
        ExprKind::Logical {
            op: LogicalOp::And,
            left,
            right,
        } if !absent => {
            for side in [*left, *right] {
                if let Some(t) = tests(cx, f, side, false) {
                    out.extend(t);
                }
            }
        }
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => return tests(cx, f, *operand, !absent),
        ExprKind::Binary { op, left, right } => {
            let null_side = |e: ExprId| matches!(cx.model.literal(e), Some(Lit::Null));
            let (other, eq) = match op {
                BinOp::Eq | BinOp::Is => (
                    if null_side(*right) {
                        *left
                    } else if null_side(*left) {
                        *right
                    } else {
                        return None;
                    },
                    true,
                ),
                BinOp::NotEq | BinOp::IsNot => (
                    if null_side(*right) {
                        *left
                    } else if null_side(*left) {
                        *right
                    } else {
                        return None;
                    },
                    false,
                ),
                BinOp::In if !absent => {
                    return shared_key(cx, f, *right).map(|k| vec![Target::Container(k, None)]);
                }
                _ => return None,
            };
            if eq != absent {
                return None;
            }
            return present_target(cx, f, other).map(|t| vec![t]);
        }
        _ if !absent => return present_target(cx, f, cond).map(|t| vec![t]),
        _ => return None,
    }
    (!out.is_empty()).then_some(out)
}

/// What a truthy test of `e` says is present.
fn present_target(cx: &FileCx, f: FuncId, e: ExprId) -> Option<Target> {
    let e = cx.model.strip(e);
    // `const cached = cache.get(k); if (cached) ...`: the local stands for
    // the read.
    if let Some(name) = cx.model.name_of(e)
        && common::scope_of(cx, f, name) == common::Scope::Local
    {
        let init = local_init(cx, f, name)?;
        return present_target(cx, f, init);
    }
    if let Some(c) = cx.call(e) {
        if matches!(c.name.as_str(), "has" | "get") {
            let key = literal_key(cx, c);
            return shared_key(cx, f, c.receiver?).map(|k| Target::Container(k, key));
        }
        return None;
    }
    if let ExprKind::Index { obj, .. } = cx.expr(e).kind {
        return shared_key(cx, f, obj).map(|k| Target::Container(k, None));
    }
    shared_key(cx, f, e).map(Target::Value)
}

/// The initializer of a local assigned once (`const x = ...`).
fn local_init(cx: &FileCx, f: FuncId, name: &str) -> Option<ExprId> {
    let mut found = None;
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Assign { targets, value, op } = &cx.stmt(s).kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
        {
            if found.is_some() || !matches!(op, AssignOp::Declare { .. }) {
                return None;
            }
            found = Some((*value)?);
        }
    }
    found
}

/// The key of a shared-state chain.
fn shared_key(cx: &FileCx, f: FuncId, e: ExprId) -> Option<String> {
    if !matches!(
        cx.expr(cx.model.strip(e)).kind,
        ExprKind::Name { .. } | ExprKind::Attr { .. }
    ) {
        return None;
    }
    common::shared_state(cx, f, e)?;
    common::chain_key(cx, e)
}

/// The statements after `s` in its block.
fn rest_of_block(cx: &FileCx, s: StmtId) -> Block {
    let f = cx.tree.stmt_func(s);
    let parent_block: Option<Block> = match cx.tree.stmt_parent(s) {
        Parent::Function(_) => Some(cx.func(f).body.clone()),
        Parent::Stmt(p) => {
            let mut found = None;
            unsnarl_model::walk::for_each_stmt_child(cx.model, p, &mut |ch| {
                if let unsnarl_model::walk::Child::Block(b) = ch
                    && b.contains(&s)
                {
                    found = Some(b.clone());
                }
            });
            found
        }
        _ => None,
    };
    let Some(b) = parent_block else {
        return Vec::new();
    };
    let i = b.iter().position(|&x| x == s).unwrap_or(b.len());
    b[i + 1..].to_vec()
}

/// What TypeScript and Babel emit for `import(x)` in CommonJS output:
/// `Promise.resolve().then(() => __importStar(require(x)))` (or
/// `_interopRequireWildcard(..)`, or a bare `require(x)`).
fn transpiled_import(cx: &FileCx, c: &Call) -> bool {
    let on_resolved = c.name == "then"
        && c.receiver
            .and_then(|r| cx.call(cx.model.strip(r)))
            .is_some_and(|r| r.target.as_deref() == Some("Promise.resolve") && r.args.is_empty());
    let Some(g) = c
        .positional(0)
        .filter(|_| on_resolved && c.args.len() == 1)
        .and_then(|a| super::common::callback_fn(cx, a))
    else {
        return false;
    };
    let calls: Vec<&Call> = cx.body_calls(g).filter_map(|e| cx.call(e)).collect();
    let is_require = |k: &Call| k.name == "require" && k.receiver.is_none();
    let is_interop = |k: &Call| {
        k.receiver.is_none()
            && (k.name.starts_with("__importStar")
                || k.name.starts_with("__importDefault")
                || k.name.starts_with("_interopRequire"))
    };
    calls.iter().filter(|k| is_require(k)).count() == 1
        && calls.iter().all(|k| is_require(k) || is_interop(k))
}

/// `import(..)`, or a call of a helper of the file whose only awaits are
/// `import(..)` (`const importModule = async (s) => { try { return await
/// import(s) } catch .. }`, for optional dependencies).
fn loads_a_module(cx: &FileCx, awaited: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(awaited)) else {
        return false;
    };
    if c.target.as_deref() == Some("import") || transpiled_import(cx, c) {
        return true;
    }
    let Some(name) = cx.model.name_of(c.func) else {
        return false;
    };
    // The helper: a closure bound to the name in an enclosing function, or
    // a function of the file by that name.
    let bound_closure = cx
        .tree
        .func_ancestors(cx.model, cx.func_of(awaited))
        .find_map(|g| {
            cx.body_stmts(g)
                .iter()
                .find_map(|&s| match &cx.stmt(s).kind {
                    StmtKind::Assign {
                        targets,
                        value: Some(v),
                        ..
                    } if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) => {
                        match cx.expr(cx.model.strip(*v)).kind {
                            ExprKind::Closure(h) => Some(h),
                            _ => None,
                        }
                    }
                    _ => None,
                })
        });
    let helper = bound_closure.or_else(|| {
        cx.model.function_ids().find(|&g| {
            g.0 != 0 && cx.func(g).name == name && cx.func(g).parent.is_none_or(|p| p.0 == 0)
        })
    });
    helper.is_some_and(|h| {
        let inner: Vec<ExprId> = cx
            .body_exprs(h)
            .iter()
            .filter_map(|&e| match cx.expr(e).kind {
                ExprKind::Await(x) => Some(x),
                _ => None,
            })
            .collect();
        !inner.is_empty()
            && inner.iter().all(|&x| {
                cx.call(cx.model.strip(x))
                    .is_some_and(|k| k.target.as_deref() == Some("import"))
            })
    })
}

/// A write of one of `targets` in `region` preceded by (or containing) an
/// await after the check, and not re-checked after the await.
fn act_after_await(
    cx: &FileCx,
    targets: &[Target],
    region: &Block,
    after: u32,
    cond: ExprId,
) -> Option<(StmtId, Span)> {
    let mut awaits: Vec<Span> = crate::util::awaits_in_block(cx.model, region);
    awaits.retain(|a| a.start >= after);
    let first_await = awaits.iter().map(|a| a.start).min()?;
    // Only `await import(..)`: the module loader loads a module once and
    // every concurrent caller gets the same namespace, so the racers store
    // the same value.
    let awaited: Vec<ExprId> = unsnarl_model::walk::exprs_in_block(cx.model, region)
        .into_iter()
        .filter_map(|e| match cx.expr(e).kind {
            ExprKind::Await(inner) if cx.expr(e).span.start >= after => Some(inner),
            _ => None,
        })
        .collect();
    if awaited.len() == awaits.len() && awaited.iter().all(|&a| loads_a_module(cx, a)) {
        return None;
    }
    let mut stmts = Vec::new();
    for &s in region {
        stmts.push(s);
        stmts.extend(collect_stmts(cx, s));
    }
    // Locals made in the region (`const v = await f()`, `const pool = new
    // Pool(); await pool.query(...)`): values prepared across the await.
    let mut awaited_locals: Vec<String> = Vec::new();
    for &s in &stmts {
        if let StmtKind::Assign {
            targets: ts,
            value: Some(_),
            op: AssignOp::Declare { .. },
        } = &cx.stmt(s).kind
        {
            awaited_locals.extend(ts.iter().flat_map(|&t| common::bound_names(cx, t)));
        }
    }
    for s in stmts {
        let Some(written) = writes(cx, s) else {
            continue;
        };
        if !targets.iter().any(|t| same_state(t, &written)) {
            continue;
        }
        let span = cx.stmt(s).span;
        // Set before any await: the check and the act are atomic.
        if span.end <= first_await {
            return None;
        }
        // Only a value that comes from the awaited work is a memoized value
        // (flags and resets are not).
        if !value_from_await(cx, s, &awaited_locals) {
            continue;
        }
        let Some(await_before) = awaits
            .iter()
            .find(|a| a.start < span.end && a.start >= first_await)
        else {
            continue;
        };
        // Re-checked after the await (double-checked): fine.
        if rechecked(cx, s, await_before.start, cond) {
            continue;
        }
        // A stored promise, not a value.
        if stores_promise(cx, s) {
            continue;
        }
        return Some((s, *await_before));
    }
    None
}

/// An await of new work (a call), not of a promise stored earlier (`await
/// this.readyPromise` is how a memoized promise is shared).
fn awaits_work(cx: &FileCx, x: ExprId) -> bool {
    match cx.expr(x).kind {
        ExprKind::Await(inner) => exprs_under(cx.model, inner)
            .into_iter()
            .any(|y| cx.call(y).is_some()),
        _ => false,
    }
}

/// The written value contains an await or a local holding an awaited value.
fn value_from_await(cx: &FileCx, s: StmtId, awaited: &[String]) -> bool {
    let value = match &cx.stmt(s).kind {
        StmtKind::Assign { value: Some(v), .. } => *v,
        StmtKind::Expr(e) => match cx.call(*e).and_then(|c| c.positional(1)) {
            Some(v) => v,
            None => return false,
        },
        _ => return false,
    };
    exprs_under(cx.model, value).into_iter().any(|x| {
        awaits_work(cx, x)
            || cx
                .model
                .name_of(x)
                .is_some_and(|n| awaited.iter().any(|a| a == n))
    })
}

fn same_state(check: &Target, write: &Target) -> bool {
    match (check, write) {
        (Target::Container(a, _), Target::Value(b)) => b.starts_with(&format!("{a}[")),
        (Target::Value(a), Target::Container(b, _)) => a.starts_with(&format!("{b}[")),
        // `settings.get("version")` then `settings.set("scope", ..)`: two
        // entries of one store, unless a key is not known.
        (Target::Container(a, ka), Target::Container(b, kb)) => {
            a == b && (ka.is_none() || kb.is_none() || ka == kb)
        }
        (Target::Value(a), Target::Value(b)) => a == b,
    }
}

/// The first argument of `get`/`has`/`set` when it is a string literal.
fn literal_key(cx: &FileCx, c: &Call) -> Option<String> {
    match cx.model.literal(c.positional(0)?) {
        Some(Lit::Str(k)) => Some(k.to_string()),
        _ => None,
    }
}

fn collect_stmts(cx: &FileCx, s: StmtId) -> Vec<StmtId> {
    struct V(Vec<StmtId>);
    impl unsnarl_model::walk::Visitor for V {
        fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
            self.0.push(id);
            true
        }
    }
    let mut v = V(Vec::new());
    unsnarl_model::walk::walk_stmt(cx.model, s, &mut v);
    v.0.retain(|&x| x != s);
    v.0
}

/// What a statement writes: `x = ...`, `obj.f = ...`, `m[k] = ...`,
/// `m.set(k, ...)`.
fn writes(cx: &FileCx, s: StmtId) -> Option<Target> {
    match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            op: AssignOp::Plain | AssignOp::Augmented(BinOp::Other),
            ..
        } => {
            let t = *targets.first()?;
            if let ExprKind::Index { obj, .. } = cx.expr(t).kind {
                return common::chain_key(cx, obj).map(|k| Target::Container(k, None));
            }
            common::chain_key(cx, t).map(Target::Value)
        }
        StmtKind::Expr(e) => {
            let e = match cx.expr(*e).kind {
                ExprKind::Await(inner) => inner,
                _ => *e,
            };
            let c = cx.call(e)?;
            if c.name != "set" {
                return None;
            }
            let key = literal_key(cx, c);
            common::chain_key(cx, c.receiver?).map(|k| Target::Container(k, key))
        }
        _ => None,
    }
}

/// Between the await and the write, an `if` tests the same state again.
fn rechecked(cx: &FileCx, write: StmtId, await_at: u32, cond: ExprId) -> bool {
    let cond_text = cx.source(cx.expr(cond).span);
    cx.tree.stmt_ancestors(write).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::If { cond: c2, .. }
            if cx.expr(*c2).span.start > await_at && cx.source(cx.expr(*c2).span) == cond_text)
    })
}

/// The write stores something that is not an awaited value: a promise.
fn stores_promise(cx: &FileCx, s: StmtId) -> bool {
    let value = match &cx.stmt(s).kind {
        StmtKind::Assign { value: Some(v), .. } => *v,
        StmtKind::Expr(e) => match cx.call(*e).and_then(|c| c.positional(1)) {
            Some(v) => v,
            None => return false,
        },
        _ => return false,
    };
    let has_await = exprs_under(cx.model, value)
        .into_iter()
        .any(|x| matches!(cx.expr(x).kind, ExprKind::Await(_)));
    let chain = cx
        .call(cx.model.strip(value))
        .is_some_and(common::is_chain_call);
    !has_await && (chain || common::promise_expr(cx, value).is_some())
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
let conn;
const cache = new Map();

async function getConn() {
  if (!conn) conn = await connect(); // expect
  return conn;
}

async function getUser(id) {
  if (!cache.has(id)) {
    const res = await fetch(`/users/${id}`);
    cache.set(id, await res.json()); // expect
  }
  return cache.get(id);
}

async function getOrder(id) {
  if (cache.has(id)) return cache.get(id);
  const order = await db.orders.get(id);
  cache.set(id, order); // expect
  return order;
}
"#,
        r#"
const sessions = new Map();

async function session(token) {
  const cached = sessions.get(token);
  if (cached) return cached;
  const s = await verify(token);
  sessions.set(token, s); // expect
  return s;
}

class TokenSource {
  async token() {
    if (this.cached === undefined) {
      const res = await fetch("/oauth/token", { method: "POST" });
      this.cached = (await res.json()).access_token; // expect
    }
    return this.cached;
  }
}

class Settings {
  async scope() {
    if (!this.store.get("scope")) {
      const found = await lookupScope();
      this.store.set("scope", found); // expect
    }
    return this.store.get("scope");
  }
}
"#,
        r#"
let config = null;

async function loadConfig() {
  if (config) return config;
  const getJson = async (url) => {
    const res = await fetch(url);
    return await res.json();
  };
  const main = await getJson("https://cfg.example/main");
  config = { ...main }; // expect
  return config;
}

module.exports = { loadConfig };
"#,
        r#"
"use strict";
var __importStar = (this && this.__importStar) || function (mod) { return mod; };
let client = null;
async function getClient() {
    if (!client) {
        client = await Promise.resolve().then(() => redis.createClient().connect()); // expect
    }
    return client;
}
exports.getClient = getClient;
"#,
        r#"
export class Resolver {
  #mutex = new AsyncMutex();
  #resolved = new Map();

  async resolve(path) {
    return await this.#mutex.exclusiveRun(async () => this.#resolveFile(path));
  }

  async resolveUnlocked(path) {
    return await this.#resolveFile(path);
  }

  async #resolveFile(path) {
    if (this.#resolved.has(path)) {
      return this.#resolved.get(path);
    }
    const file = await readSource(path);
    this.#resolved.set(path, file); // expect
    return file;
  }
}
"#,
    ],
    pass: &[
        r#"
"use strict";
var __importStar = (this && this.__importStar) || function (mod) { return mod; };
let debugModule = null;
async function importDebug() {
    if (!debugModule) {
        debugModule = (await Promise.resolve().then(() => __importStar(require("debug")))).default;
    }
    return debugModule;
}
exports.importDebug = importDebug;
"#,
        r#"
let brotli = null;

async function getCodec() {
  if (!brotli) {
    const mod = await import("fast-brotli-codec");
    brotli = mod.codec;
  }
  return brotli;
}
"#,
        r#"
class Cli {
  // Two entries of one store: the check and the write are different keys.
  async load() {
    if (this.config.get("version")) {
      return printVersion();
    }
    await fetch("/plugins");
    const scope = this.config.get("scope");
    if (scope && !scope.startsWith("@")) {
      this.config.set("scope", `@${scope}`);
    }
  }
}
"#,
        r#"
let connPromise;
const cache = new Map();

function getConn() {
  if (!connPromise) {
    connPromise = connect().catch((e) => {
      connPromise = undefined;
      throw e;
    });
  }
  return connPromise;
}

async function getUser(id) {
  let p = cache.get(id);
  if (!p) {
    p = fetch(`/users/${id}`).then((r) => r.json());
    cache.set(id, p);
  }
  return p;
}

async function local(id) {
  let v;
  if (!v) v = await load(id);
  return v;
}

async function doubleChecked(id) {
  if (!cache.has(id)) {
    const v = await load(id);
    if (!cache.has(id)) cache.set(id, v);
  }
  return cache.get(id);
}

async function refresh() {
  if (!conn) return;
  await conn.ping();
}

class Driver {
  async connect() {
    if (!this.database) {
      this.database = await this.queryCurrentDatabase();
    }
  }

  async start() {
    if (!this.running) {
      this.running = true;
      try {
        await this.loop();
      } catch (e) {
        this.running = false;
        throw e;
      }
    }
  }

  async raw() {
    if (this.client) return this.client;
    this.client = await this.clientPromise;
    return this.client;
  }
}
"#,
        r#"
let ops = null;

async function loadOps() {
  if (ops) return ops;
  const importModule = async (specifier, { optional = false } = {}) => {
    try {
      return await import(specifier);
    } catch (error) {
      if (optional) return null;
      throw error;
    }
  };
  const main = await importModule("some-orm");
  const extra = await importModule("some-orm/sql", { optional: true });
  ops = { eq: (extra && extra.eq) || main.eq };
  return ops;
}

module.exports = { loadOps };
"#,
        r#"
const handlersPerConnection = new WeakMap();
const initializationMutex = new AsyncMutex();

export async function handlersFor(connection) {
  const known = handlersPerConnection.get(connection);
  if (known !== undefined) {
    return known;
  }
  return await initializationMutex.exclusiveRun(async () => {
    // Checked again: another caller may have filled it while we waited.
    const again = handlersPerConnection.get(connection);
    if (again !== undefined) {
      return again;
    }
    const created = await createHandlers(connection);
    handlersPerConnection.set(connection, created);
    return created;
  });
}
"#,
        r#"
export class Resolver {
  #mutex = new AsyncMutex();
  #resolved = new Map();

  async resolve(path) {
    return await this.#mutex.exclusiveRun(async () => this.#resolveFile(path));
  }

  async resolveImport(from, spec) {
    return await this.#mutex.exclusiveRun(async () => {
      const path = join(dirname(from), spec);
      return await this.#resolveFile(path);
    });
  }

  async #resolveFile(path) {
    if (this.#resolved.has(path)) {
      return this.#resolved.get(path);
    }
    const file = await readSource(path);
    this.#resolved.set(path, file);
    return file;
  }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CheckThenAwait);
}
