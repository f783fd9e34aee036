//! Name resolution: imports of every form, globals, module-level
//! definitions, `this.method()`, nested functions, exports.

mod common;
use common::*;

fn imports(m: &unsnarl_model::FileModel) -> Vec<(String, String)> {
    m.imports
        .iter()
        .map(|i| (i.local.to_string(), i.target.to_string()))
        .collect()
}

fn has_import(m: &unsnarl_model::FileModel, local: &str, target: &str) -> bool {
    m.imports
        .iter()
        .any(|i| i.local == local && i.target == target)
}

#[test]
fn default_import_of_a_package_is_the_package() {
    let m = js("import fs from 'fs';\nfs.readFileSync('x');");
    assert_eq!(imports(&m), [("fs".into(), "fs".into())]);
    assert_eq!(target(&m, "readFileSync"), Some("fs.readFileSync"));
    let m = js("import axios from 'axios';\naxios.get('/u');");
    assert_eq!(target(&m, "get"), Some("axios.get"));
}

#[test]
fn namespace_import() {
    let m = js("import * as cp from 'child_process';\ncp.execSync('ls');");
    assert!(has_import(&m, "cp", "child_process"));
    assert_eq!(target(&m, "execSync"), Some("child_process.execSync"));
}

#[test]
fn named_import_with_alias() {
    let m = js("import { readFileSync as r, writeFile } from 'fs';\nr('a'); writeFile('b');");
    assert!(has_import(&m, "r", "fs.readFileSync"));
    assert!(has_import(&m, "writeFile", "fs.writeFile"));
    assert_eq!(target(&m, "r"), Some("fs.readFileSync"));
    assert_eq!(target(&m, "writeFile"), Some("fs.writeFile"));
}

#[test]
fn node_prefix_is_stripped() {
    let m = js("import { setTimeout as sleep } from 'node:timers/promises';\nawait sleep(10);");
    assert!(has_import(&m, "sleep", "timers/promises.setTimeout"));
    assert_eq!(target(&m, "sleep"), Some("timers/promises.setTimeout"));
}

#[test]
fn subpath_and_scoped_packages_stay_as_written() {
    let m = ts("import { readFile } from 'fs/promises';\n\
         import { S3Client } from '@aws-sdk/client-s3';\n\
         await readFile('x');\nnew S3Client({});");
    assert_eq!(target(&m, "readFile"), Some("fs/promises.readFile"));
    let c = call(&m, "S3Client");
    assert!(c.is_new);
    assert_eq!(c.target.as_deref(), Some("@aws-sdk/client-s3.S3Client"));
}

#[test]
fn relative_imports_resolve_to_project_modules() {
    let m = lower_at(
        "src/app/main.ts",
        "import db, { query } from '../lib/db.js';\n\
         import * as util from './util';\n\
         import store from './store/index';\n\
         import cfg from '.';\n\
         db.connect(); query(1); util.run(); store.get(); cfg.load();",
    );
    assert!(has_import(&m, "db", "src/lib/db.default"));
    assert!(has_import(&m, "query", "src/lib/db.query"));
    assert!(has_import(&m, "util", "src/app/util"));
    assert!(has_import(&m, "store", "src/app/store.default"));
    assert!(has_import(&m, "cfg", "src/app.default"));
    assert_eq!(target(&m, "connect"), Some("src/lib/db.default.connect"));
    assert_eq!(target(&m, "query"), Some("src/lib/db.query"));
    assert_eq!(target(&m, "run"), Some("src/app/util.run"));
}

#[test]
fn side_effect_imports_and_reexports_bind_nothing() {
    let m = ts(
        "import './polyfill';\nexport * from './a';\nexport { x as y } from './b';\nexport * as ns from 'c';",
    );
    assert!(m.imports.is_empty(), "{:?}", m.imports);
    assert!(m.functions[0].body.is_empty());
}

#[test]
fn type_imports_are_recorded_for_annotations() {
    let m = ts("import type { Mutex } from 'async-mutex';\nfunction f(m: Mutex) {}");
    assert!(has_import(&m, "Mutex", "async-mutex.Mutex"));
    let p = &func(&m, "f").params[0];
    assert_eq!(
        p.ty.as_ref().unwrap().resolved.as_deref(),
        Some("async-mutex.Mutex")
    );
}

