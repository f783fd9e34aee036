"""Order storage: a sync helper used from async code, and an async one."""

import asyncio
import json
import pathlib

ORDERS = pathlib.Path("/var/lib/shop/orders")


def _read_json(path):
    with open(path) as f:
        return json.load(f)


def load_order(order_id):
    return _read_json(ORDERS / f"{order_id}.json")


async def save_order(payload, total):
    order_id = payload["id"]
    body = json.dumps({**payload, "total": total})
    # Correct: the file write runs on a worker thread.
    await asyncio.to_thread((ORDERS / f"{order_id}.json").write_text, body)
    return order_id
