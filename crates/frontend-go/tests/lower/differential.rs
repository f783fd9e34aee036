//! The fast parser against the tree-sitter path: both must build the same
//! model (dump, spans, arena sizes) for every file the fast parser takes.
//!
//! Tools, ignored by default (run with `-- --ignored --nocapture`, in
//! release for timings):
//! - `corpus_differential`: compares both paths on every `.go` file under
//!   `$UNSNARL_GO_CORPUS` (default `~/.cache/unsnarl-corpus/go`), counts
//!   identical files, fallbacks (the fast parser declined) and differences,
//!   and prints the first differences (`$UNSNARL_DIFF_SHOW`, default 20);
//! - `corpus_throughput`: parse + lower MB/s of each path over the same
//!   files, one thread, best of `$UNSNARL_ITERS` rounds (default 3);
//! - `dump_both`: prints both models of `$DUMP_FILE` and their first
//!   difference.

use super::*;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use unsnarl_model::walk::{Child, for_each_expr_child, for_each_stmt_child};
use unsnarl_model::{Language, SourceInput, StmtId};

/// The dump plus every span and the arena sizes: equal strings mean equal
/// models for all that rules can observe.
pub fn canon(m: &FileModel) -> String {
    let mut out = dump(m);
    let _ = writeln!(
        out,
        "--- exprs {} stmts {} functions {} types {}",
        m.exprs.len(),
        m.stmts.len(),
        m.functions.len(),
        m.types.len()
    );
    for i in &m.imports {
        let _ = writeln!(out, "import {}..{}", i.span.start, i.span.end);
    }
    for t in &m.types {
        let _ = write!(out, "type {} {}..{}", t.qualname, t.span.start, t.span.end);
        for f in &t.fields {
            let _ = write!(out, " {}@{}..{}", f.name, f.span.start, f.span.end);
        }
        out.push('\n');
    }
    for (i, f) in m.functions.iter().enumerate() {
        let _ = write!(
            out,
            "fn#{i} {}..{} name {}..{}",
            f.span.start, f.span.end, f.name_span.start, f.name_span.end
        );
        for p in &f.params {
            let _ = write!(out, " {}@{}..{}", p.name, p.span.start, p.span.end);
        }
        out.push('\n');
        for &s in &f.body {
            stmt_spans(m, s, 1, &mut out);
        }
    }
    out
}

fn indent(out: &mut String, d: usize) {
    for _ in 0..d {
        out.push_str("  ");
    }
}

fn stmt_spans(m: &FileModel, id: StmtId, d: usize, out: &mut String) {
    let s = m.stmt(id);
    indent(out, d);
    let _ = writeln!(out, "S {}..{}", s.span.start, s.span.end);
    match &s.kind {
        StmtKind::Select { arms, .. } => {
            for a in arms {
                indent(out, d);
                let _ = writeln!(out, "arm {}..{}", a.span.start, a.span.end);
            }
        }
        StmtKind::Switch { cases, .. } => {
            for c in cases {
                indent(out, d);
                let _ = writeln!(out, "case {}..{}", c.span.start, c.span.end);
            }
        }
        _ => {}
    }
    for_each_stmt_child(m, id, &mut |c| match c {
        Child::Expr(e) => expr_spans(m, e, d + 1, out),
        Child::Block(b) => {
            for &s in b {
                stmt_spans(m, s, d + 1, out);
            }
        }
    });
}

fn expr_spans(m: &FileModel, id: ExprId, d: usize, out: &mut String) {
    let e = m.expr(id);
    indent(out, d);
    let _ = writeln!(out, "E {}..{}", e.span.start, e.span.end);
    for_each_expr_child(m, id, &mut |c| expr_spans(m, c, d + 1, out));
}

/// The first differing line of two canonical forms, with context.
pub fn first_difference(a: &str, b: &str) -> Option<String> {
    let la: Vec<&str> = a.lines().collect();
    let lb: Vec<&str> = b.lines().collect();
    let n = la.len().max(lb.len());
    for i in 0..n {
        if la.get(i) != lb.get(i) {
            let from = i.saturating_sub(6);
            let mut s = String::new();
            for j in from..i {
                let _ = writeln!(s, "   {}", la.get(j).unwrap_or(&""));
            }
            let _ = writeln!(s, " ts {}", la.get(i).unwrap_or(&"<end>"));
            let _ = writeln!(s, " fp {}", lb.get(i).unwrap_or(&"<end>"));
            return Some(s);
        }
    }
    None
}

