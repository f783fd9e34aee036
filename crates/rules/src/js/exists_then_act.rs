//! JS018: `fs.existsSync(p)` (or `access`) checked, then the path is
//! created, written or removed: a file-system TOCTOU.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct ExistsThenAct;

pub static META: RuleMeta = RuleMeta {
    id: "JS018",
    name: "exists-then-act",
    category: Category::CheckThenAct,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A path is checked with `fs.existsSync`/`fs.access` and then created, written or removed: between the check and the act another process (or request) can change it.",
    docs: r#"
`if (!fs.existsSync(p)) fs.mkdirSync(p)`, `if (!existsSync(p))
writeFileSync(p, ...)`, `if (existsSync(p)) unlinkSync(p)` and the same
with `fs.promises.access`/`stat`: a check of a path followed by an action on
the same path that the check was meant to make safe.

## Why

The file system is shared state. Between the check and the act another
process, another worker or another request (across an `await`) can create
or delete the path: `mkdir` then fails with `EEXIST`, `writeFile` silently
overwrites a file someone else just created (a lock file, an upload), and
`unlink` throws `ENOENT`. On shared directories it is also the classic
symlink-swap hole.

## Example

```javascript
const fs = require("fs");

function ensureDir(dir) {
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir);
  }
}
```

## Fix

Do the operation atomically and handle the outcome: `mkdir` with
`{ recursive: true }`, exclusive creation with the `wx` flag, `rm` with
`{ force: true }`, or catch `EEXIST`/`ENOENT`.

```javascript
const fs = require("fs");

function ensureDir(dir) {
  fs.mkdirSync(dir, { recursive: true });
}
```
"#,
    examples: &EXAMPLES,
};

/// Which act a call is, given the check said the path is absent (`true`) or
/// present (`false`).
fn act(cx: &FileCx, c: &Call, absent: bool) -> Option<&'static str> {
    let t = c.target.as_deref()?;
    let m = t
        .strip_prefix("fs.promises.")
        .or_else(|| t.strip_prefix("fs/promises."))
        .or_else(|| t.strip_prefix("fs-extra."))
        .or_else(|| t.strip_prefix("fs."))?;
    let m = m.strip_suffix("Sync").unwrap_or(m);
    let opts = c.positional(1);
    let opts2 = c.positional(2);
    let has = |o: Option<ExprId>, key: &str| {
        o.is_some_and(|o| !matches!(common::opt_key(cx, o, key), common::OptKey::Missing))
    };
    let flag_wx = |o: Option<ExprId>| {
        o.is_some_and(|o| match common::opt_key(cx, o, "flag") {
            common::OptKey::Set(v) => common::str_lit(cx, v).is_none_or(|f| f.contains('x')),
            common::OptKey::Unknown => true,
            common::OptKey::Missing => false,
        })
    };
    if absent {
        match m {
            "mkdir" if !has(opts, "recursive") => Some("creates"),
            "writeFile" if !flag_wx(opts2) => Some("creates"),
            "copyFile" | "symlink" | "link" => Some("creates"),
            "createWriteStream" if !flag_wx(opts) => Some("creates"),
            "open" => match c.positional(1).and_then(|f| common::str_lit(cx, f)) {
                Some(f) if f.contains('w') && !f.contains('x') => Some("creates"),
                _ => None,
            },
            _ => None,
        }
    } else {
        match m {
            "unlink" | "rmdir" => Some("removes"),
            "rm" if !has(opts, "force") => Some("removes"),
            _ => None,
        }
    }
}

/// `fs.existsSync(p)` / `await fs.promises.access(p)` / `fs.statSync(p)`:
/// the path expression checked.
fn exists_check(cx: &FileCx, e: ExprId) -> Option<ExprId> {
    let e = cx.model.strip(e);
    let e = match cx.expr(e).kind {
        ExprKind::Await(inner) => cx.model.strip(inner),
        _ => e,
    };
    let c = cx.call(e)?;
    let t = c.target.as_deref()?;
    let m = t
        .strip_prefix("fs.promises.")
        .or_else(|| t.strip_prefix("fs/promises."))
        .or_else(|| t.strip_prefix("fs-extra."))
        .or_else(|| t.strip_prefix("fs."))?;
    matches!(
        m,
        "existsSync" | "exists" | "pathExists" | "pathExistsSync" | "access" | "accessSync"
    )
    .then(|| c.positional(0))
    .flatten()
}

/// The path and the sense of a condition: `(path, absent)`.
fn checked_path(cx: &FileCx, cond: ExprId) -> Option<(ExprId, bool)> {
    let cond = cx.model.strip(cond);
    if let ExprKind::Unary {
        op: UnOp::Not,
        operand,
    } = cx.expr(cond).kind
    {
        return checked_path(cx, operand).map(|(p, a)| (p, !a));
    }
    exists_check(cx, cond).map(|p| (p, false))
}

impl Rule for ExistsThenAct {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if common::in_test(cx, f) {
                continue;
            }
            for s in common::stmts_of(cx, f) {
                let StmtKind::If { cond, then, .. } = &cx.stmt(s).kind else {
                    continue;
                };
                let Some((path, absent)) = checked_path(cx, *cond) else {
                    continue;
                };
                let path_text = cx.source(cx.expr(path).span).trim().to_string();
                let calls = unsnarl_model::walk::calls_in_block(cx.model, then);
                for e in calls {
                    let c = cx.call(e).unwrap();
                    let Some(what) = act(cx, c, absent) else {
                        continue;
                    };
                    let same = c
                        .positional(0)
                        .is_some_and(|p| cx.source(cx.expr(p).span).trim() == path_text);
                    if !same {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!(
                            "`{}` {what} `{path_text}` after checking that it {}: another process or request can change the path in between, so this fails (`{}`) or clobbers someone else's file",
                            cx.snippet(cx.expr(c.func).span),
                            if absent { "does not exist" } else { "exists" },
                            if absent { "EEXIST" } else { "ENOENT" }
                        ),
                        if absent {
                            "skip the check and make the act atomic: `mkdir(p, { recursive: true })`, or create with the `wx` flag and handle `EEXIST`"
                        } else {
                            "skip the check: `rm(p, { force: true })`, or unlink and ignore `ENOENT`"
                        },
                    ));
                }
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
const fs = require("fs");
const fsp = require("fs/promises");

function prepare(dir, lock) {
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(dir); // expect
  }
  if (!fs.existsSync(lock)) fs.writeFileSync(lock, String(process.pid)); // expect
}

async function cleanup(file) {
  if (fs.existsSync(file)) {
    await fsp.unlink(file); // expect
  }
}
"#],
    pass: &[r#"
const fs = require("fs");

function prepare(dir, lock) {
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(lock, String(process.pid), { flag: "wx" });
  if (fs.existsSync(lock)) {
    return JSON.parse(fs.readFileSync(lock, "utf8"));
  }
  if (fs.existsSync(dir)) fs.rmSync(dir, { recursive: true, force: true });
  if (!fs.existsSync(dir)) fs.mkdirSync(other);
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ExistsThenAct);
}
