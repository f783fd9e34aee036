//! JS033: a message acknowledged before the work it asks for.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::ack_before_work;
use unsnarl_model::*;

pub struct AckBeforeWork;

pub static META: RuleMeta = RuleMeta {
    id: "JS033",
    name: "ack-before-work",
    category: Category::DoubleExecution,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A consumer acknowledges a message (`channel.ack(msg)`, `message.ack()`) and only then does the work the message asks for.",
    docs: r#"
A message handler (amqplib, Google Pub/Sub, NATS) acknowledges the message
and then, in the same pass, does its work: an awaited call, known I/O, or
a project function handed the message. Acks in `catch` and `finally`
blocks, and acks after the work, are fine, as is returning the decoded
body (`return JSON.parse(msg.content)`: the caller does the work). Test functions, which ack
fake messages and read back what was recorded, are not judged.

## Why

The ack tells the broker the message is done, and it deletes it. If the
process crashes, is redeployed or the work throws after the ack, the
message is gone and nothing redelivers it. Acknowledging after the work
turns the same failures into a redelivery (so the work must tolerate
running twice: an idempotency key or an upsert).

## Example

```js
channel.consume("orders", async (msg) => {
  channel.ack(msg);
  await shipOrder(JSON.parse(msg.content.toString()));
});
```

## Fix

Do the work, then acknowledge; on failure `nack` (requeue or dead-letter).

```js
channel.consume("orders", async (msg) => {
  try {
    await shipOrder(JSON.parse(msg.content.toString()));
    channel.ack(msg);
  } catch (err) {
    channel.nack(msg, false, false);
  }
});
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AckBeforeWork {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        ack_before_work::check(
            cx,
            &META,
            "acknowledge after the work has succeeded and `nack` on failure",
            out,
        );
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
channel.consume("orders", async (msg) => {
  channel.ack(msg); // expect
  await shipOrder(JSON.parse(msg.content.toString()));
});
"#,
        r#"
function handleEvent(data) {
  return data;
}

subscription.on("message", (message) => {
  message.ack(); // expect
  handleEvent(message.data);
});
"#,
        r#"
function saveReport(message) {
  return message;
}

stomp.connect(opts, function (error, client) {
  client.subscribe({ destination: "/queue/reports" }, function (err, message) {
    client.ack(message); // expect
    saveReport(message);
  });
});
"#,
    ],
    pass: &[
        r#"
channel.consume("orders", async (msg) => {
  try {
    await shipOrder(JSON.parse(msg.content.toString()));
    channel.ack(msg);
  } catch (err) {
    console.error(err);
    channel.nack(msg, false, false);
  }
});
"#,
        r#"
subscription.on("message", async (message) => {
  await handleEvent(message.data);
  message.ack();
  console.log("acked", message.id);
});
"#,
        // Telling the logger and the metrics which message was acked.
        r#"
class Worker {
  async onMessage(msg) {
    await this.handle(JSON.parse(msg.content.toString()));
    this.channel.ack(msg);
    this.logger.info("acked", msg.fields.deliveryTag);
    this.metrics.increment("orders.acked", { queue: msg.fields.routingKey });
  }

  async handle(order) {
    return order;
  }
}
"#,
        // socket.io's acknowledgement callback answers the client; it is
        // not a broker's ack.
        r#"
io.on("connection", (socket) => {
  socket.on("save", async (data, ack) => {
    ack({ received: true });
    await store.save(data);
  });
});
"#,
        // A poison message is dropped on the error path.
        r#"
channel.consume("orders", async (msg) => {
  let order;
  try {
    order = JSON.parse(msg.content.toString());
  } catch (err) {
    channel.ack(msg);
    return;
  }
  await shipOrder(order);
  channel.ack(msg);
});
"#,
        // The client acks the message, then is closed: nothing more is done
        // with the message.
        r#"
stomp.connect(opts, function (error, client) {
  client.subscribe({ destination: "/queue/reports" }, function (err, message) {
    message.readString("utf8", function (readErr, body) {
      process.stdout.write(body);
      client.ack(message);
      client.disconnect();
    });
  });
});
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AckBeforeWork);
}
