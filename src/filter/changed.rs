//! `--changed-since REV`: keep only the findings on lines changed since a
//! git revision, so a pull request is judged by what it touches.
//!
//! The changed lines come from `git diff --unified=0 REV` (the working tree
//! against REV: commits since, staged and unstaged edits) and from the
//! untracked files git does not ignore (every line of them is new). Git is
//! run on the repository, never the scanned code. A finding is kept when
//! its own lines or one of its related locations (the helper that blocks,
//! the other lock) touch a changed line.

use crate::report::{FindingOut, Location, ScanReport};
use crate::walk::normalize_lexically;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Added or modified lines per file (absolute path), as sorted inclusive
/// ranges; `None` marks a file that is new as a whole.
#[derive(Debug, Default)]
pub struct ChangedLines {
    files: HashMap<PathBuf, Option<Vec<(u32, u32)>>>,
}

impl ChangedLines {
    /// Asks git, in the repository holding `dir`, what changed since `rev`.
    pub fn since(rev: &str, dir: &Path) -> Result<ChangedLines, String> {
        if rev.starts_with('-') {
            return Err(format!("--changed-since {rev}: not a revision"));
        }
        let top = git(dir, &["rev-parse", "--show-toplevel"])?;
        let top = PathBuf::from(top.trim_end_matches(['\n', '\r']));
        // `--end-of-options` keeps a revision from being read as an option.
        let verify = format!("{rev}^{{commit}}");
        git(
            &top,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &verify,
            ],
        )
        .map_err(|_| {
            format!(
                "--changed-since {rev}: no such revision in {}",
                top.display()
            )
        })?;
        let diff = git(
            &top,
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-renames",
                "--unified=0",
                "--end-of-options",
                rev,
                "--",
            ],
        )?;
        let mut changed = ChangedLines::parse_diff(&diff, &top);
        let untracked = git(&top, &["ls-files", "--others", "--exclude-standard", "-z"])?;
        for name in untracked.split('\0').filter(|n| !n.is_empty()) {
            changed
                .files
                .insert(normalize_lexically(&top.join(name)), None);
        }
        Ok(changed)
    }

    /// The added lines of a `--unified=0` diff, by file under `top`.
    fn parse_diff(diff: &str, top: &Path) -> ChangedLines {
        let mut files: HashMap<PathBuf, Option<Vec<(u32, u32)>>> = HashMap::new();
        let mut current: Option<PathBuf> = None;
        for line in diff.lines() {
            if let Some(path) = line.strip_prefix("+++ ") {
                current = unquote(path)
                    .strip_prefix("b/")
                    .map(|p| normalize_lexically(&top.join(p)));
                continue;
            }
            let Some(hunk) = line.strip_prefix("@@ ") else {
                continue;
            };
            let (Some(file), Some((start, count))) = (&current, added_range(hunk)) else {
                continue;
            };
            if count == 0 {
                continue;
            }
            if let Some(ranges) = files
                .entry(file.clone())
                .or_insert_with(|| Some(Vec::new()))
            {
                ranges.push((start, start + count - 1));
            }
        }
        ChangedLines { files }
    }

    fn touches(&self, abs: &Path, first: u32, last: u32) -> bool {
        match self.files.get(abs) {
            None => false,
            Some(None) => true,
            Some(Some(ranges)) => ranges.iter().any(|&(a, b)| a <= last && first <= b),
        }
    }

    /// Drops the findings that touch no changed line; returns how many.
    pub fn apply(&self, report: &mut ScanReport, cwd: &Path) -> usize {
        let on_changed = |loc: &Location| {
            let abs = normalize_lexically(&cwd.join(&loc.path));
            self.touches(&abs, loc.line, loc.end_line.max(loc.line))
        };
        let keep =
            |f: &FindingOut| on_changed(&f.loc) || f.related.iter().any(|r| on_changed(&r.loc));
        let before = report.findings.len();
        report.findings.retain(keep);
        before - report.findings.len()
    }
}

/// A path as git prints it in a diff header: as is, or, when it holds a
/// quote, a backslash or a control character, in double quotes with C
/// escapes (`"b/a\"b.py"`, octal bytes `\303\251`).
fn unquote(path: &str) -> String {
    let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.to_string();
    };
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match bytes.peek() {
                        Some(&n @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(n - b'0');
                            bytes.next();
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            Some(other) => out.push(other),
            None => out.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `-12,3 +14,2 @@ ...` → `(14, 2)`; a count left out is 1.
fn added_range(hunk: &str) -> Option<(u32, u32)> {
    let plus = hunk.split_whitespace().find(|w| w.starts_with('+'))?;
    let mut parts = plus[1..].splitn(2, ',');
    let start = parts.next()?.parse().ok()?;
    let count = match parts.next() {
        Some(c) => c.parse().ok()?,
        None => 1,
    };
    Some((start, count))
}

/// Runs git in `dir` and returns its output; an error says what failed.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .map_err(|e| format!("--changed-since needs git: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "--changed-since: `git {}` failed in {}: {}",
            args.join(" "),
            dir.display(),
            err.trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| "--changed-since: git printed invalid UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_the_added_lines() {
        assert_eq!(added_range("-12,3 +14,2 @@ fn x()"), Some((14, 2)));
        assert_eq!(added_range("-12 +14 @@"), Some((14, 1)));
        assert_eq!(added_range("-12,3 +11,0 @@"), Some((11, 0)));
        assert_eq!(added_range("garbage"), None);
    }

    #[test]
    fn quoted_paths_are_unescaped() {
        assert_eq!(unquote("b/plain.py"), "b/plain.py");
        assert_eq!(unquote("\"b/a\\\"q.py\""), "b/a\"q.py");
        assert_eq!(unquote("\"b/caf\\303\\251.py\""), "b/café.py");
        assert_eq!(unquote("\"b/tab\\there.py\""), "b/tab\there.py");
        let diff = "+++ \"b/a\\\"q.py\"\n@@ -0,0 +1 @@\n+x\n";
        let c = ChangedLines::parse_diff(diff, Path::new("/r"));
        assert!(c.touches(Path::new("/r/a\"q.py"), 1, 1));
    }

    #[test]
    fn a_diff_is_read_per_file() {
        let diff = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -3,0 +4,2 @@\n+x\n+y\n@@ -9 +11 @@\n-z\n+w\ndiff --git a/gone.py b/gone.py\n--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n";
        let c = ChangedLines::parse_diff(diff, Path::new("/r"));
        let a = Path::new("/r/a.py");
        assert!(c.touches(a, 4, 4));
        assert!(c.touches(a, 5, 7));
        assert!(!c.touches(a, 6, 10));
        assert!(c.touches(a, 11, 11));
        assert!(!c.touches(a, 1, 3));
        assert!(!c.touches(Path::new("/r/gone.py"), 1, 2));
    }
}
