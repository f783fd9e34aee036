//! Rules for rust.
