"""A price cache shared by all handlers."""

import asyncio
import threading

_stats_lock = threading.Lock()
_stats = {"hits": 0, "misses": 0}


class PriceCache:
    def __init__(self, client):
        self._client = client
        self._lock = asyncio.Lock()
        self._prices = {}

    async def refresh(self):
        # BUG: the lock is held for a whole network round trip.
        async with self._lock:
            resp = await self._client.get("https://pricing.internal/all")
            self._prices = await resp.json()

    async def price(self, sku):
        # BUG: a thread lock held across an await can deadlock the loop.
        with _stats_lock:
            _stats["hits"] += 1
            await asyncio.sleep(0)
        return self._prices.get(sku)

    async def bump(self, sku):
        # Correct: the asyncio lock only guards in-memory state.
        async with self._lock:
            self._prices[sku] = self._prices.get(sku, 0) + 1
