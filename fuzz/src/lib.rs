//! What the fuzz targets share: one source file, all the way through the
//! analysis as the pipeline runs it (lower, semantic pass, a project index
//! of that one file, every rule), on a thread with the pipeline's deep
//! stack. Any panic aborts the process, which libFuzzer reports as a crash.

use std::sync::{Mutex, OnceLock, mpsc};
use unsnarl::frontend::{Builtin, Frontend};
use unsnarl_model::{Knowledge, Language, SourceInput};
use unsnarl_rules::{Engine, ProjectIndex, all_rules};

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(all_rules().to_vec(), Knowledge::builtin()))
}

/// One file's analysis, as the pipeline runs it.
fn run(text: &str, language: Language, rel_path: &str) {
    let engine = engine();
    let input = SourceInput {
        text,
        rel_path,
        language,
    };
    let model = Builtin.lower(&input);
    let (prepared, summaries) = engine.prepare(model, language);
    let index = ProjectIndex::build(vec![summaries]);
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
}

type Job = (String, Language, &'static str, mpsc::Sender<()>);

/// One long-lived worker thread with the pipeline's deep stack (creating a
/// 256 MiB-stack thread per input would dominate the run under ASan).
fn worker() -> &'static Mutex<mpsc::Sender<Job>> {
    static WORKER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    WORKER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("analysis".into())
            .stack_size(unsnarl::pipeline::STACK_SIZE)
            .spawn(move || {
                for (text, language, rel_path, done) in rx {
                    run(&text, language, rel_path);
                    let _ = done.send(());
                }
            })
            .expect("spawn the analysis thread");
        Mutex::new(tx)
    })
}

/// Runs one file through the whole per-file analysis. Input that is not
/// UTF-8 is dropped: the pipeline never gives it to a front end. A panic
/// aborts the process (libfuzzer-sys's panic hook), which libFuzzer reports
/// as a crash.
pub fn analyze(data: &[u8], language: Language, rel_path: &'static str) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (done_tx, done_rx) = mpsc::channel();
    worker()
        .lock()
        .unwrap()
        .send((text.to_string(), language, rel_path, done_tx))
        .expect("the analysis thread is gone");
    if done_rx.recv().is_err() {
        // The worker died without the hook aborting: still a crash.
        std::process::abort();
    }
}
