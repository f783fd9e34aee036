//! The configuration schema and its validation.
//!
//! The file is parsed into toml's spanned document tree rather than straight
//! into a serde struct, so that every error can name the line of the key or
//! value at fault and list what is allowed.

use super::ConfigError;
use crate::cli::Format;
use crate::filter::selection::{Code, unknown_code_hint};
use std::path::Path;
use toml::Spanned;
use toml::de::{DeTable, DeValue};
use unsnarl_model::{Effect, Language, Severity};

/// Keys of the top-level table (or of `[tool.unsnarl]` in pyproject.toml).
pub const KEYS: &[&str] = &[
    "select",
    "ignore",
    "exclude",
    "fail-on",
    "min-severity",
    "threads",
    "format",
    "include-generated",
    "file-timeout",
    "memory-budget",
    "baseline",
    "warn-unused-suppressions",
    "cache",
    "cache-dir",
    "knowledge",
    "per-file-ignores",
];

/// Languages accepted under `[knowledge.<language>]`. TypeScript shares the
/// JavaScript table.
pub const KNOWLEDGE_LANGUAGES: &[&str] = &["python", "javascript", "typescript", "go", "rust"];

/// A validated configuration. `None` = the file does not set it.
#[derive(Debug, Default, Clone)]
pub struct Config {
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
    pub fail_on: Option<Severity>,
    pub min_severity: Option<Severity>,
    pub threads: Option<u32>,
    pub format: Option<Format>,
    pub include_generated: Option<bool>,
    /// Per-file time budget in seconds (0 = no limit).
    pub file_timeout: Option<f64>,
    /// How many MiB of file models to keep between the passes.
    pub memory_budget: Option<u32>,
    /// The baseline file, relative to the configuration file's directory.
    pub baseline: Option<String>,
    pub warn_unused_suppressions: Option<bool>,
    /// Whether to keep results between runs (default: yes).
    pub cache: Option<bool>,
    /// The cache directory, relative to the configuration file's directory.
    pub cache_dir: Option<String>,
    /// User knowledge: (language, effect, qualified callee patterns).
    pub knowledge: Vec<(Language, Effect, Vec<String>)>,
    /// (glob relative to the config file's directory, codes).
    pub per_file_ignores: Vec<(String, Vec<Code>)>,
}

/// Which table of the document holds our keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// `unsnarl.toml` / `.unsnarl.toml`: the whole document.
    Document,
    /// `pyproject.toml`: `[tool.unsnarl]`.
    PyprojectTool,
}

struct Cx<'a> {
    path: &'a Path,
    text: &'a str,
    /// Key prefix for messages (`tool.unsnarl.` in pyproject.toml).
    prefix: &'static str,
}

