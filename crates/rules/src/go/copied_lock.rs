//! GO016: a value holding a `sync.Mutex`/`WaitGroup`/`Once` copied.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::BTreeMap;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct CopiedLock;

pub static META: RuleMeta = RuleMeta {
    id: "GO016",
    name: "copied-lock",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A struct holding a `sync.Mutex`, `RWMutex`, `WaitGroup`, `Once`, `Cond` or atomic is copied: value receiver, by-value parameter, range value, `*p` assignment or return.",
    docs: r#"
A value whose type contains a lock or other no-copy synchronization state
(`sync.Mutex`, `RWMutex`, `WaitGroup`, `Once`, `Cond`, `Map`, `Pool`,
`sync/atomic` types), directly or in a nested struct field, is copied:
a method with a value receiver, a parameter passed by value, the value
variable of a `range` over a slice of such structs, or an assignment or
return of a dereferenced pointer. A clone whose lock is replaced right
after the copy (`dup := *s; dup.mu = sync.Mutex{}`) is not reported, nor
is `once = *new(sync.Once)`: the copied value is a fresh zero one nobody
else holds, so the assignment resets the lock.

## Why

The copy gets its own, independent lock state. Code locking the copy does
not exclude code locking the original, so the data it guards is raced on;
a copy taken while the lock was held starts out locked and deadlocks its
first `Lock`; a copied `WaitGroup` is waited on while the goroutines
decrement another one.

## Example

```go
package app

import "sync"

type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c Counter) Inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
}
```

## Fix

Use pointer receivers and pass pointers; range over indexes.

```go
package app

import "sync"

type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *Counter) Inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
}
```
"#,
    examples: &EXAMPLES,
};

const NOCOPY: &[&str] = &[
    "sync.Mutex",
    "sync.RWMutex",
    "sync.WaitGroup",
    "sync.Once",
    "sync.Cond",
    "sync.Map",
    "sync.Pool",
    "sync/atomic.Int32",
    "sync/atomic.Int64",
    "sync/atomic.Uint32",
    "sync/atomic.Uint64",
    "sync/atomic.Bool",
    "sync/atomic.Value",
    "sync/atomic.Pointer",
];

