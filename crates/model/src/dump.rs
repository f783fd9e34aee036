//! A readable text dump of a file model, for front-end tests and debugging
//! (`unsnarl debug-model FILE`).

use crate::ir::*;
use std::fmt::Write;

/// Renders every function of the model as an indented tree.
pub fn dump(m: &FileModel) -> String {
    let mut d = Dumper {
        m,
        out: String::new(),
        depth: 0,
    };
    if !m.module.is_empty() {
        let _ = writeln!(d.out, "module {}", m.module);
    }
    for i in &m.imports {
        let _ = writeln!(d.out, "import {} = {}", i.local, i.target);
    }
    for t in &m.types {
        let _ = write!(d.out, "type {}", t.qualname);
        for f in &t.fields {
            let _ = write!(d.out, " {}:{}", f.name, type_str(&f.ty));
        }
        d.out.push('\n');
    }
    for fid in m.function_ids() {
        d.function(fid);
    }
    for e in &m.syntax_errors {
        let _ = writeln!(d.out, "syntax-error @{}: {}", e.span.start, e.message);
    }
    d.out
}

fn type_str(t: &TypeRef) -> String {
    match &t.resolved {
        Some(r) if *r != t.text => format!("{}={}", t.text, r),
        _ => t.text.to_string(),
    }
}

struct Dumper<'a> {
    m: &'a FileModel,
    out: String,
    depth: usize,
}