impl Cx<'_> {
    fn line(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.text.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn key(&self, k: &str) -> String {
        format!("{}{k}", self.prefix)
    }

    fn wrong_type(&self, key: &str, v: &Spanned<DeValue>, expected: &'static str) -> ConfigError {
        ConfigError::WrongType {
            path: self.path.to_path_buf(),
            line: self.line(v.span().start),
            key: self.key(key),
            expected,
            found: v.get_ref().type_str(),
        }
    }

    /// A non-empty string naming a path: `what` it is for an empty one,
    /// `kind` for another type.
    fn path_value(
        &self,
        key: &str,
        v: &Spanned<DeValue>,
        what: &str,
        kind: &'static str,
    ) -> Result<String, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) if !s.trim().is_empty() => Ok(s.to_string()),
            DeValue::String(s) => {
                Err(self.invalid(key, v.span().start, s, format!("expected {what}")))
            }
            _ => Err(self.wrong_type(key, v, kind)),
        }
    }

    fn invalid(&self, key: &str, at: usize, value: &str, allowed: String) -> ConfigError {
        ConfigError::InvalidValue {
            path: self.path.to_path_buf(),
            line: self.line(at),
            key: self.key(key),
            value: value.to_string(),
            allowed,
        }
    }

    fn unknown_key(&self, key: &Spanned<std::borrow::Cow<str>>, expected: &[&str]) -> ConfigError {
        ConfigError::UnknownKey {
            path: self.path.to_path_buf(),
            line: self.line(key.span().start),
            key: self.key(key.get_ref()),
            expected: expected.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A string, or an array of strings.
    fn strings(
        &self,
        key: &str,
        v: &Spanned<DeValue>,
    ) -> Result<Vec<Spanned<String>>, ConfigError> {
        const EXPECTED: &str = "an array of strings";
        match v.get_ref() {
            DeValue::String(s) => Ok(vec![Spanned::new(v.span(), s.to_string())]),
            DeValue::Array(items) => items
                .iter()
                .map(|item| match item.get_ref() {
                    DeValue::String(s) => Ok(Spanned::new(item.span(), s.to_string())),
                    _ => Err(self.wrong_type(key, item, EXPECTED)),
                })
                .collect(),
            _ => Err(self.wrong_type(key, v, EXPECTED)),
        }
    }

    fn codes(&self, key: &str, v: &Spanned<DeValue>) -> Result<Vec<Code>, ConfigError> {
        self.strings(key, v)?
            .iter()
            .map(|s| {
                Code::parse(s.get_ref()).ok_or_else(|| {
                    self.invalid(
                        key,
                        s.span().start,
                        s.get_ref(),
                        unknown_code_hint(s.get_ref()),
                    )
                })
            })
            .collect()
    }

    fn severity(&self, key: &str, v: &Spanned<DeValue>) -> Result<Severity, ConfigError> {
        let DeValue::String(s) = v.get_ref() else {
            return Err(self.wrong_type(key, v, "a string"));
        };
        Severity::from_slug(s).ok_or_else(|| {
            self.invalid(
                key,
                v.span().start,
                s,
                "expected one of: low, medium, high, critical".into(),
            )
        })
    }
}

/// Parses and validates a configuration file's text. `Ok(None)` when `root`
/// is pyproject and the file has no `[tool.unsnarl]`.
pub fn parse(path: &Path, text: &str, root: Root) -> Result<Option<Config>, ConfigError> {
    let doc = DeTable::parse(text).map_err(|e| {
        let cx = Cx {
            path,
            text,
            prefix: "",
        };
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line: e.span().map(|s| cx.line(s.start)),
            message: e.message().trim().to_string(),
        }
    })?;
    let doc = doc.get_ref();
    let (table, prefix) = match root {
        Root::Document => (doc, ""),
        Root::PyprojectTool => {
            let cx = Cx {
                path,
                text,
                prefix: "tool.",
            };
            let Some(tool) = doc.get("tool") else {
                return Ok(None);
            };
            let DeValue::Table(tool) = tool.get_ref() else {
                return Ok(None);
            };
            let Some(ours) = tool.get("unsnarl") else {
                return Ok(None);
            };
            match ours.get_ref() {
                DeValue::Table(t) => (t, "tool.unsnarl."),
                _ => return Err(cx.wrong_type("unsnarl", ours, "a table")),
            }
        }
    };
    let cx = Cx { path, text, prefix };
    validate(&cx, table).map(Some)
}

