"""HTTP handlers of the order service."""

import asyncio
import time

import requests

from .db import load_order, save_order
from .notify import send_receipt

PRICING_URL = "https://pricing.internal/quote"
_receipts: set[asyncio.Task] = set()


async def create_order(request):
    payload = await request.json()
    # BUG: a synchronous HTTP call stalls every other request on the loop.
    quote = requests.post(PRICING_URL, json=payload, timeout=5).json()
    order_id = await save_order(payload, quote["total"])
    # BUG: fire-and-forget: a failed receipt is never noticed.
    asyncio.create_task(send_receipt(order_id))
    return {"id": order_id}


async def create_order_fixed(request):
    payload = await request.json()
    async with asyncio.timeout(5):
        quote = await request.app["http"].post(PRICING_URL, json=payload)
    order_id = await save_order(payload, (await quote.json())["total"])
    # Kept in a set that forgets finished tasks: owned, not orphaned.
    task = asyncio.create_task(send_receipt(order_id))
    _receipts.add(task)
    task.add_done_callback(_receipts.discard)
    return {"id": order_id}


async def get_order(request):
    order_id = request.match_info["id"]
    # BUG: the helper reads a file synchronously (see db.py).
    order = load_order(order_id)
    return order


async def slow_health(request):
    # BUG: time.sleep blocks the loop; asyncio.sleep would not.
    time.sleep(0.5)
    return {"ok": True}
