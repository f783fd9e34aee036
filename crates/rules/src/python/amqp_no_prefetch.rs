//! PY032: an AMQP consumer with no prefetch limit.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::is_or_under;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct AmqpNoPrefetch;

pub static META: RuleMeta = RuleMeta {
    id: "PY032",
    name: "amqp-consumer-without-prefetch",
    category: Category::BackpressureIgnored,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "A pika `basic_consume` or aio-pika `queue.consume()`/`queue.iterator()` in a file that never sets a prefetch count (`basic_qos`/`set_qos`).",
    docs: r#"
A RabbitMQ consumer started with pika's `channel.basic_consume(...)` or
aio-pika's `queue.consume(...)`/`queue.iterator()`, in a module that never
calls `basic_qos(prefetch_count=...)` (pika) or
`set_qos(prefetch_count=...)` (aio-pika). An auto-ack consumer
(`no_ack=True`, `auto_ack=True`, also a wrapper's parameter that
defaults to `True` and is passed on) is left alone: the broker's prefetch
limits only unacknowledged deliveries, so it cannot apply there. So is
one whose callback (a function of the file) acknowledges each delivery
as its first statement (`ch.basic_ack(method.delivery_tag)`), which
consumes the same way, and a wrapper that only forwards its own `*args,
**kwargs` to `basic_consume` (its callers are the consumers). So is
an RPC client's reply consumer: a module whose every declared queue is
exclusive to its connection (`queue_declare(queue="", exclusive=True)`)
and that names it as `reply_to=` on its requests receives only the
replies to what it sent.

## Why

RabbitMQ pushes messages to consumers. The prefetch count is the only
demand signal: it caps how many unacknowledged messages the broker sends
before waiting. Left unset it is unlimited, so a slow consumer receives
the whole queue into its memory, other consumers starve, and a crash
redelivers everything it had buffered.

## Example

```python
import aio_pika

async def consume(url, handle):
    conn = await aio_pika.connect_robust(url)
    channel = await conn.channel()
    queue = await channel.declare_queue("jobs", durable=True)
    await queue.consume(handle)
```

## Fix

Set the prefetch count on the channel before consuming, sized to what the
consumer processes concurrently.

```python
import aio_pika

async def consume(url, handle):
    conn = await aio_pika.connect_robust(url)
    channel = await conn.channel()
    await channel.set_qos(prefetch_count=32)
    queue = await channel.declare_queue("jobs", durable=True)
    await queue.consume(handle)
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AmqpNoPrefetch {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let imports = |p: &str| {
            cx.model
                .imports
                .iter()
                .any(|i| is_or_under(&i.target, p, &['.']))
        };
        // The client library's own modules (aio_pika's `patterns/master.py`
        // consumes for its users) leave the prefetch to the application
        // that sets up the channel.
        let inside = |p: &str| cx.model.module.split('.').any(|s| s == p);
        let pika = imports("pika") && !inside("pika");
        let aio_pika = imports("aio_pika") && !inside("aio_pika");
        if !pika && !aio_pika {
            return;
        }
        let has_qos = cx
            .calls_named(&["basic_qos", "set_qos"])
            .iter()
            .any(|(_, c)| {
                c.kwarg("prefetch_count").is_some()
                    || c.kwarg("prefetch_size").is_some()
                    || c.positional(0).is_some()
            });
        if has_qos || consumes_own_replies(cx) {
            return;
        }
        for (id, c) in cx.calls_named(&["basic_consume", "consume", "iterator"]) {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) || c.receiver.is_none() {
                continue;
            }
            let hit = (pika && c.name == "basic_consume")
                || (aio_pika && matches!(c.name.as_str(), "consume" | "iterator"));
            // An auto-ack consumer (`no_ack=True`, pika's `auto_ack=True`):
            // prefetch limits only unacknowledged deliveries, so it does
            // not apply (and `amq.rabbitmq.reply-to` must be consumed so).
            // Also through a parameter of the wrapper that defaults to it
            // (`def basic_consume(self, cb, auto_ack: bool = True)`).
            let f = cx.func(cx.func_of(id));
            let is_true = |v: ExprId| matches!(cx.model.literal(v), Some(Lit::Bool(true)));
            let auto_ack = ["no_ack", "auto_ack"].iter().any(|k| {
                c.kwarg(k).is_some_and(|v| {
                    is_true(v)
                        || cx.model.name_of(v).is_some_and(|n| {
                            f.params
                                .iter()
                                .any(|p| p.name == n && p.default.is_some_and(is_true))
                        })
                })
            });
            // A callback that acknowledges each delivery first thing
            // (`def on_message(ch, method, props, body):
            // ch.basic_ack(method.delivery_tag); ...`) consumes as
            // auto-ack does: nothing stays unacknowledged for a prefetch
            // to count. And a wrapper that only forwards its own
            // `*args, **kwargs` is not the consumer: its callers are.
            let acks_first = c
                .kwarg("on_message_callback")
                .or_else(|| c.positional(1))
                .and_then(|cb| crate::python::common::local_callable(cx, cb))
                .and_then(|g| cx.func(g).body.first().copied())
                .is_some_and(|st| {
                    matches!(cx.stmt(st).kind, StmtKind::Expr(x)
                        if cx.call(cx.model.strip(x)).is_some_and(|k| k.name == "basic_ack"))
                });
            let forwards = !c.args.is_empty()
                && c.args.iter().all(|a| {
                    (a.spread || a.name.as_deref() == Some("**"))
                        && cx.model.name_of(a.value).is_some_and(|n| {
                            f.params.iter().any(|p| p.name.trim_start_matches('*') == n)
                        })
                });
            if !hit || auto_ack || acks_first || forwards {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                "this consumer runs with no prefetch limit (no `basic_qos`/`set_qos` in this module): the broker pushes the whole queue into this process's memory, and a slow consumer never pushes back",
                "set `prefetch_count` on the channel before consuming (`channel.basic_qos(prefetch_count=N)` / `await channel.set_qos(prefetch_count=N)`), sized to the handler's concurrency",
            ));
        }
    }
}

