//! A toy front end for in-process tests of the application layer. It knows
//! a sliver of Python, line by line, which is enough to make the real rules
//! produce real findings:
//!
//! - `def name(...):` / `async def name(...):` at column 0 start a function
//!   whose body is the following indented lines;
//! - `a.b(...)` is a call resolved to `a.b`: `time.sleep(...)` gives PY002
//!   in an async function, `asyncio.Queue()` gives PY003 anywhere;
//! - a line containing `TOY_PANIC` makes the front end panic;
//! - a line containing `TOY_SYNTAX` is a syntax error at its first column;
//! - `TOY_GENERATED` anywhere marks the file as generated;
//! - `TOY_SLOW` anywhere makes lowering take 200 ms (for time budgets).

use unsnarl::frontend::Frontend;
use unsnarl_model::*;

pub struct Toy;

/// Calls of dotted names (`a.b(`, `a.b.c(`) on a line: (start, end after
/// the first `)` or the line end, the dotted name).
fn dotted_calls(line: &str) -> Vec<(usize, usize, &str)> {
    let b = line.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if ident(b[i]) && (i == 0 || !(ident(b[i - 1]) || b[i - 1] == b'.')) {
            let s = i;
            while i < b.len() && (ident(b[i]) || b[i] == b'.') {
                i += 1;
            }
            let name = &line[s..i];
            if i < b.len() && b[i] == b'(' && name.contains('.') && !name.ends_with('.') {
                let close = line[i..].find(')').map_or(line.len(), |j| i + j + 1);
                out.push((s, close, name));
            }
        } else {
            i += 1;
        }
    }
    out
}

impl Frontend for Toy {
    fn lower(&self, input: &SourceInput) -> FileModel {
        let text = input.text;
        if text.contains("TOY_PANIC") {
            panic!("toy front end: TOY_PANIC found");
        }
        if text.contains("TOY_SLOW") {
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let mut m = FileModel::new("toy", Span::new(0, text.len() as u32));
        m.is_generated = text.contains("TOY_GENERATED");
        let mut current = FuncId(0);
        let mut offset = 0usize;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            let trimmed = line.trim_end();
            if let Some(col) = trimmed.find("TOY_SYNTAX") {
                m.syntax_errors.push(SyntaxError {
                    span: Span::new((start + col) as u32, (start + col + 1) as u32),
                    message: "toy syntax error".into(),
                });
            }
            let is_async = trimmed.starts_with("async def ");
            if is_async || trimmed.starts_with("def ") {
                let name_start = if is_async { 10 } else { 4 };
                let name = trimmed[name_start..]
                    .split('(')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let span = Span::new(start as u32, (start + trimmed.len()) as u32);
                let mut f = Function::new(FnKind::Function, span);
                f.qualname = format!("toy.{name}").into();
                f.name = name.into();
                f.is_async = is_async;
                f.parent = Some(FuncId(0));
                let fid = m.add_function(f);
                let def = m.add_stmt(StmtKind::FuncDef(fid), span);
                m.func_mut(FuncId(0)).body.push(def);
                current = fid;
                continue;
            }
            if !line.starts_with([' ', '\t']) && !trimmed.is_empty() {
                current = FuncId(0);
            }
            for (at, close, dotted) in dotted_calls(trimmed) {
                let s = (start + at) as u32;
                let e = (start + close) as u32;
                let (module, name) = dotted.rsplit_once('.').unwrap_or(("", dotted));
                let obj = m.add_expr(
                    ExprKind::Name {
                        id: module.into(),
                        resolved: Some(module.into()),
                    },
                    Span::new(s, s + module.len() as u32),
                );
                let func = m.add_expr(
                    ExprKind::Attr {
                        obj,
                        name: name.into(),
                        resolved: Some(dotted.into()),
                    },
                    Span::new(s, s + dotted.len() as u32),
                );
                let call = m.add_expr(
                    ExprKind::Call(Box::new(Call {
                        func,
                        receiver: None,
                        name: name.into(),
                        target: Some(dotted.into()),
                        args: Vec::new(),
                        is_new: false,
                        is_macro: false,
                        effects: unsnarl_model::EffectSet::UNKNOWN,
                    })),
                    Span::new(s, e),
                );
                let stmt = m.add_stmt(StmtKind::Expr(call), Span::new(s, e));
                m.func_mut(current).body.push(stmt);
            }
        }
        m
    }
}
