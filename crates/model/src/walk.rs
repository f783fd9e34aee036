//! Traversals of the file model: a visitor with enter/exit hooks, child
//! enumeration, and the parent links rules use to ask "what happens to the
//! value of this call?".
//!
//! Walks stay inside one function: a nested function or closure is a separate
//! [`Function`] and is visited when the rule visits that function.

use crate::ir::*;

/// Hooks called during a depth-first walk. Returning `false` from an
/// `enter_*` hook skips that node's children (its `exit_*` is still called).
pub trait Visitor {
    fn enter_stmt(&mut self, _m: &FileModel, _id: StmtId) -> bool {
        true
    }
    fn exit_stmt(&mut self, _m: &FileModel, _id: StmtId) {}
    fn enter_expr(&mut self, _m: &FileModel, _id: ExprId) -> bool {
        true
    }
    fn exit_expr(&mut self, _m: &FileModel, _id: ExprId) {}
    /// Called before and after each lexical block (function bodies, branches,
    /// loop bodies, `{}` blocks), for rules that track scopes.
    fn enter_block(&mut self, _m: &FileModel, _block: &Block) {}
    fn exit_block(&mut self, _m: &FileModel, _block: &Block) {}
}

pub fn walk_block<V: Visitor + ?Sized>(m: &FileModel, block: &Block, v: &mut V) {
    v.enter_block(m, block);
    for &s in block {
        walk_stmt(m, s, v);
    }
    v.exit_block(m, block);
}

pub fn walk_stmt<V: Visitor + ?Sized>(m: &FileModel, id: StmtId, v: &mut V) {
    if v.enter_stmt(m, id) {
        for_each_stmt_child(m, id, &mut |child| match child {
            Child::Expr(e) => walk_expr(m, e, v),
            Child::Block(b) => walk_block(m, b, v),
        });
    }
    v.exit_stmt(m, id);
}

pub fn walk_expr<V: Visitor + ?Sized>(m: &FileModel, id: ExprId, v: &mut V) {
    if v.enter_expr(m, id) {
        if let ExprKind::Block(b) = &m.expr(id).kind {
            walk_block(m, b, v);
        } else {
            for_each_expr_child(m, id, &mut |e| walk_expr(m, e, v));
        }
    }
    v.exit_expr(m, id);
}

/// A child of a statement: an expression or a nested block.
#[derive(Clone, Copy)]
pub enum Child<'a> {
    Expr(ExprId),
    Block(&'a Block),
}

