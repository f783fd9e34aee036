//! PY041: a process joined before the multiprocessing queue it fills is
//! read.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct JoinBeforeDrain;

pub static META: RuleMeta = RuleMeta {
    id: "PY041",
    name: "process-joined-before-queue-drained",
    category: Category::WaitCycle,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A `multiprocessing.Process` is joined before the parent reads the `multiprocessing.Queue` the process puts its results into.",
    docs: r#"
A function hands a `multiprocessing.Queue` (or `JoinableQueue`) to a
`multiprocessing.Process` it starts, then calls `p.join()` (no timeout;
directly, or in a loop over the processes it started) before it reads
anything from that queue, and reads the queue only after the join, or
never reads it at all (a local used for nothing but the hand-over).

Not reported when the function reads the queue before the join (a drain
loop while the processes run), when a queue it never reads is not a local used
only for the hand-over (some other code may read it), when the join has a timeout (that wait ends), or when
the process's target is a function of the file that never puts anything.

## Why

`put` on a multiprocessing queue hands the item to a feeder thread that
writes it into a pipe. A process that has put items does not exit until
its feeder thread has written all of them, and the pipe holds only a
little (64 KiB on Linux). So when the child's results are larger than the
pipe, the child waits for the parent to read, while the parent waits in
`join()` for the child to exit: neither moves, and the program hangs. With
small results it works, which is why it survives testing and hangs on the
first large input. The Python documentation warns about exactly this under
"Joining processes that use queues".

The severity is one step below the category's: the hang needs results
larger than the pipe's buffer.

## Example

```python
from multiprocessing import Process, Queue

def scrape(url, out):
    out.put(download_all_pages(url))

def run(url):
    results = Queue()
    p = Process(target=scrape, args=(url, results))
    p.start()
    p.join()
    return results.get()
```

## Fix

Read everything the process sends before joining it (a known count of
items, or until a sentinel), or let a pool return the results.

```python
from multiprocessing import Process, Queue

def scrape(url, out):
    out.put(download_all_pages(url))

def run(url):
    results = Queue()
    p = Process(target=scrape, args=(url, results))
    p.start()
    pages = results.get()
    p.join()
    return pages
```
"#,
    examples: &EXAMPLES,
};

impl Rule for JoinBeforeDrain {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            if !starts_a_process(cx, c) {
                continue;
            }
            let start = ExprId(i as u32);
            let home = cx.func_of(start);
            if cx.func(home).is_test {
                continue;
            }
            // One finding per join, for the first queue it strands (the
            // others are named in the message).
            let stranded: Vec<(String, ExprId, Option<ExprId>)> = handed_queues(cx, start, c)
                .into_iter()
                .filter_map(|q| {
                    let (join, read) = joined_before_read(cx, start, c, &q)?;
                    Some((q, join, read))
                })
                .collect();
            if let Some(f) = finding(cx, start, &stranded) {
                out.push(f);
            }
        }
    }
}

/// `multiprocessing.Process(..)` (knowledge: a `spawn` of kind `process`).
fn starts_a_process(cx: &FileCx, c: &Call) -> bool {
    cx.effect(c, Effect::Spawn)
        .is_some_and(|s| s.kind.as_deref() == Some("process"))
}

