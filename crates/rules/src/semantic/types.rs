use rustc_hash::FxHashMap as HashMap;
use unsnarl_model::walk::{Visitor, walk_block};
use unsnarl_model::*;

/// Types learned by the pass, for rules that ask "what is this value?".
#[derive(Debug, Default)]
pub struct Semantic {
    /// Type (qualified) of expressions whose type is known, inline: most
    /// type names fit in 24 bytes, and a boxed copy per typed expression was
    /// one allocation each.
    expr_types: HashMap<ExprId, Str>,
    /// Field types per class/struct qualname.
    fields: HashMap<Str, HashMap<Str, Str>>,
    /// Types of module-level names.
    globals: HashMap<Str, Str>,
}

impl Semantic {
    /// A rough count of the heap bytes held, for memory budgets.
    pub fn approx_bytes(&self) -> usize {
        // Map entry (id + boxed str) plus the string itself, on average.
        self.expr_types.capacity() * 48
            + self.fields.values().map(|f| f.len() * 64).sum::<usize>()
            + self.globals.len() * 64
    }

    /// The qualified type of an expression, if known.
    pub fn type_of(&self, e: ExprId) -> Option<&str> {
        self.expr_types.get(&e).map(Str::as_str)
    }

    /// The declared or inferred type of field `name` of type `class`.
    pub fn field_type(&self, class: &str, name: &str) -> Option<&str> {
        self.fields.get(class)?.get(name).map(Str::as_str)
    }

    /// The type of a module-level name.
    pub fn global_type(&self, name: &str) -> Option<&str> {
        self.globals.get(name).map(Str::as_str)
    }
}

/// Infers types and resolves method calls on typed receivers, in place.
pub fn annotate(m: &mut FileModel, kb: &Table, lang: Language) -> Semantic {
    let mut sema = Semantic::default();
    for t in &m.types {
        let fields = sema
            .fields
            .entry(t.qualname.to_compact_string())
            .or_default();
        for f in &t.fields {
            if let Some(r) = f.ty.resolved.clone().or_else(|| unnamed_type(lang, &f.ty)) {
                // The front end types a field given a call's value by the
                // callee (`self.db = sqlite3.connect(p)`); what that factory
                // returns is the field's type (`sqlite3.Connection`), so
                // `self.db.execute` resolves as it would on a local.
                let r = kb.returns(&r).unwrap_or(&r);
                fields.insert(f.name.to_compact_string(), r.to_compact_string());
            }
        }
    }
    let declared: HashMap<ExprId, Str> = m
        .declared_types
        .iter()
        .filter_map(|(e, t)| t.resolved.clone().map(|r| (*e, r)))
        .collect();
    let mut pass = Pass {
        kb,
        lang,
        sema,
        envs: vec![HashMap::default(); m.functions.len()],
        func: FuncId(0),
        resolutions: Vec::new(),
        declared,
        texts: vec![HashMap::default(); m.functions.len()],
        field_texts: HashMap::default(),
        typed: vec![Typed::NotYet; m.exprs.len()],
        flow: FlowTypes::default(),
        locals: Default::default(),
        local_fns: if lang == Language::Python {
            m.function_ids()
                .skip(1)
                .map(|f| (name_hash(&m.func(f).qualname), f))
                .collect()
        } else {
            HashMap::default()
        },
    };
    if lang == Language::Go {
        for t in &m.types {
            let fields = pass
                .field_texts
                .entry(t.qualname.to_compact_string())
                .or_default();
            for f in &t.fields {
                fields.insert(f.name.to_compact_string(), f.ty.text.to_compact_string());
            }
        }
    }
    // Fields assigned in methods (`self.lock = threading.Lock()`), then every
    // function in id order: a closure's id is larger than its parent's, so
    // the parent's bindings are known when the closure is walked.
    pass.collect_field_assignments(m);
    pass.walk_functions(m, None);
    // Python: a module name given its value inside a function (`global
    // _session; _session = requests.Session()`), and what a function of the
    // file returns (`def get_session(): ... return _session`), are known only
    // once the functions that set them are walked; a use before them in id
    // order is typed by walking again. At most twice more: each walk can
    // only add what the one before made known.
    for _ in 0..2 {
        match pass.flow.learned_more() {
            Redo::Nothing => break,
            Redo::All => pass.rewalk(m),
            Redo::Callers(fids) => pass.rewalk_callers(m, &fids),
        }
    }
    // Fields declared with a wide type but only ever given a narrower one
    // (`sender: flume::Sender<E>` filled from `flume::unbounded()`): the
    // narrower type is known once the values are typed, and the functions
    // are walked again with it. Rare, so the second walk costs little.
    if pass.narrow_fields(m) {
        pass.rewalk(m);
    }
    let Pass {
        mut sema,
        resolutions,
        ..
    } = pass;
    for (call, target) in resolutions {
        if let ExprKind::Call(c) = &mut m.expr_mut(call).kind {
            c.target = Some(target);
        }
    }
    sema.expr_types.shrink_to_fit();
    sema
}

