//! JS032: tests that sleep and then assert, instead of waiting for the
//! condition.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct SleepInTest;

pub static META: RuleMeta = RuleMeta {
    id: "JS032",
    name: "sleep-then-assert",
    category: Category::SleepSynchronization,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A test waits a fixed time (`await sleep(n)`, `await new Promise(r => setTimeout(r, n))`, `setTimeout(() => expect(...), n)`) and then asserts, hoping the work is done by then.",
    docs: r#"
In a test file: an awaited sleep (`sleep`/`delay`/`wait`, `setTimeout` from
`timers/promises`, `new Promise(r => setTimeout(r, n))`) followed by an
assertion (`expect`, `assert`, `t.is`...), or assertions inside a
`setTimeout` callback. A sleep that is the wait of a `while` loop (`while
(!seen()) await sleep(10)`) polls for the state and is not reported. After an awaited sleep, an assertion that
repeats word for word a check made before it does not count (it checks
that nothing changed, which no slow machine can break). In both forms,
neither does an assertion of constants only (`t.assert.ok('hook ran')`,
`t.pass()`, counted by `t.plan`: it reads no state), nor what a tap/tape
test context does besides asserting (`t.test(..)` adding a subtest,
`t.end()`, `t.plan(n)`), nor one that checks that
something did not happen: a mock not called
(`expect(fn).not.toHaveBeenCalled()`, `sinon.assert.notCalled(spy)`, a
call count of 0) or a flag that only ever turns on still off
(`assert.strictEqual(signal.aborted, false)`; also `destroyed`, `closed`,
`ended`, `finished`, `killed`, `called`, or a variable the file only ever
sets to `true` after its first value: `let running = false` ... `running
= true`), a variable declared `null` and only ever given a value later
still `null` (`assert.equal(clientError, null)`), the length of an
array declared empty that the file only pushes to still 0, or output
only ever appended to not matching yet (`let stdout = ''` ... `stdout +=
chunk` ... `t.doesNotMatch(stdout, /called/)`). A slow machine can only
make such a check pass.

## Why

The sleep is a guess at how long the background work takes. On a loaded CI
machine it is too short and the test fails at random; everywhere else it is
too long and slows the suite. It also hides real ordering bugs: the test
passes when the timing happens to work, not because the code waits for what
it depends on.

## Example

```javascript
test("publishes the event", async () => {
  service.start();
  await new Promise((r) => setTimeout(r, 500));
  expect(bus.published).toContain("started");
});
```

## Fix

Wait for the condition itself: await the operation, an event, or poll with
a deadline (or use fake timers).

```javascript
import { once } from "node:events";

test("publishes the event", async () => {
  const published = once(bus, "published");
  service.start();
  const [name] = await published;
  expect(name).toBe("started");
});
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SleepInTest {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || !is_test_file(cx) || uses_fake_timers(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if f.0 == 0 {
                continue;
            }
            for s in common::stmts_of(cx, f) {
                match &cx.stmt(s).kind {
                    StmtKind::Expr(e) => {
                        let e = *e;
                        // `await sleep(100); expect(...)`.
                        if let ExprKind::Await(inner) = cx.expr(e).kind
                            && let Some(Some(d)) = common::delay_of(cx, inner)
                            && cx.model.int_value(d).is_some_and(|v| v > 0)
                            && asserts_after(cx, s)
                            && !polls(cx, s)
                            && !crate::util::repeats_earlier_check(cx, f, s, |x| is_assert(cx, x))
                        {
                            out.push(cx.finding(
                                &META,
                                cx.expr(e).span,
                                format!("the test sleeps `{}` ms and then asserts: it passes only if the work happens to finish in time, so it is flaky under load and slow otherwise", cx.source(cx.expr(d).span)),
                                "wait for the condition itself (await the operation or an event, poll with a deadline) or use fake timers",
                            ));
                            continue;
                        }
                        // `setTimeout(() => { expect(...); done(); }, 100)`.
                        if let Some(c) = cx.call(e)
                            && c.target.as_deref() == Some("setTimeout")
                            && let Some(cb) =
                                c.positional(0).and_then(|a| common::callback_fn(cx, a))
                            && common::calls_of(cx, cb).any(|x| asserts_state(cx, x))
                        {
                            out.push(cx.finding(
                                &META,
                                cx.expr(e).span,
                                "the test asserts from a `setTimeout` callback, guessing how long the work takes: flaky under load and slow otherwise",
                                "wait for the condition itself (await the operation or an event, poll with a deadline) or use fake timers",
                            ));
                        }
                    }
                    _ => continue,
                }
            }
        }
    }
}

/// The sleep is the wait of a `while` loop that checks its condition again
/// after each round (`while (!seen()) await sleep(10)`): it polls for the
/// state, however long that takes, rather than guessing a duration.
fn polls(cx: &FileCx, s: StmtId) -> bool {
    cx.tree
        .stmt_ancestors(s)
        .take_while(|&a| cx.tree.stmt_func(a) == cx.tree.stmt_func(s))
        .any(|a| matches!(cx.stmt(a).kind, StmtKind::While { .. }))
}

fn is_test_file(cx: &FileCx) -> bool {
    cx.model.is_test
        || cx
            .calls_named(&["describe", "it", "test"])
            .iter()
            .any(|(_, c)| c.receiver.is_none() && c.args.len() >= 2)
            && cx.model.exprs.iter().any(|e| matches!(&e.kind, ExprKind::Call(c) if c.name == "expect" || c.name.starts_with("assert")))
}

fn uses_fake_timers(cx: &FileCx) -> bool {
    cx.calls_named(&["useFakeTimers", "install"])
        .iter()
        .any(|&(e, c)| c.name == "useFakeTimers" || cx.source(cx.expr(e).span).contains("clock"))
}

/// An assertion follows the statement in its block (or later in the
/// function).
fn asserts_after(cx: &FileCx, s: StmtId) -> bool {
    let f = cx.tree.stmt_func(s);
    let end = cx.stmt(s).span.end;
    common::calls_of(cx, f).any(|x| cx.expr(x).span.start >= end && asserts_state(cx, x))
}

/// `x` is an assertion that depends on the work being done: not one of
/// constants, not one that something did not happen.
fn asserts_state(cx: &FileCx, x: ExprId) -> bool {
    is_assert(cx, x)
        && !checks_nothing(cx, x)
        && !checks_an_absence(cx, x)
        // `expect(v)` asserts what the matcher called on it asserts.
        && !cx.call(x).is_some_and(|c| {
            c.name == "expect" && matcher_of(cx, x).is_some_and(|m| checks_an_absence(cx, m))
        })
}

/// The matcher called on `expect(v)` (`expect(v).toBe(1)`,
/// `expect(v).not.toHaveBeenCalled()`).
fn matcher_of(cx: &FileCx, expect: ExprId) -> Option<ExprId> {
    let f = cx.func_of(expect);
    common::calls_of(cx, f).find(|&m| {
        cx.call(m).and_then(|c| c.receiver).is_some_and(|r| {
            let r = cx.model.strip(r);
            r == expect
                || matches!(&cx.expr(r).kind, ExprKind::Attr { obj, name, .. } if name == "not" && cx.model.strip(*obj) == expect)
        })
    })
}

/// Flags that only ever turn on: once an abort, a close or a call has
/// happened, it stays happened.
const ONE_WAY_FLAGS: &[&str] = &[
    "aborted",
    "destroyed",
    "closed",
    "ended",
    "finished",
    "killed",
    "called",
    "writableEnded",
    "writableFinished",
    "readableEnded",
];

/// The assertion checks that something did not happen: a mock not called
/// (`expect(fn).not.toHaveBeenCalled()`, `sinon.assert.notCalled(spy)`, a
/// call count of 0), a one-way flag still off (`assert.strictEqual(
/// signal.aborted, false)`, `assert(!spy.called)`). Waiting longer can only
/// make it pass, so a sleep before it is a grace window, not a guess.
fn checks_an_absence(cx: &FileCx, x: ExprId) -> bool {
    let Some(c) = cx.call(x) else { return false };
    let attr_name = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { name, .. } => Some(name.as_str()),
        _ => None,
    };
    let one_way = |e: ExprId| {
        attr_name(e).is_some_and(|n| ONE_WAY_FLAGS.contains(&n)) || only_turns_on(cx, e)
    };
    let counter = |e: ExprId| {
        let text = cx.source(cx.expr(e).span);
        attr_name(e) == Some("callCount") || text.ends_with(".calls.length") || only_grows(cx, e)
    };
    let lit = |e: ExprId| cx.model.literal(e);
    let is_false = |e: ExprId| matches!(lit(e), Some(Lit::Bool(false)));
    let is_zero = |e: ExprId| matches!(lit(e), Some(Lit::Int(0)));
    let negated = |e: ExprId| match cx.expr(cx.model.strip(e)).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => one_way(operand),
        _ => false,
    };
    // `expect(actual).not.toHaveBeenCalled()`, `expect(actual).toBe(false)`.
    let not = c.receiver.is_some_and(|r| attr_name(r) == Some("not"));
    let expected = c
        .receiver
        .map(|r| cx.model.strip(r))
        .map(|r| match &cx.expr(r).kind {
            ExprKind::Attr { obj, name, .. } if name == "not" => *obj,
            _ => r,
        })
        .and_then(|r| cx.call(r).filter(|k| k.name == "expect"))
        .and_then(|k| k.positional(0));
    let first = c.positional(0);
    let second = c.positional(1);
    match c.name.as_str() {
        "toHaveBeenCalled" | "toBeCalled" => not,
        "toHaveBeenCalledTimes" | "toBeCalledTimes" => !not && first.is_some_and(is_zero),
        "toBe" | "toEqual" | "toStrictEqual" if !not => expected
            .zip(first)
            .is_some_and(|(a, b)| (one_way(a) && is_false(b)) || (counter(a) && is_zero(b))),
        "toBeFalsy" if !not => expected.is_some_and(one_way),
        "notCalled" => true,
        "strictEqual" | "equal" | "deepEqual" | "deepStrictEqual" | "is" => {
            first.zip(second).is_some_and(|(a, b)| {
                (one_way(a) && is_false(b))
                    || (counter(a) && is_zero(b))
                    || (only_set_from_null(cx, a) && matches!(lit(b), Some(Lit::Null)))
            })
        }
        "notOk" | "false" => first.is_some_and(one_way),
        // `t.doesNotMatch(stdout, /called/)` on output only ever appended
        // to: what has not appeared yet can only appear later.
        "doesNotMatch" | "notMatch" => first.is_some_and(|a| only_appended_text(cx, a)),
        "ok" | "assert" | "true" => first.is_some_and(negated),
        _ => false,
    }
}

