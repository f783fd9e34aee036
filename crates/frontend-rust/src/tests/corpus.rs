//! Tools, ignored by default (run with `-- --ignored --nocapture`):
//! - `corpus`: lowers every `.rs` file under `$UNSNARL_RS_CORPUS` (e.g.
//!   `~/.cargo/registry/src`), checks the model invariants on each and
//!   reports parse vs. lowering time;
//! - `corpus_lowering_only`: lowering alone, `$UNSNARL_ITERS` rounds (or
//!   parsing alone with `UNSNARL_BENCH=parse`), for profilers;
//! - `dump_file`: prints the model dump of `$DUMP_FILE`.
//!
//! None of them asserts anything about time.

use super::util::check_invariants;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
#[ignore]
fn corpus() {
    let Ok(root) = std::env::var("UNSNARL_RS_CORPUS") else {
        eprintln!("set UNSNARL_RS_CORPUS");
        return;
    };
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut files = Vec::new();
            rs_files(Path::new(&root), &mut files);
            files.sort();
            let (mut parse_t, mut walk_t, mut drop_t, mut lower_t) = (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
            let (mut n, mut bytes, mut with_errors, mut funcs, mut calls, mut resolved) = (0, 0, 0, 0, 0, 0);
            let mut failures = Vec::new();
            for f in &files {
                let Ok(text) = std::fs::read_to_string(f) else { continue };
                let rel = f.strip_prefix(&root).unwrap_or(f).to_string_lossy().to_string();
                // Each phase is timed 3 times and the fastest run kept, so
                // that a busy machine does not skew the comparison.
                let mut best = [Duration::MAX; 4];
                let mut result = None;
                for _ in 0..3 {
                    let t = Instant::now();
                    let p = crate::parse::parse(&text);
                    best[0] = best[0].min(t.elapsed());
                    let t = Instant::now();
                    std::hint::black_box(p.root.descendants_with_tokens().count());
                    best[1] = best[1].min(t.elapsed());
                    let t = Instant::now();
                    drop(p);
                    best[2] = best[2].min(t.elapsed());
                    let p = crate::parse::parse(&text);
                    let t = Instant::now();
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        crate::lower::lower_parsed(&p, &text, &rel)
                    }));
                    best[3] = best[3].min(t.elapsed());
                    result = Some(r);
                }
                parse_t += best[0];
                walk_t += best[1];
                drop_t += best[2];
                lower_t += best[3];
                let r = result.unwrap();
                let Ok(m) = r else {
                    failures.push((rel, "panic".to_string()));
                    continue;
                };
                if let Err(e) = std::panic::catch_unwind(|| check_invariants(&m, &text)) {
                    failures.push((rel, format!("invariant: {:?}", e.downcast_ref::<String>())));
                }
                n += 1;
                bytes += text.len();
                with_errors += usize::from(!m.syntax_errors.is_empty());
                funcs += m.functions.len();
                for e in &m.exprs {
                    if let unsnarl_model::ExprKind::Call(c) = &e.kind {
                        calls += 1;
                        resolved += usize::from(c.target.is_some());
                    }
                }
            }
            let mb = bytes as f64 / 1e6;
            eprintln!(
                "{n} files, {mb:.1} MB, {with_errors} with syntax errors, {funcs} functions, {calls} calls ({resolved} with a target)"
            );
            eprintln!(
                "parse {parse_t:?} ({:.1} MB/s); bare walk {walk_t:?}; tree drop {drop_t:?}; lowering {lower_t:?} ({:.0}% of parse, tree drop included)",
                mb / parse_t.as_secs_f64().max(1e-9),
                100.0 * lower_t.as_secs_f64() / parse_t.as_secs_f64().max(1e-9),
            );
            for (f, why) in failures.iter().take(30) {
                eprintln!("FAIL {f}: {why}");
            }
            failures.len()
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), 0);
}

/// Lowering only, repeated, for profiling (`perf record` this test).
#[test]
#[ignore]
fn corpus_lowering_only() {
    let Ok(root) = std::env::var("UNSNARL_RS_CORPUS") else {
        return;
    };
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut files = Vec::new();
            rs_files(Path::new(&root), &mut files);
            let texts: Vec<(String, String)> = files
                .iter()
                .filter_map(|f| {
                    Some((
                        std::fs::read_to_string(f).ok()?,
                        f.to_string_lossy().to_string(),
                    ))
                })
                .collect();
            let parsed: Vec<_> = texts.iter().map(|(t, _)| crate::parse::parse(t)).collect();
            let iters: usize = std::env::var("UNSNARL_ITERS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(5);
            let parse_only = std::env::var("UNSNARL_BENCH").is_ok_and(|v| v == "parse");
            let t = Instant::now();
            for _ in 0..iters {
                for (p, (text, rel)) in parsed.iter().zip(&texts) {
                    if parse_only {
                        std::hint::black_box(crate::parse::parse(text));
                        continue;
                    }
                    let p = crate::parse::Parsed {
                        root: p.root.clone(),
                        errors: Vec::new(),
                        macro_bodies: p.macro_bodies.clone(),
                        edition: p.edition,
                    };
                    std::hint::black_box(crate::lower::lower_parsed(&p, text, rel));
                }
            }
            eprintln!("{iters} rounds: {:?}", t.elapsed());
        })
        .unwrap();
    handle.join().unwrap();
}

/// Prints the model of `$DUMP_FILE` (lowered as `src/lib.rs`).
#[test]
#[ignore]
fn dump_file() {
    let Ok(path) = std::env::var("DUMP_FILE") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let m = crate::lower::lower_file(&text, "src/lib.rs");
    println!("{}", unsnarl_model::dump::dump(&m));
}
