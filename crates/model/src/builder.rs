//! Helpers for front ends to allocate nodes of a [`FileModel`].

use crate::ir::*;
use crate::span::Span;
use std::cell::RefCell;

/// Deepest nesting a front end lowers. Deeper sub-trees are cut off (lowered
/// as an empty [`ExprKind::Other`]) so that pathological inputs such as ten
/// thousand nested parentheses cannot exhaust the stack of our own walks.
pub const MAX_NESTING: u32 = 400;

thread_local! {
    /// The emptied node arrays of the last model recycled on this thread.
    static SPARE_NODES: RefCell<(Vec<Expr>, Vec<Stmt>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl FileModel {
    /// A model with the module pseudo-function already at `functions[0]`.
    pub fn new(module: impl Into<Str>, span: Span) -> FileModel {
        let mut m = FileModel {
            module: module.into(),
            ..FileModel::default()
        };
        let mut f = Function::new(FnKind::Module, span);
        f.name = "<module>".into();
        m.functions.push(f);
        m
    }

    /// Makes room for the nodes of a file of `text_len` bytes, given how many
    /// source bytes one expression and one statement take in the front
    /// end's language (its 90th percentile on the benchmark corpora, so that
    /// most files never grow the arenas: growing them by doubling copied
    /// every node several times, about 3% of a Python scan's instructions).
    /// At most 1 MiB each: past that the guess is worth less than the memory
    /// (large generated files are mostly data), and the arenas grow as usual.
    pub fn reserve_nodes(&mut self, text_len: usize, bytes_per_expr: usize, bytes_per_stmt: usize) {
        const MAX_RESERVED: usize = 1 << 20;
        if self.exprs.capacity() == 0 && self.stmts.capacity() == 0 {
            SPARE_NODES.with(|spare| {
                let mut spare = spare.borrow_mut();
                self.exprs = std::mem::take(&mut spare.0);
                self.stmts = std::mem::take(&mut spare.1);
            });
        }
        let at_most = |size: usize| MAX_RESERVED / size.max(1);
        reserve_empty(
            &mut self.exprs,
            (text_len / bytes_per_expr).min(at_most(size_of::<Expr>())),
        );
        reserve_empty(
            &mut self.stmts,
            (text_len / bytes_per_stmt).min(at_most(size_of::<Stmt>())),
        );
    }

    /// Drops the model, keeping its node arrays (emptied) for the next model
    /// [`reserve_nodes`](Self::reserve_nodes) makes on this thread. A fresh
    /// array is fresh memory: writing the nodes of each file into pages the
    /// allocator had just given back cost more time than building them.
    pub fn recycle(mut self) {
        const MAX_KEPT: usize = 1 << 20;
        self.exprs.clear();
        self.stmts.clear();
        let small = |bytes: usize| bytes <= MAX_KEPT;
        if small(self.exprs.capacity() * size_of::<Expr>())
            && small(self.stmts.capacity() * size_of::<Stmt>())
        {
            let nodes = (
                std::mem::take(&mut self.exprs),
                std::mem::take(&mut self.stmts),
            );
            SPARE_NODES.with(|spare| *spare.borrow_mut() = nodes);
        }
    }

    pub fn add_expr(&mut self, kind: ExprKind, span: Span) -> ExprId {
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(Expr { kind, span });
        id
    }

    pub fn add_stmt(&mut self, kind: StmtKind, span: Span) -> StmtId {
        let id = StmtId(self.stmts.len() as u32);
        self.stmts.push(Stmt { kind, span });
        id
    }

    pub fn add_function(&mut self, f: Function) -> FuncId {
        let id = FuncId(self.functions.len() as u32);
        self.functions.push(f);
        id
    }

    pub fn add_type(&mut self, t: TypeDecl) -> TypeId {
        let id = TypeId(self.types.len() as u32);
        self.types.push(t);
        id
    }

    /// A rough count of the heap bytes the model holds (nodes, plus an
    /// average for the strings and lists they own), for memory budgets.
    pub fn approx_bytes(&self) -> usize {
        use std::mem::size_of;
        // Measured on real files: names, attribute names, callee names and
        // child lists own about 24 heap bytes per node on average.
        const OWNED_PER_NODE: usize = 24;
        self.exprs.capacity() * size_of::<Expr>()
            + self.stmts.capacity() * size_of::<Stmt>()
            + self.functions.capacity() * (size_of::<Function>() + 64)
            + self.types.capacity() * size_of::<TypeDecl>()
            + (self.exprs.len() + self.stmts.len()) * OWNED_PER_NODE
    }

    /// An expression standing for a sub-tree that was not lowered.
    pub fn opaque(&mut self, span: Span) -> ExprId {
        self.add_expr(ExprKind::Other(Vec::new()), span)
    }

    pub fn expr(&self, id: ExprId) -> &Expr {
        &self.exprs[id.index()]
    }

    pub fn expr_mut(&mut self, id: ExprId) -> &mut Expr {
        &mut self.exprs[id.index()]
    }

    pub fn stmt(&self, id: StmtId) -> &Stmt {
        &self.stmts[id.index()]
    }

    pub fn func(&self, id: FuncId) -> &Function {
        &self.functions[id.index()]
    }

    pub fn func_mut(&mut self, id: FuncId) -> &mut Function {
        &mut self.functions[id.index()]
    }

    pub fn function_ids(&self) -> impl Iterator<Item = FuncId> + use<> {
        (0..self.functions.len() as u32).map(FuncId)
    }

    /// The call, if `id` is a call expression.
    pub fn call(&self, id: ExprId) -> Option<&Call> {
        match &self.expr(id).kind {
            ExprKind::Call(c) => Some(c),
            _ => None,
        }
    }

    /// Looks through parentheses-like wrappers that do not change the value:
    /// casts, Rust `?` is *not* looked through (it unwraps a Result).
    pub fn strip(&self, mut id: ExprId) -> ExprId {
        while let ExprKind::Cast(inner) = &self.expr(id).kind {
            id = *inner;
        }
        id
    }

    /// The identifier of a plain name expression.
    pub fn name_of(&self, id: ExprId) -> Option<&str> {
        match &self.expr(self.strip(id)).kind {
            ExprKind::Name { id, .. } => Some(id),
            _ => None,
        }
    }

    /// The values assigned anywhere in the file to the name or attribute
    /// chain spelled `dotted` (`self.outbox`), in source order; `None` for
    /// a target assigned with no value (a bare annotation).
    pub fn values_assigned_to<'a>(
        &'a self,
        dotted: &'a str,
    ) -> impl Iterator<Item = Option<ExprId>> + 'a {
        self.stmts.iter().filter_map(move |s| match &s.kind {
            StmtKind::Assign { targets, value, .. }
                if targets
                    .iter()
                    .any(|&t| self.dotted(t).as_deref() == Some(dotted)) =>
            {
                Some(*value)
            }
            _ => None,
        })
    }

    /// The file assigns `dotted` at least once, and every value it assigns
    /// is `such` (a target assigned no value never is).
    pub fn only_ever_assigned(&self, dotted: &str, such: impl Fn(ExprId) -> bool) -> bool {
        let mut values = self.values_assigned_to(dotted);
        let is_such = |v: Option<ExprId>| v.is_some_and(&such);
        values.next().is_some_and(is_such) && values.all(is_such)
    }

    /// A dotted rendering of a name/attribute/path chain (`self.lock`,
    /// `a.b.c`, `Ordering::Relaxed`), or `None` for anything else.
    pub fn dotted(&self, id: ExprId) -> Option<String> {
        match &self.expr(self.strip(id)).kind {
            ExprKind::Name { id, .. } => Some(id.to_string()),
            ExprKind::Path { text, .. } => Some(text.to_string()),
            ExprKind::Attr { obj, name, .. } => {
                let mut s = self.dotted(*obj)?;
                s.push('.');
                s.push_str(name);
                Some(s)
            }
            ExprKind::Unary {
                op: UnOp::Ref | UnOp::Deref,
                operand,
            } => self.dotted(*operand),
            _ => None,
        }
    }

    /// [`Self::dotted`], or an entry of one under a plain name or literal
    /// key (`self._tasks[key]`, `handlers["close"]`): the same text names
    /// the same place within one function.
    pub fn keyed_place(&self, id: ExprId) -> Option<String> {
        if let Some(d) = self.dotted(id) {
            return Some(d);
        }
        let ExprKind::Index { obj, index } = &self.expr(self.strip(id)).kind else {
            return None;
        };
        let key = match &self.expr(self.strip(*index)).kind {
            ExprKind::Name { id, .. } => id.to_string(),
            ExprKind::Literal(Lit::Int(v)) => v.to_string(),
            ExprKind::Literal(Lit::Str(v)) => format!("{v:?}"),
            _ => return None,
        };
        Some(format!("{}[{key}]", self.dotted(*obj)?))
    }

    /// The qualified name an expression resolves to, if any.
    pub fn resolved(&self, id: ExprId) -> Option<&str> {
        match &self.expr(self.strip(id)).kind {
            ExprKind::Name { resolved, .. }
            | ExprKind::Attr { resolved, .. }
            | ExprKind::Path { resolved, .. } => resolved.as_deref(),
            _ => None,
        }
    }

    /// A literal's value.
    pub fn literal(&self, id: ExprId) -> Option<&Lit> {
        match &self.expr(self.strip(id)).kind {
            ExprKind::Literal(l) => Some(l),
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => match &self.expr(*operand).kind {
                ExprKind::Literal(l) => Some(l),
                _ => None,
            },
            _ => None,
        }
    }

    /// The integer value of a literal (negated literals included), if it is
    /// a compile-time integer.
    pub fn int_value(&self, id: ExprId) -> Option<i128> {
        self.int_value_with(id, &|_| None)
    }

    /// [`int_value`](Self::int_value), with the values of plain names given
    /// by `name` (a constant the caller found bound to one).
    pub fn int_value_with(&self, id: ExprId, name: &dyn Fn(&str) -> Option<i128>) -> Option<i128> {
        let id = self.strip(id);
        match &self.expr(id).kind {
            ExprKind::Literal(Lit::Int(v)) => Some(i128::from(*v)),
            ExprKind::Literal(Lit::Float(f)) if f.fract() == 0.0 && f.abs() < 1e30 => {
                Some(*f as i128)
            }
            ExprKind::Name { id, .. } => name(id),
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => self.int_value_with(*operand, name).map(|v| -v),
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (
                    self.int_value_with(*left, name)?,
                    self.int_value_with(*right, name)?,
                );
                match op {
                    BinOp::Add => l.checked_add(r),
                    BinOp::Sub => l.checked_sub(r),
                    BinOp::Mul => l.checked_mul(r),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Room for `wanted` nodes in an array about to be filled: an empty array too
/// small for them is replaced, not grown, since growing copies its whole old
/// capacity (the allocator does not know that none of it is in use).
fn reserve_empty<T>(nodes: &mut Vec<T>, wanted: usize) {
    if nodes.is_empty() && nodes.capacity() < wanted {
        *nodes = Vec::with_capacity(wanted);
    } else {
        nodes.reserve(wanted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_with_nodes(n: usize) -> FileModel {
        let mut m = FileModel::new("m", Span::new(0, 0));
        m.reserve_nodes(n * 10, 10, 40);
        for i in 0..n {
            let e = m.add_expr(ExprKind::Literal(Lit::Int(i as i64)), Span::new(0, 0));
            m.add_stmt(StmtKind::Expr(e), Span::new(0, 0));
        }
        m
    }

    #[test]
    fn a_recycled_models_arrays_serve_the_next_model_empty() {
        let first = model_with_nodes(1000);
        let (exprs_at, stmts_at) = (first.exprs.as_ptr(), first.stmts.as_ptr());
        first.recycle();
        let mut next = FileModel::new("n", Span::new(0, 0));
        next.reserve_nodes(100, 10, 40);
        assert_eq!(next.exprs.as_ptr(), exprs_at);
        assert_eq!(next.stmts.as_ptr(), stmts_at);
        assert!(next.exprs.is_empty() && next.stmts.is_empty());
        assert!(next.exprs.capacity() >= 1000);
    }

    #[test]
    fn arrays_too_large_to_keep_are_freed() {
        let n = (8 << 20) / size_of::<Expr>();
        model_with_nodes(n).recycle();
        let mut next = FileModel::new("n", Span::new(0, 0));
        next.reserve_nodes(100, 10, 40);
        assert!(next.exprs.capacity() < n);
    }
}