fn input<'a>(rel: &'a str, text: &'a str) -> SourceInput<'a> {
    SourceInput {
        text,
        rel_path: rel,
        language: Language::Go,
    }
}

/// Compares both paths on one file: `Ok(true)` identical, `Ok(false)` the
/// fast path declined, `Err` the difference.
pub fn compare(rel: &str, text: &str) -> Result<bool, String> {
    let i = input(rel, text);
    let Some(fast) = unsnarl_frontend_go::lower_fast(&i) else {
        return Ok(false);
    };
    let a = ts_canon(rel, text);
    let b = canon(&fast);
    match first_difference(&a, &b) {
        None => Ok(true),
        Some(d) => Err(d),
    }
}

/// The canonical form of the tree-sitter model of a file, kept under
/// `$UNSNARL_TS_CACHE` when set (the tree-sitter path does not change
/// while the fast parser is worked on).
fn ts_canon(rel: &str, text: &str) -> String {
    let cache = std::env::var("UNSNARL_TS_CACHE").ok().map(|d| {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in rel.bytes().chain(text.bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        Path::new(&d).join(format!("{h:016x}"))
    });
    if let Some(c) = &cache
        && let Ok(s) = std::fs::read_to_string(c)
    {
        return s;
    }
    let s = canon(&unsnarl_frontend_go::lower_tree_sitter(&input(rel, text)));
    if let Some(c) = &cache {
        let _ = std::fs::create_dir_all(c.parent().unwrap());
        let _ = std::fs::write(c, &s);
    }
    s
}

/// Asserts that the fast path takes `src` and agrees with tree-sitter.
#[track_caller]
pub fn assert_same(src: &str) {
    match compare("pkg/x.go", src) {
        Ok(true) => {}
        Ok(false) => panic!("the fast path declined:\n{src}"),
        Err(d) => panic!("the paths differ on\n{src}\n{d}"),
    }
}

/// Asserts that the fast path declines `src` (tree-sitter lowers it).
#[track_caller]
pub fn assert_declined(src: &str) {
    let i = input("pkg/x.go", src);
    assert!(
        unsnarl_frontend_go::lower_fast(&i).is_none(),
        "the fast path took\n{src}"
    );
}

fn corpus_root() -> PathBuf {
    match std::env::var("UNSNARL_GO_CORPUS") {
        Ok(p) => PathBuf::from(p),
        Err(_) => {
            let home = std::env::var("HOME").unwrap_or_default();
            Path::new(&home).join(".cache/unsnarl-corpus/go")
        }
    }
}

fn go_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            go_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "go") {
            out.push(p);
        }
    }
}

/// `(relative path, text)` of every readable `.go` file of the corpus.
fn corpus() -> Vec<(String, String)> {
    let root = corpus_root();
    let mut files = Vec::new();
    go_files(&root, &mut files);
    files.sort();
    files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            let rel = f
                .strip_prefix(&root)
                .unwrap_or(f)
                .to_string_lossy()
                .to_string();
            Some((rel, text))
        })
        .collect()
}

fn on_big_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
#[ignore]
fn corpus_differential() {
    let show: usize = std::env::var("UNSNARL_DIFF_SHOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let failures = on_big_stack(move || {
        let files = corpus();
        let (mut same, mut declined, mut declined_clean, mut differ) = (0, 0, 0, 0);
        let mut shown = 0;
        let mut declined_list = Vec::new();
        for (rel, text) in &files {
            match compare(rel, text) {
                Ok(true) => same += 1,
                Ok(false) => {
                    declined += 1;
                    let ts = unsnarl_frontend_go::lower_tree_sitter(&input(rel, text));
                    if ts.syntax_errors.is_empty() {
                        declined_clean += 1;
                        declined_list.push((rel.clone(), text.clone()));
                    }
                }
                Err(d) => {
                    differ += 1;
                    if shown < show {
                        shown += 1;
                        eprintln!("DIFF {rel}\n{d}");
                    }
                }
            }
        }
        for (rel, text) in declined_list.iter().take(show) {
            let at = unsnarl_frontend_go::fast_bail_offset(&input(rel, text)).unwrap_or(0) as usize;
            let line = text[..at.min(text.len())].matches('\n').count() + 1;
            let from = text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
            let to = text[at.min(text.len())..]
                .find('\n')
                .map_or(text.len(), |i| at + i);
            eprintln!("DECLINED {rel}:{line}: {}", &text[from..to]);
        }
        eprintln!(
            "{} files: {same} identical, {differ} differ, {declined} declined by the fast path \
             ({declined_clean} of them without syntax errors in tree-sitter)",
            files.len()
        );
        differ
    });
    assert_eq!(failures, 0);
}

