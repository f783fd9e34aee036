// A small Node HTTP API for user profiles.
const http = require("node:http");
const fs = require("node:fs");
const { readFile } = require("node:fs/promises");
const { execSync } = require("node:child_process");

const TEMPLATE = fs.readFileSync(__dirname + "/profile.html", "utf8"); // start-up: fine

async function recordVisit(userId) {
  await fetch("https://analytics.internal/visit", {
    method: "POST",
    body: JSON.stringify({ userId }),
    signal: AbortSignal.timeout(2000),
  });
}

async function renderProfile(userId) {
  // BUG: synchronous file read inside an async function blocks the server.
  const raw = fs.readFileSync(`/data/users/${userId}.json`, "utf8");
  // BUG: runs git synchronously on every request.
  const version = execSync("git rev-parse HEAD").toString().trim();
  const user = JSON.parse(raw);
  return TEMPLATE.replace("{{name}}", user.name).replace("{{version}}", version);
}

async function renderProfileFixed(userId) {
  const raw = await readFile(`/data/users/${userId}.json`, "utf8");
  return TEMPLATE.replace("{{name}}", JSON.parse(raw).name);
}

function handle(req, res) {
  const userId = req.url.slice(1);
  // BUG: floating promise: a failed analytics call crashes the process later.
  recordVisit(userId);
  void recordVisit(userId).catch(() => {}); // deliberate, handled: fine
  // BUG: no rejection handler on the chain.
  renderProfile(userId).then((html) => res.end(html));
  renderProfileFixed(userId)
    .then((html) => res.end(html))
    .catch(() => {
      res.statusCode = 500;
      res.end();
    });
}

http.createServer(handle).listen(8080);