/// A variable whose assignments in the function that declares it (and
/// the functions inside), in source order, are a first boolean and then
/// only `true` (`let running = false; ... running =
/// true`): a flag that, once on, stays on.
fn only_turns_on(cx: &FileCx, e: ExprId) -> bool {
    let Some(values) = assigned_values(cx, e) else {
        return false;
    };
    let bools: Option<Vec<bool>> = values
        .iter()
        .map(|&v| match cx.model.literal(v) {
            Some(Lit::Bool(b)) => Some(*b),
            _ => None,
        })
        .collect();
    bools.is_some_and(|b| b.len() >= 2 && b[1..].iter().all(|&on| on))
}

/// A variable declared `null` and only ever set to something else after
/// (`let clientError = null; ... clientError = err`): still `null` means
/// the event never came, which waiting longer cannot undo.
fn only_set_from_null(cx: &FileCx, e: ExprId) -> bool {
    let is_null = |v: ExprId| matches!(cx.model.literal(v), Some(Lit::Null));
    assigned_values(cx, e)
        .is_some_and(|v| v.len() >= 2 && is_null(v[0]) && v[1..].iter().all(|&x| !is_null(x)))
}

/// A local declared as a string and afterwards only appended to (`let
/// stdout = ''; child.stdout.on('data', (c) => { stdout += c })`).
fn only_appended_text(cx: &FileCx, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(cx.model.strip(e)) else {
        return false;
    };
    let mut declared = false;
    for st in &cx.model.stmts {
        let StmtKind::Assign {
            targets, value, op, ..
        } = &st.kind
        else {
            continue;
        };
        if !targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) {
            continue;
        }
        match op {
            AssignOp::Declare { .. }
                if !declared
                    && value.is_some_and(|v| matches!(cx.model.literal(v), Some(Lit::Str(_)))) =>
            {
                declared = true
            }
            AssignOp::Augmented(BinOp::Add) => {}
            _ => return false,
        }
    }
    declared
}