/// Calls `f` on each direct child of a statement, in source order.
pub fn for_each_stmt_child<'a>(m: &'a FileModel, id: StmtId, f: &mut impl FnMut(Child<'a>)) {
    match &m.stmt(id).kind {
        StmtKind::Expr(e) | StmtKind::Tail(e) | StmtKind::Defer(e) | StmtKind::Go(e) => {
            f(Child::Expr(*e))
        }
        StmtKind::Assign { targets, value, .. } => {
            if let Some(v) = value {
                f(Child::Expr(*v));
            }
            for t in targets {
                f(Child::Expr(*t));
            }
        }
        StmtKind::If { cond, then, orelse } => {
            f(Child::Expr(*cond));
            f(Child::Block(then));
            if !orelse.is_empty() {
                f(Child::Block(orelse));
            }
        }
        StmtKind::While { cond, body, orelse } => {
            f(Child::Expr(*cond));
            f(Child::Block(body));
            if !orelse.is_empty() {
                f(Child::Block(orelse));
            }
        }
        StmtKind::For {
            target, iter, body, ..
        } => {
            f(Child::Expr(*iter));
            if let Some(t) = target {
                f(Child::Expr(*t));
            }
            f(Child::Block(body));
        }
        StmtKind::Loop { body } | StmtKind::Block(body) => f(Child::Block(body)),
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finally,
        } => {
            f(Child::Block(body));
            for h in handlers {
                f(Child::Block(&h.body));
            }
            if !orelse.is_empty() {
                f(Child::Block(orelse));
            }
            if let Some(fin) = finally {
                f(Child::Block(fin));
            }
        }
        StmtKind::With { items, body, .. } => {
            for it in items {
                f(Child::Expr(it.ctx));
                if let Some(t) = it.target {
                    f(Child::Expr(t));
                }
            }
            f(Child::Block(body));
        }
        StmtKind::Return(e) | StmtKind::Raise(e) => {
            if let Some(e) = e {
                f(Child::Expr(*e));
            }
        }
        StmtKind::Select { arms, .. } => {
            for arm in arms {
                match &arm.kind {
                    ArmKind::Recv { channel, binding } => {
                        f(Child::Expr(*channel));
                        if let Some(b) = binding {
                            f(Child::Expr(*b));
                        }
                    }
                    ArmKind::Send { channel, value } => {
                        f(Child::Expr(*channel));
                        f(Child::Expr(*value));
                    }
                    ArmKind::Future { future, pattern } => {
                        f(Child::Expr(*future));
                        if let Some(p) = pattern {
                            f(Child::Expr(*p));
                        }
                    }
                    ArmKind::Default => {}
                }
                f(Child::Block(&arm.body));
            }
        }
        StmtKind::Switch { subject, cases } => {
            if let Some(s) = subject {
                f(Child::Expr(*s));
            }
            for c in cases {
                for p in &c.patterns {
                    f(Child::Expr(*p));
                }
                f(Child::Block(&c.body));
            }
        }
        StmtKind::Delete(targets) => {
            for &t in targets {
                f(Child::Expr(t));
            }
        }
        StmtKind::Break
        | StmtKind::Continue
        | StmtKind::FuncDef(_)
        | StmtKind::ClassDef(_)
        | StmtKind::Global { .. }
        | StmtKind::Pass => {}
    }
}

/// Calls `f` on each direct sub-expression, in source order. Does not enter
/// closures (they are separate functions) nor `Block` expressions (whose
/// statements are reached through [`walk_expr`]).
pub fn for_each_expr_child(m: &FileModel, id: ExprId, f: &mut impl FnMut(ExprId)) {
    match &m.expr(id).kind {
        ExprKind::Name { .. }
        | ExprKind::Path { .. }
        | ExprKind::Literal(_)
        | ExprKind::Closure(_)
        | ExprKind::Block(_) => {}
        ExprKind::Attr { obj, .. } => f(*obj),
        ExprKind::Call(c) => {
            f(c.func);
            for a in &c.args {
                f(a.value);
            }
        }
        ExprKind::Await(e)
        | ExprKind::Unary { operand: e, .. }
        | ExprKind::Recv(e)
        | ExprKind::Spread(e)
        | ExprKind::Try(e)
        | ExprKind::Cast(e) => f(*e),
        ExprKind::Yield(e) => {
            if let Some(e) = e {
                f(*e)
            }
        }
        ExprKind::Binary { left, right, .. } | ExprKind::Logical { left, right, .. } => {
            f(*left);
            f(*right);
        }
        ExprKind::Ternary { cond, then, orelse } => {
            f(*cond);
            f(*then);
            f(*orelse);
        }
        ExprKind::Collection { elems, .. } => elems.iter().for_each(|e| f(*e)),
        ExprKind::Comprehension {
            elt, generators, ..
        } => {
            for g in generators {
                f(g.iter);
                f(g.target);
                g.conds.iter().for_each(|c| f(*c));
            }
            f(*elt);
        }
        ExprKind::Index { obj, index } => {
            f(*obj);
            f(*index);
        }
        ExprKind::Let { pattern, value } => {
            f(*value);
            f(*pattern);
        }
        ExprKind::Send { channel, value } => {
            f(*channel);
            f(*value);
        }
        ExprKind::AssignExpr { target, value, .. } => {
            f(*value);
            f(*target);
        }
        ExprKind::Other(children) => children.iter().for_each(|e| f(*e)),
    }
}

