//! Checks shared by the rules of several languages. Each language keeps its
//! own rule file (id, docs, examples); the logic that is the same lives here.

pub mod ack_before_work;
pub mod blocking;
pub mod retried_payment;

/// A host (or `host:port`, `[::1]:port`) written out that is this machine:
/// `127.x`, `localhost`, `[::1]`. Every language's rules read addresses
/// this way.
pub(crate) fn is_loopback_host(s: &str) -> bool {
    s.starts_with("127.") || s.starts_with("localhost") || s.starts_with("[::1]")
}