/// `list.length` of an array declared empty that the file only ever adds
/// to (`push`/`unshift`; no `pop`, `shift`, `splice`, reassignment or
/// `length =`): a length of 0 means nothing arrived.
fn only_grows(cx: &FileCx, e: ExprId) -> bool {
    let ExprKind::Attr { obj, name, .. } = &cx.expr(cx.model.strip(e)).kind else {
        return false;
    };
    let Some(list) = cx.model.name_of(*obj) else {
        return false;
    };
    let declared_empty = assigned_values(cx, *obj).is_some_and(|v| {
        matches!(v.as_slice(), [only] if matches!(&cx.expr(cx.model.strip(*only)).kind,
            ExprKind::Collection { elems, .. } if elems.is_empty()))
    });
    name == "length"
        && declared_empty
        && cx.model.exprs.iter().all(|x| match &x.kind {
            ExprKind::Call(c) => {
                !(matches!(c.name.as_str(), "pop" | "shift" | "splice")
                    && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(list))
            }
            ExprKind::AssignExpr { target, .. } => !matches!(&cx.expr(*target).kind,
                ExprKind::Attr { obj: o, name: n, .. } if n == "length" && cx.model.name_of(*o) == Some(list)),
            _ => true,
        })
}

/// The values assigned to a local, in source order, in the function that
/// declares it and the functions inside (tests in one file often reuse a
/// name): `None` for anything but a declared local.
fn assigned_values(cx: &FileCx, e: ExprId) -> Option<Vec<ExprId>> {
    let e = cx.model.strip(e);
    let name = cx.model.name_of(e)?;
    let declares = |g: FuncId| {
        cx.body_stmts(g).iter().any(|&st| {
            matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, op: AssignOp::Declare { .. }, .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)))
        })
    };
    let scope = cx
        .tree
        .func_ancestors(cx.model, cx.func_of(e))
        .find(|&g| declares(g))?;
    let mut values: Vec<(u32, ExprId)> = Vec::new();
    for g in cx.with_nested(scope) {
        for &st in cx.body_stmts(g) {
            if let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &cx.stmt(st).kind
                && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
            {
                values.push((cx.stmt(st).span.start, *v));
            }
        }
        for &x in cx.body_exprs(g) {
            if let ExprKind::AssignExpr { target, value, .. } = &cx.expr(x).kind
                && cx.model.name_of(*target) == Some(name)
            {
                values.push((cx.expr(x).span.start, *value));
            }
        }
    }
    values.sort_unstable_by_key(|&(at, _)| at);
    Some(values.into_iter().map(|(_, v)| v).collect())
}

