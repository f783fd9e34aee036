//! Lowering of the rust-analyzer syntax tree into the file model.
//!
//! One [`Lowerer`] walks a file: items (`item.rs`), statements and blocks
//! (`stmt.rs`), expressions (`expr.rs`), patterns (`pat.rs`), macro calls
//! (`macros.rs`), attributes (`attrs.rs`) and types (`types.rs`). Names are
//! resolved on the way through [`Scopes`].

mod attrs;
mod batch;
mod expr;
mod green;
mod item;
mod macros;
mod pat;
mod stmt;
mod types;

use crate::file;
use crate::parse;
use crate::resolve::{Scopes, normalize_crate, parent_module};
use ra_ap_syntax::ast::{self, AstNode, HasModuleItem};
use ra_ap_syntax::{Edition, SmolStr, SyntaxNode, TextRange};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{ExprId, FileModel, FuncId, Span, SyntaxError};

/// Where we are: the function whose body is being lowered and the names
/// that qualify items declared here.
#[derive(Clone, Debug)]
struct Ctx {
    func: FuncId,
    /// Prefix of the qualified names of items declared here: the module path
    /// at module level, the enclosing function's qualname inside bodies.
    item_prefix: String,
    /// The current module path (for `self::`/`super::`).
    module: String,
    /// The qualified `Self` type inside impls and traits.
    self_ty: Option<String>,
    /// Inside test code (`#[cfg(test)]` module, `#[test]` function, test file).
    in_test: bool,
}

pub(crate) struct Lowerer {
    m: FileModel,
    scopes: Scopes,
    ctx: Ctx,
    /// Added to offsets of the tree being lowered to get file offsets:
    /// non-zero while lowering a re-parsed macro body.
    shift: i64,
    /// File offsets spans are clipped to (the macro body while re-parsing).
    clip: (u32, u32),
    depth: u32,
    /// Bytes we may still re-parse out of macro token trees, so that nested
    /// macros cannot make lowering quadratic.
    reparse_budget: usize,
    reparse_depth: u32,
    /// Qualified names of types that already have a `TypeDecl`.
    declared_types: HashSet<String>,
    /// Qualified names of the file's type aliases → what they resolve to.
    aliases: HashMap<String, Option<String>>,
    /// Crates imported with `#[macro_use] extern crate x;`.
    macro_use: Vec<String>,
    /// Macro bodies of the file parsed in one go (see `batch.rs`).
    batch: Option<batch::ArgBatch>,
    /// The edition the file parsed under; macro bodies are re-parsed with it.
    edition: Edition,
}

/// Lowers a whole file. Never panics for a well-formed call on any text
/// (callers still wrap it in `catch_unwind` as a safety net).
pub(crate) fn lower_file(text: &str, rel_path: &str) -> FileModel {
    // SAFETY: parsing keeps nothing it allocates beyond its result: the
    // tree builder's caches are its own, and rust-analyzer's parser has no
    // global or thread-local state (its `tracing` spans register nothing
    // while no subscriber is installed, and unsnarl installs none). The
    // tree is built in the thread's region and forgotten once lowered.
    unsafe {
        unsnarl_alloc::in_region(
            || parse::parse(text),
            |parsed| lower_parsed(parsed, text, rel_path),
        )
    }
}

