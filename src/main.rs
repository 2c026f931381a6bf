//! The `topicmap` binary: parse arguments, call the library, map the result to an exit code
//! (`topicmap::cli::EXIT_CODES`: 2, or by class with `--exit-codes classes`; each cause of an error on its own line on stderr). A closed
//! stdout pipe is not an error (as in ripgrep).

use clap::Parser;
use std::process::ExitCode;

/// mimalloc, tuned per command by `topicmap::heap`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Tunes the heap before the first allocation, from the list of functions the C runtime calls
/// before `main` (mimalloc reads how to commit its arenas when it makes the first one).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static TUNE_HEAP: extern "C" fn() = {
    extern "C" fn tune() {
        topicmap::heap::tune(topicmap::heap::Workload::Whole);
    }
    tune
};

fn main() -> ExitCode {
    // Without the hook above, as early as `main` can.
    #[cfg(not(target_os = "linux"))]
    topicmap::heap::tune(topicmap::heap::Workload::Whole);
    // SAFETY: no other thread exists yet (this runs first in `main`; the heap hook before
    // `main` starts none).
    unsafe { topicmap::embed::encoder::one_candle_thread_per_batch() };
    let args = topicmap::cli::Args::parse();
    let codes = args.exit_codes;
    match topicmap::cli::dispatch(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            ExitCode::from(topicmap::cli::report_error(&err, codes))
        }
    }
}
