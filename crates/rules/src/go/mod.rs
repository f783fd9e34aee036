//! Rules for go.
