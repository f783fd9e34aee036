//! The analysis stages after lowering: the semantic pass, the project index,
//! and the rules (one file per rule, under a folder per language).
//!
//! The pipeline drives it in three steps:
//! 1. [`Engine::prepare`] each file (parallel): semantic pass + summaries;
//! 2. [`ProjectIndex::build`] from all summaries;
//! 3. [`Engine::check`] each file (parallel): every enabled rule.

pub mod context;
pub mod deadline;
pub mod index;
pub mod registry;
pub mod rule;
pub mod semantic;

mod go;
mod js;
mod python;
mod rust;
mod shared;
mod util;

#[cfg(test)]
mod testing;

pub use context::FileCx;
pub use deadline::{Deadline, TimedOut};
pub use index::{
    Awaitable, FileSummaries, FnSummary, Lasting, LastingLog, ProjectIndex, QueryLog, Summary,
};
pub use registry::{all_rules, find_rule, rules_named};
pub use rule::{Examples, Rule, RuleMeta};
pub use semantic::Semantic;

use unsnarl_model::knowledge::{self, Effect};
use unsnarl_model::walk::Tree;
use unsnarl_model::{
    AssignOp, BinOp, Call, ExprKind, FileModel, Finding, Knowledge, Language, Lit, StmtKind,
};

/// A file after the semantic pass, waiting for the project index.
pub struct Prepared {
    pub model: FileModel,
    pub sema: Semantic,
    pub lang: Language,
    /// The parent links, when preparing needed them already (a Python file
    /// that may run coroutines alone): the rules reuse them.
    tree: Option<Tree>,
}

impl Prepared {
    /// A rough count of the heap bytes it holds, for memory budgets.
    pub fn approx_bytes(&self) -> usize {
        self.model.approx_bytes()
            + self.sema.approx_bytes()
            + self.tree.as_ref().map_or(0, Tree::approx_bytes)
    }
}

/// The rules to run and the knowledge they consult.
pub struct Engine {
    pub rules: Vec<&'static dyn Rule>,
    pub knowledge: Knowledge,
    /// Call targets shared by every file's summaries.
    names: index::Names,
}

impl Engine {
    pub fn new(rules: Vec<&'static dyn Rule>, knowledge: Knowledge) -> Engine {
        Engine {
            rules,
            knowledge,
            names: index::Names::default(),
        }
    }

    /// Drops the table of shared call targets (call it once every file is
    /// summarized; later summaries still work, they just share less).
    pub fn forget_names(&self) {
        self.names.clear();
    }

    /// Makes the call targets of summaries read back from the results
    /// cache share their names with every other file's, as the summaries
    /// this engine makes do.
    pub fn share_names(&self, sums: &mut FileSummaries) {
        sums.share_names(&self.names);
    }

    /// Runs the semantic pass and summarizes the file's functions for the
    /// project index.
    pub fn prepare(&self, mut model: FileModel, lang: Language) -> (Prepared, FileSummaries) {
        let kb = self.knowledge.table(lang);
        let sema = semantic::annotate(&mut model, kb, lang);
        // Targets are final from here on: each call's effects are looked up
        // once instead of once per rule that asks.
        for i in 0..model.exprs.len() {
            let ExprKind::Call(c) = &model.exprs[i].kind else {
                continue;
            };
            let mut effects = kb.effect_set(c.target.as_deref(), &c.name);
            // `Response.json(data)` is the static factory that builds a
            // response, not the instance method `res.json()` that reads
            // one: a call on the type's own name is not its instance's.
            if lang.is_js_family()
                && let Some(r) = c.receiver
                && let Some(ty) = model.name_of(r)
                && c.target.as_deref().and_then(|t| t.strip_prefix(ty))
                    == Some(&format!(".{}", c.name))
                && kb.is_returned_type(ty)
            {
                effects = knowledge::EffectSet::EMPTY;
            }
            // `self.create_task('bjam_build')` on a receiver of unknown
            // type (a build tool's task generator) is matched only by the
            // method's name; a spawn is handed a coroutine or a callable,
            // never a string or number written out.
            if lang == Language::Python
                && c.target.is_none()
                && effects.may_have(Effect::Spawn)
                && c.positional(0).is_some_and(|a| {
                    matches!(
                        model.literal(a),
                        Some(Lit::Str(_) | Lit::Int(_) | Lit::Float(_))
                    )
                })
            {
                effects = effects.without(Effect::Spawn);
            }
            if effects.may_have(Effect::Blocking) && waits_switched_off(&model, kb, c) {
                effects = effects.without(Effect::Blocking);
            }
            if let ExprKind::Call(c) = &mut model.exprs[i].kind {
                c.effects = effects;
            }
        }
        let mut summaries = index::summarize(&model, kb, lang, &self.names);
        let mut tree = None;
        let lone_runs = lang == Language::Python && may_run_coroutines_alone(&model);
        if lone_runs || (lang == Language::Python && may_await_or_start(&model)) {
            // The rules' own view of the file, with an empty index: which
            // calls run their coroutine alone is the file's own business.
            let built = tree.insert(Tree::build(&model));
            let empty = ProjectIndex::default();
            let cx = FileCx {
                file: 0,
                path: "",
                text: "",
                lang,
                model: &model,
                tree: built,
                sema: &sema,
                kb,
                index: &empty,
                caches: context::FileCaches::default(),
            };
            if lone_runs {
                let (spans, refs, entries) = python::blocking_call::lone_runs(&cx);
                summaries.set_lone_runs(spans, refs, entries);
            }
            let (awaited, starting) = python::blocking_call::awaits_and_starts(&cx);
            summaries.set_awaits_and_starts(awaited, starting);
        }
        (
            Prepared {
                model,
                sema,
                lang,
                tree,
            },
            summaries,
        )
    }