/// CPU time of the current thread (from `/proc/thread-self/schedstat`),
/// or wall time where that is not available: on a shared machine, wall
/// time mostly measures the neighbours.
fn cpu_now() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .unwrap_or_else(|| {
            static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
            START.get_or_init(Instant::now).elapsed()
        })
}

/// One way of lowering a file (`None`: the fast path declined).
type LowerFn = fn(&SourceInput) -> Option<FileModel>;

#[test]
#[ignore]
fn corpus_throughput() {
    on_big_stack(|| {
        let files = corpus();
        let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
        let iters: usize = std::env::var("UNSNARL_ITERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3);
        let mb = bytes as f64 / 1e6;
        // `UNSNARL_BENCH=fast`: the fast path only (for profilers).
        let fast_only = std::env::var("UNSNARL_BENCH").is_ok_and(|v| v == "fast");
        let paths: &[(&str, LowerFn)] = &[
            ("tree-sitter path", |i| {
                Some(unsnarl_frontend_go::lower_tree_sitter(i))
            }),
            (
                "fast path alone (None on fallback)",
                unsnarl_frontend_go::lower_fast,
            ),
            ("lower() (fast + fallback)", |i| {
                Some(unsnarl_frontend_go::lower(i))
            }),
        ];
        eprintln!(
            "{} files, {mb:.1} MB, best of {iters} (thread CPU time; wall time in parentheses):",
            files.len()
        );
        for (name, f) in paths {
            if fast_only && !name.starts_with("fast") {
                continue;
            }
            let (mut cpu, mut wall) = (Duration::MAX, Duration::MAX);
            for _ in 0..iters {
                let (c, w) = (cpu_now(), Instant::now());
                for (rel, text) in &files {
                    std::hint::black_box(f(&input(rel, text)));
                }
                cpu = cpu.min(cpu_now() - c);
                wall = wall.min(w.elapsed());
            }
            let rate = |d: Duration| mb / d.as_secs_f64().max(1e-9);
            eprintln!(
                "  {name:38} {:>8.2?} {:>6.1} MB/s   ({:.2?} {:.1} MB/s)",
                cpu,
                rate(cpu),
                wall,
                rate(wall)
            );
        }
    });
}

#[test]
#[ignore]
fn dump_both() {
    let Ok(path) = std::env::var("DUMP_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let i = input("pkg/x.go", &text);
    let ts = canon(&unsnarl_frontend_go::lower_tree_sitter(&i));
    println!("=== tree-sitter\n{ts}");
    match unsnarl_frontend_go::lower_fast(&i) {
        None => println!("=== fast path declined"),
        Some(m) => {
            let fp = canon(&m);
            println!("=== fast\n{fp}");
            println!("=== first difference\n{:?}", first_difference(&ts, &fp));
        }
    }
}

/// Prints tree-sitter's syntax tree of `$SEXP_FILE` (a debugging aid).
#[test]
#[ignore]
fn sexp() {
    let Ok(path) = std::env::var("SEXP_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    println!("{}", unsnarl_frontend_go::tree_sitter_outline(&text));
}

// ----- the fast path against tree-sitter, on snippets -----

#[test]
fn semicolon_insertion_and_literals() {
    assert_same(
        "package p\n\
         import (\n\t\"fmt\"\n\tstr \"strings\"\n\t. \"time\"\n\t_ \"embed\"\n)\n\
         const (\n\tA = iota\n\tB\n)\n\
         var x = []any{1_000_000, 0x1p-2, 0b1010, 0o17, 017, 1e9, .5, 3i, 'a', '\\n', '\\u00e9', \"s\\t\", `raw\nstring`}\n\
         func f() (int, error) {\n\tfmt.Println(str.ToUpper(\"a\")); Sleep(1)\n\treturn 1,\n\t\tnil\n}\n\
         func g() { /* multi\nline */ x := 1 /* one line */ ; _ = x }\n",
    );
}

#[test]
fn statements_of_every_kind() {
    assert_same(
        r#"package p
import ("sync"; "context")
type S struct { sync.Mutex; n map[string]*S; ch chan<- int }
func (s *S) run(ctx context.Context, a, b int, xs ...string) (err error) {
	s.Lock()
	defer s.Unlock()
	var wg sync.WaitGroup
	ch := make(chan int, 3)
	go func() { defer wg.Done(); ch <- 1 }()
	for {
		break
	}
	for a < b { a++ }
	for i := 0; i < 10; i++ { b += i }
	for k, v := range s.n { _, _ = k, v }
	for range ch {}
L:
	for i := range 10 {
		switch {
		case i > 3: continue L
		case i == 2: fallthrough
		default: goto L
		}
	}
	select {
	case v, ok := <-ch: _ = v; _ = ok
	case ch <- 2:
	case <-ctx.Done(): return ctx.Err()
	default:
	}
	switch x := any(a).(type) {
	case int, string: _ = x
	case nil:
	}
	if err := f(); err != nil { return err } else if a > 1 { a-- } else { b = -a }
	v := &S{n: map[string]*S{"a": {}}}
	_ = v.n["a"].n[xs[0]][:]
	return
}
func f() error { return nil }
"#,
    );
}

#[test]
fn generics() {
    assert_same(
        r#"package p
type List[T any] struct { next *List[T]; v T }
type Num interface { ~int | ~float64 }
func Map[T, U any](xs []T, f func(T) U) []U { var out []U; for _, x := range xs { out = append(out, f(x)) }; return out }
func Sum[N Num](xs ...N) (s N) { for _, x := range xs { s += x }; return }
func (l *List[T]) Push(v T) *List[T] { return &List[T]{next: l, v: v} }
func g() {
	_ = Map[int, string]([]int{1}, func(i int) string { return "" })
	_ = Sum(1, 2)
	var l List[int]
	l.Push(1)
	f := Sum[float64]
	_ = f
	_ = (*List[int])(nil)
}
"#,
    );
}

#[test]
fn long_operator_chains_match_the_tree_sitter_cut_offs() {
    // Longer than MAX_NESTING (400): tree-sitter's lowering cuts the
    // left spine off; the fast path rebuilds the chain the same way.
    let mut bad = Vec::new();
    for n in [10, 390, 399, 400, 401, 402, 450, 1000] {
        let chain = vec!["a"; n].join(" + ");
        let mixed = (0..n)
            .map(|i| if i % 7 == 3 { "g(a*a, -a)" } else { "a" })
            .collect::<Vec<_>>()
            .join(" + ");
        let srcs = [
            format!("package p\nfunc f(a int) {{ x := {chain}\n_ = x }}\n"),
            format!("package p\nfunc f(a int) int {{ return {chain} }}\n"),
            format!("package p\nfunc f(a int) {{ a = {chain} }}\n"),
            format!("package p\nvar x = {chain}\n"),
            format!("package p\nfunc g(int, int) int\nfunc f(a int) {{ x := {mixed}\n_ = x }}\n"),
        ];
        for (i, src) in srcs.iter().enumerate() {
            match compare("pkg/x.go", src) {
                Ok(true) => {}
                // A call whose arguments straddle the cut-off depth
                // would be cut inside: the fast path leaves that to
                // tree-sitter.
                Ok(false) if i == 4 && (399..=400).contains(&n) => {}
                Ok(false) => bad.push(format!("n {n} form {i}: declined")),
                Err(d) => bad.push(format!("n {n} form {i}: differs\n{d}")),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn syntax_errors_fall_back_to_tree_sitter() {
    for src in [
        "package p\nfunc f() { x := }\n",
        "package p\nfunc f() { \"unterminated }\n",
        "package p\nfunc f( {}\n",
        "package p\nvar x = 1 +\n",
        "package p\nfunc f() { /* open comment }\n",
    ] {
        assert_declined(src);
        // And `lower` still gives the tree-sitter model, errors included.
        let m = lower(src);
        assert!(!m.syntax_errors.is_empty(), "{src}");
    }
}

#[test]
fn deep_nesting_falls_back_or_matches_never_overflows() {
    on_big_stack(|| {
        for n in [100, 380, 500, 10_000] {
            let parens = format!(
                "package p\nfunc f() {{ x := {}1{}\n_ = x }}\n",
                "(".repeat(n),
                ")".repeat(n)
            );
            let calls = format!("package p\nvar x = {}1{}\n", "f(".repeat(n), ")".repeat(n));
            for src in [parens, calls] {
                match compare("pkg/x.go", &src) {
                    Ok(_) => {}
                    Err(d) => panic!("the paths differ at depth {n}:\n{d}"),
                }
                if n < 300 {
                    assert_same(&src);
                }
            }
        }
    });
}
