//! GO022: a mutex (or semaphore channel slot) taken and not released on
//! some return path.

use super::common;
use super::flow::{self, Flow};
use super::locks::{self, Held, HeldSet, LockOp, OpKind};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::BTreeSet;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct UnlockMissingOnPath;

pub static META: RuleMeta = RuleMeta {
    id: "GO022",
    name: "unlock-missing-on-path",
    category: Category::SemaphoreMisuse,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`Lock()` (or a semaphore-channel acquire) without `defer`, and a return path that leaves without the matching `Unlock()` (or release).",
    docs: r#"
A function locks a mutex (or acquires a slot of a semaphore channel with
`sem <- struct{}{}`; not when a receive from the same channel earlier in
the block took the slot, as with a semaphore filled with tokens up front)
and releases it explicitly, without `defer`, but some
`return` (typically an early error return) leaves while it is still held.
A branch under a constant condition (`if false { return }`) never runs and
is not a path. A return that hands the lock over (its release function,
`return v, tx.unlock, nil`, or the lock itself, `return &c.mu`, also through
a named result) leaves the unlocking to the caller and is not reported.

## Why

The lock stays held after the function returns. The next `Lock` from any
goroutine blocks forever, so one error path silently freezes every request
that touches the structure. A semaphore slot that is never released shrinks
the pool by one each time until nothing can run.

## Example

```go
package app

import "sync"

type Cache struct {
	mu    sync.Mutex
	items map[string]string
}

func (c *Cache) Set(k, v string) error {
	c.mu.Lock()
	if k == "" {
		return errEmptyKey
	}
	c.items[k] = v
	c.mu.Unlock()
	return nil
}
```

## Fix

Release with `defer` right after acquiring.

```go
package app

import "sync"

type Cache struct {
	mu    sync.Mutex
	items map[string]string
}

func (c *Cache) Set(k, v string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k == "" {
		return errEmptyKey
	}
	c.items[k] = v
	return nil
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnlockMissingOnPath {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || !locks::file_takes_locks(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if f.0 == 0 {
                continue;
            }
            let released = released_in(cx, f);
            if released.is_empty() {
                continue;
            }
            let excused = excused(cx, f);
            let mut fl = Paths { leaks: Vec::new() };
            flow::run_function(cx, &mut fl, &cx.func(f).body, HeldSet::new());
            let mut seen = BTreeSet::new();
            for (ret, h) in fl.leaks {
                if !released.contains(&h.op.instance)
                    || excused.contains(&h.op.instance)
                    || correlated(cx, f, &h.op)
                    || ret.is_some_and(|r| {
                        hands_back_release(cx, r) || hands_back_lock(cx, f, r, &h.op.instance)
                    })
                    || released_elsewhere(cx, f, &h.op)
                    || !seen.insert((h.op.instance.clone(), ret))
                {
                    continue;
                }
                let is_sem = h.op.call == ExprId(u32::MAX);
                if is_sem && !received_after(cx, f, &h.op.instance, h.op.span.start) {
                    // A send that no later receive in the function takes
                    // back is a signal to another goroutine, not a slot.
                    continue;
                }
                // `defer` takes a call: a receive needs a func literal.
                let (what, rel, deferred) = if is_sem {
                    let rel = format!("<-{}", h.op.instance);
                    (
                        "slot of the semaphore channel",
                        rel.clone(),
                        format!("func() {{ {rel} }}()"),
                    )
                } else {
                    let rel = format!(
                        "{}.{}",
                        h.op.instance,
                        if h.op.kind == OpKind::RLock {
                            "RUnlock()"
                        } else {
                            "Unlock()"
                        }
                    );
                    ("lock", rel.clone(), rel)
                };
                let (span, at) = match ret {
                    Some(r) => (cx.stmt(r).span, "this return leaves".to_string()),
                    None => (h.op.span, "a path through the function ends".to_string()),
                };
                out.push(cx.finding(
                    &META,
                    span,
                    format!(
                        "{at} with the {what} `{}` taken at line {} still held: `{rel}` is skipped on this path, and the next acquire blocks forever",
                        h.op.instance,
                        common::line_of(cx, h.op.span)
                    ),
                    // In a loop a `defer` would hold it until the function
                    // returns, across the next iterations' acquires.
                    if in_a_loop(cx, f, h.op.span) {
                        format!("call `{rel}` before this path leaves (a `defer` would keep it held through the loop's later iterations), or move the locked part into a function of its own with `defer {deferred}`")
                    } else {
                        format!("release with `defer {deferred}` right after acquiring, so every path releases")
                    },
                ));
            }
        }
    }
}

/// The acquire at `at` sits inside a loop of function `f`.
fn in_a_loop(cx: &FileCx, f: FuncId, at: Span) -> bool {
    cx.body_stmts(f).iter().any(|&s| {
        matches!(
            cx.stmt(s).kind,
            StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
        ) && cx.stmt(s).span.contains(at)
    })
}

/// The mutexes and semaphore channels the function explicitly releases
/// (not counting deferred releases).
fn released_in(cx: &FileCx, f: FuncId) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in cx.body_stmts(f).iter().copied() {
        if matches!(cx.stmt(s).kind, StmtKind::Defer(_) | StmtKind::Go(_)) {
            continue;
        }
        for e in locks::evaluated_exprs(cx, s) {
            if let Some(op) = locks::lock_op(cx, e)
                && !op.kind.acquires()
            {
                out.insert(op.instance);
            }
        }
        if let StmtKind::Expr(e) = cx.stmt(s).kind
            && let ExprKind::Recv(ch) = cx.expr(e).kind
            && let Some(d) = cx.model.dotted(ch)
        {
            out.insert(d);
        }
    }
    out
}

/// The mutex (known by its type and field) is released by another
/// function of the file that never takes it: a lock held for an object's
/// life (bbolt's `beginTx` read-locks `db.mmaplock`, `Tx.Rollback` →
/// `removeTx` unlocks it), so leaving with it is the point.
fn released_elsewhere(cx: &FileCx, f: FuncId, op: &LockOp) -> bool {
    let Some(class) = &op.class else {
        return false;
    };
    let same = |o: &LockOp| o.class.as_ref() == Some(class);
    cx.model.function_ids().any(|g| {
        g != f
            && g.0 != 0
            && common::outermost(cx, g) != common::outermost(cx, f)
            && cx
                .body_exprs(g)
                .iter()
                .filter_map(|&e| locks::lock_op(cx, e))
                .fold((false, false), |(rel, acq), o| {
                    (
                        rel || (same(&o) && !o.kind.acquires()),
                        acq || (same(&o) && o.kind.acquires()),
                    )
                })
                == (true, false)
    })
}

/// A statement `<-ch` (for `instance`) after byte `at` in `f`: the
/// release that makes `ch <- struct{}{}` before it a semaphore acquire.
fn received_after(cx: &FileCx, f: FuncId, instance: &str, at: u32) -> bool {
    cx.body_stmts(f).iter().any(|&s| {
        cx.stmt(s).span.start > at
            && locks::evaluated_exprs(cx, s).into_iter().any(|e| {
                matches!(cx.expr(e).kind, ExprKind::Recv(ch)
                    if cx.model.dotted(ch).as_deref() == Some(instance))
            })
    })
}

/// Mutexes the function may legitimately leave held on some path: those it
/// unlocks before it first locks them (it expects them held on entry and
/// drops them for a while), and those with a deferred unlock somewhere.
fn excused(cx: &FileCx, f: FuncId) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for &e in cx.body_exprs(f) {
        if let Some(op) = locks::lock_op(cx, e)
            && seen.insert(op.instance.clone())
            && !op.kind.acquires()
        {
            out.insert(op.instance);
        }
    }
    for s in cx.body_stmts(f).iter().copied() {
        if let StmtKind::Defer(e) = cx.stmt(s).kind {
            for op in locks::deferred_unlocks(cx, e) {
                out.insert(op.instance);
            }
        }
    }
    out
}

/// `if cond { mu.Lock() } ... if cond { mu.Unlock() }`: the paths that
/// lock are the paths that unlock, which a path-insensitive walk misses.
fn correlated(cx: &FileCx, f: FuncId, op: &LockOp) -> bool {
    let cond_of = |e: ExprId| -> Option<(StmtId, String)> {
        let s = cx.tree.enclosing_stmt(e)?;
        cx.tree
            .stmt_ancestors(s)
            .find_map(|a| match &cx.stmt(a).kind {
                StmtKind::If { cond, .. } => Some((a, cx.source(cx.expr(*cond).span).to_string())),
                _ => None,
            })
    };
    if op.call == ExprId(u32::MAX) {
        return false;
    }
    let Some(lock_cond) = cond_of(op.call) else {
        return false;
    };
    // Another `if` on the same condition (the one around the lock may hold
    // the unlock too: that is no correlation).
    cx.body_exprs(f).iter().any(|&e| {
        locks::lock_op(cx, e).is_some_and(|o| !o.kind.acquires() && o.instance == op.instance)
            && cond_of(e).is_some_and(|(s, c)| s != lock_cond.0 && c == lock_cond.1)
    })
}

/// `return x, tx.unlockFunc, nil`: the caller gets the release function.
fn hands_back_release(cx: &FileCx, ret: StmtId) -> bool {
    let StmtKind::Return(Some(v)) = cx.stmt(ret).kind else {
        return false;
    };
    exprs_under(cx.model, v)
        .into_iter()
        .any(|e| match &cx.expr(e).kind {
            ExprKind::Name { id, .. } | ExprKind::Attr { name: id, .. } => {
                let l = id.to_ascii_lowercase();
                l.contains("unlock") || l.contains("release")
            }
            ExprKind::Closure(_) => true,
            _ => false,
        })
}

/// The return hands the held lock itself to the caller (`return size,
/// &c.rlock, nil`, or a named result `lock = &c.rlock` then `return`): the
/// caller unlocks it, ownership goes with the value.
fn hands_back_lock(cx: &FileCx, f: FuncId, ret: StmtId, instance: &str) -> bool {
    let is_ref_to_lock = |e: ExprId| {
        matches!(&cx.expr(cx.model.strip(e)).kind, ExprKind::Unary { op: UnOp::Ref, operand }
            if cx.model.dotted(*operand).as_deref() == Some(instance))
    };
    // Names this function binds to `&instance` before the return.
    let at = cx.stmt(ret).span.start;
    let mut names: Vec<String> = Vec::new();
    for &s in cx.body_stmts(f) {
        if cx.stmt(s).span.start >= at {
            continue;
        }
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        {
            let values: Vec<ExprId> = match &cx.expr(*v).kind {
                ExprKind::Collection {
                    kind: CollKind::Tuple,
                    elems,
                    ..
                } => elems.clone(),
                _ => vec![*v],
            };
            let slots: Vec<ExprId> = match targets.as_slice() {
                [t] => match &cx.expr(*t).kind {
                    ExprKind::Collection {
                        kind: CollKind::Tuple,
                        elems,
                        ..
                    } => elems.clone(),
                    _ => vec![*t],
                },
                many => many.to_vec(),
            };
            for (t, v) in slots.iter().zip(values.iter()) {
                if is_ref_to_lock(*v)
                    && let Some(n) = cx.model.name_of(*t)
                {
                    names.push(n.to_string());
                }
            }
        }
    }
    let StmtKind::Return(value) = cx.stmt(ret).kind else {
        return false;
    };
    // (Named results are spelled in the declared return type.)
    let named_result = |n: &str| {
        cx.func(f).returns.as_ref().is_some_and(|r| {
            r.text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == n)
        })
    };
    match value {
        Some(v) => exprs_under(cx.model, v).into_iter().any(|e| {
            is_ref_to_lock(e)
                || cx
                    .model
                    .name_of(e)
                    .is_some_and(|n| names.iter().any(|x| x == n))
        }),
        // A bare `return` with named results: any of them bound to the lock.
        None => names.iter().any(|n| named_result(n)),
    }
}

