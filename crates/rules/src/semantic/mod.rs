//! The semantic pass: runs after lowering, before the rules. It infers the
//! types of local variables, module globals and object fields from
//! constructor calls, annotations and knowledge `returns` entries, then
//! resolves method calls on typed receivers (`q.get()` with
//! `q = queue.Queue()` becomes `queue.Queue.get`), so that rules match
//! callees by what they are, not by how they are spelled.

mod types;

pub use types::{Semantic, annotate};
