//! Progress and stage timings on stderr.
//!
//! Each stage prints one line when it ends (`tokenize  74,728 docs  1.23 s`) so logs of scheduled
//! runs show where time went; long loops also get an indicatif bar when stderr is a terminal.
//! `--quiet` silences both. Nothing here writes to stdout, which is kept for data.
//!
//! Each line also shows the process's peak memory so far (Linux `VmHWM`), so the stage that
//! raises the peak is the first line where the figure jumps. `TOPICMAP_DEBUG_RSS=1` adds the
//! current resident set, for finding what a stage keeps alive.

use std::io::IsTerminal;
use std::time::Instant;

/// Stage reporter and timing log.
#[derive(Debug)]
pub struct Progress {
    quiet: bool,
    tty: bool,
    stages: Vec<StageRecord>,
}

/// One finished stage: its name, its seconds and the process's peak memory (MiB) when it ended
/// (`None` where the kernel does not report it).
#[derive(Debug, Clone)]
pub struct StageRecord {
    pub name: String,
    pub secs: f64,
    pub peak_mib: Option<f64>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Progress {
            quiet,
            tty: std::io::stderr().is_terminal(),
            stages: Vec::new(),
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
        release_free_memory();
        bar.finish_and_clear();
        let secs = start.elapsed().as_secs_f64();
        let peak = status_mib("VmHWM:");
        self.stages.push(StageRecord {
            name: name.to_string(),
            secs,
            peak_mib: peak,
        });
        if let Ok(v) = &out {
            let mut mem = peak
                .map(|m| format!("  {m:>6.0} MiB peak"))
                .unwrap_or_default();
            if std::env::var_os("TOPICMAP_DEBUG_RSS").is_some() {
                if let Some(now) = status_mib("VmRSS:") {
                    mem.push_str(&format!("  {now:>6.0} MiB now"));
                }
            }
            self.note(&format!("{name:<10} {:<40} {secs:>7.2} s{mem}", detail(v)));
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

    /// The stages finished so far, in order.
    pub fn stages(&self) -> &[StageRecord] {
        &self.stages
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

/// A memory figure of this process from `/proc/self/status`, in MiB (`VmHWM:` is the peak
/// resident set, `VmRSS:` the current one); `None` where the kernel does not report it.
fn status_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Hands memory freed by a stage back to the system. glibc keeps freed blocks inside its heap,
/// where the next stage's large arrays (which are mapped separately) cannot use them; the
/// tokenizer frees most of the corpus's text, so without this the peak carried ~100 MiB of dead
/// heap. Costs a few milliseconds per stage.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_free_memory() {
    // SAFETY: malloc_trim only returns unused heap pages to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}
