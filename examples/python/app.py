import asyncio
import time

jobs = asyncio.Queue()


async def handle(request):
    time.sleep(0.5)  # blocks the event loop
    await jobs.put(request)
    return "ok"


async def main():
    asyncio.create_task(handle("ping"))  # nobody keeps the task
    await asyncio.sleep(1)


if __name__ == "__main__":
    asyncio.run(main())
