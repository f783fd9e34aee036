// Profile updates arriving on a RabbitMQ queue (amqplib).
const amqp = require("amqplib");

async function saveProfile(update) {
  const res = await fetch("https://profiles.internal/update", {
    method: "PUT",
    body: JSON.stringify(update),
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
}

async function consume(url) {
  const conn = await amqp.connect(url);
  const channel = await conn.createChannel();
  await channel.prefetch(20);
  await channel.consume("profile-updates", async (msg) => {
    // BUG: acknowledged before the update is saved: a crash in between loses it.
    channel.ack(msg);
    await saveProfile(JSON.parse(msg.content.toString()));
  });
  // Correct: save, then acknowledge; a failure goes back to the queue.
  await channel.consume("profile-updates-v2", async (msg) => {
    try {
      await saveProfile(JSON.parse(msg.content.toString()));
      channel.ack(msg);
    } catch (err) {
      channel.nack(msg, false, true);
    }
  });
}

module.exports = { consume };
