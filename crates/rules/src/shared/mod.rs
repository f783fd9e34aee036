//! Checks shared by the rules of several languages. Each language keeps its
//! own rule file (id, docs, examples); the logic that is the same lives here.

pub mod ack_before_work;
pub mod blocking;
pub mod retried_payment;
