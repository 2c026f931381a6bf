//! The `topicmap` binary: parse arguments, call the library, map the result to an exit code.
//! 0 = success, 2 = error (each cause on its own line on stderr). A closed stdout pipe is not an
//! error (as in ripgrep).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = topicmap::cli::Args::parse();
    match topicmap::cli::dispatch(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}
