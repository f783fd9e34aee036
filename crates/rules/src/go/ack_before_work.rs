//! GO035: a message acknowledged before the work it asks for.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::ack_before_work;
use unsnarl_model::*;

pub struct AckBeforeWork;

pub static META: RuleMeta = RuleMeta {
    id: "GO035",
    name: "ack-before-work",
    category: Category::DoubleExecution,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "A consumer acknowledges a message (`d.Ack(false)`, `msg.Ack()`) and only then does the work the message asks for.",
    docs: r#"
A consumer loop or handler (amqp091, NATS, Pub/Sub) calls `Ack`, or a
Kafka consumer marks the message or commits its offset (sarama's
`MarkMessage`, kafka-go's `CommitMessages`), and then, in the same pass, does the message's work: known I/O, or a function of
the project handed the message. `defer d.Ack(false)` (which runs after the
work) and acks after the work are fine, as is returning the decoded body
(`return decode(msg.Data)`: the caller does the work). Test functions, which ack
fake messages and read back what was recorded, are not judged.

## Why

The ack tells the broker the message is done, and it deletes it. If the
process crashes, is redeployed or the work fails after the ack, the
message is gone and nothing redelivers it. Acknowledging after the work
turns the same failures into a redelivery (so the work must tolerate
running twice: an idempotency key or an upsert).

## Example

```go
package worker

import amqp "github.com/rabbitmq/amqp091-go"

func consume(msgs <-chan amqp.Delivery) {
	for d := range msgs {
		d.Ack(false)
		process(d.Body)
	}
}

func process(body []byte) {}
```

## Fix

Do the work, then `Ack`; on failure `Nack` (requeue or dead-letter).

```go
package worker

import amqp "github.com/rabbitmq/amqp091-go"

func consume(msgs <-chan amqp.Delivery) {
	for d := range msgs {
		if err := process(d.Body); err != nil {
			d.Nack(false, true)
			continue
		}
		d.Ack(false)
	}
}

func process(body []byte) error { return nil }
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
            "call `Ack` after the work has succeeded and `Nack` on failure",
            out,
        );
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package worker

import amqp "github.com/rabbitmq/amqp091-go"

func consume(msgs <-chan amqp.Delivery) {
	for d := range msgs {
		d.Ack(false) // expect
		process(d.Body)
	}
}

func process(body []byte) {}
"#,
        r#"
package worker

import (
	"net/http"
	"bytes"

	"github.com/nats-io/nats.go"
)

func handle(m *nats.Msg) {
	m.Ack() // expect
	http.Post("http://hooks.internal/notify", "application/json", bytes.NewReader(m.Data))
}
"#,
        r#"
package worker

import "github.com/IBM/sarama"

type handler struct{}

func (handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		session.MarkMessage(msg, "") // expect
		process(msg.Value)
	}
	return nil
}

func process(b []byte) {}
"#,
    ],
    pass: &[
        r#"
package worker

import "github.com/IBM/sarama"

type handler struct{}

func (handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		process(msg.Value)
		session.MarkMessage(msg, "")
	}
	return nil
}

func process(b []byte) {}
"#,
        r#"
package worker

import amqp "github.com/rabbitmq/amqp091-go"

func consume(msgs <-chan amqp.Delivery) {
	for d := range msgs {
		if err := process(d.Body); err != nil {
			d.Nack(false, true)
			continue
		}
		d.Ack(false)
	}
}

func process(body []byte) error { return nil }
"#,
        r#"
package worker

import (
	"log"

	amqp "github.com/rabbitmq/amqp091-go"
)

func handle(d amqp.Delivery) {
	defer d.Ack(false)
	process(d.Body)
	log.Printf("handled %s", d.MessageId)
}

func process(body []byte) {}
"#,
        r#"
package worker

import (
	"log"

	amqp "github.com/rabbitmq/amqp091-go"
)

func consume(msgs <-chan amqp.Delivery) {
	for d := range msgs {
		process(d.Body)
		d.Ack(false)
		log.Printf("acked %d", d.DeliveryTag)
	}
}

func process(body []byte) {}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AckBeforeWork);
}
