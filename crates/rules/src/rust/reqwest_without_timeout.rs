//! RS020: a reqwest client with no request timeout.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct ReqwestWithoutTimeout;

pub static META: RuleMeta = RuleMeta {
    id: "RS020",
    name: "reqwest-without-timeout",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`reqwest::Client::new()`, a `Client::builder()` chain without `.timeout(..)` (or with only `connect_timeout`), or `reqwest::get(..)`: async reqwest waits forever by default.",
    docs: r#"
An async `reqwest` client built without a total request timeout:
`reqwest::Client::new()`, `reqwest::Client::builder()...build()` with no
`.timeout(..)` / `.read_timeout(..)` in the chain (a chain with only
`.connect_timeout(..)` is reported as such), or the `reqwest::get(url)`
shortcut, which uses such a client. Files that set per-request timeouts
(`.timeout(..)` on a request) are left alone, and so are test code,
examples and benches. (The blocking client has a 30 s default and is not
flagged.)

## Why

The async client has no timeout unless you set one: a server that accepts
the connection and never answers, or stalls halfway through the body, keeps
the request (and the task, its connection and whatever lock or permit it
holds) waiting forever. A connect timeout alone does not help once the
connection is up.

## Example

```rust
async fn fetch(url: &str) -> reqwest::Result<String> {
    let client = reqwest::Client::new();
    client.get(url).send().await?.text().await
}
```

## Fix

Build the client with a total timeout (and reuse it).

```rust
use std::time::Duration;

async fn fetch(url: &str) -> reqwest::Result<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    client.get(url).send().await?.text().await
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ReqwestWithoutTimeout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::non_service_path(cx) || cx.model.is_test {
            return;
        }
        // Per-request timeouts anywhere in the file: the client is fine.
        let per_request = cx.calls_named(&["timeout"]).iter().any(|(_, c)| {
            c.receiver.is_some()
                && c.target
                    .as_deref()
                    .is_none_or(|t| !t.starts_with("reqwest::ClientBuilder"))
        });
        for (e, c) in cx.calls_to(&[
            "reqwest::Client::new",
            "reqwest::get",
            "reqwest::Client::builder",
            "reqwest::ClientBuilder::new",
        ]) {
            let ex = cx.expr(e);
            let Some(t) = c.target.as_deref() else {
                continue;
            };
            if common::test_like(cx, cx.func_of(e)) {
                continue;
            }
            let msg = match t {
                "reqwest::Client::new" if !per_request => {
                    "`reqwest::Client::new()` builds a client with no request timeout: a peer that accepts the connection and never answers (or stalls mid-body) keeps the request, and its task, waiting forever".to_string()
                }
                "reqwest::get" if !per_request => {
                    "`reqwest::get` uses a client with no request timeout: a peer that never answers keeps this call waiting forever".to_string()
                }
                "reqwest::Client::builder" | "reqwest::ClientBuilder::new" => {
                    let chain = chain_methods(cx, e);
                    if chain.iter().any(|m| matches!(m.as_str(), "timeout" | "read_timeout")) {
                        continue;
                    }
                    if per_request || configured_later(cx, e) {
                        continue;
                    }
                    if chain.iter().any(|m| m == "connect_timeout") {
                        "this reqwest client sets only `connect_timeout`: once connected, a peer that stops answering (or stalls mid-body) keeps each request waiting forever".to_string()
                    } else {
                        "this reqwest client is built without `.timeout(..)`: requests to a peer that never answers wait forever".to_string()
                    }
                }
                _ => continue,
            };
            out.push(cx.finding(
                &META,
                ex.span,
                msg,
                "build the client with a total timeout: `reqwest::Client::builder().timeout(Duration::from_secs(..)).build()?` (or set `.timeout(..)` on each request)",
            ));
        }
    }
}

/// The methods called on the value of `e` in a chain (`builder().a().b()`).
fn chain_methods(cx: &FileCx, e: ExprId) -> Vec<String> {
    let mut out = Vec::new();
    let mut val = e;
    while let Parent::Expr(p) = cx.tree.expr_parent(val) {
        match &cx.expr(p).kind {
            ExprKind::Try(_) | ExprKind::Cast(_) => val = p,
            ExprKind::Attr { .. } => {
                let Parent::Expr(pp) = cx.tree.expr_parent(p) else {
                    break;
                };
                match cx.call(pp) {
                    Some(c) if c.receiver == Some(val) => {
                        out.push(c.name.to_string());
                        val = pp;
                    }
                    _ => break,
                }
            }
            _ => break,
        }
    }
    out
}

/// The builder is bound to a variable and `.timeout(..)` is called on a
/// variable later in the function.
fn configured_later(cx: &FileCx, e: ExprId) -> bool {
    let f = common::outermost(cx, cx.func_of(e));
    let span = cx.func(f).span;
    let after = cx.expr(e).span.end;
    cx.model.exprs.iter().any(|x| {
        x.span.start >= after
            && span.contains(x.span)
            && matches!(&x.kind, ExprKind::Call(c) if matches!(c.name.as_str(), "timeout" | "read_timeout"))
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::time::Duration;

struct Api {
    http: reqwest::Client,
}

impl Api {
    fn new() -> Self {
        Api { http: reqwest::Client::new() } // expect
    }

    fn with_connect_only() -> reqwest::Result<Self> {
        let http = reqwest::Client::builder() // expect
            .connect_timeout(Duration::from_secs(3))
            .build()?;
        Ok(Api { http })
    }
}

async fn quick(url: &str) -> reqwest::Result<String> {
    reqwest::get(url).await?.text().await // expect
}
"#],
    pass: &[
        r#"
use std::time::Duration;

fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(30))
        .build()
}

fn blocking() -> reqwest::blocking::Client {
    reqwest::blocking::Client::new()
}
"#,
        r#"
use std::time::Duration;

async fn per_request(url: &str) -> reqwest::Result<String> {
    let client = reqwest::Client::new();
    client.get(url).timeout(Duration::from_secs(5)).send().await?.text().await
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ReqwestWithoutTimeout);
}
