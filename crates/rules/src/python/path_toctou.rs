//! PY019: a file-system check followed by the act it was meant to guard.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct PathToctou;

pub static META: RuleMeta = RuleMeta {
    id: "PY019",
    name: "exists-then-create",
    category: Category::CheckThenAct,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`os.path.exists(p)` (or `Path.exists()`) decides whether to create or delete `p`: the file system can change in between.",
    docs: r#"
An `if` on `os.path.exists`/`isfile`/`isdir`/`lexists`, `os.access` or
`Path.exists()`/`is_file()`/`is_dir()` of a path, whose branch then acts on
the same path: creates or opens it (`os.mkdir`, `os.makedirs` without
`exist_ok=True`, `open(p, "w")` or any mode that writes, not one that
only reads, `Path.mkdir`, `Path.touch(exist_ok=False)`,
`Path.write_text`) when it was missing, or deletes it (`os.remove`,
`os.unlink`, `shutil.rmtree` without `ignore_errors=True`, `Path.unlink`)
when it was there. A path only
this process knows (every assignment to it, in its own function for a
local, a `tempfile.mkdtemp()`, the name of a `with
tempfile.NamedTemporaryFile(delete=False) as tmp:` or of a local bound to
one, `tmp.name`, or a name
built with `os.getpid()`, a random UUID, a random number drawn there,
`random.getrandbits(128)`, `secrets.token_hex()`, or the time,
`f"{time.time()}.png"`) is not reported, nor is a marker
file created empty or with fixed content (`with open(p, "w"): pass`,
`open(p, "w").close()`, `f = open(p, "w+")` then `f.close()`,
`with open(p, "w") as f: f.write("\n")`, `open(p, "w").write(DEFAULTS)`,
`p.write_text("ok")`, `p.write_text(json.dumps([]))`, `with open(p,
"w") as f: json.dump({"items": []}, f)` (or `pickle.dump({}, f)`,
`yaml.safe_dump`, `toml.dump`), or a module
constant only ever set to a literal, also a dict or list literal the
file never changes in place, `DEFAULT_CONFIG = {"servers": {}}`):
racers write the same bytes and neither fails; nor a file opened in
append mode (`open(p, "a+b").close()`, a "touch"), which neither fails nor
truncates one that appeared in between. Nor is an act on a path the
branch bound the checked name to before it (`path = media_dir /
"upload.bin"` between the check and `path.write_bytes(data)`): nobody
checked that one. Nor is a type check that
only picks how to remove the path (`if isdir(p): rmtree(p) else:
remove(p)`, also with `elif isfile(p):` or `elif exists(p):`, which only
narrows a plain `else`, or an `or` of such tests, `if
p.is_symlink() or p.is_file(): p.unlink() elif p.is_dir(): rmtree(p)`), nor a check and act made under an inter-process file lock
(`with FileLock(..)`, `fcntl.flock(fh, fcntl.LOCK_EX)` earlier in the
function and not undone before the check, or a class of the file whose `__enter__` takes
`fcntl.flock`/`lockf` and whose `__exit__` keeps the lock file, or
between its `acquire()` and `release()`; also
`with self.lock:` where `self.lock` is a file lock, or a thread lock only
where the caller chose a single process). Nor is an act inside a `try`
that catches the error losing the race raises (`except
FileNotFoundError:`, `OSError`) or inside `with
contextlib.suppress(OSError):`: the code already copes with it.

## Why

Another process or thread can create or delete the path between the check
and the act: two workers both see "missing" and both create (one crashes
with `FileExistsError`, or one truncates the other's file), or the file
vanishes and the open raises anyway. On shared or world-writable
directories the gap is also a security hole (a symlink swapped in between).
The check does not make the act safe; the act must be atomic by itself.

## Example

```python
import os

def ensure_dir(path):
    if not os.path.exists(path):
        os.makedirs(path)
```

## Fix

Make the act atomic and handle the outcome: `exist_ok=True`, exclusive
creation with `open(p, "x")`, or try and catch `FileNotFoundError`.

```python
import os

def ensure_dir(path):
    os.makedirs(path, exist_ok=True)
```
"#,
    examples: &EXAMPLES,
};

const CHECKS: &[&str] = &[
    "os.path.exists",
    "os.path.isfile",
    "os.path.isdir",
    "os.path.lexists",
    "os.access",
    "genericpath.exists",
];

impl Rule for PathToctou {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind else {
                continue;
            };
            if matches!(cx.tree.stmt_parent(s), Parent::Detached)
                || cx.func(cx.tree.stmt_func(s)).is_test
            {
                continue;
            }
            let Some((path, negated)) = path_check(cx, *cond, false) else {
                continue;
            };
            if private_path(cx, &path, cx.tree.stmt_func(s))
                || locked_for_every_caller(cx, s, 2)
                || type_dispatch(cx, *cond, then, orelse, &path)
                || elif_of_type_dispatch(cx, s, &path)
            {
                continue;
            }
            // `if not exists(p)`: the then-branch creates; `if exists(p)`:
            // the then-branch opens/deletes, the else-branch creates.
            let (missing_branch, present_branch) = if negated {
                (then, orelse)
            } else {
                (orelse, then)
            };
            for (branch, missing) in [(missing_branch, true), (present_branch, false)] {
                for call in unsnarl_model::walk::calls_in_block(cx.model, branch) {
                    let Some(c) = cx.call(call) else { continue };
                    let Some(act) = act_on(cx, c, &path, missing) else {
                        continue;
                    };
                    if race_handled(cx, call)
                        || rebound_before(cx, branch, &path, call)
                        || writes_constant(cx, call, c)
                        || (missing && creates_exclusively(cx, c) && refuses(cx, present_branch))
                    {
                        break;
                    }
                    let mut f = cx.finding(
                        &META,
                        cx.expr(call).span,
                        format!(
                            "`{path}` was checked with `{}` and is now {act}: another process or thread can create or remove it in between, so this fails or clobbers anyway",
                            cx.source(cx.expr(*cond).span).trim_start_matches("not ").trim()
                        ),
                        fix_for(c, missing),
                    );
                    f.related.push(Related {
                        file: None,
                        span: cx.expr(*cond).span,
                        message: "checked here".into(),
                    });
                    out.push(f);
                    break;
                }
            }
        }
    }
}

/// The create fails when the path exists (`os.mkdir`, `os.makedirs` or
/// `Path.mkdir` without `exist_ok`, `Path.touch(exist_ok=False)`,
/// `open(p, "x")`): it is the atomic check itself.
fn creates_exclusively(cx: &FileCx, c: &Call) -> bool {
    match c.target.as_deref().unwrap_or("") {
        "os.mkdir" | "os.makedirs" => true,
        "builtins.open" | "io.open" => c
            .kwarg("mode")
            .or_else(|| c.positional(1))
            .is_some_and(|m| matches!(cx.model.literal(m), Some(Lit::Str(m)) if m.contains('x'))),
        _ => matches!(c.name.as_str(), "mkdir" | "touch"),
    }
}

