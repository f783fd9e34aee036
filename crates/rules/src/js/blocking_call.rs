//! JS002: synchronous I/O inside an async function.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::*;

pub struct BlockingCall;

pub static META: RuleMeta = RuleMeta {
    id: "JS002",
    name: "sync-io-in-async",
    category: Category::BlockingInAsync,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async function calls a synchronous API that blocks the event loop (`fs.*Sync`, `child_process.*Sync`, `Atomics.wait`), directly or through a project helper.",
    docs: r#"
Inside an `async` function: `fs.readFileSync` and the other `fs.*Sync` calls,
`execSync`/`execFileSync`/`spawnSync`, `Atomics.wait`, or a call to a sync
function of the project that ends up making one of them (the message shows
the chain).

## Why

Node runs all JavaScript on one thread. While a `*Sync` call waits for the
disk or a child process, no other request, timer or socket callback runs:
one slow file read or command stalls the whole server for its duration.

## Example

```javascript
import fs from "node:fs";

export async function handler(req, res) {
  const template = fs.readFileSync("./views/page.html", "utf8");
  res.end(template);
}
```

## Fix

Use the promise API and await it.

```javascript
import { readFile } from "node:fs/promises";

export async function handler(req, res) {
  const template = await readFile("./views/page.html", "utf8");
  res.end(template);
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockingCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        blocking::check(cx, &META, Effect::Blocking, |cx, f| cx.runs_on_loop(f), out);
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
const fs = require("fs");
const { execSync } = require("node:child_process");

async function build(dir) {
  const pkg = fs.readFileSync(dir + "/package.json"); // expect
  execSync("npm run build"); // expect
  return pkg;
}
"#,
        r#"
import * as fs from "fs";

function readConfig(path) {
  return JSON.parse(fs.readFileSync(path, "utf8"));
}

export const handler = async (event) => {
  const cfg = readConfig("/etc/app.json"); // expect
  return cfg.name;
};
"#,
    ],
    pass: &[r#"
import fs from "node:fs";
import { readFile } from "node:fs/promises";

const config = JSON.parse(fs.readFileSync("config.json", "utf8"));

export async function handler() {
  return readFile("data.txt", "utf8");
}

function startup() {
  fs.mkdirSync("/tmp/cache", { recursive: true });
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockingCall);
}
