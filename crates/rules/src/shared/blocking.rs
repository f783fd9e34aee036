//! Blocking calls on an event loop / async runtime thread, directly or
//! through project helpers (the project index's blocking chains).

use crate::context::FileCx;
use crate::rule::RuleMeta;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

/// Which functions run on the loop, beyond `async` ones (JS handlers).
pub type LoopContext = fn(&FileCx, FuncId) -> bool;

/// Reports calls with `effect` (`Blocking` or `CpuHeavy`) made in functions
/// for which `on_loop` holds; for `Blocking`, also calls of project helpers
/// that block further down.
pub fn check(
    cx: &FileCx,
    meta: &'static RuleMeta,
    effect: Effect,
    on_loop: LoopContext,
    out: &mut Vec<Finding>,
) {
    check_where(
        cx,
        meta,
        effect,
        &|f| on_loop(cx, f).then(|| format!("in {}", cx.async_func_display(f))),
        out,
    );
}

/// [`check`] with a predicate that can capture state: `where_` says, for a
/// function that runs on the loop, where it is in messages ("in async
/// `handler`", "in a request handler"); `None` for functions that do not
/// run on the loop.
pub fn check_where(
    cx: &FileCx,
    meta: &'static RuleMeta,
    effect: Effect,
    where_: &dyn Fn(FuncId) -> Option<String>,
    out: &mut Vec<Finding>,
) {
    for fid in cx.model.function_ids() {
        let Some(place) = where_(fid) else {
            continue;
        };
        for call in cx.body_calls(fid) {
            if let Some(f) = finding_for(cx, meta, effect, &place, call) {
                out.push(f);
            }
        }
    }
}

fn finding_for(
    cx: &FileCx,
    meta: &'static RuleMeta,
    effect: Effect,
    where_: &str,
    call: ExprId,
) -> Option<Finding> {
    let c = cx.call(call)?;
    if cx.is_awaited(call) || inside_offload(cx, call) {
        return None;
    }
    let span = cx.expr(call).span;
    let consequence = match cx.lang {
        Language::Rust => {
            "the runtime worker thread is held, so every task scheduled on it (and its timers) waits until the call returns"
        }
        _ => {
            "the event loop thread stops, so every other task, timer and socket waits until it returns"
        }
    };
    if let Some(entry) = cx.effect(c, effect) {
        if is_zero_sleep(cx, c)
            || waits_for_nothing(cx.model, call, c)
            || handle_only_offloaded(cx, call, c)
        {
            return None;
        }
        return Some(cx.finding(
            meta,
            span,
            format!(
                "`{}` {} {where_}: {consequence}",
                cx.callee_display(c),
                entry.what
            ),
            entry.fix.clone(),
        ));
    }
    if effect != Effect::Blocking {
        return None;
    }
    // A same-project sync helper that blocks, directly or further down.
    let target = c.target.as_deref()?;
    // (An async function has no chain: calling it does not block.)
    let chain = cx.index.blocking_chain_of(cx.lang, target, cx.file)?;
    if kept_generator(cx, call, target) {
        return None;
    }
    let mut path = vec![short(target)];
    path.extend(chain.steps.iter().map(|s| short(&s.callee)));
    path.push(short(&chain.site.callee));
    let path: Vec<String> = path.iter().map(|p| format!("`{p}`")).collect();
    // Offloading the call of the helper, here (the blocking call's own fix
    // may offer to offload it there, inside the helper).
    let offload = match cx.lang {
        Language::Python => "call the helper with `await asyncio.to_thread(...)`",
        Language::Rust => "run the call of the helper in `tokio::task::spawn_blocking`",
        _ => "move the blocking work off the event loop (a worker thread)",
    };
    let site_fix = &chain.site.fix;
    // A fix with parentheses of its own is not nested in another pair.
    let fix = if site_fix.contains('(') {
        format!("make the helper non-blocking: {site_fix}; or {offload}")
    } else {
        format!("make the helper non-blocking ({site_fix}), or {offload}")
    };
    let mut f = cx.finding(
        meta,
        span,
        format!(
            "`{}` blocks {where_}: {} {}; {consequence}",
            short(target),
            path.join(" → "),
            chain.site.what
        ),
        fix,
    );
    for step in &chain.steps {
        f.related.push(Related {
            file: Some(step.from.file as usize),
            span: step.span,
            message: format!("calls `{}`", short(&step.callee)),
        });
    }
    f.related.push(Related {
        file: Some(chain.at.file as usize),
        span: chain.site.span,
        message: format!("`{}` {}", short(&chain.site.callee), chain.site.what),
    });
    Some(f)
}