/// The branch for a path that exists ends by refusing to go on: it raises
/// or exits (`raise FileExistsError(..)`, `sys.exit(1)`). A racer whose
/// exclusive create fails with `FileExistsError` stops the same way, so
/// the check only words the refusal.
fn refuses(cx: &FileCx, block: &Block) -> bool {
    block.last().is_some_and(|&l| match cx.stmt(l).kind {
        StmtKind::Raise(_) => true,
        StmtKind::Expr(e) => cx.call(e).is_some_and(crate::util::ends_the_process),
        _ => false,
    })
}

/// The atomic form of the act: the call's own flag where it has one, else
/// the error to catch instead of checking first.
fn fix_for(c: &Call, missing: bool) -> &'static str {
    let t = c.target.as_deref().unwrap_or("");
    match (missing, t, c.name.as_str()) {
        (true, "os.makedirs" | "os.mkdir", _) => {
            "drop the check and create atomically: `os.makedirs(p, exist_ok=True)`"
        }
        (true, "builtins.open" | "io.open" | "os.open", _) => {
            "drop the check and open with `\"x\"` (`os.O_CREAT | os.O_EXCL` for `os.open`), handling `FileExistsError`"
        }
        (true, _, "mkdir") => "drop the check and pass `exist_ok=True`",
        (true, _, "touch") => {
            "drop the check and pass `exist_ok=False`, handling `FileExistsError`"
        }
        (true, _, "write_text" | "write_bytes") => {
            "drop the check and write through `p.open(\"x\")`, handling `FileExistsError`"
        }
        (true, ..) => {
            "drop the check and make the creation atomic (create under a temporary name, then `os.replace` it into place), or handle `FileExistsError`"
        }
        // `Path.unlink` has a flag for it; `os.remove`, `os.rmdir`,
        // `shutil.rmtree` and `Path.rmdir` do not.
        (false, _, "unlink") if c.receiver.is_some() && !t.starts_with("os.") => {
            "drop the check and pass `missing_ok=True`"
        }
        (false, ..) => {
            "drop the check and handle the outcome: wrap the call in `try: ... except FileNotFoundError: pass`"
        }
    }
}

/// The act sits in a `try` that catches the error the race produces
/// (`FileExistsError`, `FileNotFoundError`, `OSError`...), or in `with
/// contextlib.suppress(OSError):`: the check is only an optimization and
/// the code already copes with losing the race.
fn race_handled(cx: &FileCx, call: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    let catches = |t: &str| {
        matches!(
            t.strip_prefix("builtins.").unwrap_or(t),
            "FileExistsError"
                | "FileNotFoundError"
                | "OSError"
                | "IOError"
                | "EnvironmentError"
                // Aliases of OSError in older code.
                | "os.error"
                | "socket.error"
                | "select.error"
                | "Exception"
                | "BaseException"
        )
    };
    crate::util::in_try_body_catching(cx, call, catches)
        || std::iter::once(s)
            .chain(cx.tree.stmt_ancestors(s))
            .any(|a| match &cx.stmt(a).kind {
                StmtKind::With { items, .. } => items.iter().any(|it| {
                    cx.call(cx.model.strip(it.ctx)).is_some_and(|c| {
                        c.target.as_deref() == Some("contextlib.suppress")
                            && c.args.iter().any(|a| {
                                cx.model
                                    .resolved(a.value)
                                    .or_else(|| cx.model.name_of(a.value))
                                    .is_some_and(catches)
                            })
                    })
                }),
                _ => false,
            })
}

/// `exists(p)` / `not exists(p)` / `p.exists()`: the path (as written) and
/// whether the test is negated.
fn path_check(cx: &FileCx, cond: ExprId, negated: bool) -> Option<(String, bool)> {
    let cond = cx.model.strip(cond);
    match &cx.expr(cond).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => path_check(cx, *operand, !negated),
        ExprKind::Call(c) => {
            if let Some(t) = c.target.as_deref()
                && CHECKS.contains(&t)
            {
                return Some((path_text(cx, c.positional(0)?)?, negated));
            }
            let is_path_method = matches!(c.name.as_str(), "exists" | "is_file" | "is_dir")
                && c.args.is_empty()
                && c.receiver.is_some_and(|r| {
                    cx.sema
                        .type_of(r)
                        .is_some_and(|t| t.starts_with("pathlib."))
                        || cx.call(r).is_some_and(|rc| {
                            rc.target
                                .as_deref()
                                .is_some_and(|t| t.starts_with("pathlib."))
                        })
                });
            if is_path_method {
                return Some((path_text(cx, c.receiver?)?, negated));
            }
            None
        }
        _ => None,
    }
}

/// A path only this process knows: every assignment to it in the file is a
/// fresh temporary (`tempfile.mkdtemp()`) or a name built with the process
/// id or a random UUID. Nobody else can create or remove it in between.
fn private_path(cx: &FileCx, path: &str, f: FuncId) -> bool {
    // `tmp.name` of a local `tmp = tempfile.NamedTemporaryFile(delete=
    // False)`: the name of a private file.
    let of_private_local = || {
        path.rsplit_once('.')
            .is_some_and(|(base, _)| !base.contains('.') && private_within(cx, base, 2, f))
    };
    private_within(cx, path, 2, f) || of_private_local()
}

/// Where the assignments to `path` are looked for: a local name (no dot)
/// of a function is that function's own (`temporary` here and in another
/// function are two variables); anything else, the whole file.
fn scope_of(path: &str, f: FuncId) -> Option<FuncId> {
    (!path.contains('.') && f.0 != 0).then_some(f)
}

/// `path` is only ever assigned values built from a name no other process
/// can know: a fresh temporary directory or file, the process id, a UUID;
/// directly, or through another name of the file that is (`self._site =
/// os.path.join(self._tmp.name, "site")` after `self._tmp =
/// tempfile.TemporaryDirectory()`), `depth` names deep.
fn private_within(cx: &FileCx, path: &str, depth: u32, f: FuncId) -> bool {
    only_ever_assigned_or_unpacked(cx, path, scope_of(path, f), |v| {
        unsnarl_model::walk::exprs_under(cx.model, v)
            .into_iter()
            .any(|x| {
                private_source(cx, x)
                    || (depth > 0
                        && matches!(
                            cx.expr(x).kind,
                            ExprKind::Name { .. } | ExprKind::Attr { .. }
                        )
                        && cx
                            .model
                            .dotted(x)
                            .is_some_and(|d| d != path && private_within(cx, &d, depth - 1, f)))
                    || (depth > 0 && returns_private(cx, x))
            })
    })
}