/// The multiprocessing queues the process constructor `c` is handed, by
/// their dotted names: in `args=(..)`, `kwargs={..}`, or a dict the
/// function filled before (`kwargs["queue"] = data_q`; `kwargs=kwargs`).
pub(crate) fn handed_queues(cx: &FileCx, start: ExprId, c: &Call) -> Vec<String> {
    let home = cx.func_of(start);
    let mut given: Vec<ExprId> = Vec::new();
    for arg in ["args", "kwargs"] {
        let Some(v) = c.kwarg(arg) else { continue };
        given.extend(exprs_under(cx.model, v));
        // A dict the function filled item by item.
        if let Some(dict) = cx.model.name_of(cx.model.strip(v)) {
            for (_, value) in crate::util::assignments(cx, |t| {
                cx.func_of(t) == home
                    && matches!(&cx.expr(t).kind, ExprKind::Index { obj, .. }
                        if cx.model.name_of(*obj) == Some(dict))
            }) {
                given.push(value);
            }
        }
    }
    let mut names: Vec<String> = given
        .into_iter()
        .filter_map(|x| cx.model.dotted(x))
        .filter(|n| !n.is_empty() && is_process_queue(cx, home, n))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// `name` is bound to a multiprocessing queue: assigned one in `home`, or,
/// for an attribute (`self.results`), anywhere in the file.
fn is_process_queue(cx: &FileCx, home: FuncId, name: &str) -> bool {
    let attr = name.contains('.');
    crate::util::assignments(cx, |t| {
        (attr || cx.func_of(t) == home) && cx.model.dotted(t).as_deref() == Some(name)
    })
    .into_iter()
    .any(|(_, v)| {
        cx.call(cx.model.strip(v)).is_some_and(|q| {
            cx.effect(q, Effect::Queue)
                .is_some_and(|k| k.kind.as_deref() == Some("process"))
        })
    })
}

/// The first `join()` without a timeout of the process `start` builds, in
/// the function that builds it: on the name it is bound to (`p.join()`),
/// or on the loop variable of a `for` over a list it was put in (`procs.
/// append(p)` ... `for p in procs: p.join()`).
fn first_join(cx: &FileCx, start: ExprId) -> Option<ExprId> {
    let home = cx.func_of(start);
    let Parent::Stmt(s) = cx.tree.expr_parent(start) else {
        return None;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return None;
    };
    let [t] = targets.as_slice() else { return None };
    let handle = cx.model.name_of(*t)?;
    // The lists the handle is appended to.
    let lists: Vec<String> = cx
        .body_calls(home)
        .filter_map(|e| {
            let a = cx.call(e)?;
            (a.name == "append"
                && a.positional(0).and_then(|x| cx.model.name_of(x)) == Some(handle))
            .then(|| a.receiver.and_then(|r| cx.model.dotted(r)))
            .flatten()
        })
        .collect();
    let after = cx.expr(start).span.start;
    cx.body_calls(home)
        .filter(|&e| cx.expr(e).span.start > after)
        .filter(|&e| {
            let Some(j) = cx.call(e) else { return false };
            if j.name != "join"
                || !j
                    .args
                    .iter()
                    .all(|a| crate::python::common::is_none(cx, a.value))
            {
                return false;
            }
            let Some(r) = j.receiver.and_then(|r| cx.model.name_of(r)) else {
                return false;
            };
            (r == handle || joins_each_of(cx, e, r, &lists)) && !stopped_before(cx, e, r)
        })
        .min_by_key(|&e| cx.expr(e).span.start)
}

/// The process was terminated or killed just before the join, in the same
/// block (`p.terminate(); p.join()`): it is gone, its feeder thread with it.
fn stopped_before(cx: &FileCx, join: ExprId, handle: &str) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(join) else {
        return false;
    };
    let Some(block) = crate::util::containing_block(cx, s) else {
        return false;
    };
    block.iter().take_while(|&&b| b != s).any(|&b| {
        unsnarl_model::walk::exprs_in_block(cx.model, &vec![b])
            .into_iter()
            .any(|x| {
                cx.call(x).is_some_and(|k| {
                    matches!(k.name.as_str(), "terminate" | "kill")
                        && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(handle)
                })
            })
    })
}

/// The join `e` is on `var`, the variable of a `for` over one of `lists`.
fn joins_each_of(cx: &FileCx, e: ExprId, var: &str, lists: &[String]) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(e) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::For { target, iter, .. }
            if target.and_then(|t| cx.model.name_of(t)) == Some(var)
                && cx.model.dotted(cx.model.strip(*iter)).is_some_and(|l| lists.contains(&l)))
    })
}

/// The join and the first read after it, when the function joins the
/// process `start` builds before any read of `queue` and reads it after.
pub(crate) fn joined_before_read(
    cx: &FileCx,
    start: ExprId,
    c: &Call,
    queue: &str,
) -> Option<(ExprId, Option<ExprId>)> {
    let home = cx.func_of(start);
    // Handed to a second process too: that one may be the consumer
    // (`producer = Process(..q..)`, `consumers = [Process(..q..) ..]`).
    let starts = handed_to_processes(cx, home, queue);
    if starts != 1 {
        return None;
    }
    let join = first_join(cx, start)?;
    let at = cx.expr(join).span.start;
    // Every read of the queue in the function: a method that takes or
    // looks (`q.get()`, `q.empty()`), or handing it to a helper
    // (`queue_to_list(q)`).
    let reads: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&x| {
            cx.func_of(x) == home
                && cx.model.dotted(x).as_deref() == Some(queue)
                && !cx.contains(start, x)
                && reads_queue(cx, x)
        })
        .collect();
    if reads.iter().any(|&x| cx.expr(x).span.start < at) {
        return None;
    }
    let read_after = match reads.iter().copied().find(|&x| cx.expr(x).span.start > at) {
        Some(r) => Some(r),
        // Never read at all: only a local that the function uses for
        // nothing but the hand-over, so nothing else can read it either.
        None if !queue.contains('.') && only_handed_over(cx, start, queue) => None,
        None => return None,
    };
    if target_never_puts(cx, c) {
        return None;
    }
    Some((join, read_after))
}

