//! GO020: a mutex locked again by the goroutine that holds it (directly or
//! through a call), and recursive read locks.

use super::common;
use super::locks::{self, OpKind, Reentry};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::{BTreeMap, BTreeSet};
use unsnarl_model::*;

pub struct MutexReacquired;

pub static META: RuleMeta = RuleMeta {
    id: "GO020",
    name: "mutex-reacquired",
    category: Category::LockOrder,
    severity: Severity::Critical,
    languages: &[Language::Go],
    summary: "A `sync.Mutex` locked again while held (directly, or by a method called with the lock held), or an `RLock` taken recursively.",
    docs: r#"
Flags a `Lock` of a mutex the same goroutine already holds: a second
`mu.Lock()` on one path, or a call made while holding `s.mu` to a function
or method of the file that locks `s.mu` itself. Also flags a read lock
taken again while a read lock on the same `RWMutex` is held. A call on a
`range` variable that reuses the receiver's name (`for _, c := range
c.conns { c.Close() }`) is a call on another value, not a re-lock; nor
is a callee's lock taken only under `if s.mu == nil` (dead for any mutex
that exists: a nil one panics).

## Why

Go's mutexes are not reentrant: locking a mutex you hold blocks forever,
and every other goroutine that needs it piles up behind. A recursive
`RLock` looks harmless but deadlocks as soon as a writer queues between
the two read locks: the writer waits for the first reader, the second
`RLock` waits behind the writer.

## Example

```go
package app

import "sync"

type Registry struct {
	mu    sync.Mutex
	items map[string]int
}

func (r *Registry) Add(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.Has(k) {
		r.items[k] = 1
	}
}

func (r *Registry) Has(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.items[k]
	return ok
}
```

## Fix

Split each method into a locking wrapper and an unexported `...Locked`
variant that expects the lock to be held, and call the latter.

```go
package app

import "sync"

type Registry struct {
	mu    sync.Mutex
	items map[string]int
}

func (r *Registry) Add(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.hasLocked(k) {
		r.items[k] = 1
	}
}

func (r *Registry) Has(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hasLocked(k)
}

func (r *Registry) hasLocked(k string) bool {
	_, ok := r.items[k]
	return ok
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for MutexReacquired {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let (reentries, _) = locks::lock_graph(cx);
        let mut seen = BTreeSet::new();
        let reentries: Vec<Reentry> = reentries
            .into_iter()
            .filter(|r| seen.insert((r.at.start, r.at.end)))
            .collect();
        let shared = shared_relocks(&reentries);
        for (key, callers) in &shared {
            out.push(callee_finding(cx, key, callers));
        }
        for r in &reentries {
            if relock_key(r).is_some_and(|k| shared.contains_key(&k)) {
                continue;
            }
            let both_read = r.held_kind == OpKind::RLock && r.kind == OpKind::RLock;
            // ` by `T` (called at line 65)`, or ` by `a` (called at line
            // 10) → `b` (called at line 20)` through several calls.
            let calls: Vec<String> = r
                .via
                .iter()
                .map(|(sp, n)| format!("`{n}` (called at line {})", common::line_of(cx, *sp)))
                .collect();
            let chain = if calls.is_empty() {
                String::new()
            } else {
                format!(" by {}", calls.join(" → "))
            };
            let held_line = common::line_of(cx, r.held_at);
            let inst = &r.instance;
            let (msg, fix) = if both_read {
                (
                    format!(
                        "`{inst}` is read-locked again{chain} while the read lock from line {held_line} is held: if a writer queues in between, it waits for the first reader and this `RLock` waits behind the writer, a deadlock"
                    ),
                    "take the read lock once, and call helpers that expect it to be held"
                        .to_string(),
                )
            } else {
                (
                    format!(
                        "`{inst}` is locked again{chain} while this goroutine still holds it (line {held_line}): Go mutexes are not reentrant, so this blocks forever"
                    ),
                    format!(
                        "release `{inst}` before this point, or call an internal `...Locked` variant that expects the lock to be held instead of one that takes it"
                    ),
                )
            };
            out.push(cx.finding(&META, r.at, msg, fix));
        }
    }
}

/// Where a re-lock through calls happens inside the first callee: the
/// mutex and the call, in that callee, that locks it again. `None` for a
/// direct re-lock or a callee that locks the mutex itself.
fn relock_key(r: &Reentry) -> Option<(String, Span)> {
    let (inner, _) = r.via.get(1)?;
    Some((r.instance.clone(), *inner))
}

/// Re-locks that several callers reach through the same call inside one
/// callee. Every caller holds the mutex when it calls that callee, so the
/// callee is written to run with the lock held and the bug is its own call
/// that takes the lock: one finding there, not one per caller.
fn shared_relocks(reentries: &[Reentry]) -> BTreeMap<(String, Span), Vec<&Reentry>> {
    let mut groups: BTreeMap<_, Vec<&Reentry>> = BTreeMap::new();
    for r in reentries {
        if let Some(key) = relock_key(r) {
            groups.entry(key).or_default().push(r);
        }
    }
    groups.retain(|_, callers| callers.len() >= 2);
    groups
}

fn callee_finding(cx: &FileCx, key: &(String, Span), callers: &[&Reentry]) -> Finding {
    let (inst, at) = key;
    let first = callers[0];
    let callee = &first.via[0].1;
    let lines: Vec<String> = callers
        .iter()
        .map(|r| common::line_of(cx, r.via[0].0).to_string())
        .collect();
    let rest: Vec<String> = first.via[1..]
        .iter()
        .map(|(sp, n)| format!("`{n}` (line {})", common::line_of(cx, *sp)))
        .collect();
    let msg = format!(
        "`{callee}` is called with `{inst}` held (lines {}), and here it calls {}, which locks `{inst}` again: Go mutexes are not reentrant, so this blocks forever",
        lines.join(", "),
        rest.join(" → ")
    );
    let fix = format!(
        "`{callee}` runs with `{inst}` held: call a variant here that expects the lock to be held instead of one that takes it"
    );
    cx.finding(&META, *at, msg, fix)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

type Stream struct {
	mu   sync.Mutex
	subs map[int]bool
}

func (s *Stream) Start() {
	s.mu.Lock()
	s.setup(1)
	s.mu.Unlock()
}

func (s *Stream) Retry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setup(2)
}

// setup runs with s.mu held.
func (s *Stream) setup(id int) {
	if id < 0 {
		s.dropUnlocked(id) // expect
		return
	}
	s.subs[id] = true
}

func (s *Stream) dropUnlocked(id int) {
	s.mu.Lock()
	delete(s.subs, id)
	s.mu.Unlock()
}
"#,
        r#"
package app

import "sync"

type Registry struct {
	mu    sync.RWMutex
	items map[string]int
}

func (r *Registry) Add(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.Has(k) { // expect
		r.items[k] = 1
	}
}

func (r *Registry) Has(k string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.items[k]
	return ok
}

func (r *Registry) Total() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	for k := range r.items {
		if r.Has(k) { // expect
			n++
		}
	}
	return n
}
"#,
        r#"