    /// Runs every enabled rule that applies to the file's language.
    pub fn check(
        &self,
        file: usize,
        path: &str,
        text: &str,
        prepared: &Prepared,
        index: &ProjectIndex,
    ) -> Vec<Finding> {
        self.check_within(file, path, text, prepared, index, Deadline::NONE)
            .unwrap_or_default()
    }

    /// [`Engine::check`] under a deadline, looked at before each rule: once
    /// it has passed, the file is abandoned (its findings so far dropped).
    pub fn check_within(
        &self,
        file: usize,
        path: &str,
        text: &str,
        prepared: &Prepared,
        index: &ProjectIndex,
        deadline: Deadline,
    ) -> Result<Vec<Finding>, TimedOut> {
        deadline.check()?;
        let built;
        let tree = match &prepared.tree {
            Some(t) => t,
            None => {
                built = Tree::build(&prepared.model);
                &built
            }
        };
        let cx = FileCx {
            file,
            path,
            text,
            lang: prepared.lang,
            model: &prepared.model,
            tree,
            sema: &prepared.sema,
            kb: self.knowledge.table(prepared.lang),
            index,
            caches: context::FileCaches::default(),
        };
        let mut out = Vec::new();
        for rule in &self.rules {
            if rule.meta().applies_to(prepared.lang) {
                deadline.check()?;
                rule.check(&cx, &mut out);
            }
        }
        // A finding in code no path reaches describes nothing that can
        // happen. Go's `goto` can jump past a `return` to a label, and
        // Rust's compiler already warns about such code, so only Python and
        // JavaScript/TypeScript are filtered.
        if !out.is_empty() && !matches!(prepared.lang, Language::Go | Language::Rust) {
            let dead = util::unreachable_spans(&prepared.model);
            if !dead.is_empty() {
                out.retain(|f| !dead.iter().any(|d| d.contains(f.span)));
            }
        }
        Ok(out)
    }
}

/// The file starts a loop somewhere (`asyncio.run`, `run_until_complete`)
/// or has a decorated coroutine in a command-line app (an async command):
/// only then can any of its calls run a coroutine alone (see
/// [`python::blocking_call::lone_runs`]).
/// The file has coroutines, or calls that may spawn tasks: what they
/// await and what its functions start is what
/// [`python::blocking_call::awaits_and_starts`] gives the index.
fn may_await_or_start(m: &FileModel) -> bool {
    m.function_ids().any(|f| m.func(f).is_async)
        || m.exprs.iter().any(|e| {
            matches!(&e.kind, ExprKind::Call(c)
                if c.effects.may_have(Effect::Spawn)
                    || matches!(c.name.as_str(), "create_task" | "ensure_future" | "gather"))
        })
}

fn may_run_coroutines_alone(m: &FileModel) -> bool {
    m.exprs.iter().any(|e| {
        matches!(&e.kind, ExprKind::Call(c)
            if c.effects.may_have(Effect::SyncOverAsync) || c.name == "run_until_complete")
    }) || (m
        .function_ids()
        .any(|f| m.func(f).is_async && !m.func(f).decorators.is_empty())
        && python::common::imports_a_cli_framework(m))
}

