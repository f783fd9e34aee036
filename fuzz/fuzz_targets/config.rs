#![no_main]
//! The configuration parser and validator, as `unsnarl.toml` and as
//! `pyproject.toml`, then the filter built from a valid configuration.
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use unsnarl::config::schema::{Root, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for (name, root) in [
        ("unsnarl.toml", Root::Document),
        ("pyproject.toml", Root::PyprojectTool),
    ] {
        match parse(Path::new(name), text, root) {
            Ok(Some(c)) => {
                let _ = unsnarl::filter::Filter::new(
                    c.min_severity,
                    &c.per_file_ignores,
                    Some(Path::new("/project").to_path_buf()),
                );
            }
            Ok(None) => {}
            // Every error renders (file, line, message).
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
});
