//! RS028: a message acknowledged before the work it asks for.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::ack_before_work;
use unsnarl_model::*;

pub struct AckBeforeWork;

pub static META: RuleMeta = RuleMeta {
    id: "RS028",
    name: "ack-before-work",
    category: Category::DoubleExecution,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "A consumer acknowledges a message (`delivery.ack(...)`, `message.ack()`) and only then does the work the message asks for.",
    docs: r#"
A consumer (lapin, async-nats) awaits `ack` and then, in the same pass,
does the message's work: an awaited call, known I/O, or a function of the
project handed the message. Acks after the work are fine, as is returning
the body decoded by a call named for it (`return codec.decode(&msg.data)`:
the caller does the work), and so is the ack
of a message fetched in the ack's own expression
(`messages.next().await.unwrap()?.ack()`), or of one an `if let` binds
when the work would come after that block: nothing after it can reach that
message. Unwrapping the message (`let msg = msg.unwrap();`) is not work. Test functions, which ack
fake messages and read back what was recorded, are not judged.

## Why

The ack tells the broker the message is done, and it deletes it. If the
process crashes, is redeployed or the work fails after the ack, the
message is gone and nothing redelivers it. Acknowledging after the work
turns the same failures into a redelivery (so the work must tolerate
running twice: an idempotency key or an upsert).

## Example

```rust
use futures_lite::StreamExt;
use lapin::options::BasicAckOptions;

async fn consume(mut consumer: lapin::Consumer) {
    while let Some(Ok(delivery)) = consumer.next().await {
        delivery.ack(BasicAckOptions::default()).await.expect("ack");
        ship(&delivery.data).await;
    }
}

async fn ship(_order: &[u8]) {}
```

## Fix

Do the work, then acknowledge; on failure `nack` (requeue or dead-letter).

```rust
use futures_lite::StreamExt;
use lapin::options::{BasicAckOptions, BasicNackOptions};

async fn consume(mut consumer: lapin::Consumer) {
    while let Some(Ok(delivery)) = consumer.next().await {
        match ship(&delivery.data).await {
            Ok(()) => delivery.ack(BasicAckOptions::default()).await.expect("ack"),
            Err(_) => delivery.nack(BasicNackOptions::default()).await.expect("nack"),
        }
    }
}

async fn ship(_order: &[u8]) -> Result<(), ()> { Ok(()) }
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
    language: Language::Rust,
    fail: &[
        r#"
use futures_lite::StreamExt;
use lapin::options::BasicAckOptions;

async fn consume(mut consumer: lapin::Consumer) {
    while let Some(Ok(delivery)) = consumer.next().await {
        delivery.ack(BasicAckOptions::default()).await.expect("ack"); // expect
        ship(&delivery.data).await;
    }
}

async fn ship(_order: &[u8]) {}
"#,
        r#"
async fn consume(mut messages: Messages, db: Db) -> Result<(), Error> {
    while let Some(message) = messages.next().await {
        let message = message.unwrap();
        message.ack().await?; // expect
        db.apply(&message.payload).await?;
    }
    Ok(())
}
"#,
    ],
    pass: &[
        r#"
use futures_lite::StreamExt;
use lapin::options::BasicAckOptions;

async fn consume(mut consumer: lapin::Consumer) {
    while let Some(Ok(delivery)) = consumer.next().await {
        ship(&delivery.data).await;
        delivery.ack(BasicAckOptions::default()).await.expect("ack");
        tracing::info!("acked {}", delivery.delivery_tag);
    }
}

async fn ship(_order: &[u8]) {}
"#,
        r#"
use futures::StreamExt;

// The test acks the one message it fetched, then deletes the consumer:
// nothing after the ack can reach that message.
#[tokio::test]
async fn consumer_deleted() {
    let (stream, consumer) = setup().await;
    let mut messages = consumer.messages().await.unwrap();
    messages.next().await.unwrap().unwrap().ack().await.unwrap();
    stream.delete_consumer("pull").await.unwrap();
    assert!(messages.next().await.unwrap().is_err());
}
"#,
        r#"
use futures::StreamExt;

#[tokio::test]
async fn ack_lowers_the_pending_count() {
    let client = async_nats::connect("localhost:4222").await.unwrap();
    let mut batch = consumer.batch().max_messages(10).messages().await.unwrap();
    if let Some(message) = batch.next().await {
        message.unwrap().ack().await.unwrap();
    }
    client.flush().await.unwrap();
    assert_eq!(consumer.info().await.unwrap().num_ack_pending, 9);
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AckBeforeWork);
}