fn validate(cx: &Cx, table: &DeTable) -> Result<Config, ConfigError> {
    // Errors are reported in source order, whatever the map's key order.
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut c = Config::default();
    for (key, v) in entries {
        let k: &str = key.get_ref();
        match k {
            "select" => c.select = Some(code_strings(cx, k, v)?),
            "ignore" => c.ignore = Some(code_strings(cx, k, v)?),
            "exclude" => {
                let globs = cx.strings(k, v)?;
                for g in &globs {
                    crate::walk::check_glob(g.get_ref())
                        .map_err(|e| cx.invalid(k, g.span().start, g.get_ref(), e))?;
                }
                c.exclude = Some(globs.into_iter().map(Spanned::into_inner).collect());
            }
            "fail-on" => c.fail_on = Some(cx.severity(k, v)?),
            "min-severity" => c.min_severity = Some(cx.severity(k, v)?),
            "threads" => {
                let n = match v.get_ref() {
                    DeValue::Integer(i) => u32::from_str_radix(i.as_str(), i.radix()).ok(),
                    _ => return Err(cx.wrong_type(k, v, "an integer")),
                };
                match n {
                    Some(n @ 1..=1024) => c.threads = Some(n),
                    _ => {
                        let shown = match v.get_ref() {
                            DeValue::Integer(i) => i.to_string(),
                            _ => String::new(),
                        };
                        return Err(cx.invalid(
                            k,
                            v.span().start,
                            &shown,
                            "expected an integer from 1 to 1024".into(),
                        ));
                    }
                }
            }
            "format" => {
                let DeValue::String(s) = v.get_ref() else {
                    return Err(cx.wrong_type(k, v, "a string"));
                };
                c.format = Some(Format::from_name(s).ok_or_else(|| {
                    cx.invalid(
                        k,
                        v.span().start,
                        s,
                        "expected one of: text, concise, json, sarif, github".into(),
                    )
                })?);
            }
            "warn-unused-suppressions" => match v.get_ref() {
                DeValue::Boolean(b) => c.warn_unused_suppressions = Some(*b),
                _ => return Err(cx.wrong_type(k, v, "a boolean")),
            },
            "cache" => match v.get_ref() {
                DeValue::Boolean(b) => c.cache = Some(*b),
                _ => return Err(cx.wrong_type(k, v, "a boolean")),
            },
            "cache-dir" => {
                c.cache_dir = Some(cx.path_value(k, v, "a directory path", "a directory path")?);
            }
            "include-generated" => match v.get_ref() {
                DeValue::Boolean(b) => c.include_generated = Some(*b),
                _ => return Err(cx.wrong_type(k, v, "a boolean")),
            },
            "file-timeout" => {
                let (x, shown) = match v.get_ref() {
                    DeValue::Integer(i) => (
                        i64::from_str_radix(i.as_str(), i.radix())
                            .ok()
                            .map(|n| n as f64),
                        i.to_string(),
                    ),
                    DeValue::Float(f) => (f.as_str().parse::<f64>().ok(), f.to_string()),
                    _ => return Err(cx.wrong_type(k, v, "a number of seconds")),
                };
                let ok = x.and_then(|x| crate::cli::parse_seconds(&x.to_string()).ok());
                match ok {
                    Some(x) => c.file_timeout = Some(x),
                    None => {
                        return Err(cx.invalid(
                            k,
                            v.span().start,
                            &shown,
                            format!(
                                "expected a number of seconds from 0 to {} (0 = no limit)",
                                crate::cli::MAX_SECONDS
                            ),
                        ));
                    }
                }
            }
            "memory-budget" => {
                let n = match v.get_ref() {
                    DeValue::Integer(i) => u32::from_str_radix(i.as_str(), i.radix()).ok(),
                    _ => return Err(cx.wrong_type(k, v, "an integer number of MiB")),
                };
                match n {
                    Some(n) if n <= crate::cli::MAX_MEMORY_BUDGET_MIB => c.memory_budget = Some(n),
                    _ => {
                        let shown = match v.get_ref() {
                            DeValue::Integer(i) => i.to_string(),
                            _ => String::new(),
                        };
                        return Err(cx.invalid(
                            k,
                            v.span().start,
                            &shown,
                            format!(
                                "expected a number of MiB from 0 to {}",
                                crate::cli::MAX_MEMORY_BUDGET_MIB
                            ),
                        ));
                    }
                }
            }
            "baseline" => {
                let what = "the path of a baseline file";
                c.baseline = Some(cx.path_value(k, v, what, "a string (a file path)")?);
            }
            "knowledge" => c.knowledge = knowledge(cx, v)?,
            "per-file-ignores" => c.per_file_ignores = per_file_ignores(cx, v)?,
            _ => return Err(cx.unknown_key(key, KEYS)),
        }
    }
    Ok(c)
}