#[test]
fn require_forms() {
    let m = js("const fs = require('fs');\n\
         var cp = require('node:child_process');\n\
         const { execSync: ex, spawn } = require('child_process');\n\
         const { promises: { readFile } } = require('fs');\n\
         const join = require('path').join;\n\
         fs.readFileSync('a'); cp.exec('b'); ex('c'); spawn('d'); readFile('e'); join('f');\n\
         require('os').cpus();\n\
         require('debug')('app');");
    assert!(has_import(&m, "fs", "fs"));
    assert!(has_import(&m, "cp", "child_process"));
    assert!(has_import(&m, "ex", "child_process.execSync"));
    assert!(has_import(&m, "spawn", "child_process.spawn"));
    assert!(has_import(&m, "readFile", "fs.promises.readFile"));
    assert!(has_import(&m, "join", "path.join"));
    assert_eq!(target(&m, "readFileSync"), Some("fs.readFileSync"));
    assert_eq!(target(&m, "exec"), Some("child_process.exec"));
    assert_eq!(target(&m, "ex"), Some("child_process.execSync"));
    assert_eq!(target(&m, "spawn"), Some("child_process.spawn"));
    assert_eq!(target(&m, "readFile"), Some("fs.promises.readFile"));
    assert_eq!(target(&m, "join"), Some("path.join"));
    assert_eq!(target(&m, "cpus"), Some("os.cpus"));
    assert_eq!(target(&m, "require"), Some("require"));
    // Calling the value of `require('debug')` calls the module.
    let debug_call = calls(&m)
        .into_iter()
        .find(|c| c.name.is_empty() && c.target.as_deref() == Some("debug"));
    assert!(debug_call.is_some(), "{}", dump(&m));
}

#[test]
fn require_inside_a_function_is_local_to_it() {
    let m = js(
        "function f() {\n  const cp = require('child_process');\n  cp.execSync('x');\n}\n\
         function g(cp) { cp.execSync('y'); }",
    );
    assert!(has_import(&m, "cp", "child_process"));
    assert_eq!(
        targets(&m, "execSync"),
        [Some("child_process.execSync"), None]
    );
}

#[test]
fn relative_require_is_the_module() {
    let m = lower_at(
        "lib/server.js",
        "const db = require('./db');\ndb.query('x');",
    );
    assert!(has_import(&m, "db", "lib/db"));
    assert_eq!(target(&m, "query"), Some("lib/db.query"));
}

#[test]
fn shadowed_require_is_not_a_module_load() {
    let m = js("function f(require) { const fs = require('fs'); fs.readFileSync(); }");
    assert!(m.imports.is_empty());
    assert_eq!(target(&m, "readFileSync"), None);
}

#[test]
fn dynamic_import() {
    let m = js(
        "async function f() {\n  const m = await import('./lazy.js');\n  m.run();\n  import('fs');\n}",
    );
    assert_eq!(targets(&m, "import"), [Some("import"), Some("import")]);
    assert!(has_import(&m, "m", "src/lazy"));
    assert_eq!(target(&m, "run"), Some("src/lazy.run"));
}

#[test]
fn ts_import_equals() {
    let m =
        ts("import fs = require('fs');\nimport R = fs.promises;\nfs.statSync('x'); R.stat('y');");
    assert!(has_import(&m, "fs", "fs"));
    assert!(has_import(&m, "R", "fs.promises"));
    assert_eq!(target(&m, "statSync"), Some("fs.statSync"));
    assert_eq!(target(&m, "stat"), Some("fs.promises.stat"));
}

#[test]
fn const_aliases_of_imported_values() {
    let m = js("import fs from 'fs';\n\
         const { readFile } = fs.promises;\n\
         const p = fs.promises;\n\
         let q = fs.promises;\n\
         readFile('a'); p.writeFile('b'); q.unlink('c');");
    assert_eq!(target(&m, "readFile"), Some("fs.promises.readFile"));
    assert_eq!(target(&m, "writeFile"), Some("fs.promises.writeFile"));
    // `let` can be reassigned: it is a module variable, not an alias.
    assert_eq!(target(&m, "unlink"), None);
    assert!(dump(&m).contains("recv: name q =src/app.q"), "{}", dump(&m));
}

