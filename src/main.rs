//! The `unsnarl` binary: wires the real process (arguments, current
//! directory, terminals) to [`unsnarl::run`].

use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    tune_allocator();
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: cannot read the current directory: {e}");
            return ExitCode::from(unsnarl::EXIT_ERROR);
        }
    };
    // anstream decides colors: a terminal, and neither NO_COLOR nor
    // CLICOLOR=0; CLICOLOR_FORCE forces them. It also strips any escape
    // sequence from output that ends up not colored. The streams are not
    // locked: the progress bar writes to stderr from worker threads.
    let color = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
    let mut stdout = anstream::AutoStream::auto(std::io::stdout());
    let mut stderr = anstream::AutoStream::auto(std::io::stderr());
    let mut io = unsnarl::Io {
        cwd,
        stdout: &mut stdout,
        stderr: &mut stderr,
        color,
        progress: std::io::stderr().is_terminal(),
    };
    let code = unsnarl::run(std::env::args_os(), &mut io, &unsnarl::frontend::Builtin);
    ExitCode::from(code)
}

/// glibc raises its mmap threshold each time a large block is freed, so
/// after the first files the big vectors of every file model come from the
/// heap, and the long-lived function summaries allocated between them keep
/// the freed space from being returned. A fixed threshold keeps blocks of
/// 1 MiB and more in their own mappings, returned as soon as they are freed:
/// about 25 MB less peak memory on the benchmark's "all" tree, same time
/// (README, Benchmarks).
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a malloc parameter; it is called before
    // any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}