/// A call of a sync generator function of the project whose generator is
/// kept or handed back (`self._rows = read_rows(path)`, `return
/// read_rows(path)`): calling it runs none of its body, so nothing blocks
/// here; the body runs where the generator is iterated.
fn kept_generator(cx: &FileCx, call: ExprId, target: &str) -> bool {
    let generator = cx.index.resolve(cx.lang, target, cx.file).is_some_and(|i| {
        let s = cx.index.summary(i);
        s.is_generator && !s.is_async
    });
    generator
        && match cx.tree.expr_parent(call) {
            Parent::Stmt(s) => match &cx.stmt(s).kind {
                StmtKind::Assign { value: Some(v), .. } => *v == call,
                StmtKind::Return(Some(v)) => *v == call,
                _ => false,
            },
            _ => false,
        }
}

/// The knowledge's words for a blocking call say it is file I/O.
pub(crate) fn is_file_io(what: &str) -> bool {
    what.contains("reads or writes files")
}

/// `e` is a field of `owner` (`s.conn`, `s.cfg.dir` for `s`).
pub(crate) fn is_field_of(m: &FileModel, e: ExprId, owner: &str) -> bool {
    m.dotted(e)
        .is_some_and(|d| d.strip_prefix(owner).is_some_and(|r| r.starts_with('.')))
}

/// A blocking API called where it has nothing to wait for: a file call on
/// a literal path under `/proc/` or `/sys/` (`fs.readFileSync(
/// "/proc/meminfo")`, `open("/sys/fs/cgroup/cpu.max")`, or one built from
/// such a literal, `open("/proc/%d/statm" % pid)`, or a method of
/// `Path("/proc/cpuinfo")`), where the kernel
/// answers from memory; the null device (`open(os.devnull)`); an
/// in-memory SQLite database (`sqlite3.connect(":memory:")`); `urlopen`
/// of a `data:` URI, which it decodes in memory (a name the file rejects
/// unless it starts with `data:`); a file opened for appending only to
/// write one record ([`appends_one_record`]); a package's own data file
/// ([`reads_package_data`]); a TCP connect to this machine
/// ([`connects_to_loopback`]); a datagram socket's connect or send
/// ([`datagram_at_once`]); the `accept` of a hand-made socket pair
/// ([`accepts_own_connection`]). Shared with the project index, so
/// helpers making such calls do not block either.
pub(crate) fn waits_for_nothing(m: &FileModel, id: ExprId, c: &Call) -> bool {
    if appends_one_record(m, id, c)
        || reads_package_data(m, c)
        || connects_to_loopback(m, id, c)
        || datagram_at_once(m, id, c)
        || accepts_own_connection(m, id, c)
    {
        return true;
    }
    // `Path("/proc/cpuinfo").read_text()`: the path is the receiver's.
    let kernel_file = |a: ExprId| {
        literal_head(m, a, 0).is_some_and(|s| s.starts_with("/proc/") || s.starts_with("/sys/"))
    };
    let on_kernel_path = c.receiver.is_some_and(|r| {
        m.call(m.strip(r)).is_some_and(|p| {
            matches!(
                p.target.as_deref(),
                Some("pathlib.Path" | "pathlib.PurePath")
            ) && p.positional(0).is_some_and(kernel_file)
        })
    });
    on_kernel_path
        || c.positional(0).is_some_and(|a| {
        matches!(m.literal(a), Some(Lit::Str(s))
            if s.starts_with("/proc/") || s.starts_with("/sys/") || s == "/dev/null" || s == ":memory:"
                || (s.starts_with("data:") && is_urlopen(c)))
            || literal_head(m, a, 0)
                .is_some_and(|s| s.starts_with("/proc/") || s.starts_with("/sys/"))
            || m.resolved(a) == Some("os.devnull")
            || (is_urlopen(c) && m.name_of(a).is_some_and(|n| only_data_uris(m, n)))
    })
}

