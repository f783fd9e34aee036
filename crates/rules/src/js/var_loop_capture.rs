//! JS020: a `var` loop variable captured by a callback that runs later.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct VarLoopCapture;

pub static META: RuleMeta = RuleMeta {
    id: "JS020",
    name: "var-loop-capture",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A loop variable declared with `var` is used by a callback that runs later (a timer, a promise callback, an event listener, an async function): every callback sees the last value.",
    docs: r#"
`for (var i = 0; ...)` or `for (var x of xs)`, and inside the loop a
callback given to `setTimeout`, `.then`, `.on`, `addEventListener` or
another deferred API (or an async function) that reads the loop variable.

## Why

`var` is function-scoped: there is one `i` for the whole loop, not one per
iteration. Callbacks that run after the loop has moved on all read the same
variable, which by then holds its final value: every timer retries the last
job, every response is written to the last slot, every listener handles the
last element.

## Example

```javascript
function retryAll(jobs) {
  for (var i = 0; i < jobs.length; i++) {
    setTimeout(() => run(jobs[i]), 1000 * i);
  }
}
```

## Fix

Declare the loop variable with `let` (or `const` in `for...of`), which
creates a fresh binding per iteration.

```javascript
function retryAll(jobs) {
  for (let i = 0; i < jobs.length; i++) {
    setTimeout(() => run(jobs[i]), 1000 * i);
  }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for VarLoopCapture {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let (vars, body) = match &st.kind {
                StmtKind::For {
                    target: Some(t),
                    body,
                    ..
                } if is_var_decl(
                    cx.source(st.span)
                        .trim_start_matches("for")
                        .trim_start()
                        .trim_start_matches('('),
                ) =>
                {
                    (
                        cx.model
                            .name_of(*t)
                            .map(|n| vec![n.to_string()])
                            .unwrap_or_default(),
                        body,
                    )
                }
                StmtKind::While { cond, body, .. } => match c_style_var(cx, s, *cond) {
                    Some(v) => (v, body),
                    None => continue,
                },
                _ => continue,
            };
            if vars.is_empty() {
                continue;
            }
            let names: HashSet<&str> = vars.iter().map(String::as_str).collect();
            let owner = cx.tree.stmt_func(s);
            // Closures defined in the loop body that run later.
            for g in cx.model.function_ids() {
                if cx.func(g).parent != Some(owner) {
                    continue;
                }
                let Parent::Expr(site) = cx.tree.func_site(g) else {
                    continue;
                };
                let Some(site_stmt) = common::stmt_of(cx, site) else {
                    continue;
                };
                if !common::block_contains(cx, body, site_stmt) || !deferred(cx, g) {
                    continue;
                }
                let Some(used) = cx.with_nested(g).into_iter().find_map(|h| {
                    common::exprs_of(cx, h).find_map(|x| {
                        let n = cx.model.name_of(x)?;
                        (names.contains(n) && !common::declares_local(cx, h, n))
                            .then(|| n.to_string())
                    })
                }) else {
                    continue;
                };
                out.push(cx.finding(
                    &META,
                    cx.func(g).span,
                    format!(
                        "this callback runs after the loop has moved on and reads `{used}`, a `var` shared by every iteration: each callback sees the value of the last iteration"
                    ),
                    format!("declare the loop variable with `let` (`for (let {used} ...`) so each iteration gets its own binding"),
                ));
            }
        }
    }
}

fn is_var_decl(text: &str) -> bool {
    text.starts_with("var ")
}

/// `for (var i = ...; cond; ...)`: the `var` names of the init statement
/// right before the loop.
fn c_style_var(cx: &FileCx, s: StmtId, cond: ExprId) -> Option<Vec<String>> {
    let f = cx.tree.stmt_func(s);
    let block = match cx.tree.stmt_parent(s) {
        Parent::Function(_) => cx.func(f).body.clone(),
        Parent::Stmt(p) => {
            let mut found = None;
            unsnarl_model::walk::for_each_stmt_child(cx.model, p, &mut |ch| {
                if let unsnarl_model::walk::Child::Block(b) = ch
                    && b.contains(&s)
                {
                    found = Some(b.clone());
                }
            });
            found?
        }
        _ => return None,
    };
    let i = block.iter().position(|&x| x == s)?;
    let prev = *block.get(i.checked_sub(1)?)?;
    let StmtKind::Assign {
        targets,
        op: AssignOp::Declare { mutable: true },
        ..
    } = &cx.stmt(prev).kind
    else {
        return None;
    };
    let stmt_span = cx.stmt(prev).span;
    // The declaration belongs to the `for` head: `for (var i = 0; ...`.
    let head = cx.text.get(..stmt_span.start as usize)?.trim_end();
    if !head.ends_with('(') || !is_var_decl(cx.source(stmt_span)) {
        return None;
    }
    let cond_text = cx.source(cx.expr(cond).span);
    let names: Vec<String> = targets
        .iter()
        .filter_map(|&t| cx.model.name_of(t))
        .filter(|n| cond_text.contains(n))
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// The closure runs after the current iteration: it is async, or handed to
/// an API that calls it later.
fn deferred(cx: &FileCx, g: FuncId) -> bool {
    if cx.func(g).is_async {
        return true;
    }
    let Some((site, _)) = common::closure_call_site(cx, g) else {
        return false;
    };
    let c = cx.call(site).unwrap();
    if let Some(
        "setTimeout" | "setInterval" | "setImmediate" | "process.nextTick" | "queueMicrotask",
    ) = c.target.as_deref()
    {
        return true;
    }
    matches!(
        c.name.as_str(),
        "then"
            | "catch"
            | "finally"
            | "on"
            | "once"
            | "addListener"
            | "addEventListener"
            | "subscribe"
            | "nextTick"
    )
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
function schedule(jobs) {
  for (var i = 0; i < jobs.length; i++) {
    setTimeout(() => run(jobs[i]), 100); // expect
  }
  for (var id of ids) {
    fetch(`/items/${id}`).then((r) => store(id, r)); // expect
  }
}
"#],
    pass: &[r#"
function schedule(jobs) {
  for (let i = 0; i < jobs.length; i++) {
    setTimeout(() => run(jobs[i]), 100);
  }
  for (var j = 0; j < jobs.length; j++) {
    jobs[j].items.forEach((x) => total(x, j));
  }
  for (const id of ids) {
    fetch(`/items/${id}`).then((r) => store(id, r));
  }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(VarLoopCapture);
}