impl Rule for CopiedLock {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let locky = lock_types(cx);
        if locky.is_empty() && !mentions_sync(cx) {
            return;
        }
        let why = |t: &str| -> String {
            match locky.get(t) {
                Some(inner) => format!(
                    "`{}` holds a `{}`",
                    common::short_name(t),
                    common::short_name(inner)
                ),
                None => format!("`{}` is a lock", common::short_name(t)),
            }
        };
        let is_locky = |t: &str| locky.contains_key(t) || NOCOPY.contains(&t);
        let fix = "use a pointer (`*T`) so every user shares one lock: pointer receivers, pointer parameters, `for i := range xs { x := &xs[i] ... }`";
        for fid in cx.model.function_ids() {
            let f = cx.func(fid);
            // Value receiver.
            if let (Some(class), Some(text)) = (&f.class, receiver_text(cx, f))
                && !text.starts_with('*')
                && is_locky(class)
            {
                out.push(cx.finding(
                    &META,
                    f.name_span,
                    format!(
                        "method `{}` has a value receiver: every call works on a copy of the struct, and {}, so locking it protects nothing",
                        f.name,
                        why(class)
                    ),
                    fix,
                ));
            }
            for p in &f.params {
                let Some(t) = &p.ty else { continue };
                if by_value(&t.text)
                    && let Some(r) = &t.resolved
                    && is_locky(r)
                {
                    out.push(cx.finding(
                        &META,
                        p.span,
                        format!(
                            "parameter `{}` is passed by value and {}: the function locks a copy, not the caller's",
                            p.name,
                            why(r)
                        ),
                        fix,
                    ));
                }
            }
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            match &st.kind {
                StmtKind::For {
                    target: Some(t),
                    iter,
                    ..
                } => {
                    let ExprKind::Collection { elems, .. } = &cx.expr(*t).kind else {
                        continue;
                    };
                    let Some(v) = elems.get(1).and_then(|&e| cx.model.name_of(e)) else {
                        continue;
                    };
                    if v == "_" {
                        continue;
                    }
                    let Some(elem) = element_type(cx, s, *iter) else {
                        continue;
                    };
                    if is_locky(&elem) {
                        out.push(cx.finding(
                            &META,
                            st.span,
                            format!(
                                "`{v}` is a copy of each element, and {}: locking `{v}` does not lock the element in the collection",
                                why(&elem)
                            ),
                            fix,
                        ));
                    }
                }
                StmtKind::Assign {
                    value: Some(v),
                    targets,
                    ..
                } => {
                    if targets.iter().all(|&t| cx.model.name_of(t) == Some("_")) {
                        continue;
                    }
                    if let Some(t) = deref_type(cx, *v)
                        && is_locky(&t)
                        && !lock_reset_after(cx, s, targets)
                    {
                        out.push(cx.finding(
                            &META,
                            st.span,
                            format!("this copies `*{}`, and {}: the copy's lock is independent of the original's", cx.source(cx.expr(deref_operand(cx, *v)).span), why(&t)),
                            fix,
                        ));
                    }
                }
                StmtKind::Return(Some(v)) => {
                    if let Some(t) = deref_type(cx, *v)
                        && is_locky(&t)
                    {
                        out.push(cx.finding(
                            &META,
                            st.span,
                            format!("this returns a copy of `*{}`, and {}: the caller gets an independent lock", cx.source(cx.expr(deref_operand(cx, *v)).span), why(&t)),
                            fix,
                        ));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `dup := *c` followed at once by `dup.mu = sync.Mutex{}`: a deliberate
/// clone whose lock is replaced by a fresh one before anyone can use the
/// copied state.
fn lock_reset_after(cx: &FileCx, s: StmtId, targets: &[ExprId]) -> bool {
    let [t] = targets else { return false };
    let Some(copy) = cx.model.name_of(*t) else {
        return false;
    };
    crate::util::stmts_after(cx, s).iter().take(3).any(|&n| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(n).kind
        else {
            return false;
        };
        let fresh = cx.source(cx.expr(*v).span).trim();
        targets.iter().any(|&x| {
            matches!(&cx.expr(x).kind, ExprKind::Attr { obj, .. } if cx.model.name_of(*obj) == Some(copy))
        }) && fresh.starts_with("sync.")
            && fresh.ends_with("{}")
    })
}

fn mentions_sync(cx: &FileCx) -> bool {
    cx.model
        .imports
        .iter()
        .any(|i| i.target == "sync" || i.target == "sync/atomic")
}

/// A type written without a pointer, slice, map, channel or func.
fn by_value(text: &str) -> bool {
    let t = text.trim();
    !(t.starts_with('*')
        || t.starts_with('[')
        || t.starts_with("map[")
        || t.starts_with("chan")
        || t.starts_with("<-")
        || t.starts_with("func")
        || t.starts_with("...")
        || t.starts_with("interface"))
}

/// Struct types of the file holding (by value) a no-copy type, directly or
/// through another such struct: type → the no-copy type inside.
fn lock_types(cx: &FileCx) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let mut changed = false;
        for t in &cx.model.types {
            if out.contains_key(t.qualname.as_str()) {
                continue;
            }
            for f in &t.fields {
                let Some(r) = &f.ty.resolved else { continue };
                if !by_value(&f.ty.text) {
                    continue;
                }
                let inner = if NOCOPY.contains(&r.as_str()) {
                    Some(r.clone())
                } else {
                    out.get(r.as_str()).cloned().map(Into::into)
                };
                if let Some(inner) = inner {
                    out.insert(t.qualname.to_string(), inner.to_string());
                    changed = true;
                    break;
                }
            }
        }
        if !changed {
            break;
        }
    }
    out
}

/// The receiver as written, `*Server` or `Server`, from the source.
fn receiver_text<'a>(cx: &FileCx<'a>, f: &Function) -> Option<&'a str> {
    if f.kind != FnKind::Method {
        return None;
    }
    let text = cx.source(f.span);
    let rest = text.strip_prefix("func")?.trim_start();
    let inner = rest.strip_prefix('(')?;
    let inner = inner[..inner.find(')')?].trim();
    // The receiver's name, when it has one, is the identifier it starts
    // with; what follows is the type, however it is spaced (`r *T`, `r* T`,
    // `r*T`). An unnamed receiver (`T`, `*T`) is all type.
    let name_len = inner
        .find(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .unwrap_or(inner.len());
    let rest = inner[name_len..].trim_start();
    Some(if name_len == 0 || rest.is_empty() {
        inner
    } else {
        rest
    })
}

/// The element type of a slice/array/map ranged over, when it is declared
/// by value (`[]T`, `map[K]T`), resolved to a qualified name.
fn element_type(cx: &FileCx, s: StmtId, iter: ExprId) -> Option<String> {
    let text = declared_type_text(cx, cx.tree.stmt_func(s), iter)?;
    let t = text.trim();
    let elem = if let Some(rest) = t.strip_prefix("[]") {
        rest
    } else if t.starts_with('[') {
        &t[t.find(']')? + 1..]
    } else if t.starts_with("map[") {
        let mut depth = 0;
        let mut end = None;
        for (i, ch) in t.char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        &t[end? + 1..]
    } else {
        return None;
    };
    if !by_value(elem) {
        return None;
    }
    resolve_type_text(cx, elem.trim())
}

/// The declared type text of a parameter, or of a struct field reached
/// from a value of a known type.
fn declared_type_text(cx: &FileCx, f: FuncId, e: ExprId) -> Option<String> {
    match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Name { id, .. } => common::param_named(cx, f, id)
            .and_then(|p| p.ty.as_ref())
            .map(|t| t.text.to_string()),
        ExprKind::Attr { obj, name, .. } => {
            let owner = cx.sema.type_of(*obj)?;
            let t = cx.model.types.iter().find(|t| t.qualname == owner)?;
            t.fields
                .iter()
                .find(|fl| fl.name == *name)
                .map(|fl| fl.ty.text.clone())
                .map(Into::into)
        }
        _ => None,
    }
}