/// Where a node sits: the node that contains it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    Expr(ExprId),
    Stmt(StmtId),
    /// Directly in a function (a body statement, a decorator, a default).
    Function(FuncId),
    /// Not reached from any function (should not happen in a valid model).
    Detached,
}

/// Parent links and owning functions for every node of a model.
#[derive(Debug, Default)]
pub struct Tree {
    expr_parent: Vec<Parent>,
    stmt_parent: Vec<Parent>,
    expr_func: Vec<u32>,
    stmt_func: Vec<u32>,
    /// Where each function is defined: its `FuncDef` statement or `Closure`
    /// expression.
    func_site: Vec<Parent>,
}

impl Tree {
    /// A rough count of the heap bytes it holds, for memory budgets.
    pub fn approx_bytes(&self) -> usize {
        (self.expr_parent.capacity() + self.stmt_parent.capacity() + self.func_site.capacity())
            * std::mem::size_of::<Parent>()
            + (self.expr_func.capacity() + self.stmt_func.capacity()) * 4
    }

    pub fn build(m: &FileModel) -> Tree {
        let mut t = Tree {
            expr_parent: vec![Parent::Detached; m.exprs.len()],
            stmt_parent: vec![Parent::Detached; m.stmts.len()],
            expr_func: vec![0; m.exprs.len()],
            stmt_func: vec![0; m.stmts.len()],
            func_site: vec![Parent::Detached; m.functions.len()],
        };
        // One stack for every function: a new one per function grew, one
        // push at a time, to the function's depth.
        let mut stack = Vec::with_capacity(64);
        for fid in m.function_ids() {
            let f = m.func(fid);
            stack.clear();
            stack.push(Parent::Function(fid));
            let mut b = ParentBuilder {
                tree: &mut t,
                func: fid,
                stack: &mut stack,
            };
            for &d in &f.decorator_calls {
                walk_expr(m, d, &mut b);
            }
            for p in &f.params {
                if let Some(d) = p.default {
                    walk_expr(m, d, &mut b);
                }
            }
            walk_block(m, &f.body, &mut b);
        }
        t
    }

    pub fn expr_parent(&self, id: ExprId) -> Parent {
        self.expr_parent[id.index()]
    }

    pub fn stmt_parent(&self, id: StmtId) -> Parent {
        self.stmt_parent[id.index()]
    }

    pub fn expr_func(&self, id: ExprId) -> FuncId {
        FuncId(self.expr_func[id.index()])
    }

    pub fn stmt_func(&self, id: StmtId) -> FuncId {
        FuncId(self.stmt_func[id.index()])
    }

    pub fn func_site(&self, id: FuncId) -> Parent {
        self.func_site[id.index()]
    }

    /// The innermost statement containing an expression.
    pub fn enclosing_stmt(&self, mut id: ExprId) -> Option<StmtId> {
        loop {
            match self.expr_parent(id) {
                Parent::Expr(p) => id = p,
                Parent::Stmt(s) => return Some(s),
                _ => return None,
            }
        }
    }

    /// Statements enclosing a statement, innermost first, up to the function
    /// body.
    pub fn stmt_ancestors(&self, id: StmtId) -> impl Iterator<Item = StmtId> + '_ {
        let mut cur = self.stmt_parent(id);
        std::iter::from_fn(move || {
            loop {
                match cur {
                    Parent::Stmt(s) => {
                        cur = self.stmt_parent(s);
                        return Some(s);
                    }
                    Parent::Expr(e) => cur = self.expr_parent(e),
                    _ => return None,
                }
            }
        })
    }

    /// Expression ancestors of an expression, innermost first, stopping at the
    /// enclosing statement.
    pub fn expr_ancestors(&self, id: ExprId) -> impl Iterator<Item = ExprId> + '_ {
        let mut cur = self.expr_parent(id);
        std::iter::from_fn(move || match cur {
            Parent::Expr(e) => {
                cur = self.expr_parent(e);
                Some(e)
            }
            _ => None,
        })
    }

    /// The chain of functions from `id` outwards (itself first).
    pub fn func_ancestors<'a>(
        &'a self,
        m: &'a FileModel,
        id: FuncId,
    ) -> impl Iterator<Item = FuncId> + 'a {
        let mut cur = Some(id);
        std::iter::from_fn(move || {
            let f = cur?;
            cur = m.func(f).parent;
            Some(f)
        })
    }
}

