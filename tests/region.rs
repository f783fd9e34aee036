//! The parse-tree regions of the binary's allocator (`crates/alloc`) change
//! no result: the same scan, in one process with the binary's allocator,
//! regions on and then off. The tree holds every language's examples and
//! fixtures, a large Python file, and files that do not parse; the regions
//! keep little between files, so that the pages past it are given back
//! after almost every file.

mod common;

use common::{Tree, inproc};
use std::path::Path;
use unsnarl::frontend::Builtin;

#[global_allocator]
static GLOBAL: unsnarl_alloc::ScanAllocator = unsnarl_alloc::ScanAllocator;

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Thousands of functions, each with two bugs the rules report.
fn large_python() -> String {
    let mut s = String::from("import asyncio\nimport time\n\n");
    for i in 0..2000 {
        s.push_str(&format!(
            "async def handler_{i}(items):\n    time.sleep({i})\n    asyncio.create_task(work(items[{i}]))\n    return [x * {i} for x in items if x]\n\n"
        ));
    }
    s
}

#[test]
fn findings_are_the_same_with_and_without_regions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let t = Tree::new();
    for part in ["examples", "tests/fixtures"] {
        let to = t.join(part);
        std::fs::create_dir_all(&to).unwrap();
        copy_tree(&root.join(part), &to);
    }
    t.write("large/generated_like.py", large_python());
    t.write("broken/a.py", "def f(:\n    await\nclass\n");
    t.write("broken/b.py", "async def g():\n    asyncio.sleep(1\n");
    // A generous per-file budget: on a loaded machine the debug build may
    // take longer than the default over the large file, which would then
    // be skipped in one run and not the other.
    let args = [
        "check",
        "--no-config",
        "--no-cache",
        "--format",
        "json",
        "-j",
        "2",
        "--file-timeout",
        "600",
        ".",
    ];

    // SAFETY: `ScanAllocator` is this test binary's global allocator.
    unsafe { unsnarl_alloc::enable() };
    unsnarl_alloc::set_keep_bytes(64 << 10);
    let with = inproc(t.path(), &args, &Builtin);
    unsnarl_alloc::disable();
    let without = inproc(t.path(), &args, &Builtin);

    let findings = |v: &serde_json::Value| v["findings"].clone();
    let (a, b) = (with.json(), without.json());
    assert_eq!(with.code, without.code);
    assert!(
        a["findings"].as_array().map_or(0, Vec::len) > 4000,
        "the large file's bugs are reported"
    );
    assert_eq!(findings(&a), findings(&b));
    assert_eq!(a["syntax_errors"], b["syntax_errors"]);
    assert_eq!(with.stderr, without.stderr);
}