/// The call passes a literal `False` for the flag its blocking entry names
/// (`q.get(block=False)`, `executor.shutdown(wait=False)`,
/// `lock.acquire(False)`): it returns at once, so it does not block.
fn waits_switched_off(m: &FileModel, kb: &knowledge::Table, c: &Call) -> bool {
    let Some(entry) = kb.find(Effect::Blocking, c.target.as_deref(), &c.name) else {
        return false;
    };
    if entry.only_when_bounded && receiver_unbounded(m, kb, c) {
        return true;
    }
    // `os.waitpid(pid, os.WNOHANG)`, `flags=socket.AI_NUMERICHOST | ..`,
    // or a name the file only ever assigns such flags (`_NUMERIC_ONLY =
    // socket.AI_NUMERICHOST | socket.AI_NUMERICSERV`).
    if !entry.unless_flag.is_empty() {
        let names_flag = |e: unsnarl_model::ExprId| {
            unsnarl_model::walk::exprs_under(m, e).into_iter().any(|x| {
                let name =
                    m.resolved(x)
                        .or_else(|| m.name_of(x))
                        .or_else(|| match &m.expr(x).kind {
                            ExprKind::Attr { name, .. } => Some(name.as_str()),
                            _ => None,
                        });
                name.is_some_and(|n| {
                    let last = n.rsplit('.').next().unwrap_or(n);
                    entry.unless_flag.iter().any(|f| f == last)
                })
            })
        };
        // Every plain assignment to the name sets the flag; a bitwise
        // update (`_NUMERIC_ONLY |= getattr(socket, "AI_NUMERICSERV", 0)`)
        // adds bits to it and keeps it.
        let always_holds_flag = |n: &str| {
            let mut named = false;
            for s in &m.stmts {
                let StmtKind::Assign { targets, value, op } = &s.kind else {
                    continue;
                };
                if !targets.iter().any(|&t| m.dotted(t).as_deref() == Some(n)) {
                    continue;
                }
                match (op, value) {
                    (AssignOp::Augmented(BinOp::Bit), _) => {}
                    (_, Some(v)) if names_flag(*v) => named = true,
                    _ => return false,
                }
            }
            named
        };
        let switched_off = |e: unsnarl_model::ExprId| {
            names_flag(e)
                || unsnarl_model::walk::exprs_under(m, e)
                    .into_iter()
                    .any(|x| m.name_of(x).is_some_and(always_holds_flag))
        };
        if c.args.iter().any(|a| switched_off(a.value)) {
            return true;
        }
    }
    if entry.unless_true.iter().any(|k| {
        c.kwarg(k)
            .is_some_and(|v| matches!(m.literal(v), Some(Lit::Bool(true))))
    }) {
        return true;
    }
    let Some(flag) = &entry.keyword else {
        return false;
    };
    c.kwarg(flag)
        .or_else(|| entry.arg.and_then(|i| c.positional(i)))
        .is_some_and(|v| matches!(m.literal(v), Some(Lit::Bool(false))))
}

