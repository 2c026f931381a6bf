//! Progress and stage timings on stderr.
//!
//! Each stage prints one line when it ends (`tokenize  74,728 docs  1.23 s`) so logs of scheduled
//! runs show where time went; long loops also get an indicatif bar when stderr is a terminal.
//! `--quiet` silences both. Nothing here writes to stdout, which is kept for data.

use std::io::IsTerminal;
use std::time::Instant;

/// Stage reporter and timing log.
#[derive(Debug)]
pub struct Progress {
    quiet: bool,
    tty: bool,
    timings: Vec<(String, f64)>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Progress {
            quiet,
            tty: std::io::stderr().is_terminal(),
            timings: Vec::new(),
        }
    }

    /// Runs `f` as stage `name`, timing it and reporting `detail(result)` when it ends.
    pub fn stage<T, E>(
        &mut self,
        name: &str,
        f: impl FnOnce(&indicatif::ProgressBar) -> Result<T, E>,
        detail: impl FnOnce(&T) -> String,
    ) -> Result<T, E> {
        let bar = if self.quiet || !self.tty {
            indicatif::ProgressBar::hidden()
        } else {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_message(name.to_string());
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            b
        };
        let start = Instant::now();
        let out = f(&bar);
        bar.finish_and_clear();
        let secs = start.elapsed().as_secs_f64();
        self.timings.push((name.to_string(), secs));
        if let Ok(v) = &out {
            self.note(&format!("{name:<10} {:<40} {secs:>7.2} s", detail(v)));
        }
        out
    }

    /// A line on stderr, unless quiet.
    pub fn note(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    /// A warning on stderr (always shown).
    pub fn warn(&self, line: &str) {
        eprintln!("warning: {line}");
    }

    /// Stage timings so far, in order.
    pub fn timings(&self) -> &[(String, f64)] {
        &self.timings
    }
}

/// `74728` -> `74,728`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