/// Python: a TCP connect to this machine (`socket.create_connection((
/// "localhost", port))`, `sock.connect_ex(("127.0.0.1", PORT))`, a
/// module-level name bound once to such a host, or a parameter defaulting
/// to one): the kernel accepts or refuses it at once. What is read from the socket afterwards is another
/// call.
fn connects_to_loopback(m: &FileModel, id: ExprId, c: &Call) -> bool {
    let loopback = |h: &str| {
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    // `def port_open(port, host="127.0.0.1")`: a helper made to probe this
    // machine.
    let default_loopback = |h: ExprId| {
        m.name_of(h).is_some_and(|n| {
            enclosing_function(m, id).is_some_and(|f| {
                f.params.iter().any(|p| {
                    &*p.name == n
                        && p.default.is_some_and(
                            |d| matches!(m.literal(d), Some(Lit::Str(s)) if loopback(s)),
                        )
                })
            })
        })
    };
    matches!(
        c.target.as_deref(),
        Some("socket.create_connection" | "socket.socket.connect" | "socket.socket.connect_ex")
    ) && c
        .positional(0)
        .and_then(|a| address_host(m, a))
        .is_some_and(|h| module_literal(m, h).is_some_and(loopback) || default_loopback(h))
}

/// The host of a socket address written as a tuple (`(host, port)`).
fn address_host(m: &FileModel, addr: ExprId) -> Option<ExprId> {
    match &m.expr(m.strip(addr)).kind {
        ExprKind::Collection { elems, .. } => elems.first().copied(),
        _ => None,
    }
}

/// Python: a socket address whose host is an IP address, written out or
/// a module constant bound to one, also through a name only ever bound to
/// such an address (`group = ("239.255.255.250", 1900)`): nothing to look
/// up.
fn names_ip_address(m: &FileModel, addr: ExprId) -> bool {
    let written = |a: ExprId| {
        address_host(m, a).is_some_and(|h| {
            module_literal(m, h).is_some_and(|h| h.parse::<std::net::IpAddr>().is_ok())
        })
    };
    written(addr)
        || m.name_of(m.strip(addr))
            .is_some_and(|n| m.only_ever_assigned(n, written))
}

/// Python: a connect or send on a datagram socket the same function
/// builds (`socket.socket(socket.AF_INET, socket.SOCK_DGRAM)`), which
/// waits for no peer: connecting a UDP socket to an IP address only picks
/// a route (the "which address would I use" idiom, then `getsockname()`),
/// a UDP send hands one packet to the kernel, and a Unix datagram (a
/// systemd `sd_notify`) goes straight into the receiver's queue. A host
/// name is still resolved first, and that blocks; receives wait.
fn datagram_at_once(m: &FileModel, id: ExprId, c: &Call) -> bool {
    let connect = match c.target.as_deref() {
        Some("socket.socket.connect" | "socket.socket.connect_ex") => true,
        Some("socket.socket.send" | "socket.socket.sendto") => false,
        _ => return false,
    };
    let Some(sock) = c.receiver.and_then(|r| m.name_of(m.strip(r))) else {
        return false;
    };
    let Some(f) = enclosing_function(m, id) else {
        return false;
    };
    let Some(kind) = socket_built(m, f, sock) else {
        return false;
    };
    let unix = kind.iter().any(|k| k == "AF_UNIX");
    if !kind.iter().any(|k| k == "SOCK_DGRAM") {
        return false;
    }
    let ip = |a: Option<ExprId>| a.is_some_and(|a| names_ip_address(m, a));
    unix || match (connect, c.name.as_str()) {
        (true, _) => ip(c.positional(0)),
        (false, "sendto") => ip(c.positional(1)),
        _ => true,
    }
}

/// The innermost function (or the module) the expression `id` is in.
fn enclosing_function(m: &FileModel, id: ExprId) -> Option<&Function> {
    let at = m.expr(id).span;
    m.functions
        .iter()
        .filter(|f| f.span.contains(at))
        .min_by_key(|f| f.span.end - f.span.start)
}

/// Python: the `accept` of a hand-made socket pair (`listener.bind((
/// "127.0.0.1", 0))`, then a socket of the same function connects to it
/// before the `accept`): the connection is already waiting, so it returns
/// at once.
fn accepts_own_connection(m: &FileModel, id: ExprId, c: &Call) -> bool {
    if c.target.as_deref() != Some("socket.socket.accept") {
        return false;
    }
    let Some(f) = enclosing_function(m, id) else {
        return false;
    };
    let at = m.expr(id).span;
    unsnarl_model::walk::calls_in_block(m, &f.body)
        .into_iter()
        .any(|e| {
            m.expr(e).span.end <= at.start
                && m.call(e).is_some_and(|k| {
                    matches!(k.name.as_str(), "connect" | "connect_ex")
                        && connects_to_loopback(m, e, k)
                })
        })
}

/// The names of the constants the function `f` builds the socket `sock`
/// with (`sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)`, or
/// `with socket.socket(...) as sock`), through a local bound once or a
/// parameter's default (`family = socket.AF_UNIX`, `kind=socket.
/// SOCK_DGRAM`): their last segments.
fn socket_built(m: &FileModel, f: &Function, sock: &str) -> Option<Vec<String>> {
    let is_socket = |v: ExprId| {
        m.call(m.strip(v))
            .is_some_and(|k| k.target.as_deref() == Some("socket.socket"))
    };
    let stmts = unsnarl_model::walk::stmts_in_block(m, &f.body);
    let ctor = stmts.iter().find_map(|&s| match &m.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if targets.iter().any(|&t| m.name_of(t) == Some(sock)) && is_socket(*v) => Some(*v),
        StmtKind::With { items, .. } => items
            .iter()
            .find(|it| it.target.and_then(|t| m.name_of(t)) == Some(sock) && is_socket(it.ctx))
            .map(|it| it.ctx),
        _ => None,
    })?;
    let last = |x: ExprId| {
        m.resolved(x)
            .map(str::to_string)
            .or_else(|| m.dotted(x))
            .map(|d| d.rsplit('.').next().unwrap_or(&d).to_string())
    };
    let constant = |x: ExprId| {
        let Some(name) = m.name_of(x) else {
            return last(x);
        };
        if let Some(p) = f.params.iter().find(|p| &*p.name == name) {
            return p.default.and_then(last);
        }
        let mut bound = values_bound(m, &stmts, name);
        match (bound.next(), bound.next()) {
            (Some(Some(v)), None) => last(v),
            (None, _) => last(x),
            _ => None,
        }
    };
    let call = m.call(m.strip(ctor))?;
    Some(call.args.iter().filter_map(|a| constant(a.value)).collect())
}

