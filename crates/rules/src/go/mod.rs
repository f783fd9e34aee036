//! Rules for Go.

pub mod huge_channel_buffer;
pub mod unjoined_goroutine;