/// Lowers an already parsed file (split from [`lower_file`] so lowering can
/// be measured on its own).
pub(crate) fn lower_parsed(parsed: &parse::Parsed, text: &str, rel_path: &str) -> FileModel {
    let module = file::module_path(rel_path);
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    let mut m = FileModel::new(module.clone(), Span::new(0, len));
    m.reserve_nodes(text.len(), 16, 75);
    m.is_test = file::is_test_path(rel_path);
    m.is_generated = file::is_generated(text);
    for (start, end, message) in &parsed.errors {
        m.syntax_errors.push(SyntaxError {
            span: Span::new((*start).min(len), (*end).min(len)),
            message: message.clone(),
        });
    }
    let macro_bodies = &parsed.macro_bodies;
    let edition = parsed.edition;
    let Some(source) = ast::SourceFile::cast(parsed.root.clone()) else {
        return m;
    };
    if attrs::has_cfg_test(source.syntax()) {
        m.is_test = true;
    }
    m.functions[0].is_test = m.is_test;

    let mut l = Lowerer {
        ctx: Ctx {
            func: FuncId(0),
            item_prefix: module.clone(),
            module: module.clone(),
            self_ty: None,
            in_test: m.is_test,
        },
        m,
        scopes: Scopes::default(),
        shift: 0,
        clip: (0, len),
        depth: 0,
        reparse_budget: text.len().saturating_mul(2).saturating_add(1 << 16),
        reparse_depth: 0,
        declared_types: HashSet::default(),
        aliases: HashMap::default(),
        macro_use: Vec::new(),
        batch: None,
        edition,
    };
    l.batch = batch::build(text, macro_bodies, edition, &mut l.reparse_budget);
    l.scopes.push_module(&module);
    let mut body = Vec::new();
    let items: Vec<ast::Item> = source.items().collect();
    l.lower_items(&items, &mut body);
    l.scopes.pop();
    l.m.functions[0].body = body;
    l.m
}

impl Lowerer {
    // ----- spans -----

    fn span_range(&self, r: TextRange) -> Span {
        let (lo, hi) = self.clip;
        let map = |o: u32| -> u32 {
            let v = i64::from(o) + self.shift;
            v.clamp(i64::from(lo), i64::from(hi)) as u32
        };
        Span::new(map(r.start().into()), map(r.end().into()))
    }

    fn span(&self, node: &SyntaxNode) -> Span {
        self.span_range(node.text_range())
    }

    /// The span of an item without its leading attributes and doc comments,
    /// so that reports point at the item itself.
    fn item_span(&self, node: &SyntaxNode) -> Span {
        let start = green::start_after_attrs(node);
        let end = node.text_range().end();
        self.span_range(TextRange::new(start.min(end), end))
    }

    // ----- depth -----

