//! Baselines: adopting unsnarl on a codebase that already has findings.
//!
//! `check --write-baseline FILE` records the current findings in FILE;
//! `check --baseline FILE` (or `baseline = "FILE"` in the configuration)
//! then reports only findings that are not recorded there, so CI can fail
//! on new bugs while the old ones are worked off.
//!
//! A finding is recorded by its rule, its path relative to the baseline
//! file's directory (so the scan may run from any directory) and its
//! content hash: the fingerprint without the path, which survives lines
//! moving but not an edit of the flagged line (see `report::fingerprint`).
//! Line and message are kept for the people who review the file's diffs;
//! matching ignores them. Entries are matched one to one, so a second copy
//! of a recorded bug in the same file is still new.

use crate::report::{FindingOut, ScanReport};
use crate::walk::{lexical_relative, normalize_lexically, slash_path};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The format version written into every baseline file.
pub const VERSION: u32 = 1;

/// One recorded finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub path: String,
    pub line: u32,
    pub rule: String,
    pub hash: String,
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    unsnarl_baseline: u32,
    findings: Vec<Entry>,
}

/// A baseline file: where it is and what it records.
#[derive(Debug)]
pub struct Baseline {
    /// Absolute, lexically normalized.
    dir: PathBuf,
    pub entries: Vec<Entry>,
}

/// What a finding is matched by.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Key {
    path: String,
    rule: String,
    hash: String,
}

impl Key {
    fn of(e: &Entry) -> Key {
        Key {
            path: e.path.clone(),
            rule: e.rule.clone(),
            hash: e.hash.clone(),
        }
    }
}

/// What applying a baseline did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Findings left out because the baseline records them.
    pub hidden: usize,
    /// Entries within this scan's reach (a scanned path, a rule that ran)
    /// that no finding matched: fixed, or edited since.
    pub stale: usize,
}

/// What the scan covered, to tell an entry this run could have matched
/// from one it never looked at (another directory, a rule not selected).
pub struct Scope<'a> {
    /// Absolute scanned paths, lexically normalized.
    pub roots: &'a [PathBuf],
    pub rules: &'a [&'static str],
}

impl Scope<'_> {
    fn covers(&self, dir: &Path, e: &Entry) -> bool {
        let abs = normalize_lexically(&dir.join(&e.path));
        self.rules.contains(&e.rule.as_str()) && self.roots.iter().any(|r| abs.starts_with(r))
    }
}

impl Baseline {
    /// An empty baseline for a file at `file` (absolute).
    pub fn empty(file: &Path) -> Baseline {
        Baseline {
            dir: dir_of(file),
            entries: Vec::new(),
        }
    }

