//! JS002: synchronous I/O inside an async function or a request/message
//! handler.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::*;

pub struct BlockingCall;

pub static META: RuleMeta = RuleMeta {
    id: "JS002",
    name: "sync-io-in-async",
    category: Category::BlockingInAsync,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async function or a request/message handler calls a synchronous API that blocks the event loop (`fs.*Sync`, `child_process.*Sync`, `zlib.*Sync`, sync `XMLHttpRequest`, `Atomics.wait`), directly or through a project helper.",
    docs: r#"
Inside an `async` function, or inside a request or message handler (express,
koa, fastify or restify routes, `http.createServer`, `ws`/socket.io
`connection` and `message` callbacks, NestJS controller methods), which run
on the event loop even when they are not `async`: `fs.readFileSync` and the
other `fs.*Sync` calls, `execSync`/`execFileSync`/`spawnSync`, `zlib.*Sync`,
a synchronous `XMLHttpRequest` (`open(method, url, false)`), `Atomics.wait`,
or a call to a sync function of the project that ends up making one of them
(the message shows the chain). Start-up code is not flagged: module-level
code, functions that by name run once (`main`, `bootstrap`, `setup`,
`init`, `initialize`, `start`), a script's entry point (a function called
under `if (require.main === module)`, alone or joined to other tests by
`||`), and the functions of the module that only such code calls. Nor is
a worker thread's module (one that uses `parentPort` or
`workerData`) or a web worker's script (`self.onmessage = ..`, a bare
`importScripts(..)`): its event loop serves only that worker. Nor is a
command-line program, a module that registers no request or message
handler and either exports nothing and reads `process.argv` or starts
with `#!` (`node npm-scripts.mjs release`), or is named `cli` (`cli-*`,
`*-cli`) or sits in a folder so named or in a `bin/` or `scripts/` folder
(`lib/cli.js`, `scripts/release.mjs`), or a build tool's configuration
(`tsup.config.ts`, `vite.config.mjs`, with its hooks): it runs its steps one
after another for one user, and a blocking call there stalls no one. Nor is a read of a
literal path under `/proc/` or `/sys/` (`fs.readFileSync("/proc/meminfo")`),
which the kernel answers from memory.

## Why

Node runs all JavaScript on one thread. While a `*Sync` call waits for the
disk or a child process, no other request, timer or socket callback runs:
one slow file read or command stalls the whole server for its duration.

## Example

```javascript
import fs from "node:fs";

export async function handler(req, res) {
  const template = fs.readFileSync("./views/page.html", "utf8");
  res.end(template);
}
```

## Fix

Use the promise API and await it.