/// `select`/`ignore`: validated as codes, kept as strings (the CLI flags
/// take the same strings).
fn code_strings(cx: &Cx, k: &str, v: &Spanned<DeValue>) -> Result<Vec<String>, ConfigError> {
    cx.codes(k, v)?;
    Ok(cx
        .strings(k, v)?
        .into_iter()
        .map(Spanned::into_inner)
        .collect())
}

fn knowledge(
    cx: &Cx,
    v: &Spanned<DeValue>,
) -> Result<Vec<(Language, Effect, Vec<String>)>, ConfigError> {
    let DeValue::Table(langs) = v.get_ref() else {
        return Err(cx.wrong_type("knowledge", v, "a table"));
    };
    let effects: Vec<&str> = Effect::ALL.iter().map(|e| e.key()).collect();
    let mut langs: Vec<_> = langs.iter().collect();
    langs.sort_by_key(|(k, _)| k.span().start);
    let mut out = Vec::new();
    for (lang_key, table) in langs {
        let lang_name: &str = lang_key.get_ref();
        let Some(lang) = Language::from_slug(lang_name) else {
            let cx2 = Cx {
                prefix: prefixed(cx.prefix, "knowledge."),
                ..*cx
            };
            return Err(cx2.unknown_key(lang_key, KNOWLEDGE_LANGUAGES));
        };
        let key = format!("knowledge.{lang_name}");
        let DeValue::Table(entries) = table.get_ref() else {
            return Err(cx.wrong_type(&key, table, "a table"));
        };
        let mut entries: Vec<_> = entries.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (effect_key, names) in entries {
            let Some(effect) = Effect::from_key(effect_key.get_ref()) else {
                return Err(ConfigError::UnknownKey {
                    path: cx.path.to_path_buf(),
                    line: cx.line(effect_key.span().start),
                    key: cx.key(&format!("{key}.{}", effect_key.get_ref())),
                    expected: effects.iter().map(|s| s.to_string()).collect(),
                });
            };
            let full = format!("{key}.{}", effect_key.get_ref());
            let names = cx.strings(&full, names)?;
            out.push((
                lang,
                effect,
                names.into_iter().map(Spanned::into_inner).collect(),
            ));
        }
    }
    Ok(out)
}

fn prefixed(prefix: &'static str, rest: &'static str) -> &'static str {
    match prefix {
        "" => rest,
        _ => "tool.unsnarl.knowledge.",
    }
}

