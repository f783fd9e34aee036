//! Rules for Go.

pub(crate) mod common;
pub(crate) mod flow;
pub(crate) mod locks;

pub mod goroutine_channel_leak;
pub mod huge_channel_buffer;
pub mod unjoined_goroutine;
