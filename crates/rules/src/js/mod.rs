//! Rules for js.
