//! JS011: CPU-heavy synchronous calls (password hashing, key generation)
//! on the event loop.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::*;

pub struct CpuHeavyCall;

pub static META: RuleMeta = RuleMeta {
    id: "JS011",
    name: "cpu-heavy-on-loop",
    category: Category::CpuInAsync,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async function or request handler hashes a password or generates keys synchronously (`crypto.pbkdf2Sync`, `scryptSync`, `generateKeyPairSync`, `bcrypt.hashSync`/`compareSync`).",
    docs: r#"
`crypto.pbkdf2Sync`, `crypto.scryptSync`, `crypto.generateKeyPairSync`,
`bcrypt.hashSync`, `bcrypt.compareSync` and similar calls inside an async
function or a request/message handler.

## Why

Password hashing is slow on purpose: tens to hundreds of milliseconds of
CPU per call. Done synchronously on the event loop, each login or sign-up
freezes the whole process for that long; a few concurrent logins queue every
other request behind them, and an attacker can stall the server with cheap
requests.

## Example

```javascript
const bcrypt = require("bcrypt");

app.post("/login", async (req, res) => {
  const user = await users.find(req.body.email);
  const ok = bcrypt.compareSync(req.body.password, user.hash);
  res.json({ ok });
});
```

## Fix

Use the asynchronous variant, which runs on the libuv thread pool.

```javascript
const bcrypt = require("bcrypt");

app.post("/login", async (req, res) => {
  const user = await users.find(req.body.email);
  const ok = await bcrypt.compare(req.body.password, user.hash);
  res.json({ ok });
});
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CpuHeavyCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let h = common::handlers(cx);
        blocking::check_where(
            cx,
            &META,
            Effect::CpuHeavy,
            &|f| common::loop_place(cx, h, f),
            out,
        );
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
import crypto from "node:crypto";
import bcrypt from "bcryptjs";
import http from "node:http";

export async function register(email, password) {
  const salt = crypto.randomBytes(16);
  const key = crypto.pbkdf2Sync(password, salt, 310000, 32, "sha256"); // expect
  return save(email, salt, key);
}

http.createServer((req, res) => {
  const ok = bcrypt.compareSync(req.headers["x-pass"], HASH); // expect
  res.end(String(ok));
});
"#],
    pass: &[r#"
import crypto from "node:crypto";
import { promisify } from "node:util";

const pbkdf2 = promisify(crypto.pbkdf2);
const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519");

export async function register(email, password) {
  const salt = crypto.randomBytes(16);
  const key = await pbkdf2(password, salt, 310000, 32, "sha256");
  return save(email, salt, key);
}

export function hashForMigration(password) {
  return crypto.scryptSync(password, "salt", 64);
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CpuHeavyCall);
}
