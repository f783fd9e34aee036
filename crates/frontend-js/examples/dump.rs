//! Debugging and measuring the JS/TS front end (not part of the pipeline).
//!
//! ```text
//! cargo run -p unsnarl-frontend-js --example dump -- FILE...      # print the models
//! ... --example dump -- --check FILE...   # report syntax errors and unreachable nodes
//! ... --example dump -- --bench FILE...   # parse-only vs parse+lower throughput
//! ... --example dump -- --bench-parse / --bench-lower FILE...   # one side only,
//!                                         # for instruction counts (callgrind)
//! ```
//!
//! `-` instead of files reads the file list from stdin, one path per line.
//! Measure with optimizations for this crate, e.g.
//! `--config 'profile.dev.package.unsnarl-frontend-js.opt-level=2'`.

use std::time::Instant;

use unsnarl_model::walk::{Parent, Tree};
use unsnarl_model::{ExprId, Language, SourceInput, StmtId};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Dump,
    Check,
    Bench { parse: bool, lower: bool },
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match args.first().map(String::as_str) {
        Some("--check") => Mode::Check,
        Some("--bench") => Mode::Bench {
            parse: true,
            lower: true,
        },
        Some("--bench-parse") => Mode::Bench {
            parse: true,
            lower: false,
        },
        Some("--bench-lower") => Mode::Bench {
            parse: false,
            lower: true,
        },
        _ => Mode::Dump,
    };
    if mode != Mode::Dump {
        args.remove(0);
    }
    if args.first().is_some_and(|a| a == "-") {
        args = std::io::stdin()
            .lines()
            .map_while(Result::ok)
            .filter(|l| !l.is_empty())
            .collect();
    }
    let (mut bytes, mut parse_secs, mut lower_secs) = (0usize, 0f64, 0f64);
    let (mut exprs, mut stmts) = (0usize, 0usize);
    for path in &args {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("{path}: not readable as UTF-8");
            continue;
        };
        let ext = path.rsplit('.').next().unwrap_or("");
        let input = SourceInput {
            text: &text,
            rel_path: path,
            language: Language::from_extension(ext).unwrap_or(Language::JavaScript),
        };
        match mode {
            Mode::Dump => print!(
                "{}",
                unsnarl_model::dump::dump(&unsnarl_frontend_js::lower(&input))
            ),
            Mode::Check => {
                let m = unsnarl_frontend_js::lower(&input);
                let tree = Tree::build(&m);
                let detached = (0..m.exprs.len() as u32)
                    .filter(|&i| tree.expr_parent(ExprId(i)) == Parent::Detached)
                    .count()
                    + (0..m.stmts.len() as u32)
                        .filter(|&i| tree.stmt_parent(StmtId(i)) == Parent::Detached)
                        .count();
                if detached > 0 || !m.syntax_errors.is_empty() {
                    println!(
                        "{path}: {detached} detached nodes, {} syntax errors",
                        m.syntax_errors.len()
                    );
                }
            }
            Mode::Bench { parse, lower } => {
                bytes += text.len();
                if parse {
                    let t = Instant::now();
                    let alloc = oxc_allocator::Allocator::default();
                    let st = oxc_span::SourceType::from_path(path)
                        .unwrap_or_default()
                        .with_jsx(true);
                    let options = oxc_parser::ParseOptions {
                        preserve_parens: false,
                        allow_return_outside_function: true,
                        ..Default::default()
                    };
                    let ret = oxc_parser::Parser::new(&alloc, &text, st)
                        .with_options(options)
                        .parse();
                    std::hint::black_box(&ret.program);
                    parse_secs += t.elapsed().as_secs_f64();
                }
                if lower {
                    let t = Instant::now();
                    let m = unsnarl_frontend_js::lower(&input);
                    lower_secs += t.elapsed().as_secs_f64();
                    exprs += m.exprs.len();
                    stmts += m.stmts.len();
                    std::hint::black_box(m);
                }
            }
        }
    }
    if let Mode::Bench { .. } = mode {
        let mb = bytes as f64 / 1e6;
        let kb = bytes as f64 / 1024.0;
        println!(
            "{} files, {mb:.1} MB: parse only {:.1} MB/s, parse+lower {:.1} MB/s; {:.1} exprs and {:.1} statements per KB",
            args.len(),
            mb / parse_secs,
            mb / lower_secs,
            exprs as f64 / kb,
            stmts as f64 / kb
        );
    }
}