impl Dumper<'_> {
    fn line(&mut self, text: impl AsRef<str>) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    fn function(&mut self, fid: FuncId) {
        let f = self.m.func(fid);
        let mut head = format!("fn#{} {:?}", fid.0, f.kind);
        if f.is_async {
            head.push_str(" async");
        }
        if f.is_generator {
            head.push_str(" generator");
        }
        if f.is_test {
            head.push_str(" test");
        }
        if !f.qualname.is_empty() {
            let _ = write!(head, " {}", f.qualname);
        } else if !f.name.is_empty() {
            let _ = write!(head, " {}", f.name);
        }
        if let Some(c) = &f.class {
            let _ = write!(head, " class={c}");
        }
        if let Some(r) = &f.receiver {
            let _ = write!(head, " recv={r}");
        }
        if let Some(p) = f.parent {
            let _ = write!(head, " parent=fn#{}", p.0);
        }
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| match &p.ty {
                Some(t) => format!("{}:{}", p.name, type_str(t)),
                None => p.name.to_string(),
            })
            .collect();
        let _ = write!(head, " ({})", params.join(", "));
        if let Some(r) = &f.returns {
            let _ = write!(head, " -> {}", type_str(r));
        }
        if !f.decorators.is_empty() {
            let _ = write!(head, " @[{}]", f.decorators.join(", "));
        }
        self.line(head);
        self.depth += 1;
        for &d in &f.decorator_calls {
            self.expr("decorator", d);
        }
        self.block(&f.body);
        self.depth -= 1;
    }

    fn block(&mut self, b: &Block) {
        for &s in b {
            self.stmt(s);
        }
    }

    fn labeled_block(&mut self, label: &str, b: &Block) {
        self.line(format!("{label}:"));
        self.depth += 1;
        self.block(b);
        self.depth -= 1;
    }

    fn stmt(&mut self, id: StmtId) {
        let m = self.m;
        let s = m.stmt(id);
        match &s.kind {
            StmtKind::Expr(e) => self.expr("expr", *e),
            StmtKind::Tail(e) => self.expr("tail", *e),
            StmtKind::Assign { targets, value, op } => {
                self.line(format!("assign {op:?}"));
                self.depth += 1;
                for t in targets {
                    self.expr("target", *t);
                }
                if let Some(v) = value {
                    self.expr("value", *v);
                }
                self.depth -= 1;
            }
            StmtKind::If { cond, then, orelse } => {
                self.line("if");
                self.depth += 1;
                self.expr("cond", *cond);
                self.labeled_block("then", then);
                if !orelse.is_empty() {
                    self.labeled_block("else", orelse);
                }
                self.depth -= 1;
            }
            StmtKind::While { cond, body, orelse } => {
                self.line("while");
                self.depth += 1;
                self.expr("cond", *cond);
                self.labeled_block("body", body);
                if !orelse.is_empty() {
                    self.labeled_block("else", orelse);
                }
                self.depth -= 1;
            }
            StmtKind::For {
                target,
                iter,
                body,
                is_async,
            } => {
                self.line(if *is_async { "for async" } else { "for" });
                self.depth += 1;
                if let Some(t) = target {
                    self.expr("target", *t);
                }
                self.expr("iter", *iter);
                self.labeled_block("body", body);
                self.depth -= 1;
            }
            StmtKind::Loop { body } => {
                self.line("loop");
                self.depth += 1;
                self.block(body);
                self.depth -= 1;
            }
            StmtKind::Try {
                body,
                handlers,
                orelse,
                finally,
            } => {
                self.line("try");
                self.depth += 1;
                self.labeled_block("body", body);
                for h in handlers {
                    let mut label = format!("except [{}]", h.types.join(", "));
                    if h.is_star {
                        label.push('*');
                    }
                    if let Some(n) = &h.name {
                        let _ = write!(label, " as {n}");
                    }
                    self.labeled_block(&label, &h.body);
                }
                if !orelse.is_empty() {
                    self.labeled_block("else", orelse);
                }
                if let Some(f) = finally {
                    self.labeled_block("finally", f);
                }
                self.depth -= 1;
            }
            StmtKind::With {
                items,
                is_async,
                body,
            } => {
                self.line(if *is_async { "with async" } else { "with" });
                self.depth += 1;
                for it in items {
                    self.expr("item", it.ctx);
                    if let Some(t) = it.target {
                        self.expr("as", t);
                    }
                }
                self.labeled_block("body", body);
                self.depth -= 1;
            }
            StmtKind::Return(e) => self.opt_expr("return", *e),
            StmtKind::Raise(e) => self.opt_expr("raise", *e),
            StmtKind::Break => self.line("break"),
            StmtKind::Continue => self.line("continue"),
            StmtKind::Defer(e) => self.expr("defer", *e),
            StmtKind::Go(e) => self.expr("go", *e),
            StmtKind::Select { arms, biased } => {
                self.line(if *biased { "select biased" } else { "select" });
                self.depth += 1;
                for arm in arms {
                    match &arm.kind {
                        ArmKind::Recv { channel, binding } => {
                            self.line("arm recv");
                            self.depth += 1;
                            self.expr("chan", *channel);
                            if let Some(b) = binding {
                                self.expr("bind", *b);
                            }
                        }
                        ArmKind::Send { channel, value } => {
                            self.line("arm send");
                            self.depth += 1;
                            self.expr("chan", *channel);
                            self.expr("value", *value);
                        }
                        ArmKind::Default => {
                            self.line("arm default");
                            self.depth += 1;
                        }
                        ArmKind::Future { future, pattern } => {
                            self.line("arm future");
                            self.depth += 1;
                            if let Some(p) = pattern {
                                self.expr("pattern", *p);
                            }
                            self.expr("future", *future);
                        }
                    }
                    self.block(&arm.body);
                    self.depth -= 1;
                }
                self.depth -= 1;
            }
            StmtKind::Switch { subject, cases } => {
                self.line("switch");
                self.depth += 1;
                if let Some(s) = subject {
                    self.expr("subject", *s);
                }
                for c in cases {
                    self.line("case");
                    self.depth += 1;
                    for p in &c.patterns {
                        self.expr("pattern", *p);
                    }
                    self.block(&c.body);
                    self.depth -= 1;
                }
                self.depth -= 1;
            }
            StmtKind::Block(b) => {
                self.line("block");
                self.depth += 1;
                self.block(b);
                self.depth -= 1;
            }
            StmtKind::FuncDef(f) => self.line(format!("def fn#{}", f.0)),
            StmtKind::ClassDef(t) => self.line(format!("class {}", m.types[t.index()].qualname)),
            StmtKind::Global { names, nonlocal } => self.line(format!(
                "{} {}",
                if *nonlocal { "nonlocal" } else { "global" },
                names.join(", ")
            )),
            StmtKind::Delete(targets) => {
                self.line("del");
                self.depth += 1;
                for &t in targets {
                    self.expr("target", t);
                }
                self.depth -= 1;
            }
            StmtKind::Pass => self.line("pass"),
        }
    }

    fn opt_expr(&mut self, label: &str, e: Option<ExprId>) {
        match e {
            Some(e) => self.expr(label, e),
            None => self.line(label),
        }
    }

    fn expr(&mut self, label: &str, id: ExprId) {
        let m = self.m;
        let e = m.expr(id);
        let res = |r: &Option<Str>| match r {
            Some(r) => format!(" ={r}"),
            None => String::new(),
        };
        match &e.kind {
            ExprKind::Name { id, resolved } => {
                self.line(format!("{label}: name {id}{}", res(resolved)))
            }
            ExprKind::Path { text, resolved } => {
                self.line(format!("{label}: path {text}{}", res(resolved)))
            }
            ExprKind::Attr {
                obj,
                name,
                resolved,
            } => {
                self.line(format!("{label}: attr .{name}{}", res(resolved)));
                self.child("obj", *obj);
            }
            ExprKind::Call(c) => {
                let mut head = format!(
                    "{label}: call {}",
                    if c.name.is_empty() { "?" } else { &c.name }
                );
                if let Some(t) = &c.target {
                    let _ = write!(head, " ={t}");
                }
                if c.is_new {
                    head.push_str(" new");
                }
                if c.is_macro {
                    head.push_str(" macro");
                }
                self.line(head);
                self.depth += 1;
                match c.receiver {
                    Some(r) => self.expr("recv", r),
                    None => {
                        // The callee is only interesting when it is not a plain name.
                        if !matches!(
                            m.expr(c.func).kind,
                            ExprKind::Name { .. } | ExprKind::Path { .. }
                        ) {
                            self.expr("func", c.func);
                        }
                    }
                }
                for a in &c.args {
                    let l = match (&a.name, a.spread) {
                        (Some(n), _) => format!("kw {n}"),
                        (None, true) => "spread".to_string(),
                        (None, false) => "arg".to_string(),
                    };
                    self.expr(&l, a.value);
                }
                self.depth -= 1;
            }
            ExprKind::Await(x) => {
                self.line(format!("{label}: await"));
                self.child("of", *x);
            }
            ExprKind::Literal(l) => self.line(format!("{label}: lit {l:?}")),
            ExprKind::Unary { op, operand } => {
                self.line(format!("{label}: unary {op:?}"));
                self.child("of", *operand);
            }
            ExprKind::Binary { op, left, right } => {
                self.line(format!("{label}: binary {op:?}"));
                self.children(&[("l", *left), ("r", *right)]);
            }
            ExprKind::Logical { op, left, right } => {
                self.line(format!("{label}: logical {op:?}"));
                self.children(&[("l", *left), ("r", *right)]);
            }
            ExprKind::Ternary { cond, then, orelse } => {
                self.line(format!("{label}: ternary"));
                self.children(&[("cond", *cond), ("then", *then), ("else", *orelse)]);
            }
            ExprKind::Collection {
                kind,
                elems,
                keys,
                ty,
            } => {
                let mut head = format!("{label}: {kind:?}");
                if let Some(t) = ty {
                    let _ = write!(head, " {}", type_str(t));
                }
                self.line(head);
                self.depth += 1;
                for (i, e) in elems.iter().enumerate() {
                    match keys.get(i) {
                        Some(Some(k)) => self.expr(&format!("[{k}]"), *e),
                        _ => self.expr("elem", *e),
                    }
                }
                self.depth -= 1;
            }
            ExprKind::Comprehension {
                kind,
                elt,
                generators,
            } => {
                self.line(format!("{label}: comprehension {kind:?}"));
                self.depth += 1;
                self.expr("elt", *elt);
                for g in generators {
                    self.line(if g.is_async { "for async" } else { "for" });
                    self.depth += 1;
                    self.expr("target", g.target);
                    self.expr("iter", g.iter);
                    for c in &g.conds {
                        self.expr("if", *c);
                    }
                    self.depth -= 1;
                }
                self.depth -= 1;
            }
            ExprKind::Index { obj, index } => {
                self.line(format!("{label}: index"));
                self.children(&[("obj", *obj), ("idx", *index)]);
            }
            ExprKind::Closure(f) => self.line(format!("{label}: closure fn#{}", f.0)),
            ExprKind::Block(b) => {
                self.line(format!("{label}: block"));
                self.depth += 1;
                self.block(b);
                self.depth -= 1;
            }
            ExprKind::Let { pattern, value } => {
                self.line(format!("{label}: let"));
                self.children(&[("pat", *pattern), ("value", *value)]);
            }
            ExprKind::Recv(c) => {
                self.line(format!("{label}: recv"));
                self.child("chan", *c);
            }
            ExprKind::Send { channel, value } => {
                self.line(format!("{label}: send"));
                self.children(&[("chan", *channel), ("value", *value)]);
            }
            ExprKind::AssignExpr { target, value, op } => {
                self.line(format!("{label}: assign-expr {op:?}"));
                self.children(&[("target", *target), ("value", *value)]);
            }
            ExprKind::Spread(x) => {
                self.line(format!("{label}: spread"));
                self.child("of", *x);
            }
            ExprKind::Yield(x) => {
                self.line(format!("{label}: yield"));
                if let Some(x) = x {
                    self.child("of", *x);
                }
            }
            ExprKind::Try(x) => {
                self.line(format!("{label}: try?"));
                self.child("of", *x);
            }
            ExprKind::Cast(x) => {
                self.line(format!("{label}: cast"));
                self.child("of", *x);
            }
            ExprKind::Other(children) => {
                self.line(format!("{label}: other"));
                self.depth += 1;
                for c in children {
                    self.expr("child", *c);
                }
                self.depth -= 1;
            }
        }
    }

    fn child(&mut self, label: &str, id: ExprId) {
        self.depth += 1;
        self.expr(label, id);
        self.depth -= 1;
    }

    fn children(&mut self, items: &[(&str, ExprId)]) {
        self.depth += 1;
        for (l, e) in items {
            self.expr(l, *e);
        }
        self.depth -= 1;
    }
}
