//! Behavior tests: small Rust snippets → assertions on the lowered model.
//! Every lowering in these tests also checks the model's structural
//! invariants (`util::check_invariants`).

mod corpus;
mod exprs;
mod functions;
mod imports;
mod macros;
mod resolve;
mod robust;
mod stmts;
mod types;
mod util;