package app

import "sync"

var mu sync.Mutex

func Update(cfg *Config) error {
	mu.Lock()
	if err := cfg.Validate(); err != nil {
		return err
	}
	mu.Lock() // expect
	apply(cfg)
	mu.Unlock()
	return nil
}
"#,
        r#"
package app

import "sync"

// Unlock is deferred or called on the spot, never handed to anyone else:
// both second locks wait for this goroutine itself.
func Deferred(bus *Bus) {
	var mu sync.Mutex
	mu.Lock()
	defer func() { mu.Unlock() }()
	bus.Publish("locked")
	mu.Lock() // expect
}

func Inline() {
	var mu sync.Mutex
	mu.Lock()
	release := func() { mu.Unlock() }
	mu.Lock() // expect
	release()
}

// The callback and the goroutine lock twice themselves: the unlock they
// hold is not anyone else's.
func Parallel(b *Bench) {
	b.Run(func() {
		var mu sync.Mutex
		mu.Lock()
		mu.Lock() // expect
		mu.Unlock()
	})
	var m sync.Mutex
	go func() {
		m.Lock()
		m.Lock() // expect
		m.Unlock()
	}()
}
"#,
        r#"
package rpc

import "sync"

type Set struct {
	sync.Mutex
	conns []*Set
}

func (c *Set) Close() {
	c.Lock()
	for range c.conns {
		c.Close() // expect
	}
	c.Unlock()
}
"#,
    ],
    pass: &[
        r#"
package app

import "sync"

// The lookup locks only when the mutex is nil: never, for a model built
// by its constructor (and a nil mutex would panic on Lock anyway).
type Model struct {
	mu   *sync.RWMutex
	nets map[string]string
}

func New() *Model {
	return &Model{mu: &sync.RWMutex{}, nets: map[string]string{}}
}

func (m *Model) Network(id string) string {
	if m.mu == nil {
		m.mu.RLock()
		defer m.mu.RUnlock()
	}
	return m.nets[id]
}

func (m *Model) Remove(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Network(id) != "" {
		delete(m.nets, id)
	}
}
"#,
        r#"
package app

import "sync"

type Stream struct {
	mu   sync.Mutex
	subs map[int]bool
}

func (s *Stream) Start() {
	s.mu.Lock()
	s.setup(1)
	s.mu.Unlock()
}

func (s *Stream) Retry() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setup(2)
}

