//! unsnarl, the application: command line, configuration, the scan
//! pipeline, filters and reporters. The analysis itself lives in the crates
//! (`unsnarl-model`, the front ends, `unsnarl-rules`).
//!
//! [`run`] is the whole program minus the process: arguments, the current
//! directory and the output streams are passed in, and the exit code comes
//! back. `main.rs` wires it to the real process; tests call it in-process.

pub mod cache;
pub mod check;
pub mod cli;
pub mod config;
pub mod docs;
pub mod filter;
pub mod frontend;
pub mod pipeline;
pub mod report;
pub mod walk;

use clap::Parser;
use cli::{Cli, Command, ListFormat};
use frontend::Frontend;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use unsnarl_model::Knowledge;

/// Exit codes (the public contract).
pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// The process around a run.
pub struct Io<'a> {
    /// Absolute current directory: relative paths on the command line and in
    /// reports are relative to it.
    pub cwd: PathBuf,
    /// Read only for `check --stdin-filename`.
    pub stdin: &'a mut dyn std::io::Read,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    /// Color the text report (stdout is a terminal and `NO_COLOR` is unset).
    pub color: bool,
    /// Draw a progress bar on stderr for long scans.
    pub progress: bool,
    /// Where each project's results cache goes unless one is configured
    /// (the user's cache directory; `None`: no cache unless configured).
    pub cache_home: Option<PathBuf>,
}

/// Runs the program with `args` (including the program name).
pub fn run(args: impl IntoIterator<Item = OsString>, io: &mut Io, frontend: &dyn Frontend) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let text = if io.color {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            let stream: &mut dyn Write = if e.use_stderr() { io.stderr } else { io.stdout };
            let _ = stream.write_all(text.as_bytes());
            // clap: 0 for --help/--version, 2 for usage errors.
            return e.exit_code().clamp(0, 2) as u8;
        }
    };
    let result = match cli.command {
        Command::Check(args) => check::check(*args, io, frontend),
        Command::Rules(a) => list_rules(a.format, io),
        Command::Rule(a) => show_rule(&a.rule, a.format, io),
        Command::DebugModel(a) => debug_model(&a.file, io, frontend),
        Command::GenerateDocs(a) => generate_docs(&a.output, io),
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            let _ = writeln!(io.stderr, "error: {msg}");
            EXIT_ERROR
        }
    }
}

/// An error that ends the run with exit code 2.
type Fatal = String;

fn write_out(io: &mut Io, s: &str) -> Result<(), Fatal> {
    match io
        .stdout
        .write_all(s.as_bytes())
        .and_then(|_| io.stdout.flush())
    {
        Ok(()) => Ok(()),
        // `unsnarl check | head`: a closed pipe is not an error of ours.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write the report: {e}")),
    }
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Shows a config path relative to the current directory (`unsnarl.toml`,
/// `../../pyproject.toml`); absolute when they share nothing but the root.
fn shown_path(cwd: &Path, p: &Path) -> PathBuf {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    walk::lexical_relative(&cwd, p).unwrap_or_else(|| p.to_path_buf())
}

fn list_rules(format: ListFormat, io: &mut Io) -> Result<u8, Fatal> {
    let text = match format {
        ListFormat::Text => docs::rules_table(),
        ListFormat::Json => {
            let rules: Vec<serde_json::Value> = unsnarl_rules::all_rules()
                .iter()
                .map(|r| {
                    let m = r.meta();
                    serde_json::json!({
                        "id": m.id,
                        "name": m.name,
                        "category": m.category.slug(),
                        "severity": m.severity.slug(),
                        "languages": m.languages.iter().map(|l| l.slug()).collect::<Vec<_>>(),
                        "summary": m.summary,
                    })
                })
                .collect();
            pretty(&serde_json::Value::Array(rules))
        }
    };
    write_out(io, &text)?;
    Ok(EXIT_OK)
}

fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn show_rule(key: &str, format: ListFormat, io: &mut Io) -> Result<u8, Fatal> {
    // An id names one rule; a name may be shared by several languages' rules.
    let rules: Vec<&'static dyn unsnarl_rules::Rule> = match unsnarl_rules::all_rules()
        .iter()
        .copied()
        .find(|r| r.meta().id.eq_ignore_ascii_case(key))
    {
        Some(r) => vec![r],
        None => unsnarl_rules::rules_named(key),
    };
    if rules.is_empty() {
        return Err(format!(
            "no rule \"{key}\"; did you mean: {}? (`unsnarl rules` lists them all)",
            docs::close_ids(key).join(", ")
        ));
    }
    let text = match format {
        ListFormat::Text => rules
            .iter()
            .map(|r| docs::rule_text(r.meta()))
            .collect::<Vec<_>>()
            .join("\n"),
        ListFormat::Json => match rules.as_slice() {
            [one] => pretty(&docs::rule_json(one.meta())),
            many => pretty(&serde_json::Value::Array(
                many.iter().map(|r| docs::rule_json(r.meta())).collect(),
            )),
        },
    };
    write_out(io, &text)?;
    Ok(EXIT_OK)
}

fn debug_model(file: &Path, io: &mut Io, frontend: &dyn Frontend) -> Result<u8, Fatal> {
    let abs = absolute(&io.cwd, file);
    let lang = walk::language_of(&abs).ok_or_else(|| {
        format!(
            "{}: not a Python, JavaScript, TypeScript, Go or Rust file",
            file.display()
        )
    })?;
    let text = match walk::load(&abs) {
        walk::Load::Text(t) => t,
        walk::Load::Skip(r) => {
            return Err(format!("{}: skipped: {}", file.display(), r.describe()));
        }
        walk::Load::Problem(_, m) => return Err(format!("{}: {m}", file.display())),
    };
    let rel = walk::slash_path(file);
    let engine = unsnarl_rules::Engine::new(Vec::new(), Knowledge::builtin());
    // On a thread with the scan's deep stack: parsers recurse.
    let dump = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(pipeline::STACK_SIZE)
            .spawn_scoped(s, || {
                pipeline::contained(|| {
                    let input = unsnarl_model::SourceInput {
                        text: &text,
                        rel_path: &rel,
                        language: lang,
                    };
                    let model = frontend.lower(&input);
                    let (prepared, _) = engine.prepare(model, lang);
                    unsnarl_model::dump::dump(&prepared.model)
                })
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?
            .join()
            .unwrap_or_else(|_| Err("panic".into()))
            .map_err(|m| format!("{}: internal error: {m}", file.display()))
    })?;
    write_out(io, &dump)?;
    Ok(EXIT_OK)
}

fn generate_docs(output: &Path, io: &mut Io) -> Result<u8, Fatal> {
    let text = docs::rules_markdown();
    if output == Path::new("-") {
        write_out(io, &text)?;
    } else {
        let path = absolute(&io.cwd, output);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", output.display()))?;
        let _ = writeln!(io.stderr, "wrote {}", output.display());
    }
    Ok(EXIT_OK)
}
