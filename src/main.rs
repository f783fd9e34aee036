//! The `unsnarl` binary: wires the real process (arguments, current
//! directory, terminals) to [`unsnarl::run`].

use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: `ScanAllocator` is the global allocator (below).
    unsafe { unsnarl_alloc::enable() };
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
    let mut stdin = std::io::stdin();
    let mut io = unsnarl::Io {
        cwd,
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
        color,
        progress: std::io::stderr().is_terminal(),
        cache_home: dirs::cache_dir().map(|d| d.join("unsnarl")),
    };
    let code = unsnarl::run(std::env::args_os(), &mut io, &unsnarl::frontend::Builtin);
    ExitCode::from(code)
}

/// mimalloc, with one region per thread for parse trees (see
/// `unsnarl_alloc`).
#[global_allocator]
static GLOBAL: unsnarl_alloc::ScanAllocator = unsnarl_alloc::ScanAllocator;
