//! PY007: password hashing and key derivation on the event loop.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::*;

pub struct CpuHeavyCall;

pub static META: RuleMeta = RuleMeta {
    id: "PY007",
    name: "cpu-heavy-call-in-async",
    category: Category::CpuInAsync,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A coroutine hashes a password or derives a key (`bcrypt`, `hashlib.pbkdf2_hmac`/`scrypt`, `argon2`, `passlib`) on the loop thread.",
    docs: r#"
Calls to `bcrypt.hashpw`/`checkpw`, `hashlib.pbkdf2_hmac`, `hashlib.scrypt`,
`argon2.PasswordHasher.hash`/`verify`, `passlib` hash/verify inside an
`async def`, not offloaded to a thread or process.

## Why

Password hashing is slow on purpose: tens to hundreds of milliseconds of
CPU per call. On the loop thread that time is stolen from every other task;
a login burst turns into a latency spike for the whole service.

## Example

```python
import bcrypt

async def login(user, password):
    return bcrypt.checkpw(password, user.hash)
```

## Fix

Run it in a worker thread (the C implementations release the GIL) or a
process pool.

```python
import asyncio
import bcrypt

async def login(user, password):
    return await asyncio.to_thread(bcrypt.checkpw, password, user.hash)
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CpuHeavyCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        blocking::check(
            cx,
            &META,
            Effect::CpuHeavy,
            |cx, f| cx.runs_on_loop(f) && !cx.func(f).is_test,
            out,
        );
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[r#"
import bcrypt
import hashlib
from argon2 import PasswordHasher

ph = PasswordHasher()

async def register(req):
    h = bcrypt.hashpw(req.password, bcrypt.gensalt())  # expect
    k = hashlib.pbkdf2_hmac("sha256", req.password, b"salt", 600_000)  # expect
    a = ph.hash(req.password)  # expect
"#],
    pass: &[r#"
import asyncio
import bcrypt
import hashlib

def sync_hash(pw):
    return bcrypt.hashpw(pw, bcrypt.gensalt())

async def register(req):
    h = await asyncio.to_thread(bcrypt.hashpw, req.password, bcrypt.gensalt())
    d = hashlib.sha256(req.body).hexdigest()
    return h, d
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CpuHeavyCall);
}
