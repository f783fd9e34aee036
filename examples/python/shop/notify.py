"""Receipts and the background mail worker."""

import asyncio
import logging

log = logging.getLogger(__name__)

# BUG: no maxsize: a slow mail server turns this queue into a memory leak.
outbox = asyncio.Queue()
# Correct: bounded.
retry_box = asyncio.Queue(maxsize=500)


async def send_receipt(order_id):
    await outbox.put(order_id)


async def mail_worker(smtp):
    while True:
        order_id = await outbox.get()
        try:
            await smtp.send(order_id)
        # BUG: BaseException also catches cancellation; shutdown hangs here.
        except BaseException:
            log.exception("receipt %s failed", order_id)
            await retry_box.put(order_id)


async def retry_worker(smtp):
    while True:
        order_id = await retry_box.get()
        try:
            await smtp.send(order_id)
        except asyncio.CancelledError:
            log.info("retry worker stopping")
            raise
        except Exception:
            log.exception("retry of %s failed", order_id)


async def on_refund(message, payments):
    # BUG: acknowledged before the refund is made: a crash in between loses it.
    await message.ack()
    await payments.refund(message.body)


async def on_receipt_request(message):
    # Correct: the work first, then the ack.
    await send_receipt(message.body)
    await message.ack()