/// Like `FileModel::only_ever_assigned`, but an unpacking assignment
/// (`fd, temp_path = tempfile.mkstemp()`) counts too, with the whole value
/// it unpacks, and so does a `with .. as` binding, with its context; with
/// a `scope`, only the assignments of that function.
fn only_ever_assigned_or_unpacked(
    cx: &FileCx,
    path: &str,
    scope: Option<FuncId>,
    such: impl Fn(ExprId) -> bool,
) -> bool {
    let names_path = |t: ExprId| cx.model.dotted(t).as_deref() == Some(path);
    let mut any = false;
    let all = cx.model.stmts.iter().enumerate().all(|(i, st)| {
        if scope.is_some_and(|f| cx.tree.stmt_func(StmtId(i as u32)) != f) {
            return true;
        }
        // `with tempfile.NamedTemporaryFile(delete=False) as tmp:` binds
        // `tmp` to what the context gives.
        if let StmtKind::With { items, .. } = &st.kind {
            return items.iter().all(|it| {
                if !it.target.is_some_and(names_path) {
                    return true;
                }
                any = true;
                such(it.ctx)
            });
        }
        let StmtKind::Assign { targets, value, .. } = &st.kind else {
            return true;
        };
        let hit = targets.iter().any(|&t| {
            names_path(t)
                || matches!(&cx.expr(cx.model.strip(t)).kind,
                    ExprKind::Collection { elems, .. } if elems.iter().any(|&e| names_path(e)))
        });
        if !hit {
            return true;
        }
        any = true;
        value.is_some_and(&such)
    });
    any && all
}

/// A fresh temporary, the process id, a UUID, a random number drawn here
/// (`random.getrandbits(128)`, `randint(100, 99999999)`, `secrets.token_hex()`),
/// the current time to the microsecond (`time.time()`): a name nobody else
/// can know before this process makes it.
fn private_source(cx: &FileCx, x: ExprId) -> bool {
    cx.call(x).is_some_and(|c| {
        matches!(
            c.target.as_deref(),
            Some(
                "tempfile.mkdtemp"
                    | "tempfile.mkstemp"
                    | "tempfile.TemporaryDirectory"
                    | "tempfile.NamedTemporaryFile"
                    | "os.getpid"
                    | "os.urandom"
                    | "uuid.uuid4"
                    | "uuid.uuid1"
                    | "random.getrandbits"
                    | "random.randint"
                    | "random.randrange"
                    | "random.random"
                    | "secrets.token_hex"
                    | "secrets.token_urlsafe"
                    | "secrets.token_bytes"
                    | "secrets.randbits"
                    | "time.time"
                    | "time.time_ns"
            )
        )
    })
}

/// `x` calls a function of the file whose every `return` builds its value
/// from a private source (`def scratch_name(self): return os.path.join(
/// self.dir, "probe-%d" % os.getpid())`).
fn returns_private(cx: &FileCx, x: ExprId) -> bool {
    let Some(f) = cx.call(x).and_then(|c| cx.callee_in_file(c)) else {
        return false;
    };
    let mut values = crate::python::common::returned_values(cx, f);
    let mut any = false;
    let all = values.all(|v| {
        any = true;
        v.is_some_and(|v| {
            unsnarl_model::walk::exprs_under(cx.model, v)
                .into_iter()
                .any(|y| private_source(cx, y))
        })
    });
    any && all
}

fn path_text(cx: &FileCx, e: ExprId) -> Option<String> {
    let s: String = cx
        .source(cx.expr(e).span)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    (!s.is_empty()).then_some(s)
}

/// The statement runs under an inter-process file lock: in its own
/// function, or because every call of that function in this file (there
/// is one at least) is made under one, `depth` callers up.
fn locked_for_every_caller(cx: &FileCx, s: StmtId, depth: u32) -> bool {
    if under_file_lock(cx, s) {
        return true;
    }
    let f = cx.tree.stmt_func(s);
    if depth == 0 || f.0 == 0 {
        return false;
    }
    let calls: Vec<StmtId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| cx.call(e).is_some_and(|c| cx.callee_in_file(c) == Some(f)))
        .filter_map(|e| cx.tree.enclosing_stmt(e))
        .collect();
    !calls.is_empty()
        && calls
            .iter()
            .all(|&c| cx.tree.stmt_func(c) != f && locked_for_every_caller(cx, c, depth - 1))
}

/// The check and the act run while an inter-process file lock is held
/// (`with FileLock(p + ".lock"):`, or between `lock.acquire()` and
/// `lock.release()` of one): every process that touches the path takes the
/// same lock, so nobody changes it in between.
fn under_file_lock(cx: &FileCx, s: StmtId) -> bool {
    let file_lock_call = |e: ExprId| {
        cx.call(cx.model.strip(e)).is_some_and(|c| {
            c.name.ends_with("FileLock")
                || c.name == "InterProcessLock"
                || locks_a_file_on_enter(cx, &c.name)
                || c.target.as_deref().is_some_and(|t| {
                    t.starts_with("filelock.")
                        || t.starts_with("portalocker.")
                        || t.starts_with("fasteners.")
                })
        })
    };
    // `self.lock = threading.Lock() if single_process else FileLock(p)`:
    // a thread lock where the caller chose one process, a file lock
    // otherwise; either way the path is only touched under the lock.
    let thread_lock_call = |e: ExprId| {
        cx.call(cx.model.strip(e)).is_some_and(|c| {
            matches!(
                c.target.as_deref(),
                Some("threading.Lock" | "threading.RLock")
            )
        })
    };
    let file_lock = |e: ExprId| {
        file_lock_call(e)
            || cx.model.dotted(e).is_some_and(|d| {
                cx.model
                    .only_ever_assigned(&d, |v| file_lock_call(v) || thread_lock_call(v))
                    && !cx.model.only_ever_assigned(&d, thread_lock_call)
            })
    };
    let start = cx.stmt(s).span.start;
    let f = cx.tree.stmt_func(s);
    // `fcntl.flock(fh, fcntl.LOCK_EX)` earlier in the function, not undone
    // (`LOCK_UN`, `fh.close()`) before the check.
    let os_lock = |c: &Call| matches!(c.target.as_deref(), Some("fcntl.flock" | "fcntl.lockf"));
    let names = |a: Option<ExprId>, what: &str| {
        a.and_then(|a| cx.model.dotted(a))
            .is_some_and(|d| d.ends_with(what))
    };
    let flocked = cx.body_calls(f).any(|e| {
        let c = cx.call(e).unwrap();
        let Some(fh) = c.positional(0).and_then(|a| cx.model.dotted(a)) else {
            return false;
        };
        let (from, to) = (cx.expr(e).span.end, start);
        os_lock(c)
            && from <= to
            && names(c.positional(1), "LOCK_EX")
            && !cx.body_calls(f).any(|x| {
                let k = cx.call(x).unwrap();
                let at = cx.expr(x).span.start;
                at >= from
                    && at < to
                    && ((os_lock(k)
                        && k.positional(0).and_then(|a| cx.model.dotted(a)).as_deref()
                            == Some(fh.as_str())
                        && names(k.positional(1), "LOCK_UN"))
                        || (k.name == "close"
                            && k.receiver.and_then(|r| cx.model.dotted(r)).as_deref()
                                == Some(fh.as_str())))
            })
    });
    flocked
        || cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::With { items, .. } if items.iter().any(|i| file_lock(i.ctx)))
    }) || cx.body_calls(f).any(|e| {
        let c = cx.call(e).unwrap();
        c.name == "acquire"
            && cx.expr(e).span.end <= start
            && c.receiver.is_some_and(file_lock)
            && {
                let lock = c.receiver.and_then(|r| cx.model.dotted(r));
                cx.body_calls(f).any(|x| {
                    let k = cx.call(x).unwrap();
                    k.name == "release"
                        && cx.expr(x).span.start >= cx.stmt(s).span.end
                        && k.receiver.and_then(|r| cx.model.dotted(r)) == lock
                })
            }
    })
}

