//! Rules for Rust (std threads, tokio and other runtimes).

pub mod block_on_in_async;
pub mod blocking_call;
pub mod detached_spawn;
pub mod guard_across_await;
pub mod unbounded_channel;