/// An assertion of constants only (`t.assert.ok('onAfter ran')`, counted by
/// `t.plan`): it marks that the code got here and reads no state the sleep
/// could have been waiting for.
///
/// So is a bare call on the test context (`t.pass()`, `t.end()`).
fn checks_nothing(cx: &FileCx, x: ExprId) -> bool {
    let c = cx.call(x).unwrap();
    if c.args.is_empty() {
        return c.receiver.is_some_and(|r| cx.model.name_of(r).is_some());
    }
    c.args.iter().all(|a| cx.model.literal(a.value).is_some())
}

fn is_assert(cx: &FileCx, x: ExprId) -> bool {
    let c = cx.call(x).unwrap();
    let root = c.receiver.and_then(|r| common::root_name(cx, r));
    // What a tap/tape test context does besides asserting: add a subtest,
    // plan, end, comment, schedule a teardown.
    if root == Some("t")
        && matches!(
            c.name.as_str(),
            "test" | "plan" | "end" | "comment" | "teardown" | "timeoutAfter" | "skip" | "todo"
        )
    {
        return false;
    }
    // `t` is a tap/tape/node:test context when a test callback receives
    // it; `var t = this` in a test double is the double itself
    // (`t.emit('message')` imitating a broker asserts nothing).
    let tap_context = root == Some("t") && common::param_owner(cx, cx.func_of(x), "t").is_some();
    c.name == "expect"
        || c.name.starts_with("assert")
        || tap_context
        || matches!(root, Some("assert" | "expect" | "should"))
        || c.target
            .as_deref()
            .is_some_and(|t| t.starts_with("assert") || t.starts_with("node:assert"))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
// file: test/worker.test.js
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("processes the job", async () => {
  queue.add({ id: 1 });
  await sleep(200); // expect
  expect(db.rows).toHaveLength(1);
});

it("emits", (done) => {
  emitter.start();
  setTimeout(() => { // expect
    expect(emitter.count).toBe(3);
    done();
  }, 100);
});

test("counts once the queue drained", async (t) => {
  queue.add({ id: 2 });
  await sleep(50); // expect
  t.assert.ok("drained");
  t.assert.strictEqual(queue.size, 0);
});
"#,
        r#"
// file: test/shrink.test.js
const { setTimeout: delay } = require("node:timers/promises");

test("idle workers go away", async () => {
  const pool = new Pool({ idleTimeout: 50, size: 2 });
  await pool.warm();
  expect(pool.workers.length).toBe(2);
  await delay(300); // expect
  expect(pool.workers.length).toBe(1);
});
"#,
        r#"
// file: test/back.test.js
const { setTimeout: delay } = require("node:timers/promises");

test("the pool shrinks back after a burst", async () => {
  const pool = new Pool({ idleTimeout: 50, min: 1, max: 2 });
  assert.strictEqual(pool.threads.length, 1);
  await Promise.all([pool.run(1), pool.run(2)]);
  assert.strictEqual(pool.threads.length, 2);
  await delay(100); // expect
  assert.strictEqual(pool.threads.length, 1);
});
"#,
        r#"
// file: test/abort.test.js
const { test } = require("node:test");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("the late timer aborts the request", async (t) => {
  const controller = new AbortController();
  startRequest(controller);
  await sleep(300); // expect
  t.assert.strictEqual(controller.signal.aborted, true);
});

test("the debounced save fires", async () => {
  const save = jest.fn();
  debounce(save, 10)("a");
  await sleep(100); // expect
  expect(save).not.toHaveBeenCalled();
  expect(save).toHaveBeenCalledTimes(1);
});
"#,
        r#"
// file: test/pause.test.js
const assert = require("assert");

it("goes idle after the batch", (done) => {
  let running = false;
  const q = new Queue((batch, cb) => {
    running = true;
    finish(batch, () => {
      running = false;
      cb();
    });
  });
  q.push({ id: 1 });
  setTimeout(() => { // expect
    assert.ok(!running);
    done();
  }, 10);
});
"#,
        r#"
// file: test/stream.test.js
const test = require("node:test");
const assert = require("node:assert");
const { start } = require("./worker");

test("reports the error", async () => {
  const queued = [];
  const stream = start();
  stream.on("message", (msg) => queued.push(msg));
  await new Promise((resolve) => setTimeout(resolve, 10)); // expect
  assert.ok(queued.some((msg) => msg.code === "ERROR"));
});
"#,
        r#"
// file: test/channels.test.js
const assert = require("assert");

it("drops the backlog on reset", async () => {
  const messageList = [];
  let clientError = null;
  client.on("error", (err) => {
    clientError = err;
  });
  client.on("message", (m) => messageList.push(m));
  client.on("reset", () => messageList.splice(0));
  client.reset();
  await wait(200); // expect
  assert.equal(messageList.length, 0);
});
"#,
        r#"
// file: test/signals.test.js
const { test } = require("node:test");
const { spawn } = require("node:child_process");
const { setTimeout: sleep } = require("node:timers/promises");

test("SIGTERM is ignored while booting", async (t) => {
  const child = spawn(process.execPath, ["fixture.js"]);
  let stdout = '';
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.kill("SIGTERM");
  await sleep(500); // expect
  t.assert.match(stdout, /callback called/);
});
"#,
        r#"
// file: test/subtest.test.js
const test = require("tape");

test("runs to the end", function (t) {
  runner.start();
  setTimeout(function () { // expect
    t.equal(runner.state, "done");
    t.end();
  }, 10);
});
"#,
    ],
    pass: &[
        r#"
// file: test/mqttStub.js
// A test double imitating a broker: `t` is the stub, and emitting asserts nothing.
proto.publish = function (topic, msg) {
  var t = this;
  t.published.push({ topic, msg });
  setTimeout(function () {
    t.emit("message", topic, msg);
  }, 1);
};
"#,
        r#"
// file: test/pause.test.js
const assert = require("assert");

it("does not process while paused", (done) => {
  let running = false;
  const q = new Queue(() => {
    running = true;
  });
  q.pause();
  q.push({ id: 1 });
  setTimeout(() => {
    assert.ok(!running);
    done();
  }, 10);
});

it("runs one batch at a time", (done) => {
  let running = false;
  const q = new Queue((batch, cb) => {
    assert.ok(!running);
    running = true;
    finish(batch, () => {
      running = false;
      cb();
    });
  });
  q.on("drain", done);
  q.push({ id: 1 });
});
"#,
        r#"
// file: test/pool.test.js
const { setTimeout: delay } = require("node:timers/promises");

test("workers stay when idle time is unlimited", async () => {
  const pool = new Pool({ idleTimeout: Infinity, size: 2 });
  await pool.warm();
  expect(pool.workers.length).toBe(2);
  await delay(300);
  expect(pool.workers.length).toBe(2);
});
"#,
        r#"
// file: test/worker.test.js
import { once } from "node:events";

test("processes the job", async () => {
  const done = once(queue, "done");
  queue.add({ id: 1 });
  await done;
  expect(db.rows).toHaveLength(1);
});

test("throttles", async () => {
  await sleep(10);
  server.close();
});
"#,
        r#"
// file: test/hooks.test.js
const { test } = require("node:test");
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test("async lifecycle hooks run", async (t) => {
  t.plan(2);
  const app = createApp();
  app.onAfter(async function (ctx) {
    await pause(1);
    t.assert.ok("onAfter ran");
  });
  const out = await app.dispatch({});
  t.assert.strictEqual(out, "ok");
});
"#,
        r#"
// file: test/timeout.test.js
const { test } = require("node:test");
const assert = require("node:assert");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("a finished request is not aborted by its late timer", async (t) => {
  const controller = new AbortController();
  const req = startRequest(controller);
  req.finished = true;
  await sleep(300);
  t.assert.strictEqual(controller.signal.aborted, false);
  assert.ok(!req.destroyed);
});

test("the debounced save does not fire early", async () => {
  const save = jest.fn();
  const input = debounce(save, 1000);
  input("a");
  await sleep(100);
  expect(save).not.toHaveBeenCalled();
  expect(save.mock.calls.length).toBe(0);
  sinon.assert.notCalled(spy);
});
"#,
        r#"
// file: test/stream.test.js
const test = require("node:test");
const assert = require("node:assert");
const { start } = require("./worker");

test("reports the error", async () => {
  const queued = [];
  const stream = start();
  stream.on("message", (msg) => queued.push(msg));
  while (!queued.some((msg) => msg.code === "ERROR")) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(queued.length > 0);
});
"#,
        r#"
// file: test/channels.test.js
const assert = require("assert");

it("does not deliver after unsubscribe", async () => {
  const messageList = [];
  let clientError = null;
  client.on("error", (err) => {
    clientError = err;
  });
  client.on("message", (m) => messageList.push(m));
  client.unsubscribe("foo");
  await wait(200);
  assert.equal(messageList.length, 0);
  assert.equal(clientError, null);
});
"#,
        r#"
// file: test/signals.test.js
const { test } = require("node:test");
const { spawn } = require("node:child_process");
const { setTimeout: sleep } = require("node:timers/promises");

test("SIGTERM is ignored while booting", async (t) => {
  const child = spawn(process.execPath, ["fixture.js"]);
  let stdout = '';
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.kill("SIGTERM");
  await sleep(500);
  t.assert.doesNotMatch(stdout, /callback called/);
});
"#,
        r#"
// file: test/subtest.test.js
const test = require("tape");

test("adds a subtest later", function (t) {
  setTimeout(function () {
    t.test("child", function (st) {
      st.pass("child");
      st.end();
    });
  }, 10);
});

test("ends twice", function (t) {
  t.end();
  setTimeout(function () {
    t.end();
  }, 5);
});

test("async body", async function (t) {
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.pass();
});
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SleepInTest);
}
