//! Rules for JavaScript and TypeScript (Node and browsers).

pub mod async_callback_ignored;
pub mod async_foreach;
pub mod async_predicate;
pub mod async_promise_executor;
pub mod blocking_call;
pub mod common;
pub mod floating_promise;
pub mod lock_across_await;
pub mod promise_as_value;
pub mod promise_in_condition;
pub mod return_in_try;
pub mod cpu_heavy_call;
pub mod unbounded_promise_all;
pub mod loop_without_yield;
pub mod microtask_yield;
pub mod recursive_microtask;
pub mod acquire_without_finally;
pub mod check_then_await;
pub mod exists_then_act;
pub mod read_await_write;
pub mod var_loop_capture;
