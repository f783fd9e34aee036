//! A call that moves money, retried with no idempotency key
//! (`double-execution`): what the rules of several languages share. Each
//! language finds its own retries; the knowledge tables say which calls
//! move money (effect `non_idempotent`).

use crate::context::FileCx;
use crate::rule::RuleMeta;
use unsnarl_model::*;

/// Whether the source in `region` mentions an idempotency key or strategy
/// (`idempotency_key=`, `SetIdempotencyKey`, `RequestStrategy::Idempotent`):
/// a key made anywhere around the retry, often before it, is taken as
/// handling it.
pub fn has_idempotency_key(cx: &FileCx, region: Span) -> bool {
    cx.source(region).to_ascii_lowercase().contains("idempot")
}

/// The money-moving calls among `calls`, with their knowledge entries.
pub fn money_moving<'a>(
    cx: &'a FileCx,
    calls: impl IntoIterator<Item = ExprId> + 'a,
) -> impl Iterator<Item = (ExprId, &'a Call, &'a Entry)> + 'a {
    calls.into_iter().filter_map(move |e| {
        let c = cx.call(e)?;
        cx.effect(c, Effect::NonIdempotent)
            .map(|entry| (e, c, entry))
    })
}

/// The finding for `call` (an entry `entry` of the tables) retried as
/// `retried` says ("is retried by this loop", "and this loop calls it
/// again after an error").
pub fn finding(
    cx: &FileCx,
    meta: &'static RuleMeta,
    call: ExprId,
    callee: &str,
    entry: &Entry,
    retried: &str,
    fix: &str,
) -> Finding {
    cx.finding(
        meta,
        cx.expr(call).span,
        format!(
            "`{callee}` {} and {retried} on errors that can come after it went through (a timeout, a reset connection): without an idempotency key a retry can do it twice, a double charge",
            entry.what
        ),
        fix,
    )
}
