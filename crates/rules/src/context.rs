//! What a rule sees of one file, and the questions rules keep asking of it.

use crate::index::ProjectIndex;
use crate::rule::RuleMeta;
use crate::semantic::Semantic;
use unsnarl_model::walk::{Parent, Tree};
use unsnarl_model::*;

/// One file, ready for the rules.
pub struct FileCx<'a> {
    /// Index of the file in the scan (for related locations in other files).
    pub file: usize,
    pub path: &'a str,
    pub text: &'a str,
    pub lang: Language,
    pub model: &'a FileModel,
    pub tree: &'a Tree,
    pub sema: &'a Semantic,
    pub kb: &'a Table,
    pub index: &'a ProjectIndex,
}

impl<'a> FileCx<'a> {
    /// A finding of `rule` at `span` with the rule's default severity.
    pub fn finding(
        &self,
        rule: &'static RuleMeta,
        span: Span,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            rule: rule.id,
            category: rule.category,
            severity: rule.severity,
            span,
            message: message.into(),
            fix: fix.into(),
            related: Vec::new(),
        }
    }

    pub fn expr(&self, id: ExprId) -> &'a Expr {
        self.model.expr(id)
    }

    pub fn stmt(&self, id: StmtId) -> &'a Stmt {
        self.model.stmt(id)
    }

    pub fn func(&self, id: FuncId) -> &'a Function {
        self.model.func(id)
    }

    pub fn call(&self, id: ExprId) -> Option<&'a Call> {
        self.model.call(id)
    }

    /// The source text of a span.
    pub fn source(&self, span: Span) -> &'a str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// A short rendering of a callee for messages: the resolved name when
    /// known, else the callee as written.
    pub fn callee_display(&self, c: &Call) -> String {
        match &c.target {
            Some(t) => t.to_string(),
            None => {
                let s = self.source(self.expr(c.func).span);
                s.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        }
    }

    /// The knowledge entry of `effect` for a call, if any.
    pub fn effect(&self, c: &Call, effect: Effect) -> Option<&'a Entry> {
        self.kb.find(effect, c.target.as_deref(), &c.name)
    }

    /// True when code in `f` runs on an event loop / async runtime thread,
    /// where blocking stalls every other task: async functions and async
    /// blocks. Closures handed to an offload API are not.
    pub fn runs_on_loop(&self, f: FuncId) -> bool {
        let func = self.func(f);
        func.is_async && !self.is_offloaded(f)
    }

    /// True when `f` is a closure passed to an offload API
    /// (`asyncio.to_thread`, `spawn_blocking`, `run_in_executor`...).
    pub fn is_offloaded(&self, f: FuncId) -> bool {
        let Parent::Expr(site) = self.tree.func_site(f) else {
            return false;
        };
        let mut cur = site;
        // The closure may be wrapped (`functools.partial(...)`, a cast).
        for _ in 0..3 {
            match self.tree.expr_parent(cur) {
                Parent::Expr(p) => {
                    if let Some(c) = self.call(p)
                        && let Some(e) = self.effect(c, Effect::Offload)
                    {
                        return match e.arg {
                            None => true,
                            Some(i) => c.positional(i).is_some_and(|a| self.contains(a, site)),
                        };
                    }
                    cur = p;
                }
                _ => return false,
            }
        }
        false
    }

    /// True when `inner` is `outer` or inside it.
    pub fn contains(&self, outer: ExprId, inner: ExprId) -> bool {
        if outer == inner {
            return true;
        }
        self.tree.expr_ancestors(inner).any(|a| a == outer)
    }

    /// True when the value of expression `e` is discarded: it is an
    /// expression statement (looking through `void`-less wrappers such as
    /// casts).
    pub fn is_discarded(&self, e: ExprId) -> bool {
        let mut cur = e;
        loop {
            match self.tree.expr_parent(cur) {
                Parent::Stmt(s) => {
                    return matches!(self.stmt(s).kind, StmtKind::Expr(x) if x == cur);
                }
                Parent::Expr(p) if matches!(self.expr(p).kind, ExprKind::Cast(_)) => cur = p,
                _ => return false,
            }
        }
    }

    /// True when `e` is directly awaited.
    pub fn is_awaited(&self, e: ExprId) -> bool {
        let mut cur = e;
        loop {
            match self.tree.expr_parent(cur) {
                Parent::Expr(p) => match self.expr(p).kind {
                    ExprKind::Await(_) => return true,
                    ExprKind::Cast(_) | ExprKind::Try(_) => cur = p,
                    _ => return false,
                },
                _ => return false,
            }
        }
    }

    /// Statements enclosing the expression, innermost first.
    pub fn enclosing_stmts(&self, e: ExprId) -> Vec<StmtId> {
        match self.tree.enclosing_stmt(e) {
            Some(s) => std::iter::once(s)
                .chain(self.tree.stmt_ancestors(s))
                .collect(),
            None => Vec::new(),
        }
    }

    /// True when the expression sits inside a loop body of its function.
    pub fn in_loop(&self, e: ExprId) -> bool {
        self.enclosing_stmts(e).into_iter().any(|s| {
            matches!(
                self.stmt(s).kind,
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
            )
        })
    }

    /// The function owning an expression.
    pub fn func_of(&self, e: ExprId) -> FuncId {
        self.tree.expr_func(e)
    }

    /// The name of the function for messages.
    pub fn func_display(&self, f: FuncId) -> String {
        let func = self.func(f);
        if !func.name.is_empty() {
            format!("`{}`", func.name)
        } else if func.kind == FnKind::Module {
            "module code".into()
        } else {
            "an anonymous function".into()
        }
    }
}