struct Pass<'k> {
    kb: &'k Table,
    lang: Language,
    sema: Semantic,
    /// Variable types per function.
    envs: Vec<HashMap<Str, Str>>,
    func: FuncId,
    /// Method-call targets found, applied after the walk.
    resolutions: Vec<(ExprId, Str)>,
    /// Declared types of bound names (`FileModel::declared_types`).
    declared: HashMap<ExprId, Str>,
    /// Go: declared type texts of variables per function and of struct
    /// fields, to type the variables of `for ... range` loops.
    texts: Vec<HashMap<Str, Str>>,
    field_texts: HashMap<Str, HashMap<Str, Str>>,
    /// What the walk has learned of each expression's type: receivers and
    /// objects are asked again by their parent expression, and an unknown
    /// type (the usual answer) is not worked out twice.
    typed: Vec<Typed>,
    flow: FlowTypes,
    /// Python: the functions of the file by the hash of their qualified
    /// name (a hash, not the name: no copy of every name per file), for
    /// calls to them.
    local_fns: HashMap<u64, FuncId>,
    /// Python: the names each function binds itself (see
    /// [`Pass::shadowed`]), worked out on first need.
    locals: std::cell::RefCell<HashMap<FuncId, Vec<Str>>>,
}

fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

/// Python: the names `f` makes locals of its own: its parameters, and the
/// targets of assignments, `for`s and `with`s in its body, less those it
/// declares `global` or `nonlocal`.
fn local_names(m: &FileModel, f: &Function) -> Vec<Str> {
    let mut names: Vec<Str> = f
        .params
        .iter()
        .map(|p| p.name.to_compact_string())
        .collect();
    let mut declared: Vec<&str> = Vec::new();
    let add = |t: ExprId, names: &mut Vec<Str>| {
        if let Some(n) = m.name_of(t) {
            names.push(n.to_compact_string());
            return;
        }
        for x in unsnarl_model::walk::exprs_under(m, t) {
            if let ExprKind::Name { id, .. } = &m.expr(x).kind {
                names.push(id.to_compact_string());
            }
        }
    };
    for st in unsnarl_model::walk::stmts_in_block(m, &f.body) {
        match &m.stmt(st).kind {
            StmtKind::Global { names: g, .. } => declared.extend(g.iter().map(|n| n.as_str())),
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|&t| add(t, &mut names)),
            StmtKind::For {
                target: Some(t), ..
            } => add(*t, &mut names),
            StmtKind::With { items, .. } => items
                .iter()
                .filter_map(|it| it.target)
                .for_each(|t| add(t, &mut names)),
            _ => {}
        }
    }
    names.retain(|n| !declared.contains(&n.as_str()));
    names.sort_unstable();
    names.dedup();
    names
}

/// Python types that flow between functions of one file: module names
/// set under `global`, and what functions return. What one walk learns is
/// used by the next.
#[derive(Default)]
struct FlowTypes {
    /// Names the function being walked declares `global`.
    declared_global: Vec<Str>,
    /// Module names given a typed value inside a function, by this walk
    /// (`None`: two different types, so no type).
    globals: HashMap<Str, Option<Str>>,
    /// What the previous walk learned of `globals`, seeded into the module.
    known_globals: HashMap<Str, Str>,
    /// The return type of each function of the file, by this walk (`None`:
    /// a return of another or unknown type).
    returns: HashMap<Str, Option<Str>>,
    /// What the previous walk learned of `returns`, used at call sites.
    known_returns: HashMap<Str, Str>,
    /// Calls to functions of the file whose return type was not known
    /// yet, with the function making them.
    missed: Vec<(FuncId, Str)>,
}

/// What has to be walked again once a walk is done.
enum Redo {
    Nothing,
    /// A module name got a type: every function may read it.
    All,
    /// Only these functions called one whose return type is now known.
    Callers(Vec<FuncId>),
}

impl FlowTypes {
    /// Moves what this walk learned into what the next walk uses; whether
    /// anything new would be typed by walking again.
    /// (A walk of some functions only leaves what the others gave as it
    /// was: types only grow from one walk to the next.)
    fn learned_more(&mut self) -> Redo {
        let mut new_global = false;
        for (k, v) in std::mem::take(&mut self.globals) {
            match v {
                Some(t) => {
                    if self.known_globals.get(&k) != Some(&t) {
                        new_global = true;
                        self.known_globals.insert(k, t);
                    }
                }
                None => new_global |= self.known_globals.remove(&k).is_some(),
            }
        }
        for (k, v) in std::mem::take(&mut self.returns) {
            match v {
                Some(t) => {
                    self.known_returns.insert(k, t);
                }
                None => {
                    self.known_returns.remove(&k);
                }
            }
        }
        let mut callers: Vec<FuncId> = std::mem::take(&mut self.missed)
            .into_iter()
            .filter(|(_, t)| self.known_returns.contains_key(t))
            .map(|(f, _)| f)
            .collect();
        callers.sort_unstable();
        callers.dedup();
        if new_global || callers.first() == Some(&FuncId(0)) {
            Redo::All
        } else if callers.is_empty() {
            Redo::Nothing
        } else {
            Redo::Callers(callers)
        }
    }