/// A type name as written (`T`, `pkg.T`, `sync.Mutex`) to its qualified name.
fn resolve_type_text(cx: &FileCx, text: &str) -> Option<String> {
    let text = text.split('[').next()?;
    match text.split_once('.') {
        Some((pkg, name)) => {
            let imp = cx.model.imports.iter().find(|i| i.local == pkg)?;
            Some(format!("{}.{name}", imp.target))
        }
        None => {
            if text.chars().next()?.is_lowercase() && cx.model.types.iter().all(|t| t.name != text)
            {
                return None;
            }
            Some(format!("{}.{text}", cx.model.module))
        }
    }
}

/// `*p` where `p` has a known type: that type.
fn deref_type(cx: &FileCx, v: ExprId) -> Option<String> {
    let v = cx.model.strip(v);
    let ExprKind::Unary {
        op: UnOp::Deref,
        operand,
    } = &cx.expr(v).kind
    else {
        return None;
    };
    // `*p = T{}` writes through the pointer; only reads copy.
    if let Parent::Stmt(s) = cx.tree.expr_parent(v)
        && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&v))
    {
        return None;
    }
    // `*new(sync.Once)`: a fresh zero value nobody else holds (a reset).
    if cx
        .call(cx.model.strip(*operand))
        .is_some_and(|c| c.name == "new" && c.receiver.is_none())
    {
        return None;
    }
    cx.sema.type_of(*operand).map(str::to_string)
}

fn deref_operand(cx: &FileCx, v: ExprId) -> ExprId {
    match &cx.expr(cx.model.strip(v)).kind {
        ExprKind::Unary { operand, .. } => *operand,
        _ => v,
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

type Store struct {
	mu   sync.RWMutex
	data map[string]string
}

type Shard struct {
	store Store
}

func (s Store) Get(k string) string { // expect
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.data[k]
}

func Flush(s Shard) { // expect
	s.store.mu.Lock()
	s.store.data = nil
	s.store.mu.Unlock()
}

func All(shards []Shard) {
	for _, sh := range shards { // expect
		sh.store.mu.Lock()
		sh.store.mu.Unlock()
	}
}

func Snapshot(p *Store) Store {
	cp := *p // expect
	return *p // expect
}

func Fork(p *Store) *Store {
	dup := *p // expect
	dup.data = map[string]string{}
	return &dup
}

func Wait(wg sync.WaitGroup) { // expect
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Share(src *sync.Once) sync.Once {
	var once sync.Once
	once = *src // expect
	return once
}
"#,
    ],
    pass: &[
        r#"
package app

import "sync"

type Buffer struct {
	sync.Mutex
	kill []rune
	n    int
}

func (b* Buffer) pushKill(text []rune) {
	b.kill = append([]rune{}, text...)
}

func (b*Buffer) Grow(n int) {
	b.Lock()
	b.n += n
	b.Unlock()
}
"#,
        r#"
package app

import "sync"

type Store struct {
	mu   sync.RWMutex
	data map[string]string
}

type View struct {
	Name string
}

func (s *Store) Get(k string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.data[k]
}

func (v View) Title() string { return v.Name }

func All(shards []*Store, views []View) {
	for _, sh := range shards {
		sh.mu.Lock()
		sh.mu.Unlock()
	}
	for i := range shards {
		_ = shards[i]
	}
	for _, v := range views {
		_ = v
	}
}

func Reset(p *Store) {
	*p = Store{}
}

func Wait(wg *sync.WaitGroup) {
	wg.Wait()
}

// A deliberate clone: the copied lock is replaced at once.
func (s *Store) Clone() *Store {
	s.mu.RLock()
	defer s.mu.RUnlock()
	dup := *s
	dup.mu = sync.RWMutex{}
	return &dup
}
"#,
        r#"
package app

import "sync"

var connOnce sync.Once

// Between test cases: a fresh zero Once replaces the used one.
func resetForTest() {
	connOnce = *new(sync.Once)
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CopiedLock);
}
