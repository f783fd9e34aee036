//! Rules for Go.

pub(crate) mod common;
pub(crate) mod flow;
pub(crate) mod locks;

pub mod ack_before_work;
pub mod atomic_load_store;
pub mod background_context;
pub mod bad_channel_close;
pub mod blocking_under_mutex;
pub mod broadcast_for_one;
pub mod cleanup_with_request_context;
pub mod cond_signal_heterogeneous;
pub mod cond_wait_without_loop;
pub mod context_less_call;
pub mod copied_lock;
pub mod deferred_lock;
pub mod goroutine_channel_leak;
pub mod goroutine_per_item;
pub mod goroutine_per_send;
pub mod goroutine_shared_write;
pub mod http_without_timeout;
pub mod huge_channel_buffer;
pub mod lock_order_inversion;
pub mod loop_variable_capture;
pub mod lost_cancel;
pub mod mutex_reacquired;
pub mod plain_flag_polling;
pub mod poll_without_jitter;
pub mod range_unclosed_channel;
pub mod retried_non_idempotent;
pub mod retry_without_backoff;
pub mod signal_notify_unbuffered;
pub mod sleep_to_synchronize;
pub mod split_invariant_update;
pub mod time_after_in_loop;
pub mod time_tick_leak;
pub mod timer_not_stopped;
pub mod unjoined_goroutine;
pub mod unlock_missing_on_path;
pub mod waitgroup_misuse;

/// The Go fixtures under `tests/fixtures/go`: every line marked
/// `// expect: cat-a, cat-b` gets findings of exactly those categories from
/// the Go rules, and unmarked lines get none.
#[cfg(test)]
mod fixtures {
    use crate::index::ProjectIndex;
    use crate::{Engine, all_rules};
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use unsnarl_model::{Knowledge, Language, LineIndex};

    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                collect(&p, out);
            } else if p.extension().is_some_and(|x| x == "go") {
                out.push(p);
            }
        }
    }

    #[test]
    fn go_fixtures_match_their_expectations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/go");
        let mut paths = Vec::new();
        collect(&root, &mut paths);
        paths.sort();
        assert!(!paths.is_empty(), "no Go fixtures under {}", root.display());
        let rules = all_rules()
            .iter()
            .copied()
            .filter(|r| r.meta().applies_to(Language::Go))
            .collect();
        let engine = Engine::new(rules, Knowledge::builtin());
        let mut problems = Vec::new();
        for p in &paths {
            let text = std::fs::read_to_string(p).unwrap();
            let rel = p.strip_prefix(&root).unwrap().to_string_lossy().to_string();
            let mut expected: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
            for (i, line) in text.lines().enumerate() {
                if let Some(pos) = line.rfind("// expect:") {
                    let cats = line[pos + "// expect:".len()..]
                        .split(',')
                        .map(|c| c.trim().to_string())
                        .filter(|c| !c.is_empty())
                        .collect();
                    expected.insert(i as u32 + 1, cats);
                }
            }
            let model = crate::testing::lower(Language::Go, &text, &rel);
            let (prep, sums) = engine.prepare(model, Language::Go);
            let index = ProjectIndex::build(vec![sums]);
            let lines = LineIndex::new(&text);
            let mut found: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
            let mut msgs = Vec::new();
            for f in engine.check(0, &rel, &text, &prep, &index) {
                let line = lines.line_col(&text, f.span.start).line;
                found
                    .entry(line)
                    .or_default()
                    .insert(f.category.slug().to_string());
                msgs.push(format!(
                    "{rel}:{line}: {} {}: {}",
                    f.rule,
                    f.category.slug(),
                    f.message
                ));
            }
            if found != expected {
                problems.push(format!(
                    "{rel}:\n  expected {expected:?}\n  found    {found:?}\n  {}",
                    msgs.join("\n  ")
                ));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