    /// What a function of the file returns: as this walk found it when the
    /// function is walked already, else as the last walk did.
    fn return_of(&self, target: &str) -> Option<Str> {
        match self.returns.get(target) {
            Some(found) => found.clone(),
            None => self.known_returns.get(target).cloned(),
        }
    }

    /// Records one more value of a slot: the first type, or `None` when a
    /// second differs or is unknown.
    fn record(map: &mut HashMap<Str, Option<Str>>, key: &str, ty: Option<Str>) {
        match map.get_mut(key) {
            None => {
                map.insert(key.to_compact_string(), ty);
            }
            Some(slot) => {
                if *slot != ty {
                    *slot = None;
                }
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Typed {
    NotYet,
    Unknown,
    /// In `Semantic::expr_types`.
    Known,
}

impl Pass<'_> {
    /// Python: what a `return` or an assignment to a `global` name tells the
    /// next walk. A `None` given or returned is skipped: a lazily made
    /// client starts (or is reset) as `None` and is used only once set.
    fn record_flow(&mut self, m: &FileModel, id: StmtId) {
        if let StmtKind::Return(Some(v)) = m.stmt(id).kind {
            if self.func.0 != 0 && !matches!(m.literal(v), Some(Lit::Null)) {
                let ty = self.value_type(m, v);
                FlowTypes::record(&mut self.flow.returns, &m.func(self.func).qualname, ty);
            }
            return;
        }
        let (names, value): (Vec<&str>, ExprId) = match &m.stmt(id).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if self.func.0 != 0 && !self.flow.declared_global.is_empty() => {
                let names: Vec<&str> = targets
                    .iter()
                    .filter_map(|&t| m.name_of(t))
                    .filter(|n| self.flow.declared_global.iter().any(|g| g == n))
                    .collect();
                if names.is_empty() {
                    return;
                }
                (names, *v)
            }
            _ => return,
        };
        if matches!(m.literal(value), Some(Lit::Null)) {
            return;
        }
        let ty = self.value_type(m, value);
        for name in names {
            FlowTypes::record(&mut self.flow.globals, name, ty.clone());
        }
    }

    /// The function of the file called `target`, if any.
    fn local_fn(&self, m: &FileModel, target: &str) -> Option<FuncId> {
        // Most calls are of other modules' functions: the prefix says so
        // without hashing the name.
        if self.local_fns.is_empty()
            || !target
                .strip_prefix(m.module.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
        {
            return None;
        }
        let f = *self.local_fns.get(&name_hash(target))?;
        (m.func(f).qualname == target).then_some(f)
    }

    /// Forgets what the last walk typed and walks every function again.
    fn rewalk(&mut self, m: &FileModel) {
        self.envs = vec![HashMap::default(); m.functions.len()];
        self.texts = vec![HashMap::default(); m.functions.len()];
        self.resolutions.clear();
        self.typed = vec![Typed::NotYet; m.exprs.len()];
        self.sema.expr_types.clear();
        self.walk_functions(m, None);
    }

    /// Walks again only `callers` and the functions nested in them (which
    /// read their bindings), forgetting what their bodies typed: most files
    /// that need a second walk need it for a method or two calling one
    /// defined below them.
    fn rewalk_callers(&mut self, m: &FileModel, callers: &[FuncId]) {
        let mut redo = vec![false; m.functions.len()];
        let mut bodies: Vec<Span> = Vec::new();
        for fid in m.function_ids() {
            let f = m.func(fid);
            let parent_redone = f.parent.is_some_and(|p| redo[p.index()]);
            redo[fid.index()] = parent_redone || callers.contains(&fid);
            if redo[fid.index()]
                && !parent_redone
                && let (Some(&a), Some(&b)) = (f.body.first(), f.body.last())
            {
                bodies.push(Span::new(m.stmt(a).span.start, m.stmt(b).span.end));
            }
        }
        for (i, e) in m.exprs.iter().enumerate() {
            if self.typed[i] != Typed::NotYet && bodies.iter().any(|b| b.contains(e.span)) {
                self.typed[i] = Typed::NotYet;
                self.sema.expr_types.remove(&ExprId(i as u32));
            }
        }
        for (k, &again) in redo.iter().enumerate() {
            if again {
                self.envs[k].clear();
                self.texts[k].clear();
            }
        }
        self.walk_functions(m, Some(&redo));
    }

    /// Types every function's bindings and expressions, in id order: a
    /// closure's id is larger than its parent's, so the parent's bindings
    /// are known when the closure is walked.
    fn walk_functions(&mut self, m: &FileModel, only: Option<&[bool]>) {
        for (name, t) in &self.flow.known_globals {
            self.envs[0].insert(name.clone(), t.clone());
        }
        for fid in m.function_ids() {
            if only.is_some_and(|o| !o[fid.index()]) {
                continue;
            }
            self.func = fid;
            self.flow.declared_global.clear();
            let f = m.func(fid);
            for p in &f.params {
                if let Some(t) =
                    p.ty.as_ref()
                        .and_then(|t| t.resolved.clone().or_else(|| unnamed_type(self.lang, t)))
                {
                    self.envs[fid.index()]
                        .insert(p.name.to_compact_string(), t.to_compact_string());
                }
            }
            if self.lang == Language::Go {
                for p in &f.params {
                    if let Some(t) = &p.ty {
                        self.texts[fid.index()]
                            .insert(p.name.to_compact_string(), t.text.to_compact_string());
                    }
                }
            }
            // A Go method's receiver has the method's type: `s.helper()` in
            // `func (s *Server) ...` resolves to `<module>.Server.helper`.
            // Likewise Rust's `self` in a method: `self.helper()` resolves to
            // `<impl type>::helper`.
            if matches!(self.lang, Language::Go | Language::Rust)
                && let (Some(class), Some(recv)) = (&f.class, &f.receiver)
            {
                self.envs[fid.index()]
                    .entry(recv.to_compact_string())
                    .or_insert_with(|| class.to_compact_string());
            }
            let body = f.body.clone();
            walk_block(m, &body, self);
            if fid.0 == 0 {
                self.sema.globals = self.envs[0].clone();
            }
        }
    }

    /// Gives a struct field the narrower type its values have, when every
    /// struct literal of the file stores a value of one type the knowledge
    /// says narrows the field's declared type. Whether any field changed.
    fn narrow_fields(&mut self, m: &FileModel) -> bool {
        if !self.kb.has_narrowing() {
            return false;
        }
        let mut seen: HashMap<(Str, Str), Option<Str>> = HashMap::default();
        for e in &m.exprs {
            let ExprKind::Collection {
                kind: CollKind::Struct,
                elems,
                keys,
                ty: Some(ty),
            } = &e.kind
            else {
                continue;
            };
            let Some(class) = &ty.resolved else { continue };
            let Some(fields) = self.sema.fields.get(class.as_str()) else {
                continue;
            };
            for (key, &v) in keys.iter().zip(elems) {
                let Some(key) = key else { continue };
                let Some(declared) = fields.get(key.as_str()) else {
                    continue;
                };
                let narrower = self
                    .sema
                    .expr_types
                    .get(&v)
                    .filter(|t| self.kb.narrows(t) == Some(declared.as_str()));
                let slot = seen
                    .entry((class.to_compact_string(), key.to_compact_string()))
                    .or_insert_with(|| narrower.cloned());
                if slot.as_ref() != narrower {
                    *slot = None;
                }
            }
        }
        let mut changed = false;
        for ((class, field), t) in seen {
            if let Some(t) = t {
                self.sema.fields.entry(class).or_default().insert(field, t);
                changed = true;
            }
        }
        changed
    }

    /// Go: the declared type text of a value (`[]*Conn`, `map[string]Job`).
    fn value_text(&self, m: &FileModel, e: ExprId) -> Option<Str> {
        match &m.expr(m.strip(e)).kind {
            ExprKind::Name { id, .. } => {
                let mut cur = Some(self.func);
                while let Some(f) = cur {
                    if let Some(t) = self.texts[f.index()].get(id) {
                        return Some(t.clone());
                    }
                    cur = m.func(f).parent;
                }
                None
            }
            ExprKind::Attr { obj, name, .. } => {
                let owner = self.value_type(m, *obj)?;
                self.field_texts.get(&owner)?.get(name).cloned()
            }
            ExprKind::Call(c) if c.target.as_deref() == Some("make") => {
                match &m.expr(c.positional(0)?).kind {
                    ExprKind::Path { text, .. } => Some(text.to_compact_string()),
                    _ => None,
                }
            }
            ExprKind::Collection { ty: Some(t), .. } => Some(t.text.to_compact_string()),
            _ => None,
        }
    }

    /// Go: types the variables of `for k, v := range x` from the declared
    /// type of `x`: slice/array elements, map keys and values, channel
    /// elements.
    fn bind_range_vars(&mut self, m: &FileModel, target: ExprId, iter: ExprId) {
        let Some(text) = self.value_text(m, iter) else {
            return;
        };
        let t = text.trim().trim_start_matches('*');
        let (first, second): (Option<&str>, Option<&str>) = if let Some(rest) = t.strip_prefix("[]")
        {
            (None, Some(rest))
        } else if t.starts_with('[') {
            (None, t.find(']').map(|i| &t[i + 1..]))
        } else if let Some(rest) = t.strip_prefix("map[") {
            let mut depth = 1;
            let mut end = None;
            for (i, ch) in rest.char_indices() {
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
            match end {
                Some(i) => (Some(&rest[..i]), Some(&rest[i + 1..])),
                None => return,
            }
        } else if let Some(rest) = t
            .strip_prefix("<-chan ")
            .or_else(|| t.strip_prefix("chan "))
        {
            (Some(rest), None)
        } else {
            return;
        };
        let names: Vec<Option<&str>> = match &m.expr(target).kind {
            ExprKind::Collection { elems, .. } => elems.iter().map(|&e| m.name_of(e)).collect(),
            _ => vec![m.name_of(target)],
        };
        for (name, ty) in names.into_iter().zip([first, second]) {
            if let (Some(name), Some(ty)) = (name, ty)
                && name != "_"
                && let Some(q) = resolve_go_type_text(m, ty)
            {
                self.envs[self.func.index()].insert(name.to_compact_string(), q);
                self.texts[self.func.index()]
                    .insert(name.to_compact_string(), ty.trim().to_compact_string());
            }
        }
    }

    fn collect_field_assignments(&mut self, m: &FileModel) {
        for fid in m.function_ids() {
            let f = m.func(fid);
            let (Some(class), Some(recv)) = (&f.class, &f.receiver) else {
                continue;
            };
            for &s in &f.body {
                let StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } = &m.stmt(s).kind
                else {
                    continue;
                };
                for &t in targets {
                    if let ExprKind::Attr { obj, name, .. } = &m.expr(t).kind
                        && m.name_of(*obj) == Some(recv.as_str())
                        && let Some(ty) = self.value_type(m, *v)
                    {
                        self.sema
                            .fields
                            .entry(class.to_compact_string())
                            .or_default()
                            .entry(name.to_compact_string())
                            .or_insert(ty);
                    }
                }
            }
        }
    }

    /// Works out and keeps the type of `id`, once its children are done.
    fn learn_type(&mut self, m: &FileModel, id: ExprId) {
        self.typed[id.index()] = match self.value_type(m, id) {
            Some(t) => {
                self.sema.expr_types.insert(id, t);
                Typed::Known
            }
            None => Typed::Unknown,
        };
    }

    fn lookup_var(&self, m: &FileModel, name: &str) -> Option<Str> {
        // Most names have no known type and most functions no typed
        // variable: an empty scope is skipped without hashing the name.
        let mut cur = Some(self.func);
        let mut module_seen = false;
        while let Some(f) = cur {
            let env = &self.envs[f.index()];
            if !env.is_empty()
                && let Some(t) = env.get(name)
            {
                return (f == self.func || !self.shadowed(m, f, name)).then(|| t.clone());
            }
            module_seen |= f.0 == 0;
            cur = m.func(f).parent;
        }
        if module_seen || self.envs[0].is_empty() {
            return None;
        }
        let t = self.envs[0].get(name)?;
        (!self.shadowed(m, FuncId(0), name)).then(|| t.clone())
    }

    /// Python: a function between the one walked and `outer` (where `name`
    /// has a type) binds `name` itself (`for r in rows:` in a closure whose
    /// parent has `r = await get_redis()`), so the outer binding is not the
    /// one seen. Asked only when an outer binding is found, and remembered.
    fn shadowed(&self, m: &FileModel, outer: FuncId, name: &str) -> bool {
        if self.lang != Language::Python {
            return false;
        }
        let mut cur = Some(self.func);
        while let Some(f) = cur
            && f != outer
        {
            let mut locals = self.locals.borrow_mut();
            let names = locals.entry(f).or_insert_with(|| local_names(m, m.func(f)));
            if names.binary_search_by(|n| n.as_str().cmp(name)).is_ok() {
                return true;
            }
            cur = m.func(f).parent;
        }
        false
    }

    /// The type of the value of an expression (as a receiver or an assigned
    /// value).
    fn value_type(&self, m: &FileModel, e: ExprId) -> Option<Str> {
        match self.typed[e.index()] {
            Typed::Unknown => return None,
            Typed::Known => return self.sema.expr_types.get(&e).cloned(),
            Typed::NotYet => {}
        }
        match &m.expr(e).kind {
            ExprKind::Name { id, .. } => self.lookup_var(m, id),
            ExprKind::Attr { obj, name, .. } => {
                let f = m.func(self.func);
                let owner = self.owner_class(m, f);
                if let Some(class) = owner
                    && m.name_of(*obj)
                        .is_some_and(|n| Some(n) == self.receiver_name(m))
                {
                    return self.sema.field_type(class, name).map(Into::into);
                }
                let base = self.value_type(m, *obj)?;
                self.sema.field_type(&base, name).map(Into::into)
            }
            ExprKind::Call(c) => self.call_type(m, c),
            ExprKind::Collection { ty: Some(t), .. } => {
                t.resolved.clone().or_else(|| unnamed_type(self.lang, t))
            }
            ExprKind::Collection {
                kind: CollKind::Tuple,
                elems,
                ..
            } if self.lang == Language::Rust => {
                // `(Mutex::new(false), Condvar::new())`: a tuple type whose
                // parts a destructuring `let` binds one by one.
                let parts: Vec<Str> = elems
                    .iter()
                    .map(|&e| self.value_type(m, e).unwrap_or_else(|| "_".into()))
                    .collect();
                parts
                    .iter()
                    .any(|p| p != "_")
                    .then(|| format_compact!("({})", parts.join(", ")))
            }
            ExprKind::Unary {
                op: UnOp::Ref | UnOp::Deref,
                operand,
            }
            | ExprKind::Try(operand)
            | ExprKind::Cast(operand) => self.value_type(m, *operand),
            ExprKind::Await(inner) => {
                // `await asyncio.open_connection(...)` and friends: a
                // `returns` entry on the coroutine describes the awaited value.
                let c = m.call(*inner)?;
                // A method of a receiver typed in this walk has no target
                // in the model yet (`await (await db.execute(q)).fetchone()`
                // with `db` from `aiosqlite.connect`): it is built here.
                let built;
                let t: &str = match &c.target {
                    Some(t) => t,
                    None => {
                        built = self.method_of(m, c.receiver?, &c.name)?;
                        &built
                    }
                };
                if let Some(f) = self.local_fn(m, t) {
                    let f = m.func(f);
                    return (f.is_async && !f.is_generator)
                        .then(|| self.flow.return_of(t))
                        .flatten();
                }
                self.kb.returns(t).map(Into::into)
            }
            _ => None,
        }
    }

    /// The class whose methods see `self`/`this`/the Go receiver: the
    /// function's own class, or that of the nearest enclosing method (for
    /// closures inside methods).
    fn owner_class<'m>(&self, m: &'m FileModel, f: &'m Function) -> Option<&'m str> {
        if let Some(c) = &f.class {
            return Some(c);
        }
        let mut cur = f.parent;
        while let Some(p) = cur {
            let pf = m.func(p);
            if let Some(c) = &pf.class {
                return Some(c);
            }
            cur = pf.parent;
        }
        None
    }

    fn receiver_name<'m>(&self, m: &'m FileModel) -> Option<&'m str> {
        let mut cur = Some(self.func);
        while let Some(f) = cur {
            let func = m.func(f);
            if let Some(r) = &func.receiver {
                return Some(r);
            }
            cur = func.parent;
        }
        None
    }

    /// The qualified name of method `name` on a receiver of known type
    /// (`aiosqlite.Cursor.fetchone`); none for a tuple type.
    fn method_of(&self, m: &FileModel, recv: ExprId, name: &str) -> Option<Str> {
        let t = self.value_type(m, recv)?;
        (!t.starts_with('(')).then(|| format_compact!("{t}{}{name}", self.lang.path_sep()))
    }

    fn call_type(&self, m: &FileModel, c: &Call) -> Option<Str> {
        // Borrowed when the call has a target: most calls do, and a long
        // name would otherwise be copied once per call just to look it up.
        let built;
        let target: &str = match &c.target {
            Some(t) => t,
            None => {
                // A method of a typed receiver not resolved yet.
                let recv = c.receiver?;
                if is_passthrough(self.lang, &c.name) {
                    return self.value_type(m, recv);
                }
                built = self.method_of(m, recv, &c.name)?;
                &built
            }
        };
        if let Some(r) = self.kb.returns(target) {
            return Some(r.to_compact_string());
        }
        if let Some(f) = self.local_fn(m, target) {
            // A plain function of the file returns what its `return`s give;
            // a coroutine's or generator's call gives a wrapper instead.
            let f = m.func(f);
            return (!f.is_async && !f.is_generator)
                .then(|| self.flow.return_of(target))
                .flatten();
        }
        if self.lang == Language::Go && c.receiver.is_none() {
            // `make(chan T, n)`, `make(map[K]V)`, `new(sync.Mutex)`.
            match target {
                "make" => {
                    return c
                        .positional(0)
                        .and_then(|t| match &m.expr(t).kind {
                            ExprKind::Path { text, .. } => go_unnamed(text).map(str::to_string),
                            _ => None,
                        })
                        .map(Into::into);
                }
                "new" => {
                    return c
                        .positional(0)
                        .and_then(|t| m.resolved(t).map(str::to_string))
                        .map(Into::into);
                }
                _ => {}
            }
        }
        if self.lang == Language::Rust {
            // Smart pointers and cells wrap the interesting type.
            if matches!(
                target,
                "std::sync::Arc::new"
                    | "std::rc::Rc::new"
                    | "std::boxed::Box::new"
                    | "Arc::new"
                    | "Rc::new"
                    | "Box::new"
            ) {
                return c.positional(0).and_then(|a| self.value_type(m, a));
            }
            if c.receiver.is_none()
                && matches!(
                    target,
                    "std::sync::Arc::clone" | "std::rc::Rc::clone" | "Arc::clone" | "Rc::clone"
                )
            {
                return c.positional(0).and_then(|a| self.value_type(m, a));
            }
            if matches!(c.name.as_str(), "clone" | "unwrap" | "expect") {
                return c.receiver.and_then(|r| self.value_type(m, r));
            }
            if c.receiver.is_some() {
                // A method of a typed value returns what its knowledge entry
                // says; builder methods return the builder; anything else is
                // unknown (it is not a constructor of the receiver's type).
                let (head, _) = target.rsplit_once("::")?;
                let last = head.rsplit("::").next().unwrap_or(head);
                return last.ends_with("Builder").then(|| head.to_compact_string());
            }
        }
        constructor_type(self.lang, target, c.is_new)
    }
}

/// A Go type as written (`*Conn`, `pkg.Job`, `[]int`) to the qualified name
/// the rules use (pseudo types for channels and maps).
fn resolve_go_type_text(m: &FileModel, text: &str) -> Option<Str> {
    let t = text.trim().trim_start_matches('*').trim();
    if let Some(u) = go_unnamed(t) {
        return Some(u.to_compact_string());
    }
    if t.is_empty()
        || t.starts_with('[')
        || t.starts_with("func")
        || t.starts_with("struct")
        || t.starts_with("interface")
    {
        return None;
    }
    let t = t.split('[').next()?;
    match t.split_once('.') {
        Some((pkg, name)) => {
            let imp = m.imports.iter().find(|i| i.local == pkg)?;
            Some(format_compact!("{}.{name}", imp.target))
        }
        None => {
            if let Some(d) = m.types.iter().find(|d| d.name == t) {
                return Some(d.qualname.to_compact_string());
            }
            let builtin = matches!(
                t,
                "bool"
                    | "byte"
                    | "rune"
                    | "string"
                    | "error"
                    | "any"
                    | "int"
                    | "int8"
                    | "int16"
                    | "int32"
                    | "int64"
                    | "uint"
                    | "uint8"
                    | "uint16"
                    | "uint32"
                    | "uint64"
                    | "uintptr"
                    | "float32"
                    | "float64"
                    | "complex64"
                    | "complex128"
            );
            (!builtin).then(|| format_compact!("{}.{t}", m.module))
        }
    }
}

/// A pseudo type for Go's unnamed channel and map types (`chan`, `map`),
/// which have no qualified name but matter to rules.
fn unnamed_type(lang: Language, t: &TypeRef) -> Option<Str> {
    if lang != Language::Go {
        return None;
    }
    go_unnamed(&t.text).map(Into::into)
}

fn go_unnamed(text: &str) -> Option<&'static str> {
    let t = text.trim_start_matches('*').trim_start();
    if t.starts_with("chan") || t.starts_with("<-chan") || t.starts_with("<- chan") {
        Some("chan")
    } else if t.starts_with("map[") {
        Some("map")
    } else {
        None
    }
}

