//! Rules for JavaScript and TypeScript (Node and browsers).

pub mod blocking_call;
pub mod floating_promise;
pub mod lock_across_await;
