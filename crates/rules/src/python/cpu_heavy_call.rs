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
`async def`, not offloaded to a thread or process. A `pbkdf2_hmac` with a
literal count under 10,000 rounds (`pbkdf2_hmac("sha256", pw, salt,
1000)`, a key a device protocol derives) costs well under a millisecond
and is not reported, nor are passlib's MD5-crypt schemes (`md5_crypt`,
`apr_md5_crypt`: a fixed 1,000 MD5 rounds, about a millisecond).

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
        let mut found = Vec::new();
        blocking::check(
            cx,
            &META,
            Effect::CpuHeavy,
            |cx, f| cx.runs_on_loop(f) && !cx.func(f).is_test,
            &mut found,
        );
        if found.is_empty() {
            return;
        }
        let cheap: Vec<Span> = cx
            .calls_to(&["hashlib.pbkdf2_hmac"])
            .into_iter()
            .filter(|(_, c)| few_iterations(cx, c))
            .map(|(id, _)| cx.expr(id).span)
            .collect();
        out.extend(found.into_iter().filter(|f| !cheap.contains(&f.span)));
    }
}

/// Key derivation this cheap takes well under a millisecond: fewer than
/// 10,000 rounds given as a literal (`pbkdf2_hmac("sha1", pw, salt,
/// 1000)`, the count a device's protocol fixes). Password storage uses
/// hundreds of thousands.
fn few_iterations(cx: &FileCx, c: &Call) -> bool {
    c.kwarg("iterations")
        .or_else(|| c.positional(3))
        .and_then(|n| cx.model.literal(n))
        .is_some_and(|n| matches!(n, Lit::Int(n) if *n < 10_000))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import bcrypt
import hashlib
from argon2 import PasswordHasher

ph = PasswordHasher()

async def register(req):
    h = bcrypt.hashpw(req.password, bcrypt.gensalt())  # expect
    k = hashlib.pbkdf2_hmac("sha256", req.password, b"salt", 600_000)  # expect
    r = hashlib.pbkdf2_hmac("sha256", req.password, b"salt", iterations=req.rounds)  # expect
    a = ph.hash(req.password)  # expect
"#,
        r#"
from passlib.hash import sha512_crypt


async def login(req, stored):
    return sha512_crypt.verify(req.password, stored)  # expect
"#,
    ],
    pass: &[
        r#"
import asyncio
import bcrypt
import hashlib

def sync_hash(pw):
    return bcrypt.hashpw(pw, bcrypt.gensalt())

async def register(req):
    h = await asyncio.to_thread(bcrypt.hashpw, req.password, bcrypt.gensalt())
    d = hashlib.sha256(req.body).hexdigest()
    return h, d

async def device_login(client, password, salt):
    # The device's protocol fixes 1,000 rounds: a fraction of a millisecond.
    key = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 1000)
    await client.send(key)
"#,
        r#"
from passlib.hash import apr_md5_crypt


async def basic_auth(request, user, password):
    # An htpasswd entry: 1,000 MD5 rounds, about a millisecond.
    if apr_md5_crypt.verify(password, user.password):
        request.state.auth_user = user
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CpuHeavyCall);
}
