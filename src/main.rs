//! The `unsnarl` binary: wires the real process (arguments, current
//! directory, terminals) to [`unsnarl::run`].

use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
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

/// mimalloc instead of the system allocator (as ruff does): a scan makes
/// and frees millions of small names, vectors and tree nodes per thread, and
/// mimalloc's per-thread free lists make that about 15-20% cheaper in CPU
/// than glibc's malloc on the benchmark corpora, for 30-50 MB more peak
/// memory (README, Benchmarks). Its use of transparent huge pages is turned
/// off at build time (`no_thp`): a 2 MiB page faulted in for a few live bytes
/// added another 20-40 MB of resident memory for no measurable gain.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
