//! Rules for Rust (std threads, tokio and other runtimes).

mod common;
mod locks;

pub mod ack_before_work;
pub mod async_guard_across_io;
pub mod atomic_load_store_race;
pub mod block_on_in_async;
pub mod blocking_call;
pub mod condvar_notify_one_mixed;
pub mod condvar_wait_outside_loop;
pub mod connect_without_timeout;
pub mod cpu_heavy_on_runtime;
pub mod detached_spawn;
pub mod double_checked_init;
pub mod endless_spawned_loop;
pub mod forgotten_guard;
pub mod guard_across_await;
pub mod lock_order_cycle;
pub mod notify_all_for_one;
pub mod reconnect_without_jitter;
pub mod recv_loop_live_sender;
pub mod relaxed_publish_flag;
pub mod relock_while_held;
pub mod reqwest_without_timeout;
pub mod retried_non_idempotent;
pub mod retry_loop_without_backoff;
pub mod select_not_cancel_safe;
pub mod self_feeding_channel;
pub mod sleep_before_assert;
pub mod spawn_per_item;
pub mod static_mut_from_thread;
pub mod unbounded_channel;
