//! Configuration errors. Each one names the file and, when the TOML parser
//! gave a span, the line, so that `unsnarl.toml:3: unknown key "selct"` can
//! be fixed without guessing.

use std::fmt;
use std::path::PathBuf;

/// What went wrong in a configuration file. The CLI prints it and exits 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The file could not be read (missing `--config FILE`, permissions).
    Io { path: PathBuf, message: String },
    /// The file is not valid TOML.
    Syntax {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// A key the schema does not know.
    UnknownKey {
        path: PathBuf,
        line: usize,
        key: String,
        expected: Vec<String>,
    },
    /// A value of the wrong TOML type.
    WrongType {
        path: PathBuf,
        line: usize,
        key: String,
        expected: &'static str,
        found: &'static str,
    },
    /// A value of the right type that is not allowed (unknown rule in
    /// `select`, bad glob, unknown severity).
    InvalidValue {
        path: PathBuf,
        line: usize,
        key: String,
        value: String,
        allowed: String,
    },
}

impl ConfigError {
    /// The file the error is about.
    pub fn path(&self) -> &PathBuf {
        match self {
            ConfigError::Io { path, .. }
            | ConfigError::Syntax { path, .. }
            | ConfigError::UnknownKey { path, .. }
            | ConfigError::WrongType { path, .. }
            | ConfigError::InvalidValue { path, .. } => path,
        }
    }
}

impl ConfigError {
    /// Rewrites the file path (to show it relative to the current directory).
    pub fn map_path(mut self, f: impl FnOnce(&PathBuf) -> PathBuf) -> ConfigError {
        let p = match &mut self {
            ConfigError::Io { path, .. }
            | ConfigError::Syntax { path, .. }
            | ConfigError::UnknownKey { path, .. }
            | ConfigError::WrongType { path, .. }
            | ConfigError::InvalidValue { path, .. } => path,
        };
        *p = f(p);
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = |path: &PathBuf| path.display().to_string();
        match self {
            ConfigError::Io { path, message } => write!(f, "{}: cannot read: {message}", p(path)),
            ConfigError::Syntax {
                path,
                line: Some(line),
                message,
            } => write!(f, "{}:{line}: invalid TOML: {message}", p(path)),
            ConfigError::Syntax {
                path,
                line: None,
                message,
            } => write!(f, "{}: invalid TOML: {message}", p(path)),
            ConfigError::UnknownKey {
                path,
                line,
                key,
                expected,
            } => write!(
                f,
                "{}:{line}: unknown key \"{key}\"; expected one of: {}",
                p(path),
                expected.join(", ")
            ),
            ConfigError::WrongType {
                path,
                line,
                key,
                expected,
                found,
            } => write!(
                f,
                "{}:{line}: key \"{key}\" must be {expected}, found {found}",
                p(path)
            ),
            ConfigError::InvalidValue {
                path,
                line,
                key,
                value,
                allowed,
            } => write!(
                f,
                "{}:{line}: invalid value \"{value}\" for key \"{key}\"; {allowed}",
                p(path)
            ),
        }
    }
}

impl std::error::Error for ConfigError {}
