//! The `unsnarl` binary: wires the real process (arguments, current
//! directory, terminals) to [`unsnarl::run`].

use std::ffi::{c_int, c_long};
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    return_memory_promptly();
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

/// mimalloc instead of the system allocator (as ruff does): a scan makes
/// and frees millions of small names, vectors and tree nodes per thread, and
/// mimalloc's per-thread free lists make that 10-20% cheaper in CPU than
/// glibc's malloc on the benchmark corpora (README, Benchmarks). Version 2,
/// without transparent huge pages (`no_thp`), returning freed memory quickly
/// ([`return_memory_promptly`]): each of these keeps peak memory close to
/// what glibc's takes.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

// mimalloc 2's option numbers (`mi_option_e` in its `mimalloc.h`); the
// Rust binding does not name these two. The crate versions are pinned.
const MI_OPTION_PURGE_DELAY: c_int = 15;
const MI_OPTION_ARENA_PURGE_MULT: c_int = 24;

unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
}

/// By default mimalloc keeps freed pages for 10 ms, and freed arena memory
/// for 100 ms, before giving them back: scanning the large generated files
/// of the benchmark's "all" tree, that held 20-40 MB more at the peak. 1 ms
/// for both keeps almost all of the speed.
fn return_memory_promptly() {
    // SAFETY: setting an option only changes a value mimalloc reads when it
    // next purges; any thread may do it at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, 1);
        mi_option_set(MI_OPTION_ARENA_PURGE_MULT, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option numbers are mimalloc 2's: both options have their
    /// documented default (10), and setting one is what reading it gives.
    #[test]
    fn the_purge_options_are_the_ones_set() {
        // SAFETY: see `return_memory_promptly`.
        unsafe {
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 10);
            assert_eq!(mi_option_get(MI_OPTION_ARENA_PURGE_MULT), 10);
            return_memory_promptly();
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 1);
            assert_eq!(mi_option_get(MI_OPTION_ARENA_PURGE_MULT), 1);
        }
    }
}