/// The local `queue` is used in its function only to be bound and handed
/// to the process `start` builds: the parent neither reads nor fills it,
/// returns it, nor passes it anywhere else.
fn only_handed_over(cx: &FileCx, start: ExprId, queue: &str) -> bool {
    let home = cx.func_of(start);
    (0..cx.model.exprs.len() as u32).map(ExprId).all(|x| {
        cx.func_of(x) != home
            || cx.model.name_of(x) != Some(queue)
            || cx.contains(start, x)
            || matches!(cx.tree.expr_parent(x), Parent::Stmt(s)
                if matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&x)))
    })
}

/// The multiprocessing queue `name` of `home` is handed to a process that
/// `home` joins before reading it (what this rule reports).
pub(crate) fn stranded_by_join(cx: &FileCx, home: FuncId, name: &str) -> bool {
    cx.body_calls(home).any(|e| {
        cx.call(e).is_some_and(|p| {
            starts_a_process(cx, p)
                && handed_queues(cx, e, p).iter().any(|q| q == name)
                && joined_before_read(cx, e, p, name).is_some()
        })
    })
}

/// How many process constructors of `home` are handed `queue`.
fn handed_to_processes(cx: &FileCx, home: FuncId, queue: &str) -> usize {
    cx.body_calls(home)
        .filter(|&e| {
            cx.call(e).is_some_and(|p| {
                starts_a_process(cx, p) && handed_queues(cx, e, p).iter().any(|q| q == queue)
            })
        })
        .count()
}

/// The use `x` of a queue reads it: `x.get()`, `x.get_nowait()`,
/// `x.empty()`, `x.qsize()`, or `x` handed to a call.
fn reads_queue(cx: &FileCx, x: ExprId) -> bool {
    match cx.tree.expr_parent(x) {
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Attr { name, .. } => {
                matches!(name.as_str(), "get" | "get_nowait" | "empty" | "qsize")
            }
            ExprKind::Call(c) => c.func != x,
            _ => false,
        },
        _ => false,
    }
}

fn finding(
    cx: &FileCx,
    start: ExprId,
    stranded: &[(String, ExprId, Option<ExprId>)],
) -> Option<Finding> {
    // A queue read after the join first: the parent plainly expects what
    // the child sent.
    let mut order: Vec<&(String, ExprId, Option<ExprId>)> = stranded.iter().collect();
    order.sort_by_key(|(_, _, read)| read.is_none());
    let &(queue, join, read_after) = order.first()?;
    let join = *join;
    let shown = cx.model.dotted(cx.call(join)?.receiver?)?;
    let others: Vec<String> = order[1..]
        .iter()
        .map(|(q, _, _)| format!("`{q}`"))
        .collect();
    let also = if others.is_empty() {
        String::new()
    } else {
        format!(" (and {})", others.join(", "))
    };
    let when = match read_after {
        Some(_) => {
            "is read: a process that has put more than the pipe holds (64 KiB on Linux) into it cannot exit until it is read, and the parent reads it only after the join returns, so both wait forever"
        }
        None => {
            "is ever read: a process that has put more than the pipe holds (64 KiB on Linux) into it cannot exit until it is read, and nothing reads it, so the join waits forever"
        }
    };
    let mut f = cx.finding(
        &META,
        cx.expr(join).span,
        format!("`{shown}.join()` waits for the process before `{queue}`{also} {when}"),
        format!(
            "read what the process sends from `{queue}` first (a known number of items, or until a sentinel), then join it; or let a `multiprocessing.Pool` or `ProcessPoolExecutor` return the results"
        ),
    );
    f.related.push(Related {
        file: None,
        span: cx.expr(start).span,
        message: format!("the process is handed `{queue}` here"),
    });
    if let Some(read) = read_after {
        f.related.push(Related {
            file: None,
            span: cx.expr(*read).span,
            message: format!("`{queue}` is read only here, after the join"),
        });
    }
    Some(f)
}