/// `class_name` is a class of the file whose `__enter__` takes an
/// operating-system lock on a file (`fcntl.flock(fd, LOCK_EX)`,
/// `fcntl.lockf`, `msvcrt.locking`, `portalocker.lock`) and whose
/// `__exit__` leaves the lock file in place: the project's own
/// inter-process file lock. (One that deletes its lock file on the way out
/// lets a process that opens a fresh file hold "the lock" beside one still
/// waiting on the old file.)
fn locks_a_file_on_enter(cx: &FileCx, class_name: &str) -> bool {
    let method = |name: &str| {
        cx.model.function_ids().find(|&f| {
            let func = cx.func(f);
            func.name == name
                && func
                    .class
                    .as_deref()
                    .is_some_and(|k| k.rsplit('.').next() == Some(class_name))
        })
    };
    let calls_any = |f: FuncId, targets: &[&str]| {
        cx.body_calls(f).any(|x| {
            cx.call(x)
                .is_some_and(|c| c.target.as_deref().is_some_and(|t| targets.contains(&t)))
        })
    };
    method("__enter__").is_some_and(|f| {
        calls_any(
            f,
            &[
                "fcntl.flock",
                "fcntl.lockf",
                "msvcrt.locking",
                "portalocker.lock",
            ],
        )
    }) && !method("__exit__").is_some_and(|f| {
        calls_any(
            f,
            &[
                "os.remove",
                "os.unlink",
                "pathlib.Path.unlink",
                "shutil.rmtree",
            ],
        )
    })
}

/// `if isdir(p): rmtree(p) else: remove(p)`: the check picks how to
/// remove the path, not whether; both branches remove it. (An enclosing
/// `exists` check that decides whether is judged on its own.)
fn type_dispatch(cx: &FileCx, cond: ExprId, then: &Block, orelse: &Block, path: &str) -> bool {
    let is_type_check = type_check_of(cx, cond).is_some_and(|p| p == path);
    let removes = |b: &Block| {
        unsnarl_model::walk::calls_in_block(cx.model, b)
            .into_iter()
            .any(|e| {
                cx.call(e).is_some_and(|k| {
                    act_on(cx, k, path, false).is_some()
                        // Also a removal that tolerates a missing path
                        // (`p.unlink(missing_ok=True)`).
                        || matches!(k.name.as_str(), "unlink" | "rmdir")
                            && k.receiver.and_then(|r| path_text(cx, r)).as_deref() == Some(path)
                })
            })
    };
    is_type_check && !orelse.is_empty() && removes(then) && removes(orelse)
}

/// The path a test of what kind of entry it is asks about: `isdir(p)`,
/// `not p.is_file()`, or an `or` of such tests on one path
/// (`p.is_symlink() or p.is_file()`).
fn type_check_of(cx: &FileCx, cond: ExprId) -> Option<String> {
    let mut c = cx.model.strip(cond);
    if let ExprKind::Unary { operand, .. } = &cx.expr(c).kind {
        c = cx.model.strip(*operand);
    }
    if let ExprKind::Logical {
        op: LogicalOp::Or,
        left,
        right,
    } = &cx.expr(c).kind
    {
        let l = type_check_of(cx, *left)?;
        return (type_check_of(cx, *right)? == l).then_some(l);
    }
    let k = cx.call(c)?;
    match k.name.as_str() {
        "isdir" | "isfile" | "islink" => path_text(cx, k.positional(0)?),
        "is_dir" | "is_file" | "is_symlink" if k.args.is_empty() => path_text(cx, k.receiver?),
        _ => None,
    }
}

/// The `elif isfile(p): remove(p)` arm of `if isdir(p): rmtree(p) elif
/// isfile(p): remove(p)`: the `if` is the whole `else` of a type dispatch
/// on the same path. Also `elif p.exists(): p.unlink()`: a plain `else`
/// would remove the same way with no check at all, so the test only
/// narrows what the dispatch already does.
fn elif_of_type_dispatch(cx: &FileCx, s: StmtId, path: &str) -> bool {
    let Some(outer) = cx.tree.stmt_ancestors(s).next() else {
        return false;
    };
    match &cx.stmt(outer).kind {
        StmtKind::If { cond, then, orelse } => {
            orelse.len() == 1
                && orelse[0] == s
                && type_check_of(cx, *cond).is_some_and(|p| p == path)
                && type_dispatch(cx, *cond, then, orelse, path)
        }
        _ => false,
    }
}

/// A value fixed in the code: a literal, a collection of such values
/// (`[]`, `{"a": 1}`), or such a value dumped to text (`json.dumps([])`).
fn fixed_value(cx: &FileCx, v: ExprId) -> bool {
    let v = cx.model.strip(v);
    if cx.model.literal(v).is_some() {
        return true;
    }
    match &cx.expr(v).kind {
        ExprKind::Collection {
            elems, ty: None, ..
        } => elems.iter().all(|&x| fixed_value(cx, x)),
        ExprKind::Call(c) => {
            c.target.as_deref() == Some("json.dumps")
                && c.positional(0).is_some_and(|x| fixed_value(cx, x))
        }
        _ => false,
    }
}

