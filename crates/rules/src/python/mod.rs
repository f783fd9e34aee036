//! Rules for Python (asyncio, threading, trio/anyio).

pub mod blocking_call;
pub mod cancellation_swallowed;
pub mod cpu_heavy_call;
pub mod discarded_task;
pub mod lock_across_await;
pub mod sync_over_async;
pub mod unbounded_queue;
