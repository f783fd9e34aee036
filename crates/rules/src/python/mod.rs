//! Rules for Python (asyncio, threading, trio/anyio).

pub mod blocking_call;
pub mod cancellation_swallowed;
pub mod check_then_await;
pub(crate) mod common;
pub mod cpu_heavy_call;
pub mod critical_section_io;
pub mod discarded_task;
pub mod gather_orphans;
pub mod late_binding_closure;
pub mod lock_across_await;
pub mod lock_order;
pub mod lost_update;
pub mod missing_await;
pub mod path_toctou;
pub mod shield_without_owner;
pub mod sync_over_async;
pub mod task_set_leak;
pub mod thread_shared_mutation;
pub mod unbounded_fanout;
pub mod unbounded_queue;