/// The branch binds the checked name to another path before the act
/// (`if not path.exists(): path = media_dir / "tmp"; path.write_bytes(..)`):
/// the act is on a path nobody checked.
fn rebound_before(cx: &FileCx, branch: &Block, path: &str, call: ExprId) -> bool {
    let binds_path = |st: StmtId| {
        matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, .. }
            if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(path)))
    };
    let Some(act) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    // The act's statement and those around it up to the branch: an
    // assignment before one of them in its own block runs on the way to
    // the act (one in a sibling `if` arm does not).
    let inside = unsnarl_model::walk::stmts_in_block(cx.model, branch);
    std::iter::once(act)
        .chain(cx.tree.stmt_ancestors(act))
        .take_while(|a| inside.contains(a))
        .any(|a| {
            let mut prev = crate::util::prev_stmt(cx, a);
            while let Some(p) = prev {
                if binds_path(p) {
                    return true;
                }
                prev = crate::util::prev_stmt(cx, p);
            }
            false
        })
}

/// Nothing in the file writes into `name`'s value or calls a method on it
/// (`summary[k] = v`, `rules.update(..)`): a collection bound once to a
/// literal stays that literal.
fn never_changed_in_place(cx: &FileCx, name: &str) -> bool {
    !cx.model.exprs.iter().any(|x| match &x.kind {
        ExprKind::Index { obj, .. } => cx.model.name_of(*obj) == Some(name),
        ExprKind::Call(c) => c.receiver.and_then(|r| cx.model.name_of(r)) == Some(name),
        _ => false,
    })
}

/// A marker file: created with fixed content (`with open(p, "w") as f:
/// f.write("\n")`, `p.write_text("ok")`). Two racers write the same bytes,
/// and neither can fail on the other's file, so losing the race changes
/// nothing (and `"x"` mode would add the failure).
fn writes_constant(cx: &FileCx, call: ExprId, c: &Call) -> bool {
    // A literal, or a module constant the file only ever sets to one
    // (`NS_INIT = "..."`), not a parameter that shadows it.
    let f = cx.func_of(call);
    let constant = |v: ExprId| {
        fixed_value(cx, v)
            || cx.model.name_of(v).is_some_and(|n| {
                !cx.func(f).params.iter().any(|p| p.name == n)
                    && (cx
                        .model
                        .only_ever_assigned(n, |x| cx.model.literal(x).is_some())
                        || (cx.model.only_ever_assigned(n, |x| fixed_value(cx, x))
                            && never_changed_in_place(cx, n)))
            })
    };
    if matches!(c.name.as_str(), "write_text" | "write_bytes") {
        return c.positional(0).is_some_and(constant);
    }
    if !matches!(c.target.as_deref(), Some("builtins.open" | "io.open")) {
        return false;
    }
    let mode = c.positional(1).or_else(|| c.kwarg("mode"));
    if !mode.is_some_and(|m| matches!(cx.model.literal(m), Some(Lit::Str(s)) if s.starts_with('w')))
    {
        return false;
    }
    let closes = |k: ExprId, handle: Option<&str>| {
        cx.call(k).is_some_and(|k| {
            k.name == "close"
                && k.args.is_empty()
                && match handle {
                    Some(h) => k.receiver.and_then(|r| cx.model.name_of(r)) == Some(h),
                    None => k.receiver == Some(call),
                }
        })
    };
    // `open(p, "w").close()`: an empty marker; `open(p,
    // "w").write(DEFAULT_TOML)`: fixed content.
    if let Parent::Expr(mut k) = cx.tree.expr_parent(call) {
        // The call's parent is the callee `open(..).write`, whose parent
        // is the method call.
        if matches!(cx.expr(k).kind, ExprKind::Attr { .. })
            && let Parent::Expr(m) = cx.tree.expr_parent(k)
        {
            k = m;
        }
        return closes(k, None)
            || cx.call(k).is_some_and(|k| {
                k.name == "write"
                    && k.receiver == Some(call)
                    && k.args.len() == 1
                    && k.args.iter().all(|a| constant(a.value))
            });
    }
    let Parent::Stmt(w) = cx.tree.expr_parent(call) else {
        return false;
    };
    // `f = open(p, "w+")` then `f.close()`: an empty marker too.
    if let StmtKind::Assign { targets, .. } = &cx.stmt(w).kind {
        let [t] = targets.as_slice() else {
            return false;
        };
        let Some(handle) = cx.model.name_of(*t) else {
            return false;
        };
        return crate::util::next_stmt(cx, w).is_some_and(
            |n| matches!(cx.stmt(n).kind, StmtKind::Expr(k) if closes(k, Some(handle))),
        );
    }
    let StmtKind::With { items, body, .. } = &cx.stmt(w).kind else {
        return false;
    };
    let Some(item) = items.iter().find(|i| i.ctx == call) else {
        return false;
    };
    // `with open(p, "w"): pass`: an empty marker.
    let Some(handle) = item.target.and_then(|t| cx.model.name_of(t)) else {
        return item.target.is_none()
            && body
                .iter()
                .all(|&s| matches!(cx.stmt(s).kind, StmtKind::Pass));
    };
    // `f.write("\n")`, or `json.dump({"items": []}, f)`: fixed text.
    let dumps_constant = |k: &Call| {
        matches!(
            k.target.as_deref(),
            Some("json.dump" | "pickle.dump" | "yaml.dump" | "yaml.safe_dump" | "toml.dump")
        ) && k.positional(1).and_then(|h| cx.model.name_of(h)) == Some(handle)
            && k.positional(0).is_some_and(constant)
            && k.args
                .iter()
                .skip(2)
                .all(|a| a.name.is_some() && constant(a.value))
    };
    body.iter().all(|&s| match &cx.stmt(s).kind {
        StmtKind::Expr(e) => cx.call(*e).is_some_and(|k| {
            (k.name == "write"
                && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(handle)
                && k.args.iter().all(|a| constant(a.value)))
                || dumps_constant(k)
        }),
        StmtKind::Pass => true,
        _ => false,
    })
}