/// An RPC client's side: every queue the file declares is exclusive to
/// its connection (`queue_declare(queue="", exclusive=True)`), and the
/// file sends requests naming it as `reply_to=`. Only this process's own
/// replies arrive there, one per request it sent, with no competing
/// consumer: the requests already bound what the broker can push.
fn consumes_own_replies(cx: &FileCx) -> bool {
    let declares = cx.calls_named(&["queue_declare", "declare_queue"]);
    let is_true = |v: ExprId| matches!(cx.model.literal(v), Some(Lit::Bool(true)));
    !declares.is_empty()
        && declares
            .iter()
            .all(|(_, c)| c.kwarg("exclusive").is_some_and(is_true))
        && cx
            .model
            .exprs
            .iter()
            .any(|e| matches!(&e.kind, ExprKind::Call(c) if c.kwarg("reply_to").is_some()))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import aio_pika

async def consume(url, handle):
    conn = await aio_pika.connect_robust(url)
    channel = await conn.channel()
    queue = await channel.declare_queue("jobs", durable=True)
    await queue.consume(handle)  # expect
"#,
        r#"
import pika

def run(on_message):
    conn = pika.BlockingConnection(pika.ConnectionParameters("localhost"))
    ch = conn.channel()
    ch.basic_consume(queue="jobs", on_message_callback=on_message)  # expect
    ch.start_consuming()
"#,
        r#"
import aio_pika


async def call(channel, routing_key, body, on_reply):
    reply_queue = await channel.declare_queue("replies", durable=True)
    tag = await reply_queue.consume(on_reply, no_ack=False)  # expect
    try:
        await channel.default_exchange.publish(
            aio_pika.Message(body, reply_to=reply_queue.name),
            routing_key=routing_key,
        )
    finally:
        await reply_queue.cancel(tag)
"#,
        r#"
import pika


class Queue:
    def __init__(self, url, queue):
        self.connection = pika.BlockingConnection(pika.URLParameters(url))
        self.channel = self.connection.channel()
        self.queue = queue

    def basic_consume(self, on_message_callback, auto_ack: bool = False):
        self.channel.basic_consume(  # expect
            queue=self.queue, auto_ack=auto_ack, on_message_callback=on_message_callback
        )
"#,
        r#"
import aio_pika


async def consume(channel, name, timeout=None):
    queue = await channel.get_queue(name)
    kwargs = dict()
    if timeout is not None:
        kwargs["timeout"] = timeout
    return queue.iterator(**kwargs)  # expect
"#,
    ],
    pass: &[
        r#"
import pika


class Queue:
    def __init__(self, url, queue):
        self.connection = pika.BlockingConnection(pika.URLParameters(url))
        self.channel = self.connection.channel()
        self.queue = queue

    def basic_consume(self, on_message_callback, auto_ack: bool = True):
        self.channel.basic_consume(
            queue=self.queue, auto_ack=auto_ack, on_message_callback=on_message_callback
        )
"#,
        r#"
import aio_pika


async def call(channel, routing_key, body, on_reply):
    # Direct reply-to is consumed with auto-ack: prefetch does not apply.
    reply_queue = await channel.get_queue("amq.rabbitmq.reply-to", ensure=False)
    tag = await reply_queue.consume(on_reply, no_ack=True)
    try:
        await channel.default_exchange.publish(
            aio_pika.Message(body, reply_to=reply_queue.name),
            routing_key=routing_key,
        )
    finally:
        await reply_queue.cancel(tag)
"#,
        r#"
import pika

def run(on_message):
    conn = pika.BlockingConnection(pika.ConnectionParameters("localhost"))
    ch = conn.channel()
    ch.basic_qos(prefetch_count=16)
    ch.basic_consume(queue="jobs", on_message_callback=on_message)
    ch.start_consuming()
"#,
        r#"
async def consume(queue, handle):
    await queue.consume(handle)
"#,
        r#"
# file: aio_pika/patterns/master.py
from aio_pika.abc import AbstractQueue

class Worker:
    # The library's own consumer: the application sets the channel's
    # prefetch before creating it.
    async def start(self, queue: AbstractQueue, handle):
        self.tag = await queue.consume(handle)
"#,
        r#"
import uuid

import pika


class RpcClient:
    def __init__(self, params):
        self.conn = pika.BlockingConnection(params)
        self.chan = self.conn.channel()
        result = self.chan.queue_declare(queue="", exclusive=True, auto_delete=True)
        self.reply_queue = result.method.queue
        self.replies = {}

    def listen(self):
        def on_reply(ch, method, props, body):
            self.replies[props.correlation_id] = body
            ch.basic_ack(delivery_tag=method.delivery_tag)

        self.chan.basic_consume(self.reply_queue, on_message_callback=on_reply)
        self.chan.start_consuming()

    def call(self, routing_key, body):
        corr = str(uuid.uuid4())
        self.chan.basic_publish(
            exchange="",
            routing_key=routing_key,
            properties=pika.BasicProperties(reply_to=self.reply_queue, correlation_id=corr),
            body=body,
        )
        return corr
"#,
        r#"
import pika


class Subscription:
    def __init__(self, channel, callback):
        self.channel = channel
        self.callback = callback

    def on_message(self, ch, method, props, body):
        self.channel.basic_ack(method.delivery_tag)
        self.callback(body.decode("utf-8"))

    def start(self, queue_name):
        self.consumer_tag = self.channel.basic_consume(queue_name, self.on_message)


class ChannelWrapper:
    def __init__(self, channel):
        self.channel = channel

    def basic_consume(self, *args, **kwargs):
        return self.channel.basic_consume(*args, **kwargs)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AmqpNoPrefetch);
}