// setup runs with s.mu held, and lets go of it around the helper.
func (s *Stream) setup(id int) {
	if id < 0 {
		s.mu.Unlock()
		s.dropUnlocked(id)
		s.mu.Lock()
		return
	}
	s.subs[id] = true
}

func (s *Stream) dropUnlocked(id int) {
	s.mu.Lock()
	delete(s.subs, id)
	s.mu.Unlock()
}
"#,
        r#"
package app

import "sync"

type Registry struct {
	mu    sync.Mutex
	items map[string]int
}

func (r *Registry) Add(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.hasLocked(k) {
		r.items[k] = 1
	}
}

func (r *Registry) Has(k string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hasLocked(k)
}

func (r *Registry) hasLocked(k string) bool {
	_, ok := r.items[k]
	return ok
}

func (r *Registry) Swap(other *Registry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	other.Has("x")
}

// slowLocked is called with r.mu held; it drops the lock around the load.
func (r *Registry) slowLocked(k string) {
	r.mu.Unlock()
	v := load(k)
	r.mu.Lock()
	r.items[k] = v
}

func (r *Registry) Refresh(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slowLocked(k)
}

func (r *Registry) get(k string, lock bool) int {
	if lock {
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	return r.items[k]
}

func (r *Registry) Sum(keys []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, k := range keys {
		n += r.get(k, false)
	}
	return n
}

func HandOff() {
	var mu sync.Mutex
	mu.Lock()
	go func() {
		work()
		mu.Unlock()
	}()
	mu.Lock()
}

func (r *Registry) Retry() {
	r.mu.Lock()
	r.items = nil
	r.mu.Unlock()
	r.mu.Lock()
	r.items = map[string]int{}
	r.mu.Unlock()
}

func unlockOnce(l sync.Locker) func() {
	var once sync.Once
	return func() { once.Do(l.Unlock) }
}

// The lock is dropped through helpers before serving, which locks again.
func (r *Registry) Serve() error {
	unlock := unlockOnce(&r.mu)
	r.mu.Lock()
	defer unlock()
	if r.items == nil {
		return nil
	}
	unlock()
	return r.serveLoop()
}

func (r *Registry) Reload(k string) {
	fail := func(err error) {
		r.items = nil
		r.mu.Unlock()
		report(err)
	}
	r.mu.Lock()
	if err := check(k); err != nil {
		fail(err)
		r.Has(k)
		return
	}
	r.mu.Unlock()
}

func (r *Registry) serveLoop() error {
	for r.Has("x") {
	}
	return nil
}

// A mutex as a one-shot signal: whoever gets the unlock calls it later.
func WaitStarted(srv *Server) {
	var started sync.Mutex
	started.Lock()
	srv.NotifyStarted = started.Unlock
	go srv.Run()
	started.Lock()
}

func Login(sock *Socket, q *Query) error {
	var mu sync.Mutex
	var replyErr error
	mu.Lock()
	q.reply = func(err error) {
		defer mu.Unlock()
		replyErr = err
	}
	if err := sock.Send(q); err != nil {
		return err
	}
	mu.Lock()
	return replyErr
}

func Subscribe(bus *Bus) {
	var mu sync.Mutex
	mu.Lock()
	bus.On("ready", func() { mu.Unlock() })
	mu.Lock()
}
"#,
        r#"
package rpc

import "sync"

type Conn struct {
	mu     sync.Mutex
	closed bool
}

func (c *Conn) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

type Set struct {
	sync.Mutex
	conns []*Set
}

func (c *Set) Close() {
	c.Lock()
	for _, c := range c.conns {
		c.Close()
	}
	c.Unlock()
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(MutexReacquired);

    /// The message names the call that locks again and where it is made.
    #[test]
    fn message_names_the_call_that_locks_again() {
        static RULE: MutexReacquired = MutexReacquired;
        let m = crate::testing::messages(&RULE, Language::Go, EXAMPLES.fail[1]);
        assert!(
            m[0].starts_with("`r.mu` is locked again by `Has` (called at line 14) while"),
            "{m:?}"
        );
    }

    /// A re-lock reached by several callers through one callee is reported
    /// once, at the callee's call that locks, naming every caller.
    #[test]
    fn shared_relock_is_reported_once_in_the_callee() {
        static RULE: MutexReacquired = MutexReacquired;
        let m = crate::testing::messages(&RULE, Language::Go, EXAMPLES.fail[0]);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].starts_with("`setup` is called with `s.mu` held (lines 13, 20), and here it calls `dropUnlocked` (line 26), which locks `s.mu` again"),
            "{m:?}"
        );
    }
}