/// Python: the string `e` is, written out or as a module-level name bound
/// once to it (`HOST = "127.0.0.1"`).
pub(crate) fn module_literal(m: &FileModel, e: ExprId) -> Option<&str> {
    if let Some(Lit::Str(s)) = m.literal(e) {
        return Some(s.as_str());
    }
    let name = m.name_of(e)?;
    let module = unsnarl_model::walk::stmts_in_block(m, &m.functions.first()?.body);
    let mut bound = values_bound(m, &module, name);
    match (bound.next(), bound.next()) {
        (Some(Some(v)), None) => match m.literal(v) {
            Some(Lit::Str(s)) => Some(s.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// The values the assignments among `stmts` bind to `name`, in order
/// (`None` for one without a value, a bare annotation).
fn values_bound<'a>(
    m: &'a FileModel,
    stmts: &'a [StmtId],
    name: &'a str,
) -> impl Iterator<Item = Option<ExprId>> + 'a {
    stmts.iter().filter_map(move |&s| match &m.stmt(s).kind {
        StmtKind::Assign { targets, value, .. }
            if targets.iter().any(|&t| m.name_of(t) == Some(name)) =>
        {
            Some(*value)
        }
        _ => None,
    })
}

/// Python: the mode argument of a call that opens a file (`open(p, "a")`,
/// `io.open`, `codecs.open`, `Path(p).open("w")`, or `mode=`), if it has one.
pub(crate) fn open_mode_arg(c: &Call) -> Option<ExprId> {
    match c.target.as_deref() {
        Some("builtins.open" | "io.open" | "codecs.open") => c.positional(1),
        Some("pathlib.Path.open") => c.positional(0),
        _ => return None,
    }
    .or_else(|| c.kwarg("mode"))
}

/// The literal mode a call opens a file with ([`open_mode_arg`]).
pub(crate) fn open_mode<'m>(m: &'m FileModel, c: &Call) -> Option<&'m str> {
    match m.literal(open_mode_arg(c)?) {
        Some(Lit::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// Python: a file opened in append mode only to write one record, `with
/// open(path, "a") as f: f.write(line)` or `open(path, "a").write(line)`,
/// or none (`with open(path, "a"): pass`, a check that it is writable)
/// (a `flush()` beside it too), also written in a few pieces (a heading,
/// then the entry: the file's buffer takes them as one): the hand-written
/// log line, which costs what a `logging.FileHandler` costs on every
/// logging call, one buffered write to a local file. Reading it back,
/// writing in a loop, or an `fsync` still count.
fn appends_one_record(m: &FileModel, id: ExprId, c: &Call) -> bool {
    let appends = open_mode(m, c).is_some_and(|mode| mode.starts_with('a'));
    if !appends {
        return false;
    }
    let write_on = |e: ExprId, handle: &dyn Fn(ExprId) -> bool| {
        m.call(e)
            .is_some_and(|k| k.name == "write" && k.receiver.is_some_and(|r| handle(m.strip(r))))
    };
    // `open(path, "a").write(line)` as a statement of its own.
    let inline = m
        .stmts
        .iter()
        .any(|st| matches!(st.kind, StmtKind::Expr(e) if write_on(m.strip(e), &|r| r == id)));
    inline
        || m.stmts.iter().any(|st| {
            let StmtKind::With { items, body, .. } = &st.kind else {
                return false;
            };
            let Some(item) = items.iter().find(|it| m.strip(it.ctx) == id) else {
                return false;
            };
            let Some(handle) = item.target.and_then(|t| m.name_of(t)) else {
                return item.target.is_none()
                    && body
                        .iter()
                        .all(|&b| matches!(m.stmt(b).kind, StmtKind::Pass));
            };
            let on_handle = |r: ExprId| m.name_of(r) == Some(handle);
            let mut writes = 0;
            let only_writes = body.iter().all(|&b| {
                // Formatting the record in between (`text = str(resp)`, an
                // `if` choosing which field to log): no loop, and no use
                // of the handle but the writes.
                if prepares_without_handle(m, b, handle) {
                    return true;
                }
                // `with open(path, "a"): pass`: a check that it can be
                // written, which writes nothing.
                if matches!(m.stmt(b).kind, StmtKind::Pass) {
                    return true;
                }
                let StmtKind::Expr(e) = m.stmt(b).kind else {
                    return false;
                };
                let e = m.strip(e);
                if write_on(e, &on_handle) {
                    writes += 1;
                    return true;
                }
                m.call(e).is_some_and(|k| {
                    k.name == "flush" && k.receiver.is_some_and(|r| on_handle(m.strip(r)))
                })
            });
            only_writes && writes <= MAX_RECORD_WRITES
        })
}

/// The statement `b` neither loops nor touches the file `handle`: what a
/// log helper does to format its record between opening and writing.
fn prepares_without_handle(m: &FileModel, b: StmtId, handle: &str) -> bool {
    let block = vec![b];
    let stmts = unsnarl_model::walk::stmts_in_block(m, &block);
    stmts.iter().all(|&s| {
        !matches!(
            m.stmt(s).kind,
            StmtKind::For { .. }
                | StmtKind::While { .. }
                | StmtKind::Loop { .. }
                | StmtKind::With { .. }
        )
    }) && stmts
        .iter()
        .all(|&s| !matches!(m.stmt(s).kind, StmtKind::Expr(_)))
        && unsnarl_model::walk::exprs_in_block(m, &block)
            .into_iter()
            .all(|e| m.name_of(e) != Some(handle))
}

/// The most `write` calls [`appends_one_record`] takes for one record.
const MAX_RECORD_WRITES: usize = 3;

/// Python: a read of a file shipped inside the package, whose path is
/// built only from `__file__` and literals (`open(os.path.join(
/// os.path.dirname(__file__), "ui", "index.html"))`, `(Path(__file__).parent
/// / "guide.md").read_text()`, also through names the file binds only to
/// such paths, or loops over literal names): a few kilobytes of the
/// installed package, read from the page cache. Writes, and paths that
/// come from arguments, settings or user data, still count.
fn reads_package_data(m: &FileModel, c: &Call) -> bool {
    // No mode argument reads too.
    let reads =
        || open_mode_arg(c).is_none_or(|_| open_mode(m, c).is_some_and(|s| s.starts_with('r')));
    let path = match c.target.as_deref() {
        Some("builtins.open" | "io.open" | "codecs.open") => c.positional(0).filter(|_| reads()),
        Some("pathlib.Path.read_text" | "pathlib.Path.read_bytes") => c.receiver,
        Some("pathlib.Path.open") => c.receiver.filter(|_| reads()),
        _ => None,
    };
    let seen_file = std::cell::Cell::new(false);
    path.is_some_and(|p| from_package_file(m, p, 0, &seen_file)) && seen_file.get()
}

/// The path expression is built only from `__file__` (which sets
/// `seen_file`), string literals, and path calls over them.
fn from_package_file(
    m: &FileModel,
    e: ExprId,
    depth: u32,
    seen_file: &std::cell::Cell<bool>,
) -> bool {
    // Deep enough for a few named steps (`base = Path(__file__).parent.parent
    // / "locales"`, `lang_dir = base / code`, `path = lang_dir / "t.json"`),
    // and a stop for a name built from itself.
    if depth > 12 {
        return false;
    }
    let e = m.strip(e);
    let on = |x: ExprId| from_package_file(m, x, depth + 1, seen_file);
    match &m.expr(e).kind {
        ExprKind::Literal(Lit::Str(_)) => true,
        ExprKind::Name { id, .. } if id == "__file__" => {
            seen_file.set(true);
            true
        }
        ExprKind::Name { id, .. } => {
            // A name the function around the use binds is its local: only
            // the function's bindings count (another function's `js_file
            // = js_dir / filename` is another variable). Otherwise the
            // module's.
            let scope = crate::util::enclosing_function_span(m, m.expr(e).span);
            let bound_in = |t: ExprId, within: Option<Span>| {
                m.name_of(t) == Some(id.as_str())
                    && within.is_none_or(|w| w.contains(m.expr(t).span))
            };
            let local = scope.is_some()
                && m.stmts.iter().any(|st| match &st.kind {
                    StmtKind::Assign { targets, .. } => targets.iter().any(|&t| bound_in(t, scope)),
                    StmtKind::For {
                        target: Some(t), ..
                    } => bound_in(*t, scope),
                    _ => false,
                });
            let within = if local { scope } else { None };
            let named = |t: ExprId| bound_in(t, within);
            // Every value the file binds to the name, or the literal names
            // a loop takes it from (and nothing else).
            let looped = m.stmts.iter().any(|st| {
                matches!(&st.kind, StmtKind::For { target: Some(t), iter, .. }
                    if named(*t) && literal_strings(m, *iter))
            });
            let assigned_any = m.stmts.iter().any(|st| {
                matches!(&st.kind, StmtKind::Assign { targets, .. } if targets.iter().any(|&t| named(t)))
            });
            if looped {
                !assigned_any
            } else {
                crate::util::every_assigned_value(m, named, on)
            }
        }
        ExprKind::Binary {
            op: BinOp::Div | BinOp::Add,
            left,
            right,
        } => on(*left) && on(*right),
        ExprKind::Attr { obj, name, .. } if name == "parent" => on(*obj),
        ExprKind::Call(k) => {
            let args_ok = || k.args.iter().all(|a| on(a.value));
            match k.target.as_deref() {
                Some(
                    "os.path.join" | "os.path.dirname" | "os.path.abspath" | "os.path.realpath"
                    | "pathlib.Path" | "pathlib.PurePath",
                ) => args_ok(),
                // Methods of a path built so.
                _ => {
                    matches!(k.name.as_str(), "resolve" | "absolute" | "joinpath")
                        && k.receiver.is_some_and(on)
                        && args_ok()
                }
            }
        }
        _ => false,
    }
}

/// A list or tuple of string literals, or a name the file binds only to one.
fn literal_strings(m: &FileModel, e: ExprId) -> bool {
    let lits = |x: ExprId| match &m.expr(m.strip(x)).kind {
        ExprKind::Collection { elems, .. } => {
            !elems.is_empty()
                && elems
                    .iter()
                    .all(|&y| matches!(m.literal(y), Some(Lit::Str(_))))
        }
        _ => false,
    };
    lits(e)
        || m.name_of(m.strip(e)).is_some_and(|n| {
            crate::util::every_assigned_value(m, |t| m.name_of(t) == Some(n), lits)
        })
}

/// The literal a string built from one starts with: `"/proc/%d/statm" %
/// pid`, `"/proc/" + pid + "/stat"`, `"/proc/{}/statm".format(pid)`.
fn literal_head(m: &FileModel, e: ExprId, depth: u32) -> Option<&str> {
    if depth > 4 {
        return None;
    }
    let e = m.strip(e);
    match &m.expr(e).kind {
        ExprKind::Literal(Lit::Str(s)) => Some(s.as_str()),
        ExprKind::Binary {
            op: BinOp::Rem | BinOp::Add,
            left,
            ..
        } => literal_head(m, *left, depth + 1),
        ExprKind::Call(c) if c.name == "format" => {
            c.receiver.and_then(|r| literal_head(m, r, depth + 1))
        }
        _ => None,
    }
}

fn is_urlopen(c: &Call) -> bool {
    c.target.as_deref() == Some("urllib.request.urlopen")
}

/// The file rejects `name` unless it is a `data:` URI: `if not
/// name.startswith("data:"): raise ValueError(..)` (or `return`).
fn only_data_uris(m: &FileModel, name: &str) -> bool {
    m.stmts.iter().any(|s| {
        let StmtKind::If { cond, then, .. } = &s.kind else {
            return false;
        };
        let ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } = m.expr(*cond).kind
        else {
            return false;
        };
        let tests_prefix = m.call(m.strip(operand)).is_some_and(|k| {
            k.name == "startswith"
                && k.receiver.and_then(|r| m.name_of(r)) == Some(name)
                && k.positional(0)
                    .is_some_and(|p| matches!(m.literal(p), Some(Lit::Str(v)) if v == "data:"))
        });
        tests_prefix
            && then.last().is_some_and(|&l| {
                matches!(m.stmt(l).kind, StmtKind::Raise(_) | StmtKind::Return(_))
            })
    })
}

/// The last two segments of a qualified name, for readable messages.
fn short(q: &str) -> &str {
    let cut = q
        .char_indices()
        .filter(|&(_, ch)| ch == '.' || ch == ':' || ch == '/')
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    if cut.len() < 2 {
        return q;
    }
    let i = cut[cut.len() - 2];
    let s = &q[i + 1..];
    s.trim_start_matches(':')
}

/// Python: `with open(path) as f: data = await asyncio.to_thread(json.load,
/// f)`. Every use of the handle in the block is an argument of an offload
/// call (or of `aiohttp.FormData.add_field`, whose payload aiohttp reads in
/// an executor), so the reads and writes run on the worker thread; opening a local
/// file moves no data. A read, a write or a loop over the handle on the
/// loop's thread still counts.
fn handle_only_offloaded(cx: &FileCx, call: ExprId, c: &Call) -> bool {
    if !matches!(
        c.target.as_deref(),
        Some("builtins.open" | "io.open" | "pathlib.Path.open")
    ) {
        return false;
    }
    let Some(with) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    let StmtKind::With { items, .. } = &cx.stmt(with).kind else {
        return false;
    };
    let Some(target) = items
        .iter()
        .find(|it| cx.model.strip(it.ctx) == call)
        .and_then(|it| it.target)
    else {
        return false;
    };
    let Some(handle) = cx.model.name_of(target) else {
        return false;
    };
    let within = cx.stmt(with).span;
    let mut uses = cx.body_exprs(cx.func_of(call)).iter().filter(|&&e| {
        e != target
            && cx.model.name_of(e) == Some(handle)
            && within.start <= cx.expr(e).span.start
            && cx.expr(e).span.end <= within.end
    });
    let mut any = false;
    let all_offloaded = uses.all(|&e| {
        any = true;
        crate::util::call_around(cx, e).is_some_and(|(_, k)| {
            k.receiver != Some(e)
                && k.args.iter().any(|a| a.value == e)
                // aiohttp sends a file payload by reading it in the loop's
                // executor.
                && (cx.effect(k, Effect::Offload).is_some()
                    || k.target.as_deref() == Some("aiohttp.FormData.add_field"))
        })
    });
    any && all_offloaded
}

/// True when the call is an argument (at any depth) of an offload API.
fn inside_offload(cx: &FileCx, call: ExprId) -> bool {
    cx.tree.expr_ancestors(call).any(|a| {
        cx.call(a)
            .is_some_and(|c| a != call && cx.effect(c, Effect::Offload).is_some())
    })
}

/// `time.sleep(0)` only yields the GIL.
fn is_zero_sleep(cx: &FileCx, c: &Call) -> bool {
    c.name.eq_ignore_ascii_case("sleep")
        && c.positional(0).and_then(|a| cx.model.int_value(a)) == Some(0)
}

/// Socket calls that return at once (or raise) on a non-blocking socket.
/// (`sendto` too, but only to an IP address: a host name is resolved
/// first, and that blocks.)
pub const NONBLOCKING_SOCKET_IO: [&str; 6] = [
    "recv",
    "recv_into",
    "recvfrom",
    "recvfrom_into",
    "send",
    "sendall",
];

/// The sockets a Python file switches to non-blocking mode
/// (`self.wakeup_sock.setblocking(False)`), by name.
/// Python: the socket call `c` returns at once (or raises) on a socket in
/// non-blocking mode: a send or receive ([`NONBLOCKING_SOCKET_IO`]), or a
/// connect to a Unix socket's path or an IP address (a host name would be
/// resolved first, and that blocks).
pub fn returns_at_once_when_nonblocking(m: &FileModel, c: &Call) -> bool {
    if NONBLOCKING_SOCKET_IO.contains(&c.name.as_str()) {
        return true;
    }
    // Not a tuple: a Unix socket's path (or an address built elsewhere).
    matches!(c.name.as_str(), "connect" | "connect_ex")
        && c.positional(0).is_some_and(|a| {
            !matches!(m.expr(m.strip(a)).kind, ExprKind::Collection { .. })
                || names_ip_address(m, a)
        })
}

/// Python: the sockets the file switches to non-blocking mode
/// (`sock.setblocking(False)`), by their dotted names.
pub fn nonblocking_sockets(m: &FileModel) -> Vec<String> {
    m.exprs
        .iter()
        .filter_map(|e| match &e.kind {
            ExprKind::Call(c) if c.name == "setblocking" => {
                let off = c.positional(0).is_some_and(|v| {
                    matches!(m.literal(v), Some(Lit::Bool(false))) || m.int_value(v) == Some(0)
                });
                off.then(|| c.receiver.and_then(|r| m.dotted(r))).flatten()
            }
            _ => None,
        })
        .collect()
}