/// The parts of a tuple type written `(A, B, _)` (top-level commas only).
fn tuple_parts(t: &str) -> Option<Vec<Str>> {
    let inner = t.strip_prefix('(')?.strip_suffix(')')?;
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut cur = Str::default();
    for ch in inner.chars() {
        match ch {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(cur.trim().to_compact_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    parts.push(cur.trim().to_compact_string());
    (parts.len() >= 2).then_some(parts)
}

/// Methods whose value has the receiver's type (`x.clone()`, `x.unwrap()`).
fn is_passthrough(lang: Language, method: &str) -> bool {
    match lang {
        Language::Rust => matches!(method, "clone" | "unwrap" | "expect" | "to_owned"),
        _ => false,
    }
}

/// The type built by a call to `target`, when it is a constructor: a class
/// call (`threading.Lock()`, `new Mutex()`), a Rust associated function of a
/// type (`Mutex::new`, `TcpStream::connect`), a Go `NewT` factory.
fn constructor_type(lang: Language, target: &str, is_new: bool) -> Option<Str> {
    let (head, last) = lang.split_last_segment(target);
    let upper = |s: &str| s.chars().next().is_some_and(char::is_uppercase);
    match lang {
        Language::Rust => {
            let type_seg = head.rsplit("::").next().unwrap_or("");
            (upper(type_seg)).then(|| head.to_compact_string())
        }
        Language::Go => {
            if upper(last) && !last.starts_with("New") {
                // A conversion or composite type name used as a call.
                return None;
            }
            let name = last.strip_prefix("New").filter(|n| upper(n))?;
            Some(if head.is_empty() {
                name.to_compact_string()
            } else {
                format_compact!("{head}.{name}")
            })
        }
        _ => (is_new || upper(last)).then(|| target.to_compact_string()),
    }
}

impl Visitor for Pass<'_> {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        if let StmtKind::Global {
            names,
            nonlocal: false,
        } = &m.stmt(id).kind
        {
            self.flow.declared_global.extend(names.iter().cloned());
        }
        if self.lang == Language::Go
            && let StmtKind::For {
                target: Some(t),
                iter,
                ..
            } = &m.stmt(id).kind
        {
            self.bind_range_vars(m, *t, *iter);
        }
        // `with X() as x:` / `async with asyncio.TaskGroup() as tg:` binds
        // the context value (close enough: `__aenter__` returns self for the
        // types that matter here).
        if let StmtKind::With { items, .. } = &m.stmt(id).kind {
            for it in items {
                if let Some(t) = it.target
                    && let Some(name) = m.name_of(t)
                    && let Some(ty) = self.value_type(m, it.ctx)
                {
                    self.envs[self.func.index()].insert(name.to_compact_string(), ty);
                }
            }
        }
        true
    }

    fn exit_expr(&mut self, m: &FileModel, id: ExprId) {
        match &m.expr(id).kind {
            ExprKind::Call(c) => {
                if c.target.is_none()
                    && let Some(recv) = c.receiver
                    && let Some(target) = self.method_of(m, recv, &c.name)
                {
                    self.resolutions.push((id, target));
                }
                self.learn_type(m, id);
                // A call of a function not walked yet (defined further down,
                // or a closure): what it returns is known on the next walk.
                if let Some(t) = &c.target
                    && self.local_fn(m, t).is_some()
                    && !self.flow.returns.contains_key(t.as_str())
                    && !self.flow.known_returns.contains_key(t.as_str())
                {
                    self.flow.missed.push((self.func, t.clone()));
                }
            }
            ExprKind::Name { .. } | ExprKind::Attr { .. } => self.learn_type(m, id),
            _ => {}
        }
    }

    fn exit_stmt(&mut self, m: &FileModel, id: StmtId) {
        if self.lang == Language::Python {
            self.record_flow(m, id);
        }
        let StmtKind::Assign { targets, value, .. } = &m.stmt(id).kind else {
            return;
        };
        // A declared type (`let x: Arc<Mutex<T>> = ..`) wins over the value's;
        // in Python only where the value's type is unknown (`x: Any =
        // httpx.Client()` is still a client).
        let mut declared_any = false;
        let python_value_typed = self.lang == Language::Python
            && !self.declared.is_empty()
            && targets.iter().any(|t| self.declared.contains_key(t))
            && value.is_some_and(|v| self.value_type(m, v).is_some());
        for &target in targets.iter().filter(|_| !python_value_typed) {
            if let Some(t) = self.declared.get(&target)
                && let Some(name) = m.name_of(target)
            {
                self.envs[self.func.index()].insert(name.to_compact_string(), t.clone());
                declared_any = true;
            }
        }
        let Some(v) = value else { return };
        if self.lang == Language::Go
            && let Some(text) = self.value_text(m, *v)
        {
            for &target in targets {
                if let Some(name) = m.name_of(target) {
                    self.texts[self.func.index()].insert(name.to_compact_string(), text.clone());
                }
            }
        }
        if declared_any {
            return;
        }
        let Some(t) = self.value_type(m, *v) else {
            return;
        };
        if self.lang == Language::Rust
            && let Some(parts) = tuple_parts(&t)
        {
            // `let (tx, rx) = mpsc::channel()`: each name gets its part.
            for &target in targets {
                if let Some(name) = m.name_of(target) {
                    self.envs[self.func.index()].insert(name.to_compact_string(), t.clone());
                    continue;
                }
                let target = match &m.expr(target).kind {
                    ExprKind::Unary {
                        op: UnOp::Ref,
                        operand,
                    } => *operand,
                    _ => target,
                };
                if let ExprKind::Collection {
                    kind: CollKind::Tuple,
                    elems,
                    ..
                } = &m.expr(target).kind
                    && elems.len() == parts.len()
                {
                    for (&e, part) in elems.iter().zip(&parts) {
                        if part != "_"
                            && let Some(name) = m.name_of(e)
                            && name != "_"
                        {
                            self.envs[self.func.index()]
                                .insert(name.to_compact_string(), part.clone());
                        }
                    }
                }
            }
            return;
        }
        for &target in targets {
            if let Some(name) = m.name_of(target) {
                self.envs[self.func.index()].insert(name.to_compact_string(), t.clone());
            } else if self.lang == Language::Go
                && m.call(*v).is_some()
                && let ExprKind::Collection {
                    kind: CollKind::Tuple,
                    elems,
                    ..
                } = &m.expr(target).kind
                && let Some(name) = elems.first().and_then(|&e| m.name_of(e))
            {
                // `conn, err := net.Dial(...)`: the known type is the first
                // result's.
                self.envs[self.func.index()].insert(name.to_compact_string(), t.clone());
            }
        }
    }
}
