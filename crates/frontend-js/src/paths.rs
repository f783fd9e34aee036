//! Module names and import specifiers: everything that is derived from paths.
//!
//! A JS/TS module is named by its project path without extension, with `/`
//! separators and a trailing `/index` dropped (`src/db/index.ts` → `src/db`),
//! because that is how other files import it (`import db from './db'`).

/// Extensions of JS/TS source files; stripped from module names and relative
/// specifiers.
const SOURCE_EXTS: [&str; 8] = ["js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"];

/// The module name of a file: `src/lib/db.ts` → `src/lib/db`,
/// `src/db/index.ts` → `src/db`, `types/api.d.ts` → `types/api`.
pub fn module_name(rel_path: &str) -> String {
    let path = rel_path.strip_prefix("./").unwrap_or(rel_path);
    strip_index(strip_source_ext(path)).to_string()
}

/// The directory part of a path (`src/a/b.ts` → `src/a`, `b.ts` → ``).
pub fn dir_of(rel_path: &str) -> &str {
    match rel_path.rfind('/') {
        Some(i) => &rel_path[..i],
        None => "",
    }
}

/// Strips a JS/TS extension (and the `.d` of declaration files) from the last
/// path segment; other extensions (`.json`, `.css`) are kept because they
/// name different things than the source module would.
fn strip_source_ext(path: &str) -> &str {
    let file_start = path.rfind('/').map_or(0, |i| i + 1);
    let Some(dot) = path[file_start..].rfind('.') else {
        return path;
    };
    let dot = file_start + dot;
    if dot == file_start || !SOURCE_EXTS.contains(&&path[dot + 1..]) {
        return path;
    }
    let stem = &path[..dot];
    let ts_family = matches!(&path[dot + 1..], "ts" | "mts" | "cts" | "tsx");
    match stem.strip_suffix(".d") {
        Some(s) if ts_family && s.len() > file_start => s,
        _ => stem,
    }
}

fn strip_index(path: &str) -> &str {
    path.strip_suffix("/index").unwrap_or(path)
}

/// The qualified module an import specifier refers to, from a file in
/// directory `importer_dir`: `node:fs` → `fs`; bare specifiers stay as
/// written; relative ones are joined, normalized and stripped like module
/// names (`../lib/x.js` from `src/app` → `src/lib/x`).
pub fn resolve_specifier(spec: &str, importer_dir: &str) -> String {
    if let Some(rest) = spec.strip_prefix("node:") {
        return rest.to_string();
    }
    let relative = spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../");
    if !relative {
        return spec.to_string();
    }
    let mut segs: Vec<&str> = Vec::new();
    for seg in importer_dir.split('/').chain(spec.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                // Above the scan root there is nothing to cancel: keep the
                // `..` so the name stays distinct from in-tree modules.
                if matches!(segs.last(), Some(s) if *s != "..") {
                    segs.pop();
                } else {
                    segs.push("..");
                }
            }
            s => segs.push(s),
        }
    }
    let joined = segs.join("/");
    strip_index(strip_source_ext(&joined)).to_string()
}

/// Test files by the usual JS conventions: `*.test.*`, `*.spec.*`, a
/// `test.js` outside the source folders, or a file under a `__tests__/`,
/// `test/` or `tests/` directory.
pub fn is_test_path(rel_path: &str) -> bool {
    let mut parts = rel_path.split('/').peekable();
    let mut parent = "";
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            // `a.test.ts`, `a.spec.js`, or a package's own `test.js` (not a
            // module named `test` among its sources, `src/test.ts`).
            let stem = part.split('.').next().unwrap_or(part);
            return part.contains(".test.")
                || part.contains(".spec.")
                || (part.contains('.')
                    && matches!(stem, "test" | "tests" | "spec")
                    && !matches!(parent, "src" | "lib" | "dist"));
        }
        parent = part;
        if matches!(part, "__tests__" | "test" | "tests") {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names() {
        assert_eq!(module_name("src/lib/db.ts"), "src/lib/db");
        assert_eq!(module_name("src/db/index.ts"), "src/db");
        assert_eq!(module_name("types/api.d.ts"), "types/api");
        assert_eq!(module_name("types/api.d.mts"), "types/api");
        assert_eq!(module_name("app.jsx"), "app");
        assert_eq!(module_name("index.js"), "index");
        assert_eq!(module_name("data/config.json"), "data/config.json");
        assert_eq!(module_name("x.d.js"), "x.d");
        assert_eq!(module_name(".eslintrc.js"), ".eslintrc");
        assert_eq!(module_name("noext"), "noext");
    }

    #[test]
    fn specifiers() {
        assert_eq!(resolve_specifier("node:fs", "src"), "fs");
        assert_eq!(resolve_specifier("fs/promises", "src"), "fs/promises");
        assert_eq!(
            resolve_specifier("@aws-sdk/client-s3", "src"),
            "@aws-sdk/client-s3"
        );
        assert_eq!(resolve_specifier("./db", "src"), "src/db");
        assert_eq!(resolve_specifier("../lib/x.js", "src/app"), "src/lib/x");
        assert_eq!(resolve_specifier("./db/index.ts", "src"), "src/db");
        assert_eq!(resolve_specifier("./a/./b/../c", ""), "a/c");
        assert_eq!(resolve_specifier("../up", ""), "../up");
        assert_eq!(resolve_specifier("..", "src/a"), "src");
        assert_eq!(resolve_specifier("./data.json", "src"), "src/data.json");
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("src/a.test.ts"));
        assert!(is_test_path("src/a.spec.js"));
        assert!(is_test_path("src/__tests__/a.js"));
        assert!(is_test_path("test/a.js"));
        assert!(is_test_path("pkg/tests/helpers/a.ts"));
        assert!(is_test_path("pkg/test.js"));
        assert!(is_test_path("tests.ts"));
        assert!(!is_test_path("src/testing.ts"));
        assert!(!is_test_path("src/tested.js"));
        assert!(!is_test_path("src/contest/a.ts"));
        assert!(!is_test_path("src/test.ts"));
        assert!(!is_test_path("latest/a.ts"));
    }
}