```javascript
import { readFile } from "node:fs/promises";

export async function handler(req, res) {
  const template = await readFile("./views/page.html", "utf8");
  res.end(template);
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockingCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let h = common::handlers(cx);
        blocking::check_where(
            cx,
            &META,
            Effect::Blocking,
            &|f| common::loop_place(cx, h, f),
            out,
        );
        // `xhr.open(method, url, false)`: a synchronous request.
        for f in cx.model.function_ids() {
            let Some(place) = common::loop_place(cx, h, f) else {
                continue;
            };
            for e in common::calls_of(cx, f) {
                let c = cx.call(e).unwrap();
                if c.name != "open" || c.target.as_deref() != Some("XMLHttpRequest.open") {
                    continue;
                }
                let sync = c
                    .positional(2)
                    .is_some_and(|a| cx.model.literal(a) == Some(&Lit::Bool(false)));
                if sync {
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!("this `XMLHttpRequest` is opened synchronously (`false`) {place}: `send()` will block the thread until the server answers, and nothing else runs meanwhile"),
                        "open it asynchronously (drop the `false`) or use `await fetch(...)`",
                    ));
                }
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
// file: npm-scripts.mjs
import { execSync } from "node:child_process";
import fs from "node:fs";

export async function release() {
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8")); // expect
  execSync(`git tag -a ${pkg.version} -m ${pkg.version}`, { stdio: "inherit" }); // expect
}

if (process.argv[2] === "release") {
  void release();
}
"#,
        r#"
// file: pages/api/report.js
import fs from "node:fs";

export default function handler(req, res) {
  res.status(200).send(fs.readFileSync(`/reports/${req.query.id}.csv`)); // expect
}
"#,
        r#"
const fs = require("fs");
const { execSync } = require("node:child_process");

async function build(dir) {
  const pkg = fs.readFileSync(dir + "/package.json"); // expect
  execSync("npm run build"); // expect
  return pkg;
}
"#,
        r#"
import * as fs from "fs";

function readConfig(path) {
  return JSON.parse(fs.readFileSync(path, "utf8"));
}

export const handler = async (event) => {
  const cfg = readConfig("/etc/app.json"); // expect
  return cfg.name;
};
"#,
        r#"
const fs = require("fs");
const zlib = require("zlib");
const express = require("express");
const { WebSocketServer } = require("ws");

const app = express();
app.get("/report", (req, res) => {
  const csv = fs.readFileSync(`/data/${req.query.day}.csv`); // expect
  res.send(zlib.gzipSync(csv)); // expect
});

const wss = new WebSocketServer({ port: 8080 });
wss.on("connection", (ws) => {
  ws.on("message", (msg) => {
    fs.appendFileSync("/var/log/chat.log", msg); // expect
  });
});

async function upload(req) {
  await new Promise((resolve) => req.on("end", resolve));
  return db.query("select 1").then((rows) => {
    fs.writeFileSync("/tmp/last.json", JSON.stringify(rows)); // expect
    return rows;
  });
}

fastify.route({
  method: "GET",
  url: "/config",
  handler: (request, reply) => {
    reply.send(fs.readFileSync("/etc/app/config.json")); // expect
  },
});

function syncGet(url) {
  const xhr = new XMLHttpRequest();
  xhr.open("GET", url, false);
  return xhr.responseText;
}

async function load(url) {
  const xhr = new XMLHttpRequest();
  xhr.open("GET", url, false); // expect
  xhr.send();
}
"#,
        r#"
const fs = require("fs");

async function memory() {
  const info = fs.readFileSync("/var/log/meminfo.log", "utf8"); // expect
  return +/MemAvailable:\s+(\d+)/.exec(info)[1] * 1024;
}
module.exports = { memory };
"#,
        r#"
// file: index.js
const fs = require("node:fs");

// `checkDist` is exported too: a server module may call it per request.
async function checkDist() {
  return fs.readFileSync("dist/.hash", "utf8"); // expect
}

async function start() {
  await checkDist();
}

if (require.main === module || process.env.FORCE_START) {
  void start();
}
module.exports = { checkDist };
"#,
        r#"
// file: lib/client.js
const fs = require("node:fs");

module.exports = {
  async execute(options) {
    if (fs.existsSync(options.suppressionsFile)) { // expect
      return JSON.parse(await fs.promises.readFile(options.suppressionsFile, "utf8"));
    }
    return {};
  },
};
"#,
        r#"
// file: src/extension/frontend.js
const fs = require("node:fs");

class Frontend {
  async serve(req, res) {
    const cert = fs.readFileSync(this.certPath); // expect
    res.end(cert);
  }
}
module.exports = Frontend;
"#,
    ],
    pass: &[
        r#"
// A dedicated web worker's script: its message handler sits on the
// worker's global, and blocking here stalls only this worker.
const installProxy = function (self) {
  const waitLoop = async function () {
    while (!state.stopped) {
      Atomics.wait(state.view, state.opIds.whichOp, 0, 150);
      await runPending();
    }
  };
  self.onmessage = function ({ data }) {
    if (data.type === "init") waitLoop();
  };
};
installProxy(self);
"#,
        r#"
// file: tsup.config.ts
import fs from "fs";
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  async onSuccess() {
    fs.mkdirSync("dist/assets", { recursive: true });
    fs.copyFileSync("src/schema.json", "dist/assets/schema.json");
  },
});
"#,
        r#"
// file: npm-scripts.mjs
import { execSync } from "node:child_process";
import fs from "node:fs";

const task = process.argv[2];

async function run() {
  switch (task) {
    case "release": {
      await release();
      break;
    }
    default:
      throw new TypeError(`unknown task "${task}"`);
  }
}

async function release() {
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  execSync(`git tag -a ${pkg.version} -m ${pkg.version}`, { stdio: "inherit" });
}

void run();
"#,
        r#"
const fs = require("fs");
const http = require("http");
const express = require("express");

const app = express();
const template = fs.readFileSync("./index.html", "utf8");

app.get("/", (req, res) => res.send(template));

http.createServer((req, res) => {
  fs.readFile("./big.json", (err, data) => res.end(data));
}).listen(8080);

function buildAtStartup() {
  fs.writeFileSync("./dist/manifest.json", "{}");
}
buildAtStartup();
"#,
        r#"
import fs from "node:fs";
import { readFile } from "node:fs/promises";

const config = JSON.parse(fs.readFileSync("config.json", "utf8"));

export async function handler() {
  return readFile("data.txt", "utf8");
}

function startup() {
  fs.mkdirSync("/tmp/cache", { recursive: true });
}
"#,
        r#"
const fs = require("node:fs");
const { parentPort, workerData } = require("node:worker_threads");

// A worker thread's module: blocking here stalls only this worker.
parentPort.on("message", async (job) => {
  const input = fs.readFileSync(job.path);
  parentPort.postMessage(await transform(input));
  Atomics.wait(workerData.idle, 0, 0);
});
"#,
        r#"
const fs = require("node:fs");

// A script: its entry point runs once, before anything concurrent.
async function checkLinks() {
  const targets = JSON.parse(fs.readFileSync("./targets.json", "utf8"));
  for (const url of targets) {
    console.log(url, (await fetch(url)).status);
  }
}

if (require.main === module) {
  checkLinks().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
"#,
        r#"
"use strict";
const fs = require("node:fs");
const worker_threads_1 = require("node:worker_threads");

worker_threads_1.parentPort.on("message", async (job) => {
  worker_threads_1.parentPort.postMessage(fs.readFileSync(job.path));
});
"#,
        r#"
const fs = require("fs");

async function memory() {
  const info = fs.readFileSync("/proc/meminfo", "utf8");
  const quota = fs.readFileSync("/sys/fs/cgroup/cpu.max", "utf8");
  return { free: +/MemAvailable:\s+(\d+)/.exec(info)[1] * 1024, quota };
}
module.exports = { memory };
"#,
        r#"
// file: index.js
const fs = require("node:fs");

// Called only by the script's entry point: start-up code too.
async function checkDist() {
  return fs.readFileSync("dist/.hash", "utf8");
}

async function start() {
  await checkDist();
}

if (require.main === module || process.env.FORCE_START) {
  if (process.env.CHECK_ONLY) {
    void checkDist();
  } else {
    void start();
  }
}
"#,
        r#"
// file: lib/cli.js
const fs = require("node:fs");

// The command-line interface, which `bin/tool.js` calls for one command.
module.exports = {
  async execute(options) {
    if (fs.existsSync(options.suppressionsFile)) {
      return JSON.parse(await fs.promises.readFile(options.suppressionsFile, "utf8"));
    }
    return {};
  },
};
"#,
        r#"
// file: src/extension/frontend.js
const fs = require("node:fs");
const https = require("node:https");

class Frontend {
  async start() {
    // Once, before the server exists: nothing is waiting on the loop yet.
    const options = fs.existsSync(this.keyPath)
      ? { key: fs.readFileSync(this.keyPath), cert: fs.readFileSync(this.certPath) }
      : {};
    this.server = https.createServer(options, (req, res) => this.onRequest(req, res));
  }
}
module.exports = Frontend;
"#,
        r#"
// file: scripts/issue-bot.mjs
import { execSync } from "node:child_process";

export default async function run({ github, context }) {
  const hits = execSync(`grep -rl ${context.payload.issue.number} docs`).toString();
  await github.rest.issues.createComment({ body: hits });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockingCall);

    #[test]
    fn an_anonymous_async_function_is_named_as_one() {
        let found = crate::testing::messages(
            &BlockingCall,
            Language::JavaScript,
            "const fs = require('fs');\nexport const load = async () => {\n  return fs.readFileSync('a.json');\n};\nsetTimeout(async function () { fs.readFileSync('b'); }, 10);\n",
        );
        assert!(!found.is_empty());
        for m in &found {
            assert!(!m.contains("async an anonymous"), "{m}");
        }
        crate::testing::message_with(&found, "in an async anonymous function");
    }
}
