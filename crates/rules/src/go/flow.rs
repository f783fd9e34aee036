//! A small forward walk over the paths of a Go function body: rules supply
//! a state (held locks, pending `cancel` calls, WaitGroup counts...) and how
//! simple statements change it; the walk follows branches, loops, `select`
//! and `switch`, joins states where paths meet and reports every exit.
//!
//! Approximations: a loop body is walked once; `goto` ends nothing (a
//! `fallthrough` goes on into the next case's body); a labeled
//! `break`/`continue` applies to the innermost loop.

use crate::context::FileCx;
use unsnarl_model::*;

pub trait Flow {
    type S: Clone;
    /// A statement with no sub-blocks (expression, assignment, `defer`,
    /// `go`, `return`'s value), evaluated in `st`.
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut Self::S);
    /// A condition, subject or range expression of a compound statement.
    fn cond(&mut self, _cx: &FileCx, _e: ExprId, _st: &mut Self::S) {}
    /// The communication of a `select` arm, before its body.
    fn arm(&mut self, _cx: &FileCx, _arm: &SelectArm, _st: &mut Self::S) {}
    /// A `select` statement about to run (with the state before it).
    fn select(&mut self, _cx: &FileCx, _s: StmtId, _st: &mut Self::S) {}
    /// A path leaving the function: `return` (with the statement) or the end
    /// of the body (`None`). No-return calls (`panic`, `log.Fatal`) are not
    /// exits.
    fn exit(&mut self, _cx: &FileCx, _ret: Option<StmtId>, _st: &Self::S) {}
    /// The state where two paths meet.
    fn join(&self, a: &Self::S, b: &Self::S) -> Self::S;
    /// Whether a loop with a condition may run zero times (its entry state
    /// flows past it). Rules that pair a loop of sends with a loop of
    /// receives assume both run.
    fn zero_trip_loops(&self) -> bool {
        true
    }
}

/// Walks the body of a function; every path ends in [`Flow::exit`].
pub fn run_function<F: Flow>(cx: &FileCx, flow: &mut F, body: &Block, init: F::S) {
    let mut w = Walker {
        loops: Vec::new(),
        flow,
    };
    if let Some(end) = w.block(cx, body, init) {
        w.flow.exit(cx, None, &end);
    }
}

struct LoopCx<S> {
    breaks: Vec<S>,
}

struct Walker<'f, F: Flow> {
    loops: Vec<LoopCx<F::S>>,
    flow: &'f mut F,
}

