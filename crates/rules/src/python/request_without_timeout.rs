//! PY025: a synchronous HTTP request with no timeout.

use crate::context::FileCx;
use crate::python::common::is_none;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct RequestWithoutTimeout;

pub static META: RuleMeta = RuleMeta {
    id: "PY025",
    name: "http-request-without-timeout",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`requests.get/post/...` (module or `Session`) or `urllib.request.urlopen` without `timeout=` (or with `timeout=None`).",
    docs: r#"
Calls of the `requests` API (`requests.get`, `requests.post`, ...,
`Session.get`, `Session.request`) and of `urllib.request.urlopen` that do
not pass a timeout, or pass `timeout=None`. (Inside a coroutine these calls
are reported as blocking the event loop instead.) A script's own entry code
under `if __name__ == "__main__":` is left out: it runs once, in the
foreground, where a hang is seen and interrupted. Nor is `urlopen` of a
`data:` URI (a literal, or a name the file rejects unless it starts with
`data:`), which it decodes in memory without any server. Nor a call in a
branch that never runs (`if False and method == "PUT":`).

## Why

Neither library has a default timeout: a server that accepts the
connection and never answers (or stops sending halfway through the body)
keeps the calling thread waiting forever. In a worker pool, each hung call
takes one worker away until the pool is exhausted and the whole service
stops, because one dependency hung.

## Example

```python
import requests

def fetch_rates():
    return requests.get("https://rates.example/today").json()
```

## Fix

Always pass a timeout (connect, read), sized from the caller's budget.

```python
import requests

def fetch_rates():
    return requests.get("https://rates.example/today", timeout=(3.05, 10)).json()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RequestWithoutTimeout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) || c.target.is_none() {
                continue;
            }
            let Some(entry) = cx.effect(c, Effect::NeedsTimeout) else {
                continue;
            };
            // In a coroutine the call blocks the loop, which the blocking
            // rule reports with the real fix (an async client).
            let f = cx.func_of(id);
            if cx.func(f).is_test
                || cx.runs_on_loop(f)
                || c.args.iter().any(|a| a.spread)
                || crate::python::common::under_deadline(cx, id, false)
                || crate::python::common::in_main_guard(cx, e.span)
                || crate::python::common::in_dead_branch(cx, e.span)
                // `urlopen` of a `data:` URI talks to no server.
                || crate::shared::blocking::waits_for_nothing(cx.model, id, c)
            {
                continue;
            }
            let given = entry
                .keyword
                .as_deref()
                .and_then(|k| c.kwarg(k))
                .or_else(|| entry.arg.and_then(|i| c.positional(i)));
            let problem = match given {
                None => "has no timeout",
                Some(t) if is_none(cx, t) => "passes `timeout=None`",
                Some(_) => continue,
            };
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` {problem}: it {}, so a server that stops answering keeps this thread blocked forever",
                    cx.callee_display(c),
                    entry.what
                ),
                entry.fix.clone(),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import requests
from urllib.request import urlopen

def rates():
    r = requests.get("https://rates.example/today")  # expect
    s = requests.Session()
    s.post("https://api.example/x", json={}, timeout=None)  # expect
    return urlopen("https://example.com").read()  # expect
"#,
        r#"
import requests

_session = None


def init_session():
    global _session
    _session = requests.Session()


def fetch(url):
    # The module's session is made in `init_session`.
    return _session.get(url)  # expect
"#,
        r#"
import urllib.request


def from_uri(uri):
    if not uri.startswith(("data:", "https:")):
        raise ValueError("unsupported URI")
    with urllib.request.urlopen(uri) as response:  # expect
        return response.read()
"#,
    ],
    pass: &[
        r#"
import requests

TIMEOUT = 5

def send(method, url, data):
    session = requests.Session()
    if False and method == "PUT":
        r = session.request(method, url, data=data)
    else:
        r = session.request(method, url, data=data, timeout=TIMEOUT)
    return r
"#,
        r#"
import re
from urllib.request import urlopen

if __name__ == "__main__":
    def newest_version():
        page = urlopen("http://www.example.org/manual/")
        for line in page:
            m = re.match(r"(\d\.\d)", line.decode())
            if m:
                return m.group(1)

    print(newest_version())
"#,
        r#"
import requests
from urllib.request import urlopen

TIMEOUT = (3.05, 27)

def green(url):
    import eventlet
    with eventlet.Timeout(5, False):
        return requests.get(url)

def rates(**kw):
    r = requests.get("https://rates.example/today", timeout=5)
    s = requests.Session()
    s.post("https://api.example/x", json={}, timeout=TIMEOUT)
    requests.get("https://x", **kw)
    return urlopen("https://example.com", timeout=10).read()
"#,
        r#"
import urllib.request


def from_data_uri(data_uri):
    if not data_uri.startswith("data:"):
        raise ValueError("not a data URI")
    with urllib.request.urlopen(data_uri) as response:
        return response.read()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RequestWithoutTimeout);
}
