//! What the fuzz targets share: one source file, all the way through the
//! analysis as the pipeline runs it (lower, semantic pass, a project index
//! of that one file, every rule), on a thread with the pipeline's deep
//! stack. Any panic aborts the process, which libFuzzer reports as a crash.

use std::sync::OnceLock;
use unsnarl::frontend::{Builtin, Frontend};
use unsnarl_model::{Knowledge, Language, SourceInput};
use unsnarl_rules::{Engine, ProjectIndex, all_rules};

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(all_rules().to_vec(), Knowledge::builtin()))
}

/// Runs one file through the whole per-file analysis. Input that is not
/// UTF-8 is dropped: the pipeline never gives it to a front end.
pub fn analyze(data: &[u8], language: Language, rel_path: &str) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let engine = engine();
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .stack_size(unsnarl::pipeline::STACK_SIZE)
            .spawn_scoped(s, || {
                let input = SourceInput {
                    text,
                    rel_path,
                    language,
                };
                let model = Builtin.lower(&input);
                let (prepared, summaries) = engine.prepare(model, language);
                let index = ProjectIndex::build(vec![(rel_path.into(), summaries)]);
                let findings = engine.check(0, rel_path, text, &prepared, &index);
                // The pipeline turns every span into a line and column.
                let lines = unsnarl_model::LineIndex::new(text);
                for f in &findings {
                    let _ = lines.line_col(text, f.span.start);
                    let _ = lines.line_col(text, f.span.end.max(f.span.start));
                    for r in &f.related {
                        let _ = lines.line_col(text, r.span.start);
                    }
                }
            })
            .expect("spawn the analysis thread");
        if worker.join().is_err() {
            // libfuzzer-sys's panic hook aborts first; this is a fallback.
            std::process::abort();
        }
    });
}
