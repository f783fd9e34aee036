//! The command line: every flag and subcommand, parsed with clap.
//!
//! Values that the config file can also set (`--select`, `--fail-on`, ...)
//! are `Option`s here so that "not given" can be told apart from "given with
//! the default value": a flag wins over the config only when it was given.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "unsnarl",
    version,
    about = "A static auditor for concurrency bugs in Python, JavaScript/TypeScript, Go and Rust",
    long_about = None,
    arg_required_else_help = true,
    after_help = "Exit codes: 0 no findings at or above --fail-on, 1 findings, 2 usage error, bad configuration or internal error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scan source files and report concurrency bugs.
    Check(Box<CheckArgs>),
    /// List every rule (id, name, category, severity, languages).
    Rules(ListArgs),
    /// Print the documentation of one rule.
    Rule(RuleArgs),
    /// Print the file model of a file after the semantic pass (for contributors).
    DebugModel(DebugModelArgs),
    /// Regenerate docs/rules.md from the rule metadata.
    #[command(hide = true)]
    GenerateDocs(GenerateDocsArgs),
}

#[derive(Debug, Args, Default, Clone)]
pub struct CheckArgs {
    /// Files or directories to scan [default: .]
    pub paths: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum)]
    pub format: Option<Format>,

    /// Only run these categories or rules (ids or names), comma separated.
    #[arg(long, value_delimiter = ',', value_name = "CODE")]
    pub select: Option<Vec<String>>,

    /// Do not run these categories or rules (ids or names), comma separated.
    #[arg(long, value_delimiter = ',', value_name = "CODE")]
    pub ignore: Option<Vec<String>>,

    /// Exit with 1 only for findings at or above this severity [default: low]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<SeverityArg>,

    /// Do not report findings below this severity [default: low]
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub min_severity: Option<SeverityArg>,

    /// Skip paths matching this glob (.gitignore syntax, relative to each
    /// scanned path); repeatable or comma separated.
    #[arg(long, value_delimiter = ',', value_name = "GLOB")]
    pub exclude: Option<Vec<String>>,

    /// Number of analysis threads [default: available parallelism]
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,

    /// Do not read any configuration file.
    #[arg(long, conflicts_with = "config")]
    pub no_config: bool,

    /// Read the configuration from this file instead of discovering one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Warn about suppression comments that suppressed nothing (only those
    /// whose rules all ran).
    #[arg(long)]
    pub warn_unused_suppressions: bool,

    /// Read this file's content from stdin (for editors). Without PATHS,
    /// only this file is analyzed; with them, it is analyzed with them.
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,

    /// Write the report to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,

    /// Report only findings not recorded in this baseline file (see
    /// --write-baseline).
    #[arg(long, value_name = "FILE", conflicts_with = "no_baseline")]
    pub baseline: Option<PathBuf>,

    /// Ignore the configuration's `baseline`: report every finding.
    #[arg(long)]
    pub no_baseline: bool,

    /// Record the current findings in a baseline file (default: the
    /// configured one) instead of reporting them.
    #[arg(long, value_name = "FILE", num_args = 0..=1, conflicts_with = "statistics")]
    pub write_baseline: Option<Option<PathBuf>>,

    /// Report only findings on lines changed since this git revision
    /// (commits since, staged and unstaged edits, untracked files).
    #[arg(long, value_name = "REV", conflicts_with = "write_baseline")]
    pub changed_since: Option<String>,

    /// Print the number of findings per rule instead of the findings.
    #[arg(long)]
    pub statistics: bool,

    /// Print findings only: no summary line and no notices.
    #[arg(short, long)]
    pub quiet: bool,

    /// Also analyze files that say they are generated ("Code generated ... DO NOT EDIT").
    #[arg(long)]
    pub include_generated: bool,

    /// Give up on a file whose analysis takes longer than this many seconds
    /// (decimals allowed; 0 = no limit); it is reported as skipped (timeout)
    /// [default: 10]
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub file_timeout: Option<f64>,

    /// Keep up to this many MiB of analyzed files whose results depend on
    /// other files until the project index is built, instead of parsing
    /// them again (faster, more memory, same results) [default: 0]
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u32).range(0..=MAX_MEMORY_BUDGET_MIB as i64))]
    pub memory_budget: Option<u32>,

    /// Do not read or write the results cache (also: UNSNARL_NO_CACHE=1).
    #[arg(long, conflicts_with = "cache_dir")]
    pub no_cache: bool,

    /// Keep the results cache in DIR (also: UNSNARL_CACHE_DIR) [default: a
    /// directory for the project in the user's cache directory]
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// The largest accepted memory budget (1 TiB).
pub const MAX_MEMORY_BUDGET_MIB: u32 = 1 << 20;

/// A number of seconds: finite, not negative, at most a year.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=MAX_SECONDS).contains(&x) => Ok(x),
        _ => Err(format!(
            "expected a number of seconds from 0 to {MAX_SECONDS} (0 = no limit)"
        )),
    }
}

/// The largest accepted time budget (a year).
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ListFormat,
}

#[derive(Debug, Args)]
pub struct RuleArgs {
    /// A rule id (`PY002`) or name (`blocking-call-in-async`).
    pub rule: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ListFormat,
}

#[derive(Debug, Args)]
pub struct DebugModelArgs {
    /// The source file to lower.
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct GenerateDocsArgs {
    /// Where to write the rules reference (`-` for stdout).
    #[arg(long, default_value = "docs/rules.md")]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    /// One line per finding: `path:line:column: RULE [severity] message`.
    Concise,
    Json,
    Sarif,
    Github,
}

impl Format {
    pub fn from_name(s: &str) -> Option<Format> {
        <Format as ValueEnum>::from_str(s, false).ok()
    }

    /// Formats read by people, which come with notices on stderr (syntax
    /// errors, skipped files); the machine formats carry those inside.
    pub fn is_human(self) -> bool {
        matches!(self, Format::Text | Format::Concise)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    Low,
    Medium,
    High,
    Critical,
}

impl SeverityArg {
    pub fn severity(self) -> unsnarl_model::Severity {
        use unsnarl_model::Severity;
        match self {
            SeverityArg::Low => Severity::Low,
            SeverityArg::Medium => Severity::Medium,
            SeverityArg::High => Severity::High,
            SeverityArg::Critical => Severity::Critical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn list_flags_split_on_commas_and_repeat() {
        let cli = Cli::try_parse_from([
            "unsnarl",
            "check",
            "--select",
            "a,b",
            "--exclude",
            "x",
            "--exclude",
            "y,z",
        ])
        .unwrap();
        let Command::Check(c) = cli.command else {
            panic!("not check")
        };
        assert_eq!(c.select.unwrap(), ["a", "b"]);
        assert_eq!(c.exclude.unwrap(), ["x", "y", "z"]);
    }

    #[test]
    fn file_timeout_takes_non_negative_seconds() {
        assert_eq!(parse_seconds("2.5"), Ok(2.5));
        assert_eq!(parse_seconds("0"), Ok(0.0));
        for bad in ["-1", "NaN", "inf", "1e300", "soon", ""] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