struct ParentBuilder<'t> {
    tree: &'t mut Tree,
    func: FuncId,
    stack: &'t mut Vec<Parent>,
}

impl Visitor for ParentBuilder<'_> {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        let i = id.index();
        self.tree.stmt_parent[i] = *self.stack.last().unwrap();
        self.tree.stmt_func[i] = self.func.0;
        if let StmtKind::FuncDef(f) = m.stmt(id).kind {
            self.tree.func_site[f.index()] = Parent::Stmt(id);
        }
        self.stack.push(Parent::Stmt(id));
        true
    }
    fn exit_stmt(&mut self, _m: &FileModel, _id: StmtId) {
        self.stack.pop();
    }
    fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
        let i = id.index();
        self.tree.expr_parent[i] = *self.stack.last().unwrap();
        self.tree.expr_func[i] = self.func.0;
        if let ExprKind::Closure(f) = m.expr(id).kind {
            self.tree.func_site[f.index()] = Parent::Expr(id);
        }
        self.stack.push(Parent::Expr(id));
        true
    }
    fn exit_expr(&mut self, _m: &FileModel, _id: ExprId) {
        self.stack.pop();
    }
}

/// Every expression of a block (recursively through nested statements, not
/// into nested functions), in source order.
pub fn exprs_in_block(m: &FileModel, block: &Block) -> Vec<ExprId> {
    let mut out = Vec::new();
    exprs_in_block_into(m, block, &mut out);
    out
}

/// [`exprs_in_block`], appended to `out` (a buffer reused across blocks
/// grows once, not once per block).
pub fn exprs_in_block_into(m: &FileModel, block: &Block, out: &mut Vec<ExprId>) {
    struct Collect<'o>(&'o mut Vec<ExprId>);
    impl Visitor for Collect<'_> {
        fn enter_expr(&mut self, _m: &FileModel, id: ExprId) -> bool {
            self.0.push(id);
            true
        }
    }
    walk_block(m, block, &mut Collect(out));
}

/// Every statement of a block, nested ones included (not in nested
/// functions), in source order.
pub fn stmts_in_block(m: &FileModel, block: &Block) -> Vec<StmtId> {
    let mut out = Vec::new();
    stmts_in_block_into(m, block, &mut out);
    out
}

/// [`stmts_in_block`], appended to `out`.
pub fn stmts_in_block_into(m: &FileModel, block: &Block, out: &mut Vec<StmtId>) {
    struct Collect<'o>(&'o mut Vec<StmtId>);
    impl Visitor for Collect<'_> {
        fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
            self.0.push(id);
            true
        }
    }
    walk_block(m, block, &mut Collect(out));
}

/// Every call expression of a block (not in nested functions), in source order.
pub fn calls_in_block(m: &FileModel, block: &Block) -> Vec<ExprId> {
    exprs_in_block(m, block)
        .into_iter()
        .filter(|&e| matches!(m.expr(e).kind, ExprKind::Call(_)))
        .collect()
}

/// Every expression under `root` (itself included), not into nested functions.
pub fn exprs_under(m: &FileModel, root: ExprId) -> Vec<ExprId> {
    struct Collect(Vec<ExprId>);
    impl Visitor for Collect {
        fn enter_expr(&mut self, _m: &FileModel, id: ExprId) -> bool {
            self.0.push(id);
            true
        }
    }
    let mut c = Collect(Vec::new());
    walk_expr(m, root, &mut c);
    c.0
}