/// What the call does to `path`, when it is an act the check was guarding.
fn act_on(cx: &FileCx, c: &Call, path: &str, missing: bool) -> Option<&'static str> {
    let same = |e: Option<ExprId>| e.and_then(|e| path_text(cx, e)).as_deref() == Some(path);
    let t = c.target.as_deref().unwrap_or("");
    if missing {
        match t {
            "os.mkdir" | "os.mkfifo" => return same(c.positional(0)).then_some("created"),
            "os.makedirs" => {
                let exist_ok = c
                    .kwarg("exist_ok")
                    .or_else(|| c.positional(2))
                    .is_some_and(|v| !matches!(cx.model.literal(v), Some(Lit::Bool(false))));
                return (!exist_ok && same(c.positional(0))).then_some("created");
            }
            // Append mode (`open(p, "a+b")`, a "touch") neither fails nor
            // truncates a file that appeared in between: no race to lose.
            // Only a mode that writes counts (`"w"`, `"x"`, and `"r+"`,
            // which overwrites what a racer made): reading (`open(p)`,
            // `"rb"`) changes nothing, and fails by itself on a missing
            // path.
            "builtins.open" | "io.open" => {
                let mode = c.kwarg("mode").or_else(|| c.positional(1));
                let creates = match mode.map(|m| cx.model.literal(m)) {
                    None => false,
                    Some(Some(Lit::Str(m))) => {
                        (m.contains('w') || m.contains('x') || m.contains('+')) && !m.contains('a')
                    }
                    Some(_) => true,
                };
                return (creates && same(c.positional(0))).then_some("created");
            }
            "os.open" => return same(c.positional(0)).then_some("created"),
            "os.symlink" | "os.link" | "shutil.copy" | "shutil.copy2" | "shutil.copyfile"
            | "shutil.move" | "os.rename" => {
                return same(c.positional(1)).then_some("created");
            }
            _ => {}
        }
        // `exist_ok`: absent means False for `mkdir` but True for `touch`,
        // which then only updates the time of a file that appeared.
        let exist_ok = c
            .kwarg("exist_ok")
            .map(|v| !matches!(cx.model.literal(v), Some(Lit::Bool(false))))
            .unwrap_or(c.name == "touch");
        if matches!(
            c.name.as_str(),
            "mkdir" | "touch" | "write_text" | "write_bytes"
        ) && !exist_ok
            && c.receiver
                .is_some_and(|r| path_text(cx, r).as_deref() == Some(path))
        {
            return Some("created");
        }
    } else {
        match t {
            "os.remove" | "os.unlink" | "os.rmdir" => {
                return same(c.positional(0)).then_some("removed");
            }
            // `ignore_errors=True` lives with a path that vanished.
            "shutil.rmtree" => {
                let tolerant = c
                    .kwarg("ignore_errors")
                    .or_else(|| c.positional(1))
                    .is_some_and(|v| matches!(cx.model.literal(v), Some(Lit::Bool(true))));
                return (!tolerant && same(c.positional(0))).then_some("removed");
            }
            _ => {}
        }
        if matches!(c.name.as_str(), "unlink" | "rmdir")
            && c.kwarg("missing_ok").is_none()
            && c.receiver
                .is_some_and(|r| path_text(cx, r).as_deref() == Some(path))
        {
            return Some("removed");
        }
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import os

def ensure(path):
    if not os.path.exists(path):
        os.makedirs(path)  # expect

def write_once(path, data):
    if not os.path.isfile(path):
        with open(path, "w") as f:  # expect
            f.write(data)

def cleanup(tmp):
    if os.path.exists(tmp):
        os.remove(tmp)  # expect
"#,
        r#"
import os
import shutil
from pathlib import Path

def init(root: Path):
    if not root.exists():
        root.mkdir()  # expect

def reset(lock: Path, cache):
    if lock.exists():
        lock.unlink()  # expect
    if os.path.isdir(cache):
        shutil.rmtree(cache)  # expect
"#,
        r#"
import json
import os

def save_state_once(path, state):
    if not os.path.exists(path):
        with open(path, "w") as fh:  # expect
            json.dump(state, fh)
"#,
        r#"
import os

from filelock import FileLock


def _refresh(cache_dir, name, data):
    path = os.path.join(cache_dir, name)
    if os.path.exists(path):
        os.remove(path)  # expect
    with open(path, "wb") as f:
        f.write(data)


def store(cache_dir, name, data):
    with FileLock(os.path.join(cache_dir, ".lock")):
        _refresh(cache_dir, name, data)


def store_quickly(cache_dir, name, data):
    _refresh(cache_dir, name, data)
"#,
        r#"
import os

NS_INIT = "__import__('pkg_resources').declare_namespace(__name__)\n"

def fix_namespace_packages(dest, names, NS_INIT):
    for mod in names:
        mod_init = os.path.join(dest, *mod.split("."), "__init__.py")
        if not os.path.exists(mod_init):
            with open(mod_init, "w") as fp:  # expect
                fp.write(NS_INIT)
"#,
        r#"
import os
import shutil

def replace_item(staging, target_dir, item):
    dest = os.path.join(target_dir, item)
    if os.path.isdir(dest):
        shutil.rmtree(dest)  # expect
    shutil.move(os.path.join(staging, item), dest)
"#,
        r#"
import os
import threading

from filelock import FileLock


class FileQueue:
    def __init__(self, path, one_process=False):
        self.queue_path = os.path.join(path, "queue")
        if one_process:
            self.lock = threading.Lock()
        else:
            self.lock = threading.RLock()

    def enqueue(self, name, data):
        with self.lock:
            if not os.path.exists(self.queue_path):
                os.makedirs(self.queue_path)  # expect
            with open(os.path.join(self.queue_path, name), "wb") as f:
                f.write(data)
"#,
        r#"
import os


def drop_backup(path):
    folder, backup = os.path.split(path + ".bak")
    if os.path.exists(backup):
        os.unlink(backup)  # expect
"#,
        r#"
import os

def run(task_id, workdir):
    out = os.path.join(workdir, f"{task_id}.out")
    if os.path.exists(out):
        os.remove(out)  # expect
    spawn_child(["--out", out])
    return out
"#,
        r#"
import os

class _Journal:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.fd = os.open(self.path + ".journal", os.O_CREAT | os.O_RDWR)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)

def purge(db, snap):
    # A journal is no lock: another purge can remove the snapshot first.
    with _Journal(db):
        if os.path.exists(snap):
            os.remove(snap)  # expect
"#,
        r#"
import fcntl
import os

class _LockFile:
    def __init__(self, path):
        self.lock_path = path + ".lock"

    def __enter__(self):
        self.fd = os.open(self.lock_path, os.O_CREAT | os.O_RDWR)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        # A waiter still holds the old file; a newcomer creates a fresh one.
        os.remove(self.lock_path)

def purge(db, snap):
    with _LockFile(db):
        if os.path.exists(snap):
            os.remove(snap)  # expect
"#,
        r#"
import os
import sys

def init_config(path, text):
    if os.path.exists(path):
        print("config already exists")
        sys.exit(1)
    else:
        # Not exclusive: a racer's file is truncated, not refused.
        with open(path, "w") as f:  # expect
            f.write(text)
"#,
        r#"
import json
import os


def ensure_state_file(state_path, state):
    if not os.path.exists(state_path):
        open(state_path, "w").write(json.dumps(state))  # expect
    return state_path
"#,
        r#"
import json
import os


class Store:
    def __init__(self, root, seed):
        self.index = os.path.join(root, "index.json")
        if not os.path.exists(self.index):
            with open(self.index, "w") as f:  # expect
                json.dump({"workflows": seed}, f)
"#,
        r#"
import json
import os


