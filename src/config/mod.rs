//! Configuration: discovery (upward from the scanned path), parsing and
//! validation (with file and line in every error), and the typed result.
//!
//! Files, in order of precedence within one directory: `unsnarl.toml`,
//! `.unsnarl.toml`, `pyproject.toml` with a `[tool.unsnarl]` table. The
//! first directory (from the start upward) holding one of them wins; there
//! is no merging of several files.

mod error;
pub mod schema;

pub use error::ConfigError;
pub use schema::{Config, KEYS, Root};

use std::path::{Path, PathBuf};

/// A configuration and where it came from.
#[derive(Debug, Default, Clone)]
pub struct Loaded {
    pub config: Config,
    /// The file (`None` when no file was found or `--no-config`).
    pub path: Option<PathBuf>,
    /// The directory `per-file-ignores` globs are relative to.
    pub dir: Option<PathBuf>,
}

const CANDIDATES: &[(&str, Root)] = &[
    ("unsnarl.toml", Root::Document),
    (".unsnarl.toml", Root::Document),
    ("pyproject.toml", Root::PyprojectTool),
];

/// Finds and loads the configuration for a scan starting at `start` (a file
/// or a directory, absolute).
pub fn discover(start: &Path) -> Result<Loaded, ConfigError> {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let mut dir = if start.is_dir() {
        Some(start.as_path())
    } else {
        start.parent()
    };
    while let Some(d) = dir {
        for (name, root) in CANDIDATES {
            let p = d.join(name);
            if !p.is_file() {
                continue;
            }
            let text = read(&p)?;
            // A pyproject.toml that does not mention us is none of our
            // business, even when it is not valid TOML.
            if *root == Root::PyprojectTool && !text.contains("unsnarl") {
                continue;
            }
            if let Some(config) = schema::parse(&p, &text, *root)? {
                return Ok(Loaded {
                    config,
                    dir: Some(d.to_path_buf()),
                    path: Some(p),
                });
            }
        }
        dir = d.parent();
    }
    Ok(Loaded::default())
}

/// Loads an explicit `--config FILE`. A file named `pyproject.toml` is read
/// from its `[tool.unsnarl]` table; any other file is a whole unsnarl config.
pub fn load_file(path: &Path) -> Result<Loaded, ConfigError> {
    let text = read(path)?;
    let root = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        Root::PyprojectTool
    } else {
        Root::Document
    };
    let config = schema::parse(path, &text, root)?.unwrap_or_default();
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(Loaded {
        config,
        dir: abs.parent().map(Path::to_path_buf),
        path: Some(path.to_path_buf()),
    })
}

/// Configuration files larger than this are not read.
pub const MAX_CONFIG_BYTES: u64 = 10 * 1024 * 1024;

fn read(path: &Path) -> Result<String, ConfigError> {
    let io = |message: String| ConfigError::Io {
        path: path.to_path_buf(),
        message,
    };
    // Checked before opening: `--config` naming a FIFO would block, and
    // `/dev/zero` would never end.
    let md = std::fs::metadata(path).map_err(|e| io(e.to_string()))?;
    if !md.is_file() {
        return Err(io("not a regular file".into()));
    }
    if md.len() > MAX_CONFIG_BYTES {
        return Err(io(format!(
            "larger than {} MiB; not a configuration file",
            MAX_CONFIG_BYTES / (1024 * 1024)
        )));
    }
    std::fs::read_to_string(path).map_err(|e| io(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_walks_up_and_prefers_unsnarl_toml() {
        let t = tempfile::tempdir().unwrap();
        let sub = t.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            t.path().join("pyproject.toml"),
            "[tool.unsnarl]\nthreads = 2\n",
        )
        .unwrap();
        let l = discover(&sub).unwrap();
        assert_eq!(l.config.threads, Some(2));
        assert!(l.path.unwrap().ends_with("pyproject.toml"));
        std::fs::write(t.path().join("a/.unsnarl.toml"), "threads = 3\n").unwrap();
        assert_eq!(discover(&sub).unwrap().config.threads, Some(3));
        std::fs::write(t.path().join("a/unsnarl.toml"), "threads = 4\n").unwrap();
        assert_eq!(discover(&sub).unwrap().config.threads, Some(4));
    }

    #[test]
    fn a_pyproject_without_our_table_is_skipped() {
        let t = tempfile::tempdir().unwrap();
        let sub = t.path().join("pkg");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(t.path().join("unsnarl.toml"), "threads = 5\n").unwrap();
        std::fs::write(sub.join("pyproject.toml"), "[tool.black]\nx = 1\n").unwrap();
        assert_eq!(discover(&sub).unwrap().config.threads, Some(5));
    }
}
