//! Import forms and resolution through them.

use super::*;

fn imports(m: &FileModel) -> Vec<(String, String)> {
    m.imports
        .iter()
        .map(|i| (i.local.to_string(), i.target.to_string()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn plain_import_binds_the_top_level_package() {
    let m = lower("import time\nimport os.path\nimport a.b.c\ntime.sleep(1)\na.b.c.f()\n");
    assert_eq!(
        imports(&m),
        pairs(&[("time", "time"), ("os", "os"), ("a", "a")])
    );
    assert_eq!(target(&m, "sleep").as_deref(), Some("time.sleep"));
    assert_eq!(target(&m, "f").as_deref(), Some("a.b.c.f"));
}

#[test]
fn import_as_binds_the_alias_to_the_full_module() {
    let m = lower("import time as t\nimport a.b as c\nt.sleep(1)\nc.run()\n");
    assert_eq!(imports(&m), pairs(&[("t", "time"), ("c", "a.b")]));
    assert_eq!(target(&m, "sleep").as_deref(), Some("time.sleep"));
    assert_eq!(target(&m, "run").as_deref(), Some("a.b.run"));
}

#[test]
fn from_import_with_and_without_alias() {
    let m = lower(
        "from time import sleep\nfrom asyncio import create_task as spawn, Queue\n\
         sleep(1)\nspawn(work())\nq = Queue(maxsize=3)\n",
    );
    assert_eq!(
        imports(&m),
        pairs(&[
            ("sleep", "time.sleep"),
            ("spawn", "asyncio.create_task"),
            ("Queue", "asyncio.Queue"),
        ])
    );
    assert_eq!(target(&m, "sleep").as_deref(), Some("time.sleep"));
    assert_eq!(target(&m, "spawn").as_deref(), Some("asyncio.create_task"));
    let q = call(&m, "Queue");
    assert_eq!(q.target.as_deref(), Some("asyncio.Queue"));
    assert!(q.kwarg("maxsize").is_some());
}

#[test]
fn parenthesized_multi_line_from_import() {
    let m = lower(
        "from concurrent.futures import (\n    ThreadPoolExecutor,\n    wait as w,\n)\nThreadPoolExecutor()\n",
    );
    assert_eq!(
        imports(&m),
        pairs(&[
            (
                "ThreadPoolExecutor",
                "concurrent.futures.ThreadPoolExecutor"
            ),
            ("w", "concurrent.futures.wait"),
        ])
    );
    assert_eq!(
        target(&m, "ThreadPoolExecutor").as_deref(),
        Some("concurrent.futures.ThreadPoolExecutor")
    );
}

#[test]
fn relative_imports_resolve_against_the_package() {
    let src = "from . import sibling\nfrom .db import query\nfrom .. import top\nfrom ..util.x import y as z\nfrom ... import beyond\n";
    let m = lower_at("app/api/handlers.py", src);
    assert_eq!(m.module, "app.api.handlers");
    assert_eq!(
        imports(&m),
        pairs(&[
            ("sibling", "app.api.sibling"),
            ("query", "app.api.db.query"),
            ("top", "app.top"),
            ("z", "app.util.x.y"),
            // Above the scan root: what is left.
            ("beyond", "beyond"),
        ])
    );
}

/// A package under a folder that cannot be part of an import (an unpacked
/// wheel, `name-version`): its relative imports give the names its users'
/// absolute imports give, which the knowledge tables know.
#[test]
fn relative_imports_below_a_versioned_folder_are_absolute_names() {
    let m = lower_at(
        "vendor/redis-8.1.0-py3-none-any/redis/asyncio/cluster.py",
        "from ..exceptions import ConnectionError
from . import client
",
    );
    assert_eq!(m.module, "redis.asyncio.cluster");
    assert_eq!(
        imports(&m),
        pairs(&[
            ("ConnectionError", "redis.exceptions.ConnectionError"),
            ("client", "redis.asyncio.client"),
        ])
    );
}

#[test]
fn relative_imports_in_a_package_init_start_at_the_package_itself() {
    let m = lower_at(
        "app/api/__init__.py",
        "from . import routes\nfrom .models import User\n",
    );
    assert_eq!(m.module, "app.api");
    assert_eq!(
        imports(&m),
        pairs(&[
            ("routes", "app.api.routes"),
            ("User", "app.api.models.User")
        ])
    );
}

#[test]
fn relative_import_in_a_top_level_module() {
    let m = lower_at(
        "main.py",
        "from . import helpers\nfrom .lib import f\nf()\n",
    );
    assert_eq!(
        imports(&m),
        pairs(&[("helpers", "helpers"), ("f", "lib.f")])
    );
    assert_eq!(target(&m, "f").as_deref(), Some("lib.f"));
}

#[test]
fn star_import_is_recorded_and_resolves_unknown_names() {
    let m = lower("from asyncio import *\nasync def main():\n    await sleep(1)\n    print(1)\n");
    assert_eq!(imports(&m), pairs(&[("*", "asyncio")]));
    assert_eq!(target(&m, "sleep").as_deref(), Some("asyncio.sleep"));
    // Builtins are still builtins.
    assert_eq!(target(&m, "print").as_deref(), Some("builtins.print"));
}

#[test]
fn two_star_imports_leave_unknown_names_unresolved() {
    let m = lower("from asyncio import *\nfrom trio import *\nsleep(1)\n");
    assert_eq!(target(&m, "sleep"), None);
}

#[test]
fn imports_inside_functions_are_scoped_to_the_function() {
    let m = lower(
        "def f():\n    import time\n    time.sleep(1)\n\ndef g(time):\n    time.sleep(2)\n\ntime.sleep(3)\n",
    );
    let sleeps = calls(&m, "sleep");
    assert_eq!(sleeps.len(), 3);
    let by_arg = |n: i128| {
        sleeps
            .iter()
            .find(|c| m.int_value(c.args[0].value) == Some(n))
            .unwrap()
    };
    assert_eq!(by_arg(1).target.as_deref(), Some("time.sleep"));
    // A parameter named `time` is not the module.
    assert_eq!(by_arg(2).target, None);
    // Module level: `time` is not imported here.
    assert_eq!(by_arg(3).target, None);
    // The binding is still recorded for the file.
    assert_eq!(imports(&m), pairs(&[("time", "time")]));
}

#[test]
fn conditional_imports_at_module_level_bind() {
    let m = lower(
        "try:\n    import ujson as json\nexcept ImportError:\n    import json\n    json = None\n\
         if TYPE_CHECKING:\n    from asyncio import Queue\n\ndef f(q: Queue):\n    json.dumps(q)\n",
    );
    assert_eq!(target(&m, "dumps").as_deref(), Some("ujson.dumps"));
    let f = func(&m, "pkg.mod.f");
    assert_eq!(
        f.params[0].ty.as_ref().unwrap().resolved.as_deref(),
        Some("asyncio.Queue")
    );
}

/// The module's body imports one name twice, unconditionally: the later
/// import is what the functions see.
#[test]
fn a_later_top_level_import_rebinds_the_name() {
    let m = lower(
        "from asyncio import sleep\nimport os\nfrom time import sleep\n\
         async def f():\n    sleep(1)\n",
    );
    assert_eq!(target(&m, "sleep").as_deref(), Some("time.sleep"));
    assert_eq!(
        imports(&m),
        pairs(&[
            ("sleep", "asyncio.sleep"),
            ("os", "os"),
            ("sleep", "time.sleep")
        ])
    );
}

#[test]
fn import_spans_cover_the_alias() {
    let src = "import time as t, os\n";
    let m = lower(src);
    let spans: Vec<&str> = m
        .imports
        .iter()
        .map(|i| &src[i.span.start as usize..i.span.end as usize])
        .collect();
    assert_eq!(spans, ["time as t", "os"]);
}

#[test]
fn import_statements_lower_to_pass() {
    let m = lower("import os\nfrom os import path\n");
    assert_dump(&m, &["fn#0 Module <module> ()", "pass", "pass"]);
}

#[test]
fn future_and_dunder_imports_do_not_crash() {
    let m = lower("from __future__ import annotations\nimport __main__\n");
    assert_eq!(
        imports(&m),
        pairs(&[
            ("annotations", "__future__.annotations"),
            ("__main__", "__main__")
        ])
    );
}

#[test]
fn module_dunders_do_not_come_from_star_imports() {
    let m = lower("from os import *\nif __name__ == '__main__':\n    getcwd()\n");
    assert_dump(&m, &["l: name __name__", "expr: call getcwd =os.getcwd"]);
}

/// Two branches of one `if` importing different things under one name (a
/// package built both sync and async): the name stands for neither. The
/// same import in both branches, a `try`/`except ImportError` fallback and
/// an `if` on the interpreter's version still resolve.
#[test]
fn alternative_imports_in_an_if_resolve_to_neither() {
    let m = lower(
        "if BUILD_REST:\n    from builtins import open as file_open\n    from json import loads\n\
         else:\n    from aiofiles import open as file_open\n    from json import loads\n\
         try:\n    import ujson as fast\nexcept ImportError:\n    import json as fast\n\
         async def f():\n    async with file_open('a') as fh:\n        return loads(fast.dumps(await fh.read()))\n",
    );
    let open = target(&m, "file_open");
    assert!(
        !matches!(open.as_deref(), Some("builtins.open" | "aiofiles.open")),
        "{open:?}"
    );
    assert_eq!(target(&m, "loads").as_deref(), Some("json.loads"));
    assert_eq!(target(&m, "dumps").as_deref(), Some("ujson.dumps"));
    // Picked by the interpreter's version: one API, from where it lives.
    let m = lower(
        "import sys
if sys.version_info[:2] < (3, 11):
    from async_timeout import timeout as asyncio_timeout
         else:
    from asyncio import timeout as asyncio_timeout
asyncio_timeout(5)
",
    );
    assert_eq!(
        target(&m, "asyncio_timeout").as_deref(),
        Some("async_timeout.timeout")
    );
}