impl<F: Flow> Walker<'_, F> {
    fn join_opt(&self, a: Option<F::S>, b: Option<F::S>) -> Option<F::S> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.flow.join(&a, &b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// Runs a block; `None` when no path falls off its end.
    fn block(&mut self, cx: &FileCx, b: &Block, mut st: F::S) -> Option<F::S> {
        for &s in b {
            st = self.stmt(cx, s, st)?;
        }
        Some(st)
    }

    fn stmt(&mut self, cx: &FileCx, s: StmtId, mut st: F::S) -> Option<F::S> {
        match &cx.stmt(s).kind {
            StmtKind::Return(_) => {
                self.flow.simple(cx, s, &mut st);
                self.flow.exit(cx, Some(s), &st);
                None
            }
            StmtKind::Expr(e) => {
                self.flow.simple(cx, s, &mut st);
                if cx.call(*e).is_some_and(super::common::is_noreturn_call) {
                    return None;
                }
                Some(st)
            }
            StmtKind::Break => {
                // Unlabeled breaks of a switch/select are handled by
                // `breakable`; this one leaves the innermost loop.
                if let Some(l) = self.loops.last_mut() {
                    l.breaks.push(st);
                }
                None
            }
            StmtKind::Continue => None,
            // Python only; Go has no `del`.
            StmtKind::Delete(_) => Some(st),
            StmtKind::Pass => {
                if cx.source(cx.stmt(s).span).starts_with("goto") {
                    return None;
                }
                Some(st)
            }
            StmtKind::Block(b) => self.block(cx, b, st),
            StmtKind::If { cond, then, orelse } => {
                self.flow.cond(cx, *cond, &mut st);
                // `if false { .. }`: a constant condition leaves one branch
                // dead, and no path goes through it.
                let known = constant(cx, *cond);
                let a = (known != Some(false))
                    .then(|| self.block(cx, then, st.clone()))
                    .flatten();
                let b = (known != Some(true))
                    .then(|| self.block(cx, orelse, st))
                    .flatten();
                self.join_opt(a, b)
            }
            StmtKind::While { cond, body, .. } => {
                self.flow.cond(cx, *cond, &mut st);
                self.looped(cx, body, st, true)
            }
            StmtKind::For {
                iter, target, body, ..
            } => {
                self.flow.cond(cx, *iter, &mut st);
                if let Some(t) = target {
                    self.flow.cond(cx, *t, &mut st);
                }
                self.looped(cx, body, st, true)
            }
            StmtKind::Loop { body } => self.looped(cx, body, st, false),
            StmtKind::Switch { subject, cases } => {
                if let Some(e) = subject {
                    self.flow.cond(cx, *e, &mut st);
                }
                let has_default = cases.iter().any(|c| c.patterns.is_empty());
                let mut out = if has_default { None } else { Some(st.clone()) };
                // What a case ending in `fallthrough` passes to the next one.
                let mut fell: Option<F::S> = None;
                for c in cases {
                    let mut cst = st.clone();
                    for &p in &c.patterns {
                        self.flow.cond(cx, p, &mut cst);
                    }
                    let entry = match fell.take() {
                        Some(f) => self.join_opt(Some(cst), Some(f)),
                        None => Some(cst),
                    };
                    let Some(entry) = entry else { continue };
                    let end = self.breakable(cx, &c.body, entry);
                    let falls = c.body.last().is_some_and(|&l| {
                        matches!(cx.stmt(l).kind, StmtKind::Pass)
                            && cx.source(cx.stmt(l).span).trim() == "fallthrough"
                    });
                    if falls {
                        fell = end;
                    } else {
                        out = self.join_opt(out, end);
                    }
                }
                self.join_opt(out, fell)
            }
            StmtKind::Select { arms, .. } => {
                self.flow.select(cx, s, &mut st);
                let mut out = None;
                for arm in arms {
                    let mut ast = st.clone();
                    self.flow.arm(cx, arm, &mut ast);
                    let end = self.breakable(cx, &arm.body, ast);
                    out = self.join_opt(out, end);
                }
                out
            }
            StmtKind::Try { body, .. } | StmtKind::With { body, .. } => self.block(cx, body, st),
            StmtKind::FuncDef(_) | StmtKind::ClassDef(_) | StmtKind::Global { .. } => Some(st),
            StmtKind::Raise(_) => None,
            StmtKind::Assign { .. } | StmtKind::Defer(_) | StmtKind::Go(_) | StmtKind::Tail(_) => {
                self.flow.simple(cx, s, &mut st);
                Some(st)
            }
        }
    }

    /// A switch case or select arm: an unlabeled `break` leaves it.
    fn breakable(&mut self, cx: &FileCx, body: &Block, st: F::S) -> Option<F::S> {
        let mut out = None;
        let mut cur = Some(st);
        for &s in body {
            let Some(state) = cur.take() else { break };
            if matches!(cx.stmt(s).kind, StmtKind::Break)
                && cx.source(cx.stmt(s).span).trim() == "break"
            {
                out = Some(state);
                cur = None;
                break;
            }
            cur = self.stmt_in_breakable(cx, s, state, &mut out);
        }
        self.join_opt(out, cur)
    }

    /// Like `stmt`, but unlabeled breaks nested in plain blocks/ifs of a
    /// case body leave the switch, collected in `out`.
    fn stmt_in_breakable(
        &mut self,
        cx: &FileCx,
        s: StmtId,
        st: F::S,
        out: &mut Option<F::S>,
    ) -> Option<F::S> {
        match &cx.stmt(s).kind {
            StmtKind::If { cond, then, orelse } => {
                let mut st = st;
                self.flow.cond(cx, *cond, &mut st);
                let known = constant(cx, *cond);
                let a = (known != Some(false))
                    .then(|| self.breakable_block(cx, then, st.clone(), out))
                    .flatten();
                let b = (known != Some(true))
                    .then(|| self.breakable_block(cx, orelse, st, out))
                    .flatten();
                self.join_opt(a, b)
            }
            StmtKind::Block(b) => self.breakable_block(cx, b, st, out),
            _ => self.stmt(cx, s, st),
        }
    }

    fn breakable_block(
        &mut self,
        cx: &FileCx,
        b: &Block,
        st: F::S,
        out: &mut Option<F::S>,
    ) -> Option<F::S> {
        let mut cur = st;
        for &s in b {
            if matches!(cx.stmt(s).kind, StmtKind::Break)
                && cx.source(cx.stmt(s).span).trim() == "break"
            {
                let joined = self.join_opt(out.take(), Some(cur));
                *out = joined;
                return None;
            }
            cur = self.stmt_in_breakable(cx, s, cur, out)?;
        }
        Some(cur)
    }

    /// A loop: the body runs once from the entry state; the loop is left
    /// through its condition (when it has one) or a `break`.
    fn looped(&mut self, cx: &FileCx, body: &Block, st: F::S, has_cond: bool) -> Option<F::S> {
        self.loops.push(LoopCx { breaks: Vec::new() });
        let end = self.block(cx, body, st.clone());
        let l = self.loops.pop().expect("pushed above");
        let mut out = if !has_cond {
            None
        } else if self.flow.zero_trip_loops() {
            self.join_opt(Some(st), end)
        } else {
            end
        };
        for b in l.breaks {
            out = self.join_opt(out, Some(b));
        }
        out
    }
}

/// The value of a condition written as `true` or `false`.
fn constant(cx: &FileCx, cond: ExprId) -> Option<bool> {
    match cx.model.literal(cond) {
        Some(Lit::Bool(b)) => Some(*b),
        _ => None,
    }
}