    /// Reads the baseline at `file` (absolute); `shown` names it in errors.
    pub fn read(file: &Path, shown: &Path) -> Result<Baseline, String> {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "baseline file {} does not exist; create it with `unsnarl check --write-baseline {}`",
                    shown.display(),
                    shown.display()
                ));
            }
            Err(e) => {
                return Err(format!(
                    "cannot read baseline file {}: {e}",
                    shown.display()
                ));
            }
        };
        Self::parse(file, &text).map_err(|e| format!("{}: {e}", shown.display()))
    }

    fn parse(file: &Path, text: &str) -> Result<Baseline, String> {
        let parsed: FileFormat = serde_json::from_str(text)
            .map_err(|e| format!("not an unsnarl baseline (line {}: {e})", e.line().max(1)))?;
        if parsed.unsnarl_baseline != VERSION {
            return Err(format!(
                "baseline format version {} is not supported (this unsnarl reads version {VERSION}); write it again with --write-baseline",
                parsed.unsnarl_baseline
            ));
        }
        Ok(Baseline {
            dir: dir_of(file),
            entries: parsed.findings,
        })
    }

    /// The entry recording `f`, a finding of a scan run in `cwd`.
    fn entry_for(&self, f: &FindingOut, cwd: &Path) -> Entry {
        Entry {
            path: self.relative(cwd, &f.loc.path),
            line: f.loc.line,
            rule: f.rule.to_string(),
            hash: f.content_hash.clone(),
            message: f.message.clone(),
        }
    }

    /// A report path (relative to `cwd`, or as given) relative to the
    /// baseline's directory.
    fn relative(&self, cwd: &Path, shown: &str) -> String {
        let abs = normalize_lexically(&cwd.join(shown));
        match lexical_relative(&self.dir, &abs) {
            Some(rel) => slash_path(&rel),
            None => slash_path(&abs),
        }
    }

    /// Drops the findings the baseline records from `report`.
    pub fn apply(&self, report: &mut ScanReport, cwd: &Path, scope: &Scope) -> Applied {
        let mut left: HashMap<Key, usize> = HashMap::new();
        for e in &self.entries {
            *left.entry(Key::of(e)).or_default() += 1;
        }
        let mut hidden = 0;
        let findings = std::mem::take(&mut report.findings);
        for f in findings {
            let key = Key {
                path: self.relative(cwd, &f.loc.path),
                rule: f.rule.to_string(),
                hash: f.content_hash.clone(),
            };
            match left.get_mut(&key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    hidden += 1;
                }
                _ => report.findings.push(f),
            }
        }
        // Each unmatched entry of the scan's reach counts once.
        let mut stale = 0;
        for e in &self.entries {
            if let Some(n) = left.get_mut(&Key::of(e))
                && *n > 0
                && scope.covers(&self.dir, e)
            {
                *n -= 1;
                stale += 1;
            }
        }
        Applied { hidden, stale }
    }

    /// The baseline for this scan's findings: the entries of `report`, and
    /// the old entries this scan could not have seen (other paths, rules
    /// that did not run), so that writing from a subdirectory or with
    /// `--select` does not forget the rest.
    pub fn rewritten(&self, report: &ScanReport, cwd: &Path, scope: &Scope) -> Baseline {
        let mut entries: Vec<Entry> = self
            .entries
            .iter()
            .filter(|e| !scope.covers(&self.dir, e))
            .cloned()
            .collect();
        entries.extend(report.findings.iter().map(|f| self.entry_for(f, cwd)));
        entries.sort();
        Baseline {
            dir: self.dir.clone(),
            entries,
        }
    }

    /// The file's text: pretty JSON, one entry per finding, sorted, so that
    /// its diffs review well.
    pub fn to_json(&self) -> String {
        let doc = FileFormat {
            unsnarl_baseline: VERSION,
            findings: self.entries.clone(),
        };
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Writes the baseline to `file` (absolute) through a temporary file in
    /// the same directory, so a reader never sees half of it.
    pub fn write(&self, file: &Path, shown: &Path) -> Result<(), String> {
        let dir = file.parent().unwrap_or(Path::new("."));
        let fail =
            |e: std::io::Error| format!("cannot write baseline file {}: {e}", shown.display());
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
        std::io::Write::write_all(&mut tmp, self.to_json().as_bytes()).map_err(fail)?;
        tmp.persist(file).map_err(|e| fail(e.error))?;
        Ok(())
    }
}

/// The directory of a baseline file, absolute and normalized; its real
/// path when it exists (the configuration's directory is a real path too).
fn dir_of(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new("/"));
    std::fs::canonicalize(dir).unwrap_or_else(|_| normalize_lexically(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, rule: &str, hash: &str) -> Entry {
        Entry {
            path: path.into(),
            line: 1,
            rule: rule.into(),
            hash: hash.into(),
            message: String::new(),
        }
    }

    #[test]
    fn the_file_format_round_trips_and_rejects_other_json() {
        let b = Baseline {
            dir: PathBuf::from("/p"),
            entries: vec![entry("src/a.py", "PY002", "ab")],
        };
        let text = b.to_json();
        assert!(text.contains("\"unsnarl_baseline\": 1"), "{text}");
        let back = Baseline::parse(Path::new("/p/b.json"), &text).unwrap();
        assert_eq!(back.entries, b.entries);
        let err = Baseline::parse(Path::new("/p/b.json"), "{\"findings\": []}").unwrap_err();
        assert!(err.contains("not an unsnarl baseline"), "{err}");
        let err = Baseline::parse(Path::new("/p/b.json"), "[1, 2]").unwrap_err();
        assert!(err.contains("not an unsnarl baseline"), "{err}");
        let err = Baseline::parse(
            Path::new("/p/b.json"),
            "{\"unsnarl_baseline\": 7, \"findings\": []}",
        )
        .unwrap_err();
        assert!(err.contains("version 7 is not supported"), "{err}");
    }

    #[test]
    fn stale_entries_count_only_within_the_scan() {
        let b = Baseline {
            dir: PathBuf::from("/p"),
            entries: vec![
                entry("src/a.py", "PY002", "1"),
                entry("lib/b.py", "PY002", "2"),
                entry("src/c.py", "PY001", "3"),
            ],
        };
        let roots = [PathBuf::from("/p/src")];
        let scope = Scope {
            roots: &roots,
            rules: &["PY002"],
        };
        let in_scope: Vec<bool> = b.entries.iter().map(|e| scope.covers(&b.dir, e)).collect();
        assert_eq!(in_scope, [true, false, false]);
    }
}