/// `sem <- struct{}{}` on a channel of empty structs: a semaphore acquire,
/// unless a receive from it earlier in the block took the slot.
fn sem_acquire(cx: &FileCx, s: StmtId) -> Option<String> {
    let StmtKind::Expr(e) = cx.stmt(s).kind else {
        return None;
    };
    let ExprKind::Send { channel, value } = cx.expr(e).kind else {
        return None;
    };
    let v = cx.source(cx.expr(value).span).replace(' ', "");
    if v != "struct{}{}" {
        return None;
    }
    let ch = cx.model.dotted(channel)?;
    // `<-dios; work(); dios <- struct{}{}`: a semaphore filled with tokens
    // up front, where the receive takes a slot and this send gives it back.
    let block = crate::util::containing_block(cx, s)?;
    let before = &block[..block.iter().position(|&x| x == s)?];
    let gives_back = before.iter().any(|&b| {
        matches!(cx.stmt(b).kind, StmtKind::Expr(r)
            if matches!(cx.expr(r).kind, ExprKind::Recv(c) if cx.model.dotted(c).as_deref() == Some(ch.as_str())))
    });
    (!gives_back).then_some(ch)
}

struct Paths {
    leaks: Vec<(Option<StmtId>, Held)>,
}

impl Flow for Paths {
    type S = HeldSet;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut HeldSet) {
        if let Some(ch) = sem_acquire(cx, s) {
            st.push(Held {
                op: LockOp {
                    kind: OpKind::Lock,
                    instance: ch,
                    class: None,
                    recv_path: None,
                    call: ExprId(u32::MAX),
                    span: cx.stmt(s).span,
                },
                deferred: false,
            });
            return;
        }
        if let StmtKind::Defer(e) = cx.stmt(s).kind {
            // `defer func() { <-sem }()` releases a slot at exit.
            if let Some(g) = common::go_closure(cx, e) {
                for &x in cx.body_exprs(g) {
                    if let ExprKind::Recv(ch) = cx.expr(x).kind
                        && let Some(d) = cx.model.dotted(ch)
                    {
                        for h in st.iter_mut() {
                            if h.op.instance == d {
                                h.deferred = true;
                            }
                        }
                    }
                }
            }
        }
        if let StmtKind::Expr(e) = cx.stmt(s).kind
            && let ExprKind::Recv(ch) = cx.expr(e).kind
            && let Some(d) = cx.model.dotted(ch)
            && let Some(i) = st.iter().rposition(|h| h.op.instance == d)
        {
            st.remove(i);
            return;
        }
        locks::apply(cx, s, st, &mut |_, _| {});
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut HeldSet) {
        for x in exprs_under(cx.model, e) {
            locks::apply_expr(cx, x, st, &mut |_, _| {});
        }
    }
    fn exit(&mut self, _cx: &FileCx, ret: Option<StmtId>, st: &HeldSet) {
        for h in st {
            if !h.deferred {
                self.leaks.push((ret, h.clone()));
            }
        }
    }
    fn join(&self, a: &HeldSet, b: &HeldSet) -> HeldSet {
        // Held on either path: a path that keeps it is what we look for.
        let mut v = a.clone();
        for h in b {
            if !v.iter().any(|x| x.op.instance == h.op.instance) {
                v.push(h.clone());
            }
        }
        v
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

type Cache struct {
	mu    sync.RWMutex
	items map[string]string
}

func (c *Cache) Set(k, v string) error {
	c.mu.Lock()
	if k == "" {
		return errEmptyKey // expect
	}
	c.items[k] = v
	c.mu.Unlock()
	return nil
}

func (c *Cache) Get(k string) (string, error) {
	c.mu.RLock()
	v, ok := c.items[k]
	if !ok {
		return "", errMissing // expect
	}
	c.mu.RUnlock()
	return v, nil
}
"#,
        r#"
package app

func (c *Cache) Ticket(other *Cache) []string {
	if other != nil {
		other.mu.RLock()
		if other.items == nil {
			return nil // expect
		}
		other.mu.RUnlock()
	}
	return nil
}

func Run(sem chan struct{}, job Job) error {
	sem <- struct{}{}
	if err := job.Prepare(); err != nil {
		return err // expect
	}
	job.Do()
	<-sem
	return nil
}
"#,
        r#"
package bench

import "sync"

// The constant condition always returns, with the mutex held.
func lockAndLeave(mu *sync.Mutex) {
	mu.Lock()
	if true {
		return // expect
	}
	mu.Unlock()
}
"#,
        r#"
package kconn

import "sync"

type Conn struct {
	rlock sync.Mutex
	ids   []int32
}

func (c *Conn) awaitReply(id int32) (size int, err error) {
	for {
		c.rlock.Lock()
		if len(c.ids) == 0 {
			return 0, nil // expect
		}
		if c.ids[0] == id {
			c.ids = c.ids[1:]
			c.rlock.Unlock()
			return 8, nil
		}
		c.rlock.Unlock()
	}
}
"#,
        r#"
package pipe

import (
	"os"
	"sync"
)

type Waker struct {
	mu sync.Mutex
	w  *os.File
}

func (k *Waker) Poke() (err error) {
	k.mu.Lock()
	switch _, werr := k.w.Write([]byte{0}); {
	case werr != nil:
		err = werr
		fallthrough
	case err != nil:
		return // expect
	default:
		k.mu.Unlock()
	}
	return
}
"#,
        r#"
package server

import "os"

// sem, declared in another file, starts empty: a send takes a slot.
func (n *raft) fileWriter(tvf string) {
	n.RLock()
	path := n.sd + tvf
	n.RUnlock()
	for n.isRunning() {
		select {
		case <-n.quit:
			return
		case <-n.wtvch:
			n.RLock()
			buf := copyBytes(n.wtv)
			n.RUnlock()
			sem <- struct{}{}
			if err := os.WriteFile(path, buf, 0640); err != nil {
				n.setWriteErr(err)
				return // expect
			}
			<-sem
		}
	}
}
"#,
    ],
    pass: &[
        r#"
package server

import "os"

// dios, declared in another file, is filled with tokens up front: a
// receive takes a slot, and the send gives it back.
func (n *raft) fileWriter2(tvf, psf string) {
	n.RLock()
	path := n.sd + tvf
	n.RUnlock()
	for n.isRunning() {
		select {
		case <-n.quit:
			return
		case <-n.wtvch:
			n.RLock()
			buf := copyBytes(n.wtv)
			n.RUnlock()
			<-dios
			err := os.WriteFile(path, buf, 0640)
			dios <- struct{}{}
			if err != nil {
				n.setWriteErr(err)
			}
		case <-n.wpsch:
			n.RLock()
			buf := copyBytes(n.wps)
			n.RUnlock()
			<-dios
			err := os.WriteFile(psf, buf, 0640)
			dios <- struct{}{}
			if err != nil {
				n.setWriteErr(err)
			}
		}
	}
}
"#,
        r#"
package app

import "sync"

type Cache struct {
	mu    sync.Mutex
	items map[string]string
}

func (c *Cache) Set(k, v string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k == "" {
		return errEmptyKey
	}
	c.items[k] = v
	return nil
}

func (c *Cache) Swap(k, v string) (string, error) {
	c.mu.Lock()
	old, ok := c.items[k]
	if !ok {
		c.mu.Unlock()
		return "", errMissing
	}
	c.items[k] = v
	c.mu.Unlock()
	return old, nil
}

func (c *Cache) lock() {
	c.mu.Lock()
}

func (c *Cache) slowLocked(k string) error {
	c.mu.Unlock()
	v, err := load(k)
	c.mu.Lock()
	if err != nil {
		return err
	}
	c.items[k] = v
	return nil
}

func (c *Cache) Maybe(shared bool) []string {
	if shared {
		c.mu.Lock()
	}
	out := c.keys()
	if shared {
		c.mu.Unlock()
	}
	return out
}

func (c *Cache) Acquire() (func(), error) {
	c.mu.Lock()
	return c.mu.Unlock, nil
}

func Run(sem chan struct{}, job Job) error {
	sem <- struct{}{}
	defer func() { <-sem }()
	return job.Do()
}

func Spawn(sem chan struct{}, jobs []Job) {
	for _, j := range jobs {
		sem <- struct{}{}
		go func(j Job) {
			defer func() { <-sem }()
			j.Do()
		}(j)
	}
}

// Waits for its turn on one channel, then wakes the next waiter on another:
// signals between goroutines, not a semaphore.
func (c *muxConn) Receive(p *pool, id int) (int, error) {
	p.mu.Lock()
	if p.turn != id {
		ch := make(chan struct{})
		p.waiting[id] = ch
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
	v, err := p.read()
	ch, ok := p.waiting[id+1]
	p.mu.Unlock()
	if ok {
		ch <- struct{}{}
	}
	if err != nil {
		return 0, err
	}
	return v, nil
}

type DB struct {
	mmaplock sync.RWMutex
	opened   bool
	txs      []*Tx
}

type Tx struct{ db *DB }

// A transaction holds the read lock until it ends (removeTx releases it).
func (db *DB) beginTx() (*Tx, error) {
	db.mmaplock.RLock()
	if !db.opened {
		db.mmaplock.RUnlock()
		return nil, errNotOpen
	}
	t := &Tx{db: db}
	db.txs = append(db.txs, t)
	return t, nil
}

func (db *DB) removeTx(tx *Tx) {
	db.mmaplock.RUnlock()
	db.txs = db.txs[:len(db.txs)-1]
}
"#,
        r#"
package bench

import "sync"

func lockNoDefer(mu *sync.Mutex) {
	mu.Lock()
	// Never taken: keeps a linter from calling the section empty.
	if false {
		return
	}
	mu.Unlock()
}
"#,
        r#"
package kconn

import "sync"

type Conn struct {
	rlock sync.Mutex
	ids   []int32
}

// On a match the lock goes to the caller, who reads the reply and unlocks.
func (c *Conn) awaitReply(id int32) (size int, lock *sync.Mutex, err error) {
	for {
		c.rlock.Lock()
		if len(c.ids) == 0 {
			c.rlock.Unlock()
			return 0, nil, nil
		}
		if c.ids[0] == id {
			c.ids = c.ids[1:]
			size, lock = 8, &c.rlock
			return size, lock, nil
		}
		c.rlock.Unlock()
	}
}

func (c *Conn) next() (*sync.Mutex, int32) {
	c.rlock.Lock()
	if len(c.ids) == 0 {
		c.rlock.Unlock()
		return nil, 0
	}
	return &c.rlock, c.ids[0]
}

func (c *Conn) Do(id int32) int {
	size, lock, _ := c.awaitReply(id)
	if lock != nil {
		defer lock.Unlock()
	}
	return size
}
"#,
        r#"
package pipe

import (
	"os"
	"sync"
)

type Waker struct {
	mu sync.Mutex
	wg sync.WaitGroup
	w  *os.File
}

// The first case falls through into the second, which unlocks.
func (k *Waker) Close() (err error) {
	k.mu.Lock()
	switch _, werr := k.w.Write([]byte{0}); {
	case werr != nil && err == nil:
		err = werr
		fallthrough
	case werr != nil:
		k.mu.Unlock()
	default:
		k.mu.Unlock()
		k.wg.Wait()
	}
	return
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnlockMissingOnPath);

    /// The fix is Go that compiles: `defer` takes a call, so a semaphore
    /// receive goes in a func literal.
    #[test]
    fn fixes_are_valid_defers() {
        let found = crate::testing::fail_findings(&UnlockMissingOnPath, &EXAMPLES);
        let sem = found
            .iter()
            .find(|f| f.message.contains("semaphore channel"))
            .expect("a semaphore finding");
        assert!(sem.fix.contains("`defer func() { <-"), "{}", sem.fix);
        assert!(
            sem.message.contains("the slot of the semaphore channel"),
            "{}",
            sem.message
        );
        let lock = found
            .iter()
            .find(|f| f.message.contains("the lock"))
            .expect("a lock finding");
        assert!(lock.fix.contains("Unlock()`"), "{}", lock.fix);
    }

    /// A lock taken in a loop is released before the path leaves: a
    /// deferred unlock would still be held on the next iteration.
    #[test]
    fn no_defer_advice_for_a_lock_in_a_loop() {
        let src = "package p\n\nimport \"sync\"\n\nvar mu sync.Mutex\n\nfunc drain(items []int) int {\n\tfor _, it := range items {\n\t\tmu.Lock()\n\t\tif it < 0 {\n\t\t\treturn it\n\t\t}\n\t\tmu.Unlock()\n\t}\n\treturn 0\n}\n";
        let fixes = crate::testing::fixes(&UnlockMissingOnPath, Language::Go, src);
        assert_eq!(fixes.len(), 1, "{fixes:#?}");
        assert!(fixes[0].contains("before this path leaves"), "{}", fixes[0]);
    }
}