/// The receiver (`self.outbox` in `self.outbox.put(x)`) is only ever
/// assigned, in this file, a queue its knowledge entry calls unbounded
/// (`queue.Queue()`, no `maxsize`).
pub(crate) fn receiver_unbounded(m: &FileModel, kb: &knowledge::Table, c: &Call) -> bool {
    let unbounded_queue = |v: unsnarl_model::ExprId| {
        m.call(m.strip(v)).is_some_and(|q| {
            kb.find(Effect::Queue, q.target.as_deref(), &q.name)
                .is_some_and(|entry| util::unbounded_reason(m, q, entry).is_some())
        })
    };
    // `self._queues[job.priority].put(job)` where `self._queues` only ever
    // holds such queues (`{p: asyncio.Queue() for p in Priority}`, or a
    // literal of them).
    if let Some(r) = c.receiver
        && let ExprKind::Index { obj, .. } = &m.expr(m.strip(r)).kind
    {
        let Some(table) = m.dotted(*obj) else {
            return false;
        };
        let holds_only_queues = |v: unsnarl_model::ExprId| match &m.expr(m.strip(v)).kind {
            ExprKind::Comprehension { elt, .. } => match &m.expr(*elt).kind {
                ExprKind::Other(kv) if kv.len() == 2 => unbounded_queue(kv[1]),
                _ => unbounded_queue(*elt),
            },
            ExprKind::Collection { elems, .. } => {
                !elems.is_empty() && elems.iter().all(|&x| unbounded_queue(x))
            }
            _ => false,
        };
        return m.values_assigned_to(&table).next().is_some()
            && m.only_ever_assigned(&table, holds_only_queues);
    }
    let Some(recv) = c.receiver.and_then(|r| m.dotted(r)) else {
        return false;
    };
    // Only ever such a queue: built there, or set from a local that only
    // ever holds one (`q = queue.Queue(); self._audio = q`), and perhaps
    // cleared to `None` between uses.
    let is_null = |v: unsnarl_model::ExprId| matches!(m.literal(v), Some(Lit::Null));
    let via_local = |v: unsnarl_model::ExprId| {
        m.name_of(m.strip(v))
            .is_some_and(|n| n != recv && m.only_ever_assigned(n, unbounded_queue))
    };
    if m.only_ever_assigned(&recv, |v| is_null(v) || unbounded_queue(v) || via_local(v))
        && m.values_assigned_to(&recv).flatten().any(|v| !is_null(v))
    {
        return true;
    }
    // A class attribute read through the instance: `_stdout =
    // queue.Queue()` in the class body (`Transfer._stdout`),
    // `self._stdout.put(x)` in a method, with no instance attribute of that
    // name assigned anywhere.
    let Some(attr) = recv
        .strip_prefix("self.")
        .or_else(|| recv.strip_prefix("cls."))
        .filter(|attr| !attr.contains('.'))
    else {
        return false;
    };
    if m.values_assigned_to(&recv).next().is_some() {
        return false;
    }
    let classes: Vec<&str> = m
        .functions
        .iter()
        .filter_map(|f| f.class.as_deref())
        .collect();
    let mut values = m.stmts.iter().filter_map(|s| match &s.kind {
        StmtKind::Assign { targets, value, .. }
            if targets.iter().any(|&t| {
                matches!(&m.expr(t).kind, ExprKind::Attr { obj, name, .. }
                if name == attr && m.resolved(*obj).is_some_and(|c| classes.contains(&c)))
            }) =>
        {
            Some(*value)
        }
        _ => None,
    });
    let is_unbounded = |v: Option<unsnarl_model::ExprId>| v.is_some_and(unbounded_queue);
    values.next().is_some_and(is_unbounded) && values.all(is_unbounded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_passed_deadline_abandons_the_check_before_any_rule() {
        let engine = Engine::new(all_rules().to_vec(), Knowledge::builtin());
        let text = "import asyncio, time\nasync def f():\n    time.sleep(1)\n";
        let model = testing::lower(Language::Python, text, "a.py");
        let (prepared, sums) = engine.prepare(model, Language::Python);
        let index = ProjectIndex::build(vec![sums]);
        let expired = Deadline::after(Some(Duration::ZERO));
        assert_eq!(
            engine.check_within(0, "a.py", text, &prepared, &index, expired),
            Err(TimedOut)
        );
        let later = Deadline::after(Some(Duration::from_secs(3600)));
        let found = engine
            .check_within(0, "a.py", text, &prepared, &index, later)
            .unwrap();
        assert!(!found.is_empty());
        assert_eq!(found, engine.check(0, "a.py", text, &prepared, &index));
    }

    fn rules_found(lang: Language, path: &str, text: &str) -> Vec<&'static str> {
        let engine = Engine::new(all_rules().to_vec(), Knowledge::builtin());
        let model = testing::lower(lang, text, path);
        let (prepared, sums) = engine.prepare(model, lang);
        let index = ProjectIndex::build(vec![sums]);
        let mut found: Vec<_> = engine
            .check(0, path, text, &prepared, &index)
            .iter()
            .map(|f| f.rule)
            .collect();
        found.sort();
        found
    }

    #[test]
    fn findings_in_code_after_a_raise_or_return_are_dropped() {
        let dead = "import asyncio, time\nasync def f():\n    try:\n        await g()\n    except Exception as e:\n        raise RuntimeError(e) from e\n        time.sleep(1)\n";
        assert_eq!(
            rules_found(Language::Python, "a.py", dead),
            Vec::<&str>::new()
        );
        let live = dead.replace("        raise RuntimeError(e) from e\n", "");
        assert_eq!(rules_found(Language::Python, "a.py", &live), vec!["PY002"]);
        // A `for` loop's `else` ends only the path that did not break.
        let for_else = "import time\nimport requests\ndef f(xs):\n    for x in xs:\n        if x:\n            break\n    else:\n        raise ValueError(xs)\n    while True:\n        try:\n            return requests.get(\"http://api/x\", timeout=5)\n        except OSError:\n            time.sleep(1)\n";
        assert_eq!(
            rules_found(Language::Python, "a.py", for_else),
            vec!["PY027"]
        );
        let js_dead = "import fs from \"fs\";\nasync function f(p) {\n  return 1;\n  fs.readFileSync(p);\n}\n";
        let js_live = js_dead.replace("  return 1;\n", "");
        assert!(rules_found(Language::JavaScript, "a.js", js_dead).is_empty());
        assert!(!rules_found(Language::JavaScript, "a.js", &js_live).is_empty());
    }

    #[test]
    fn a_function_declared_below_a_return_is_still_checked() {
        // JavaScript hoists it: `run` calls it from above the `return`.
        let text = "import fs from \"fs\";\nasync function run(p) {\n  return read(p);\n  async function read(p) {\n    return fs.readFileSync(p);\n  }\n}\n";
        assert!(!rules_found(Language::JavaScript, "a.js", text).is_empty());
    }
}