def summarize(results, save_path):
    summary = {}
    for name, value in results:
        summary[name] = value
    if not os.path.exists(save_path):
        with open(save_path, "w") as f:  # expect
            json.dump(summary, f)
"#,
        r#"
import os


def install(home):
    settings = os.path.join(home, "primary", "settings")
    if not os.path.exists(settings):
        fallback = os.path.join(home, "fallback", "settings")
        if os.path.exists(fallback):
            settings = fallback
        else:
            os.makedirs(settings)  # expect
    return os.path.join(settings, "config.json")
"#,
    ],
    pass: &[
        r#"
import os

DEFAULT_TOML = """
[style]
margin = 2
"""


def ensure_config_file(config_dir):
    os.makedirs(config_dir, exist_ok=True)
    config_path = os.path.join(config_dir, "config.toml")
    if not os.path.exists(config_path):
        open(config_path, "w").write(DEFAULT_TOML)
    marker = os.path.join(config_dir, ".initialized")
    if not os.path.exists(marker):
        open(marker, "w").close()
    return config_path
"#,
        r#"
import os
import tempfile


def convert(src):
    tmp = tempfile.NamedTemporaryFile(suffix=".ogg", delete=False)
    tmp.close()
    try:
        transcode(src, tmp.name)
        return tmp.name
    except Exception:
        # A random name only this process knows.
        if os.path.exists(tmp.name):
            os.unlink(tmp.name)
        raise
"#,
        r#"
import os
import shutil


def replace_with(src, dest):
    # The checks pick how to clear the way, not whether.
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    elif os.path.isfile(dest):
        os.remove(dest)
    shutil.copy(src, dest)
"#,
        r#"
import os

def load_input(src):
    # The test picks how to read the input; reading creates nothing.
    if os.path.isdir(src):
        return [open(os.path.join(src, n), "rb").read() for n in sorted(os.listdir(src))]
    else:
        with open(src, "rb") as f:
            return [f.read()]
"#,
        r#"
import os
import sys

def setup_config(cdir):
    if not os.path.exists(cdir):
        # Fails by itself if the directory appeared: the same refusal.
        os.makedirs(cdir)
    else:
        print("config dir already exists, check it by hand")
        sys.exit(1)
"#,
        r#"
from pathlib import Path

def new_project(root: Path):
    if root.exists():
        raise FileExistsError(f"{root} already exists")
    else:
        root.mkdir()
"#,
        r#"
import fcntl
import os

class _LockFile:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.fd = os.open(self.path + ".lock", os.O_CREAT | os.O_RDWR)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)

def purge(db, snap):
    with _LockFile(db):
        if os.path.exists(snap):
            os.remove(snap)
"#,
        r#"
import os
import random

def upload_via_temp(s3, bucket, key, ext, upload):
    tmp = "{:032x}.{}".format(random.getrandbits(128), ext)
    s3.download_file(bucket, key, tmp)
    result = upload(tmp)
    if os.path.isfile(tmp):
        os.remove(tmp)
    return result
"#,
        r#"
import os
from random import randint

def run(task_id, workdir):
    out = os.path.join(workdir, f"{task_id}_{randint(100, 99999999)}.out")
    if os.path.exists(out):
        os.remove(out)
    spawn_child(["--out", out])
    return out
"#,
        r#"
import os
import tempfile


def archive(rows, encrypt):
    with tempfile.NamedTemporaryFile(delete=False, suffix=".enc") as tmp:
        tmp_path = tmp.name
    try:
        encrypt(rows, tmp_path)
    finally:
        # A fresh random name only this function knows.
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)
"#,
        r#"
from pathlib import Path

# An empty lock file: racers both leave the same empty file behind.
class ComboLock:
    def __init__(self, path):
        self.path = Path(path)
        if not self.path.exists():
            f = open(self.path, "w+")
            f.close()
            self.path.chmod(0o777)
"#,
        r#"
import shutil
import tempfile
from pathlib import Path

def write_atomic(destination):
    temporary = destination.with_name(f".{destination.name}.partial")
    temporary.write_text("x")
    temporary.replace(destination)

def write_partitioned(destination):
    # A directory this call just made under a random name: nobody else
    # knows it (the other function's `temporary` is another variable).
    temporary = Path(tempfile.mkdtemp(prefix=".out.", dir=destination.parent))
    try:
        (temporary / "part-0").write_text("rows")
        temporary.replace(destination)
    finally:
        if temporary.exists():
            shutil.rmtree(temporary)
"#,
        r#"
import os
import shutil

MARKER = "/tmp/service-ready"

def mark_ready():
    # An empty marker: a racer that created it first leaves the same file.
    if not os.path.exists(MARKER):
        with open(MARKER, "w"):
            pass

def drop_cache(path):
    # `ignore_errors=True`: a directory that vanished in between is fine.
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
"#,
        r#"
import os


# A "touch" in append mode: a file that appears in between is left as it is.
def ensure_log(path):
    if not os.path.exists(path):
        with open(path, mode="a") as f:
            pass
    return path
"#,
        r#"
import os
import tempfile


def write_atomic(path, data):
    fd, temp_path = tempfile.mkstemp(prefix=".sync-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp_path, path)
    finally:
        if os.path.exists(temp_path):
            os.unlink(temp_path)
"#,
        r#"
import os
import threading

from filelock import FileLock


class FileQueue:
    def __init__(self, path, one_process=False):
        self.queue_path = os.path.join(path, "queue")
        if one_process:
            self.lock = threading.Lock()
        else:
            self.lock = FileLock(os.path.join(path, ".lock"))

    def enqueue(self, name, data):
        with self.lock:
            if not os.path.exists(self.queue_path):
                os.makedirs(self.queue_path)
            with open(os.path.join(self.queue_path, name), "wb") as f:
                f.write(data)
"#,
        r#"
import os
import shutil

def replace_item(staging, target_dir, item):
    dest = os.path.join(target_dir, item)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    else:
        os.remove(dest)
    shutil.move(os.path.join(staging, item), dest)
"#,
        r#"
import os

NS_INIT = "__import__('pkg_resources').declare_namespace(__name__)\n"

def fix_namespace_packages(dest, names):
    for mod in names:
        mod_init = os.path.join(dest, *mod.split("."), "__init__.py")
        if not os.path.exists(mod_init):
            with open(mod_init, "w") as fp:
                fp.write(NS_INIT)
"#,
        r#"
import os
import tempfile


class Sandbox:
    def __init__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="sandbox-")
        self._bin = os.path.join(self._tmp.name, "bin")
        if not os.path.exists(self._bin):
            os.mkdir(self._bin)
"#,
        r#"
import os

from filelock import FileLock


def _refresh(cache_dir, name, data):
    path = os.path.join(cache_dir, name)
    if os.path.exists(path):
        os.remove(path)
    with open(path, "wb") as f:
        f.write(data)