    /// Enters one nesting level; `false` when the limit is reached and the
    /// caller must emit an opaque node instead of descending.
    fn enter(&mut self) -> bool {
        if self.depth >= MAX_NESTING {
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn opaque(&mut self, node: &SyntaxNode) -> ExprId {
        let span = self.span(node);
        self.m.opaque(span)
    }

    // ----- qualified names -----

    fn qualify(&self, name: &str) -> String {
        format!("{}::{}", self.ctx.item_prefix, name)
    }

    /// Resolves a path. `value` selects the value namespace for single
    /// segments (locals shadow); multi-segment paths always start in the
    /// type/module namespace.
    fn resolve_path(&mut self, path: &ast::Path, value: bool) -> ResolvedPath {
        if let Some((names, global)) = green::path_segments(path.syntax().green()) {
            let segs: Vec<Seg> = names.into_iter().map(Seg::Name).collect();
            return self.resolve_segs(&segs, global, value);
        }
        // `<T as Trait>::f` and broken paths: through the typed API.
        let mut segs: Vec<Seg> = Vec::new();
        let mut cur = Some(path.clone());
        let mut global = false;
        let mut guard = 0u32;
        while let Some(p) = cur {
            guard += 1;
            if guard > 4 * MAX_NESTING {
                return ResolvedPath::unknown();
            }
            let Some(seg) = p.segment() else {
                return ResolvedPath::unknown();
            };
            if let Some(nr) = seg.name_ref() {
                segs.push(Seg::Name(node_text(nr.syntax())));
            } else if let Some(anchor) = seg.type_anchor() {
                segs.push(Seg::Anchor(anchor));
            } else {
                return ResolvedPath::unknown();
            }
            let q = p.qualifier();
            if q.is_none() && seg.coloncolon_token().is_some() {
                global = true;
            }
            cur = q;
        }
        segs.reverse();
        self.resolve_segs(&segs, global, value)
    }

    fn resolve_segs(&mut self, segs: &[Seg], global: bool, value: bool) -> ResolvedPath {
        // Sized up front: grown piece by piece, the text was reallocated
        // about once per path on average.
        let len: usize = segs
            .iter()
            .map(|s| match s {
                Seg::Name(n) => n.len() + 2,
                Seg::Anchor(_) => 16,
            })
            .sum();
        let mut text = String::with_capacity(len);
        for (i, s) in segs.iter().enumerate() {
            if i > 0 || global {
                text.push_str("::");
            }
            match s {
                Seg::Name(n) => text.push_str(n),
                Seg::Anchor(a) => text.push_str(&types::type_text(a.syntax())),
            }
        }
        let last = match segs.last() {
            Some(Seg::Name(n)) => n.clone(),
            _ => SmolStr::default(),
        };
        let resolved = self.qualify_segs(segs, global, value);
        ResolvedPath {
            text,
            last,
            resolved,
            single: segs.len() == 1 && !global,
        }
    }

    fn qualify_segs(&mut self, segs: &[Seg], global: bool, value: bool) -> Option<String> {
        let (first, rest) = segs.split_first()?;
        let mut rest_names = Vec::with_capacity(rest.len());
        for s in rest {
            match s {
                Seg::Name(n) => rest_names.push(n.as_str()),
                Seg::Anchor(_) => return None,
            }
        }
        let join = |base: String, rest: &[&str]| -> String {
            let mut out = base;
            for r in rest {
                out.push_str("::");
                out.push_str(r);
            }
            out
        };
        let first = match first {
            Seg::Anchor(a) => {
                let base = a.ty().and_then(|t| self.resolve_type_name(&t))?;
                return Some(join(base, &rest_names));
            }
            Seg::Name(n) => n,
        };
        if global {
            return Some(normalize_crate(join(first.to_string(), &rest_names)));
        }
        match first.as_str() {
            "crate" => Some(join("crate".to_string(), &rest_names)),
            "self" if rest_names.is_empty() => None,
            "self" => Some(join(self.ctx.module.clone(), &rest_names)),
            "super" => {
                let mut base = parent_module(&self.ctx.module).to_string();
                let mut rest = &rest_names[..];
                while let Some((&"super", r)) = rest.split_first() {
                    base = parent_module(&base).to_string();
                    rest = r;
                }
                Some(join(base, rest))
            }
            "Self" => self.ctx.self_ty.clone().map(|b| join(b, &rest_names)),
            name if rest_names.is_empty() => {
                if value {
                    self.scopes.lookup_value(name)
                } else {
                    self.scopes.lookup_type(name)
                }
            }
            name => {
                if let Some(base) = self.scopes.lookup_type(name) {
                    Some(join(base, &rest_names))
                } else if name.starts_with(|c: char| c.is_lowercase() || c == '_') {
                    // An unknown lowercase first segment is a crate name.
                    Some(normalize_crate(join(name.to_string(), &rest_names)))
                } else {
                    None
                }
            }
        }
    }

    // ----- items: shared helpers -----

    fn lower_items(&mut self, items: &[ast::Item], out: &mut Vec<unsnarl_model::StmtId>) {
        self.declare_items(items);
        for item in items {
            self.lower_item(item, out);
        }
    }
}

/// A path segment: a name (keywords `crate`/`self`/`super`/`Self` included)
/// or a `<T>`/`<T as Trait>` anchor.
enum Seg {
    Name(SmolStr),
    Anchor(ast::TypeAnchor),
}

pub(crate) struct ResolvedPath {
    /// The path as written, without generic arguments (`Vec::new`).
    text: String,
    /// The last segment (`new`).
    last: SmolStr,
    resolved: Option<String>,
    /// A plain identifier (lowered as a `Name`, not a `Path`).
    single: bool,
}

impl ResolvedPath {
    fn unknown() -> ResolvedPath {
        ResolvedPath {
            text: String::new(),
            last: SmolStr::default(),
            resolved: None,
            single: false,
        }
    }
}

/// The text of a node's first token (identifiers, `self`, keywords).
fn node_text(node: &SyntaxNode) -> SmolStr {
    green::first_token_text(node.green())
        .map(SmolStr::new)
        .unwrap_or_default()
}