/// The process's target is a function of the file that puts nothing into
/// any queue: it only uses the queue some other way.
fn target_never_puts(cx: &FileCx, c: &Call) -> bool {
    let Some(f) = c
        .kwarg("target")
        .and_then(|t| crate::python::common::local_callable(cx, t))
    else {
        return false;
    };
    !cx.with_nested(f).into_iter().any(|g| {
        cx.body_calls(g).any(|e| {
            cx.call(e)
                .is_some_and(|p| matches!(p.name.as_str(), "put" | "put_nowait"))
        })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
from multiprocessing import Process, Queue

def scrape(url, out):
    out.put(download_all_pages(url))

def run(url):
    results = Queue()
    p = Process(target=scrape, args=(url, results))
    p.start()
    p.join()  # expect
    return results.get()
"#,
        r#"
from multiprocessing import Process, Queue

def upload_all(assets, worker, n):
    todo = Queue()
    done = Queue()
    for a in assets:
        todo.put(a)
    for _ in range(n):
        todo.put(None)
    procs = []
    for i in range(n):
        p = Process(target=worker, args=(i, todo, done))
        p.start()
        procs.append(p)
    # Each worker puts one record per upload into `done`, which nobody reads.
    for w in procs:
        w.join()  # expect
"#,
        r#"
import multiprocessing as mp
from crawler import run_spider

def scrape(spider, **kwargs):
    errors = mp.Queue()
    data = mp.Queue()
    kwargs["queue"] = data
    p = mp.Process(target=run_spider, args=(spider, errors), kwargs=kwargs)
    p.start()
    p.join()  # expect
    if not errors.empty():
        raise errors.get()
    return drain_to_list(data)
"#,
        r#"
import multiprocessing

def evaluate_all(exprs, evaluate):
    out = multiprocessing.Queue()
    procs = []
    for i, expr in enumerate(exprs):
        p = multiprocessing.Process(target=evaluate, args=(out, expr, i))
        p.start()
        procs.append(p)
    for p in procs:
        p.join()  # expect
    return [out.get() for _ in procs]
"#,
    ],
    pass: &[
        r#"
from multiprocessing import JoinableQueue, Process

def download_all(produce, consume, n):
    queue = JoinableQueue()
    producer = Process(target=produce, args=(queue, n))
    producer.start()
    consumers = [Process(target=consume, args=(queue,)) for _ in range(n)]
    for c in consumers:
        c.start()
    # The consumer processes drain the queue while the producer runs.
    producer.join()
    queue.join()
    for c in consumers:
        c.join()
"#,
        r#"
import multiprocessing as mp

def evaluate(exprs, fork_eval, timeout):
    queue = mp.Queue()
    procs = []
    for i, expr in enumerate(exprs):
        p = mp.Process(target=fork_eval, args=(queue, expr, i))
        p.start()
        procs.append(p)
    for p in procs:
        p.join(timeout)
        if p.is_alive():
            p.terminate()
            p.join()
    results = {}
    while not queue.empty():
        r = queue.get_nowait()
        results[r["idx"]] = r
    return results
"#,
        r#"
from multiprocessing import Process, Queue

def scrape(url, out):
    out.put(download_all_pages(url))

def run(url):
    results = Queue()
    p = Process(target=scrape, args=(url, results))
    p.start()
    pages = results.get()
    p.join()
    return pages
"#,
        r#"
import multiprocessing

def evaluate_all(exprs, evaluate, timeout):
    out = multiprocessing.Queue()
    procs = []
    for i, expr in enumerate(exprs):
        p = multiprocessing.Process(target=evaluate, args=(out, expr, i))
        p.start()
        procs.append(p)
    # A join with a timeout ends; a stuck child is then terminated.
    for p in procs:
        p.join(timeout)
        if p.is_alive():
            p.terminate()
    results = []
    while not out.empty():
        results.append(out.get_nowait())
    return results
"#,
        r#"
import multiprocessing

def work(tasks, done):
    for t in iter(tasks.get, None):
        t.run()

def run_all(items):
    tasks = multiprocessing.Queue()
    done = multiprocessing.Queue()
    p = multiprocessing.Process(target=work, args=(tasks, done))
    p.start()
    for item in items:
        tasks.put(item)
    tasks.put(None)
    p.join()
    return done.empty()
"#,
        r#"
from multiprocessing import Process, Queue

def run(jobs, worker):
    results = Queue()
    procs = [Process(target=worker, args=(j, results)) for j in jobs]
    for p in procs:
        p.start()
    collected = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return collected
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(JoinBeforeDrain);

    /// The finding points at the hand-over and at the late read.
    #[test]
    fn points_at_the_queue_handed_over_and_read_late() {
        static RULE: JoinBeforeDrain = JoinBeforeDrain;
        let findings: Vec<Finding> =
            crate::testing::run_example(&RULE, Language::Python, EXAMPLES.fail[0])
                .0
                .into_iter()
                .map(|(_, f)| f)
                .collect();
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let related: Vec<&str> = findings[0]
            .related
            .iter()
            .map(|r| r.message.as_str())
            .collect();
        assert_eq!(
            related,
            [
                "the process is handed `results` here",
                "`results` is read only here, after the join"
            ]
        );
    }
}
