//! PY039: a message acknowledged before the work it asks for.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::ack_before_work;
use unsnarl_model::*;

pub struct AckBeforeWork;

pub static META: RuleMeta = RuleMeta {
    id: "PY039",
    name: "ack-before-work",
    category: Category::DoubleExecution,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "A consumer acknowledges a message (`message.ack()`, `channel.basic_ack(...)`) and only then does the work the message asks for.",
    docs: r#"
A message handler (aio-pika, pika, kombu, Google Pub/Sub) calls
`ack()`/`basic_ack()` (not a method of a class the file defines itself),
or a Kafka consumer commits its offset, and then,
in the same pass, does the message's work: an awaited call, known I/O, or a project function handed the
message. Acks in `except` and `finally` blocks, and acks after the work,
are fine, as is adding the message to a container the function made
empty itself (`acked.append(message.payload)`: bookkeeping in memory),
or returning its decoded body (`return self.serializer.loads(
message.body)`: a pull-style `receive()` whose caller does the work). Test functions, which ack
fake messages and read back what was recorded, are not judged.

## Why

The ack tells the broker the message is done; it deletes it. If the
process crashes, is redeployed or the work raises after the ack, the
message is gone: the order is never shipped, the email never sent, and
nothing in the logs says which message was lost. Acknowledging after the
work turns the same failures into a redelivery (so the work must tolerate
running twice: an idempotency key or an upsert).

## Example

```python
async def on_order(message):
    await message.ack()
    order = parse(message.body)
    await ship(order)
```

## Fix

Do the work, then acknowledge; let a failure reject or requeue the
message (aio-pika's `async with message.process():` acks on success and
rejects on an exception).

```python
async def on_order(message):
    async with message.process():
        order = parse(message.body)
        await ship(order)
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
            "acknowledge after the work has succeeded (`async with message.process():` in aio-pika, `basic_ack` as the last step in pika)",
            out,
        );
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
async def on_order(message):
    await message.ack()  # expect
    order = parse(message.body)
    await ship(order)
"#,
        r#"
def callback(ch, method, properties, body):
    ch.basic_ack(delivery_tag=method.delivery_tag)  # expect
    handle_job(body)

def handle_job(body):
    pass
"#,
        r#"
import requests

def on_message(message):
    message.ack()  # expect
    requests.post("https://hooks.example/notify", data=message.data, timeout=5)
"#,
        r#"
async def consume(queue, store):
    async with queue.iterator() as it:
        async for message in it:
            await message.ack()  # expect
            if message.body:
                await store.save(message.body)
"#,
        r#"
from confluent_kafka import Consumer

def run(conf, process):
    consumer = Consumer(conf)
    while True:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        consumer.commit(message=msg, asynchronous=False)  # expect
        process(msg.value())
"#,
        r#"
import threading


def consume(conn, queue, hub):
    acked = []

    def ack(message):
        message.ack()  # expect
        store.save(message.payload)
        acked.append(message.payload)

    def callback(body, message):
        threading.Timer(0.1, hub.call_soon, (ack, message)).start()

    with conn.Consumer([queue], callbacks=[callback], prefetch_count=1):
        while len(acked) < 2:
            hub.run_once()
    return acked
"#,
        r#"
import threading
import requests

done = threading.Event()

def callback(message):
    message.ack()  # expect
    done.wait()
    requests.post("https://hooks.example/orders", data=message.data)
"#,
        r#"
class Delivery:
    def __init__(self, raw):
        self._raw = raw

    async def ack(self):
        await self._raw.ack()

async def on_order(delivery, ship):
    await delivery.ack()  # expect
    await ship(delivery.body)
"#,
    ],
    pass: &[
        r#"
import threading
import time

class KeepAliveHandler(threading.Thread):
    def ack(self):
        self._last_ack = time.perf_counter()
        self.latency = self._last_ack - self._last_send

class Gateway:
    def __init__(self, hook):
        self._keep_alive = None
        self._hook = hook

    async def received_message(self, msg):
        op = msg["op"]
        if op == 6:
            self._keep_alive.ack()
        elif op == 10:
            self._keep_alive = KeepAliveHandler()
            self._keep_alive.start()
        await self._hook(self, msg)
"#,
        r#"
# file: tests/unit/test_message.py
import unittest


class MessageTest(unittest.TestCase):
    def test_message_ack(self):
        message = Message.create(body="", channel=FakeChannel())
        message.ack()
        result = message.channel.result.pop(0)
        self.assertEqual(result[0], 123)
"#,
        r#"
import threading
from unittest import mock

def test_every_message_is_delivered(subscriber, path):
    all_done = threading.Barrier(2, timeout=5)
    received = []

    def callback(message):
        received.append(message.data)
        message.ack()
        all_done.wait()

    subscriber.subscribe(path, callback=callback)
    all_done.wait()

def test_ack_queues_a_request(message):
    with mock.patch.object(message._request_queue, "put") as put:
        message.ack()
        put.assert_called_once_with(message.ack_id)
"#,
        r#"
import threading


def consume(conn, queue, hub):
    acked = []

    def ack(message):
        message.ack()
        # Bookkeeping of what was acked, in a list made here.
        acked.append(message.payload)

    def callback(body, message):
        threading.Timer(0.1, hub.call_soon, (ack, message)).start()

    with conn.Consumer([queue], callbacks=[callback], prefetch_count=1):
        while len(acked) < 2:
            hub.run_once()
    return acked
"#,
        r#"
from confluent_kafka import Consumer

def run(conf, process):
    consumer = Consumer(conf)
    while True:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        process(msg.value())
        consumer.commit(message=msg, asynchronous=False)
"#,
        // Calls on the handler's own object are not work on the message.
        r#"
class Poller:
    def on_tick(self, _channel, method, properties, body):
        self.channel.basic_ack(delivery_tag=method.delivery_tag)
        self.reschedule()

    def reschedule(self):
        pass
"#,
        // A database commit is not a broker's ack.
        r#"
def save(conn, rows, notify):
    cur = conn.cursor()
    cur.executemany("INSERT INTO t VALUES (?)", rows)
    conn.commit()
    notify(rows)
"#,
        // Work first, then the ack.
        r#"
async def on_order(message):
    order = parse(message.body)
    await ship(order)
    await message.ack()
"#,
        r#"
def callback(ch, method, properties, body):
    handle_job(body)
    ch.basic_ack(delivery_tag=method.delivery_tag)

def handle_job(body):
    pass
"#,
        // The error path gives up on a poison message.
        r#"
async def on_order(message, log):
    try:
        await ship(parse(message.body))
    except ValueError:
        await message.ack()
        log.warning("dropped a malformed order")
        return
    await message.ack()
"#,
        // Only logging after the ack, and the loop moves on to the next one.
        r#"
import logging

async def consume(it, store):
    async for message in it:
        await store.save(message.body)
        await message.ack()
        logging.info("done %s", message.message_id)
"#,
        r#"
async def on_order(message):
    async with message.process():
        await ship(parse(message.body))
"#,
        // A logger told which message was acknowledged.
        r#"
import logging

log = logging.getLogger(__name__)

def callback(ch, method, properties, body):
    handle_job(body)
    ch.basic_ack(delivery_tag=method.delivery_tag)
    log.info("acked %s", method.delivery_tag)

def handle_job(body):
    pass
"#,
        r#"
# A pull-style receive: the caller does the work with what it returns.
class ChannelLayer:
    async def receive(self, queue):
        message = await queue.get(no_ack=False)
        await message.ack()
        return self.serializer.loads(message.body)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AckBeforeWork);

    /// The message names the work and says why it counts as work.
    #[test]
    fn messages_name_the_work_and_why() {
        let cases = [
            // `parse` is not known to be the project's: the awaited call is
            // the first work.
            (
                EXAMPLES.fail[0],
                "(`ship(order)` at line 5, an awaited call)",
            ),
            (
                EXAMPLES.fail[1],
                "(`handle_job(body)` at line 4, which is handed the message)",
            ),
            (EXAMPLES.fail[2], "at line 6, which does I/O)"),
            (
                EXAMPLES.fail[3],
                "(`store.save(message.body)` at line 7, an awaited call)",
            ),
        ];
        for (example, needle) in cases {
            let found = crate::testing::messages(&AckBeforeWork, Language::Python, example);
            crate::testing::message_with(&found, needle);
        }
    }
}