fn per_file_ignores(
    cx: &Cx,
    v: &Spanned<DeValue>,
) -> Result<Vec<(String, Vec<Code>)>, ConfigError> {
    let DeValue::Table(t) = v.get_ref() else {
        return Err(cx.wrong_type("per-file-ignores", v, "a table"));
    };
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut out = Vec::new();
    for (glob, codes) in entries {
        let g: &str = glob.get_ref();
        globset::Glob::new(g).map_err(|e| {
            cx.invalid(
                "per-file-ignores",
                glob.span().start,
                g,
                format!("not a valid glob: {}", e.kind()),
            )
        })?;
        let key = format!("per-file-ignores.\"{g}\"");
        out.push((g.to_string(), cx.codes(&key, codes)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(Path::new("unsnarl.toml"), text, Root::Document)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_full_config_parses() {
        let c = parse(
            Path::new("unsnarl.toml"),
            r#"
select = ["blocking-in-async", "unbounded-queue"]
ignore = "unbounded-queue"
exclude = ["vendor/", "*.gen.py"]
fail-on = "high"
min-severity = "medium"
threads = 3
format = "json"
include-generated = true
file-timeout = 2.5

[knowledge.python]
blocking = ["myapp.db.query"]
spawn = ["myapp.tasks.fire"]

[per-file-ignores]
"tests/**" = ["blocking-in-async"]
"#,
            Root::Document,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.select.unwrap().len(), 2);
        assert_eq!(c.ignore.unwrap(), ["unbounded-queue"]);
        assert_eq!(c.exclude.unwrap().len(), 2);
        assert_eq!(c.fail_on, Some(Severity::High));
        assert_eq!(c.min_severity, Some(Severity::Medium));
        assert_eq!(c.threads, Some(3));
        assert_eq!(c.format, Some(Format::Json));
        assert_eq!(c.include_generated, Some(true));
        assert_eq!(c.file_timeout, Some(2.5));
        assert_eq!(c.knowledge.len(), 2);
        assert_eq!(c.knowledge[0].0, Language::Python);
        assert_eq!(c.knowledge[0].1, Effect::Blocking);
        assert_eq!(c.per_file_ignores.len(), 1);
    }

    #[test]
    fn unknown_key_names_line_and_allowed_keys() {
        let e = err("select = []\n\nselct = [\"x\"]\n");
        assert!(
            e.starts_with("unsnarl.toml:3: unknown key \"selct\"; expected one of: select, ignore"),
            "{e}"
        );
    }

    #[test]
    fn wrong_type_names_line_key_and_types() {
        let e = err("threads = \"four\"\n");
        assert_eq!(
            e,
            "unsnarl.toml:1: key \"threads\" must be an integer, found string"
        );
        let e = err("\nselect = [1]\n");
        assert_eq!(
            e,
            "unsnarl.toml:2: key \"select\" must be an array of strings, found integer"
        );
    }

    #[test]
    fn unknown_codes_and_values_are_rejected_with_their_line() {
        let e = err("ignore = []\nselect = [\"blocking-in-async\", \"bogus\"]\n");
        assert!(e.starts_with("unsnarl.toml:2: invalid value \"bogus\" for key \"select\"; expected a category (orphan-task"), "{e}");
        let e = err("fail-on = \"severe\"");
        assert!(
            e.contains("expected one of: low, medium, high, critical"),
            "{e}"
        );
        let e = err("[knowledge.python]\nblockng = [\"x\"]\n");
        assert!(e.starts_with("unsnarl.toml:2: unknown key \"knowledge.python.blockng\"; expected one of: blocking, cpu_heavy"), "{e}");
        let e = err("[knowledge.cobol]\nblocking = [\"x\"]\n");
        assert!(
            e.starts_with("unsnarl.toml:1: unknown key \"knowledge.cobol\""),
            "{e}"
        );
        // Integers in other bases mean their value.
        let c = parse(
            Path::new("unsnarl.toml"),
            "threads = 0x10\nfile-timeout = 0o7\n",
            Root::Document,
        );
        let c = c.unwrap().unwrap();
        assert_eq!((c.threads, c.file_timeout), (Some(16), Some(7.0)));
        let e = err("threads = 0");
        assert!(e.contains("from 1 to 1024"), "{e}");
        let e = err("\nfile-timeout = -1");
        assert!(
            e.starts_with("unsnarl.toml:2: invalid value \"-1\" for key \"file-timeout\"; expected a number of seconds"),
            "{e}"
        );
        let e = err("file-timeout = \"5s\"");
        assert_eq!(
            e,
            "unsnarl.toml:1: key \"file-timeout\" must be a number of seconds, found string"
        );
    }

    #[test]
    fn syntax_errors_have_a_line() {
        let e = err("select = [\n\"a\"\nfail-on = 3\n");
        assert!(e.starts_with("unsnarl.toml:"), "{e}");
        assert!(e.contains("invalid TOML"), "{e}");
    }

    #[test]
    fn pyproject_without_our_table_is_not_a_config() {
        let p = Path::new("pyproject.toml");
        assert!(
            parse(p, "[tool.black]\nline-length = 88\n", Root::PyprojectTool)
                .unwrap()
                .is_none()
        );
        let c = parse(
            p,
            "[tool.unsnarl]\nfail-on = \"critical\"\n",
            Root::PyprojectTool,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.fail_on, Some(Severity::Critical));
        let e = parse(p, "[tool.unsnarl]\n\nfailon = 1\n", Root::PyprojectTool)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("pyproject.toml:3: unknown key \"tool.unsnarl.failon\""),
            "{e}"
        );
    }
}