def store(cache_dir, name, data):
    with FileLock(os.path.join(cache_dir, ".lock")):
        _refresh(cache_dir, name, data)
"#,
        r#"
import os
import shutil
from filelock import FileLock

def reset_cache(target):
    with FileLock(target + ".lock"):
        if os.path.isdir(target):
            shutil.rmtree(target)
        os.makedirs(target)

def rebuild(target, source):
    lock = FileLock(target + ".lock", timeout=60)
    lock.acquire()
    try:
        if os.path.isdir(target):
            shutil.rmtree(target)
        shutil.copytree(source, target)
    finally:
        lock.release()
"#,
        r#"
import os
from pathlib import Path

def mark_ok(build_dir):
    marker = os.path.join(build_dir, "cache-ok")
    if not os.path.exists(marker):
        with open(marker, "w") as fh:
            fh.write("\n")

def mark_done(out: Path):
    done = out / "DONE"
    if not done.exists():
        done.write_text("ok")
"#,
        r#"
import os
import shutil
import tempfile
from pathlib import Path

def ensure(path):
    os.makedirs(path, exist_ok=True)

# `touch` leaves a file that appeared meanwhile as it is (exist_ok=True).
def save_settings(path: Path, text: str):
    if not path.exists():
        path.touch(mode=0o600)
    path.write_bytes(text.encode())

# Paths only this process knows: its own temporary directory, a pid-named file.
class Bundler:
    def build(self):
        self.workdir = tempfile.mkdtemp(prefix="bundle-")

    def cleanup(self):
        if os.path.isdir(self.workdir):
            shutil.rmtree(self.workdir)

def probe(dirname):
    marker = os.path.join(dirname, "probe-%d.tmp" % os.getpid())
    with open(marker, "w") as f:
        f.write("x")
    if os.path.exists(marker):
        os.unlink(marker)

def write_once(path, data):
    try:
        with open(path, "x") as f:
            f.write(data)
    except FileExistsError:
        pass

def other_path(a, b):
    if not os.path.exists(a):
        os.makedirs(b)

def delete(name):
    try:
        if os.path.isdir(name):
            os.rmdir(name)
        else:
            os.remove(name)
    except FileNotFoundError:
        pass

def ensure_ok(path):
    if not os.path.exists(path):
        os.makedirs(path, exist_ok=True)
"#,
        r#"
import os

class Installer:
    def __init__(self, install_dir):
        self.install_dir = install_dir

    def scratch_name(self):
        return os.path.join(self.install_dir, "probe-%d" % os.getpid())

    def probe(self, run):
        marker = self.scratch_name() + ".ok"
        try:
            run(marker)
            return os.path.exists(marker)
        finally:
            if os.path.exists(marker):
                os.unlink(marker)

def extract(data, real_path, tmp_path):
    try:
        with open(tmp_path, "wb") as f:
            f.write(data)
        try:
            os.rename(tmp_path, real_path)
        except os.error:
            if os.path.isfile(real_path):
                os.unlink(real_path)
                os.rename(tmp_path, real_path)
    except os.error as e:
        raise RuntimeError(f"cannot extract to {real_path}: {e}")
"#,
        r#"
import json
from pathlib import Path

from .config import settings

_GROUPS: Path = settings.data_dir / "groups.json"


def load_groups():
    if not _GROUPS.exists():
        _GROUPS.write_text(json.dumps([]))
    return set(json.loads(_GROUPS.read_text()))
"#,
        r#"
import json
import os


class Store:
    def __init__(self, root):
        self.index = os.path.join(root, "index.json")
        if not os.path.exists(self.index):
            with open(self.index, "w") as f:
                json.dump({"workflows": []}, f, indent=2)
"#,
        r#"
# A store file created with fixed content: racers write the same bytes.
import os
import pickle


def prepare(path):
    if not os.path.exists(path):
        with open(path, "wb") as f:
            pickle.dump({}, f)
"#,
        r#"
import os
import time

def screenshot(grab, send):
    file_name = f"{str(time.time()).replace('.', '_')}.png"
    try:
        with open(file_name, "wb") as f:
            grab().save(f, "PNG")
        return send(file_name)
    finally:
        if os.path.isfile(file_name):
            os.remove(file_name)
"#,
        r#"
from contextlib import suppress
from pathlib import Path

def cleanup_item(item: Path):
    with suppress(PermissionError, OSError):
        if item.exists():
            item.unlink()
"#,
        r#"
import fcntl
import os


def fetch_server(module_path, server_path, flag):
    version_file = open(os.path.join(module_path, "version.py"), "r")
    fcntl.flock(version_file, fcntl.LOCK_EX)
    if not os.path.exists(server_path):
        os.makedirs(server_path)
        open(flag, "a").close()
    version_file.close()
"#,
        r#"
import shutil
from pathlib import Path


def remove_exact(path: Path) -> None:
    # The tests pick how to remove the path, not whether.
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path)
"#,
        r#"
import json
import os

DEFAULT_SERVERS = {"servers": {}}


def load_servers(data_dir):
    config = os.path.join(data_dir, "servers.json")
    if not os.path.exists(config):
        with open(config, "w", encoding="utf-8") as f:
            json.dump(DEFAULT_SERVERS, f, ensure_ascii=False, indent=4)
        return {}
    with open(config, encoding="utf-8") as f:
        return json.load(f)
"#,
        r#"
from pathlib import Path


async def upload(self, path_or_url):
    path = Path(path_or_url)
    if not path.exists():
        data = await self.fetch(path_or_url)
        path = self.media_dir / f"{self.request_id}.bin"
        path.write_bytes(data)
    return await self.send_file(path)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PathToctou);

    /// The fix names the flag the call itself has, and only where it has
    /// one: `os.remove` and `shutil.rmtree` take no `missing_ok`.
    #[test]
    fn fixes_name_only_flags_the_call_has() {
        let fixes = |ex| crate::testing::fixes(&PathToctou, Language::Python, ex);
        let first = fixes(EXAMPLES.fail[0]);
        assert!(
            first[0].contains("os.makedirs(p, exist_ok=True)"),
            "{first:?}"
        );
        assert!(first[1].contains("\"x\""), "{first:?}");
        assert!(first[2].contains("except FileNotFoundError"), "{first:?}");
        let second = fixes(EXAMPLES.fail[1]);
        assert!(second[0].contains("exist_ok=True"), "{second:?}");
        assert!(second[1].contains("missing_ok=True"), "{second:?}");
        assert!(
            second[2].contains("except FileNotFoundError") && !second[2].contains("missing_ok"),
            "{second:?}"
        );
        assert!(!first[2].contains("missing_ok"), "{first:?}");
    }
}
