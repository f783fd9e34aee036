const fs = require("fs");

async function handler(req, res) {
  const config = fs.readFileSync("/etc/app.json", "utf8"); // blocks the event loop
  res.end(config);
}

async function save(item) {
  await fetch("https://example.com/items", { method: "POST", body: item });
}

function onMessage(item) {
  save(item); // floating promise: a rejection is lost
}

module.exports = { handler, onMessage };