#[test]
fn members_of_module_variables_are_left_to_the_semantic_pass() {
    // `lock.acquire()` is a method of whatever `lock` holds: the semantic
    // pass types `lock` from `new Mutex()` and resolves the call.
    let m = js("import { Mutex } from 'async-mutex';
         const lock = new Mutex();
         const queue = [];
         export async function f() { const release = await lock.acquire(); queue.push(1); release(); }");
    let c = call(&m, "acquire");
    assert_eq!(c.target, None);
    assert_eq!(m.resolved(c.receiver.unwrap()), Some("src/app.lock"));
    assert_eq!(target(&m, "push"), None);
    assert_eq!(target(&m, "Mutex"), Some("async-mutex.Mutex"));
    // Functions, classes and namespaces do extend.
    let m = js("function helper() {}
class K { static make() {} }
helper.call(null);
K.make();");
    assert_eq!(target(&m, "call"), Some("src/app.helper.call"));
    assert_eq!(target(&m, "make"), Some("src/app.K.make"));
}

#[test]
fn globals_resolve_to_themselves() {
    let m = js(
        "fetch('/x');\nsetTimeout(f, 10);\nsetInterval(f, 10);\nsetImmediate(f);\n\
         queueMicrotask(f);\nPromise.all([]);\nPromise.resolve(1);\nnew Promise(r => r());\n\
         process.nextTick(f);\nprocess.on('exit', f);\nAtomics.wait(a, 0, 0);\nJSON.parse(s);\n\
         console.log(1);\nnew XMLHttpRequest();\nnew AbortController();\nAbortSignal.timeout(5);\n\
         window.setTimeout(f, 1);\nglobalThis.fetch('/y');",
    );
    for (name, t) in [
        ("fetch", "fetch"),
        ("setTimeout", "setTimeout"),
        ("setInterval", "setInterval"),
        ("setImmediate", "setImmediate"),
        ("queueMicrotask", "queueMicrotask"),
        ("all", "Promise.all"),
        ("resolve", "Promise.resolve"),
        ("Promise", "Promise"),
        ("nextTick", "process.nextTick"),
        ("on", "process.on"),
        ("wait", "Atomics.wait"),
        ("parse", "JSON.parse"),
        ("log", "console.log"),
        ("XMLHttpRequest", "XMLHttpRequest"),
        ("AbortController", "AbortController"),
        ("timeout", "AbortSignal.timeout"),
    ] {
        assert_eq!(target(&m, name), Some(t), "{name}");
    }
    assert!(call(&m, "Promise").is_new);
    assert_eq!(
        targets(&m, "setTimeout"),
        [Some("setTimeout"), Some("setTimeout")]
    );
    assert_eq!(targets(&m, "fetch"), [Some("fetch"), Some("fetch")]);
}

#[test]
fn locals_and_params_shadow_globals_and_imports() {
    let m = js("import fs from 'fs';\n\
         function a(fetch) { fetch('/x'); }\n\
         function b() { const fs = makeFs(); fs.readFileSync(); }\n\
         function c() { setTimeout(f); let setTimeout = g; }\n\
         function d() { try {} catch (process) { process.exit(); } }\n\
         function e() { for (const console of xs) console.log(); }\n\
         fs.readFileSync();");
    assert_eq!(target(&m, "fetch"), None);
    assert_eq!(targets(&m, "readFileSync"), [None, Some("fs.readFileSync")]);
    assert_eq!(target(&m, "setTimeout"), None, "hoisted local shadows");
    assert_eq!(target(&m, "exit"), None);
    assert_eq!(target(&m, "log"), None);
}

#[test]
fn undefined_is_a_null_literal() {
    let m = js("f(undefined);");
    let c = call(&m, "f");
    assert_eq!(m.literal(c.args[0].value), Some(&unsnarl_model::Lit::Null));
}

#[test]
fn module_level_definitions() {
    let m = js("main();\n\
         async function main() { await helper(); run(); new Store(); }\n\
         function helper() {}\n\
         const run = async () => {};\n\
         const legacy = function () {};\n\
         class Store {}\n\
         let counter = 0;\n\
         function inc() { counter += 1; legacy(); }");
    assert_eq!(target(&m, "main"), Some("src/app.main"), "hoisted");
    assert_eq!(target(&m, "helper"), Some("src/app.helper"));
    assert_eq!(target(&m, "run"), Some("src/app.run"));
    assert_eq!(target(&m, "legacy"), Some("src/app.legacy"));
    assert_eq!(target(&m, "Store"), Some("src/app.Store"));
    assert_eq!(func(&m, "run").qualname, "src/app.run");
    assert!(func(&m, "src/app.run").is_async);
    assert_eq!(func(&m, "legacy").qualname, "src/app.legacy");
    // Module variables carry their qualified name where they are used.
    let d = dump(&m);
    assert!(d.contains("target: name counter =src/app.counter"), "{d}");
}

#[test]
fn block_scoped_module_code_is_local() {
    let m = js(
        "import x from 'x';\nfor (const item of items) { use(item); }\nif (a) { const x = 1; }\nx.go();",
    );
    let d = dump(&m);
    assert!(d.contains("target: name item\n"), "{d}");
    // A block-local declaration elsewhere does not erase the import.
    assert_eq!(target(&m, "go"), Some("x.go"));
}

#[test]
fn this_method_resolves_to_the_class_method() {
    let m = ts("class Worker {\n\
           async run() { await this.step(); this.missing(); const f = () => this.step(); function g(this: any) { this.step(); } }\n\
           step() {}\n\
           static make() { return new Worker(); }\n\
         }\n\
         Worker.make();");
    assert_eq!(
        targets(&m, "step"),
        [
            Some("src/app.Worker.step"),
            Some("src/app.Worker.step"),
            None
        ]
    );
    assert_eq!(target(&m, "missing"), None);
    assert_eq!(target(&m, "make"), Some("src/app.Worker.make"));
    assert_eq!(target(&m, "Worker"), Some("src/app.Worker"));
    let c = call(&m, "step");
    assert_eq!(m.name_of(c.receiver.unwrap()), Some("this"));
}

#[test]
fn nested_functions_are_named_under_their_parent() {
    let m = js("async function outer() {\n\
           async function inner() {}\n\
           const arrow = async () => {};\n\
           let later = () => {};\n\
           await inner(); await arrow(); later();\n\
           setTimeout(function tick() { tick(); });\n\
         }\n\
         function other() { inner(); }");
    assert_eq!(func(&m, "inner").qualname, "src/app.outer.inner");
    assert_eq!(func(&m, "inner").parent, Some(func_id(&m, "src/app.outer")));
    assert_eq!(func(&m, "arrow").qualname, "src/app.outer.arrow");
    assert_eq!(func(&m, "later").qualname, "src/app.outer.later");
    assert_eq!(func(&m, "tick").qualname, "src/app.outer.tick");
    assert_eq!(targets(&m, "inner"), [Some("src/app.outer.inner"), None]);
    assert_eq!(target(&m, "arrow"), Some("src/app.outer.arrow"));
    assert_eq!(target(&m, "later"), Some("src/app.outer.later"));
    assert_eq!(
        target(&m, "tick"),
        Some("src/app.outer.tick"),
        "recursion by own name"
    );
    assert_eq!(
        module_kinds(&m),
        ["funcdef", "funcdef"],
        "nested definitions are not module statements"
    );
    let outer = func(&m, "src/app.outer");
    assert_eq!(kinds(&m, &outer.body)[0], "funcdef");
}

#[test]
fn functions_inside_an_anonymous_function_are_not_module_level_names() {
    // A bundler's module wrapper: the helper `b` inside it is not the
    // module-level `b` (a variable here), and calls reach each by scope.
    let m = js("var b = Object.getOwnPropertyNames;\n\
         var w = (f) => f;\n\
         var mod = w(() => {\n\
           async function b() {}\n\
           b();\n\
         });\n\
         b(mod);");
    let inner = func(&m, "b");
    assert!(inner.is_async);
    assert_ne!(&*inner.qualname, "src/app.b");
    assert!(inner.qualname.starts_with("src/app.<anonymous@"));
    let got = targets(&m, "b");
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[0],
        Some(&*inner.qualname),
        "the call inside the wrapper"
    );
    assert_ne!(got[1], Some(&*inner.qualname), "the module-level call");
}

#[test]
fn default_and_renamed_exports_name_the_definition_as_imported() {
    let m = ts("export default function App() { App(); }\n\
         function run() {}\n\
         export { run as start };\n\
         function keep() {}\n\
         export { keep, keep as alias };");
    assert_eq!(func(&m, "App").qualname, "src/app.default");
    assert_eq!(target(&m, "App"), Some("src/app.default"));
    assert_eq!(func(&m, "run").qualname, "src/app.start");
    assert_eq!(func(&m, "keep").qualname, "src/app.keep");
}

#[test]
fn anonymous_default_exports() {
    let m = ts("export default async function () {}");
    let f = &m.functions[1];
    assert_eq!(f.qualname, "src/app.default");
    assert!(f.is_async);
    let m = ts("export default async () => { await x(); };");
    let f = &m.functions[1];
    assert_eq!(f.qualname, "src/app.default");
    assert_eq!(module_kinds(&m), ["assign"]);
    let m = ts("export default class { run() {} }");
    assert_eq!(m.types[0].qualname, "src/app.default");
    assert_eq!(func(&m, "run").qualname, "src/app.default.run");
}

#[test]
fn commonjs_exports() {
    let m = lower_at(
        "lib/jobs.js",
        "module.exports = { start: run, stop, async reset() {} };\n\
         exports.enqueue = async function (job) {};\n\
         module.exports.drain = async () => {};\n\
         function run() {}\n\
         function stop() {}",
    );
    assert_eq!(func(&m, "run").qualname, "lib/jobs.start");
    assert_eq!(func(&m, "stop").qualname, "lib/jobs.stop");
    assert_eq!(func(&m, "reset").qualname, "lib/jobs.reset");
    assert_eq!(func(&m, "enqueue").qualname, "lib/jobs.enqueue");
    assert!(func(&m, "enqueue").is_async);
    assert_eq!(func(&m, "drain").qualname, "lib/jobs.drain");
}

#[test]
fn object_literal_methods_are_named_through_their_binding() {
    let m = js("const api = {\n\
           async get(url) { return fetch(url); },\n\
           post: async (u) => fetch(u),\n\
           nested: { deep() {} },\n\
           [computed]() {},\n\
         };\n\
         api.get('/x');\n\
         function f() { const local = { m() {} }; }");
    assert_eq!(func(&m, "get").qualname, "src/app.api.get");
    assert_eq!(func(&m, "post").qualname, "src/app.api.post");
    assert_eq!(func(&m, "deep").qualname, "src/app.api.nested.deep");
    assert_eq!(target(&m, "get"), Some("src/app.api.get"));
    // Local objects' methods stay anonymous.
    assert_eq!(func(&m, "m").qualname, "");
    assert_eq!(func(&m, "m").kind, unsnarl_model::FnKind::Closure);
}

#[test]
fn prototype_assignments_name_methods() {
    let m = js(
        "function Pool() {}\nPool.prototype.acquire = async function () {};\nnew Pool().acquire();",
    );
    assert_eq!(func(&m, "acquire").qualname, "src/app.Pool.acquire");
    assert!(func(&m, "acquire").is_async);
}

#[test]
fn assignments_into_imported_objects_do_not_define_them() {
    let m = js("import axios from 'axios';\naxios.defaults.transform = function () {};");
    assert_eq!(m.functions[1].qualname, "");
}

#[test]
fn call_shapes() {
    let m = js("import fs from 'fs';\n\
         a.b.c(1);\n\
         obj['method'](2);\n\
         handlers[kind](3);\n\
         (0, fs.readFileSync)('x');\n\
         maybe?.run?.(4);\n\
         (async () => {})();\n\
         fn(...args, last);");
    let c = call(&m, "c");
    assert_eq!(m.dotted(c.receiver.unwrap()).as_deref(), Some("a.b"));
    assert!(matches!(
        m.expr(c.func).kind,
        unsnarl_model::ExprKind::Attr { .. }
    ));
    assert_eq!(c.target, None);
    let c = call(&m, "method");
    assert_eq!(m.name_of(c.receiver.unwrap()), Some("obj"));
    let computed = calls(&m)
        .into_iter()
        .find(|c| c.name.is_empty() && c.receiver.is_some())
        .expect("computed call");
    assert_eq!(m.name_of(computed.receiver.unwrap()), Some("handlers"));
    assert_eq!(target(&m, "readFileSync"), Some("fs.readFileSync"));
    assert_eq!(m.name_of(call(&m, "run").receiver.unwrap()), Some("maybe"));
    let iife = calls(&m)
        .into_iter()
        .find(|c| matches!(m.expr(c.func).kind, unsnarl_model::ExprKind::Closure(_)));
    assert!(iife.is_some());
    let c = call(&m, "fn");
    assert!(c.has_spread());
    assert_eq!(c.args.len(), 2);
    assert!(c.args[0].spread);
    assert_eq!(c.positional(0), Some(c.args[1].value));
}

#[test]
fn tagged_templates_are_calls() {
    let m = js("import { $ } from 'zx';\nawait $`ls ${dir}`;");
    let c = call(&m, "$");
    assert_eq!(c.target.as_deref(), Some("zx.$"));
    assert_eq!(c.args.len(), 2);
    assert_eq!(m.name_of(c.args[1].value), Some("dir"));
}

#[test]
fn attr_chains_resolve() {
    let m = js("import fs from 'fs';\nconst x = fs.promises.constants;");
    assert!(
        dump(&m).contains("attr .constants =fs.promises.constants"),
        "{}",
        dump(&m)
    );
}

#[test]
fn inherited_methods_resolve_through_the_superclass() {
    let m = js("import { EventEmitter } from 'events';\n\
         class Base { async init() {} }\n\
         class Svc extends EventEmitter {\n\
           constructor() { super(); this.cb = f; }\n\
           run() { this.emit('x'); this.cb(); this.run(); }\n\
         }\n\
         class Child extends Base {\n\
           async init() { await super.init(); }\n\
           go() { this.init(); this.other(); }\n\
         }\n\
         class Plain { go() { this.missing(); } }");
    assert_eq!(target(&m, "emit"), Some("events.EventEmitter.emit"));
    assert_eq!(
        target(&m, "cb"),
        None,
        "a field holds whatever was assigned"
    );
    assert_eq!(target(&m, "run"), Some("src/app.Svc.run"));
    assert_eq!(
        targets(&m, "init"),
        [Some("src/app.Base.init"), Some("src/app.Child.init")]
    );
    assert_eq!(target(&m, "other"), Some("src/app.Base.other"));
    assert_eq!(target(&m, "missing"), None);
    assert_eq!(
        target(&m, "super"),
        None,
        "super() is not a call of the base"
    );
}

#[test]
fn module_exports_of_a_single_definition_is_the_module() {
    // `require('./ci')` binds the module: the class is the module itself,
    // so `new CI()` elsewhere (target `lib/commands/ci`) and the class agree.
    let m = lower_at(
        "lib/commands/ci.js",
        "class CI { async exec() { await this.run(); } run() {} }\nmodule.exports = CI;",
    );
    assert_eq!(m.types[0].qualname, "lib/commands/ci");
    assert_eq!(func(&m, "exec").qualname, "lib/commands/ci.exec");
    assert_eq!(target(&m, "run"), Some("lib/commands/ci.run"));
    let m = lower_at(
        "lib/worker.js",
        "module.exports = async function (job) { await job.run(); };",
    );
    let f = &m.functions[1];
    assert_eq!(f.qualname, "lib/worker");
    assert_eq!(f.name, "worker");
    assert!(f.is_async);
    let m = lower_at(
        "types/legacy.d.ts",
        "declare function legacy(): Promise<void>;\nexport = legacy;",
    );
    assert_eq!(func(&m, "legacy").qualname, "types/legacy");
    let m = lower_at(
        "lib/user.js",
        "const app = () => {};\nmodule.exports = { app };",
    );
    assert_eq!(func(&m, "app").qualname, "lib/user.app");
}
