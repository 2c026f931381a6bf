//! Progress and stage timings on stderr.
//!
//! Each stage prints one line when it ends (`tokenize  74,728 docs  1.23 s`) so logs of scheduled
//! runs show where time went; long loops also get an indicatif bar when stderr is a terminal.
//! `--quiet` silences both (warnings still show). With `--log-format json` every line is one
//! JSON object instead (`{"event":"stage",...}`, `{"event":"warning",...}`), for log shippers
//! and schedulers. Nothing here writes to stdout, which is kept for data.
//!
//! Each line also shows the process's peak memory so far (Linux `VmHWM`), so the stage that
//! raises the peak is the first line where the figure jumps. `TOPICMAP_DEBUG_RSS=1` adds the
//! current resident set, for finding what a stage keeps alive, and makes each line's peak that
//! stage's own (the kernel's peak is reset after each line); `TOPICMAP_DEBUG_CPU=1` adds the
//! CPU seconds the stage used (all threads), which shows the stages that leave cores idle, and
//! its page faults, which show the stages that churn memory.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::Instant;

/// How log lines are written on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    // Aligned lines for people (the default).
    #[default]
    Text,
    // One JSON object per line: `stage`, `warning`, `info`, `done` and `error` events.
    Json,
}

static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// Sets the log format for the whole process (the CLI does this once, at start).
pub fn set_log_format(format: LogFormat) {
    let _ = FORMAT.set(format);
}

/// The process's log format.
pub fn log_format() -> LogFormat {
    FORMAT.get().copied().unwrap_or_default()
}

/// Writes one JSON event line on stderr.
fn json_event(value: serde_json::Value) {
    eprintln!("{value}");
}

/// A warning on stderr (always shown, even with `--quiet`).
pub fn warn(message: &str) {
    match log_format() {
        LogFormat::Text => eprintln!("warning: {message}"),
        LogFormat::Json => json_event(serde_json::json!({"event": "warning", "message": message})),
    }
}

/// An informational line on stderr (`report output/x/latest`), unless `quiet`.
pub fn info(quiet: bool, message: &str) {
    if quiet {
        return;
    }
    match log_format() {
        LogFormat::Text => eprintln!("{message}"),
        LogFormat::Json => json_event(serde_json::json!({"event": "info", "message": message})),
    }
}

/// Turns a stage's spinner into a bar counting `unit`s, with the rate and the time left (for
/// long stages that know their length, set with `set_length`).
pub fn count_on(bar: &indicatif::ProgressBar, name: &str, unit: &str) {
    if bar.is_hidden() {
        return;
    }
    let template =
        format!("{name:<10} {{wide_bar}} {{pos}}/{{len}} {unit}  {{per_sec}}  {{eta}} left");
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
}

/// An error and its causes on stderr, with its class and the exit code it ends the process with.
pub fn error(message: &str, causes: &[String], class: &str, exit_code: u8) {
    match log_format() {
        LogFormat::Text => {
            eprintln!("error: {message}");
            for cause in causes {
                eprintln!("  caused by: {cause}");
            }
        }
        LogFormat::Json => json_event(serde_json::json!({
            "event": "error",
            "message": message,
            "causes": causes,
            "class": class,
            "exit_code": exit_code,
        })),
    }
}

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
            tty: std::io::stderr().is_terminal() && log_format() == LogFormat::Text,
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
        let bar = self.bar(name);
        let start = Instant::now();
        let used_before = usage();
        let out = f(&bar);
        // Every stage passes here: the one place its freed memory is handed back.
        crate::heap::between_stages();
        bar.finish_and_clear();
        let secs = start.elapsed().as_secs_f64();
        let used = usage()
            .zip(used_before)
            .map(|(end, start)| end.since(start));
        self.record(name, secs, used, out.as_ref().ok().map(detail));
        out
    }

    /// Runs two independent stages at once (each on its own side of a `rayon::join`), for stages
    /// that each leave a core idle. Each is timed on its own and reported in order, `a` first.
    #[allow(clippy::type_complexity)]
    pub fn side_by_side<A: Send, B: Send, E: Send>(
        &mut self,
        (name_a, fa, detail_a): (
            &str,
            impl FnOnce() -> Result<A, E> + Send,
            impl FnOnce(&A) -> String,
        ),
        (name_b, fb, detail_b): (
            &str,
            impl FnOnce() -> Result<B, E> + Send,
            impl FnOnce(&B) -> String,
        ),
    ) -> Result<(A, B), E> {
        let bar = self.bar(&format!("{name_a} and {name_b}"));
        let ((a, secs_a), (b, secs_b)) = rayon::join(
            || {
                let start = Instant::now();
                (fa(), start.elapsed().as_secs_f64())
            },
            || {
                let start = Instant::now();
                (fb(), start.elapsed().as_secs_f64())
            },
        );
        bar.finish_and_clear();
        self.record(name_a, secs_a, None, a.as_ref().ok().map(detail_a));
        self.record(name_b, secs_b, None, b.as_ref().ok().map(detail_b));
        Ok((a?, b?))
    }

    /// Records a stage that ran on a thread of its own (`detail` is `None` when it failed).
    pub fn finished(&mut self, name: &str, secs: f64, detail: Option<String>) {
        self.record(name, secs, None, detail);
    }

    /// A spinner for stage `name` on a terminal, else a hidden bar.
    fn bar(&self, name: &str) -> indicatif::ProgressBar {
        if self.quiet || !self.tty {
            return indicatif::ProgressBar::hidden();
        }
        let b = indicatif::ProgressBar::new_spinner();
        b.set_message(name.to_string());
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        b
    }

    /// Records a finished stage, and reports it when it succeeded (`detail` is `Some`). `used` is
    /// what the stage alone used, when it ran alone.
    fn record(&mut self, name: &str, secs: f64, used: Option<Usage>, detail: Option<String>) {
        // The kernel's peak since the last reset (the stage's own under TOPICMAP_DEBUG_RSS),
        // and what is resident now, from one reading: read apart, other threads' pages could
        // land between them and put "now" above the peak.
        let status = std::fs::read_to_string("/proc/self/status").ok();
        let field = |name: &str| status.as_deref().and_then(|s| status_mib(s, name));
        let peak = field("VmHWM:");
        // The process's peak so far, which run.json and JSON logs keep whatever the resets.
        let before = self
            .stages
            .iter()
            .filter_map(|s| s.peak_mib)
            .reduce(f64::max);
        let so_far = peak.map(|p| before.map_or(p, |b| b.max(p)));
        self.stages.push(StageRecord {
            name: name.to_string(),
            secs,
            peak_mib: so_far,
        });
        let Some(detail) = detail else { return };
        if log_format() == LogFormat::Json {
            if !self.quiet {
                json_event(serde_json::json!({
                    "event": "stage",
                    "stage": name,
                    "detail": detail,
                    "seconds": (secs * 1000.0).round() / 1000.0,
                    "peak_mib": so_far.map(f64::round),
                    "cpu_seconds": used.map(|u| (u.cpu_secs * 1000.0).round() / 1000.0),
                }));
            }
            return;
        }
        let mut mem = peak
            .map(|m| format!("  {m:>6.0} MiB peak"))
            .unwrap_or_default();
        if std::env::var_os("TOPICMAP_DEBUG_RSS").is_some() {
            if let Some(now) = field("VmRSS:") {
                mem.push_str(&format!("  {now:>6.0} MiB now"));
            }
            // The next line's peak is then that stage's own (Linux resets VmHWM to VmRSS; so
            // does the peak `getrusage` and `/usr/bin/time` report, which then is the last
            // stage's).
            let _ = std::fs::write("/proc/self/clear_refs", "5");
        }
        if let (Some(used), Some(_)) = (used, std::env::var_os("TOPICMAP_DEBUG_CPU")) {
            mem.push_str(&format!(
                "  {:>6.2} cpu-s ({:.1} cores)  {:>7} page faults",
                used.cpu_secs,
                used.cpu_secs / secs.max(1e-9),
                thousands(used.minor_faults as usize)
            ));
        }
        self.note(&format!("{name:<10} {detail:<40} {secs:>7.2} s{mem}"));
    }

    /// A line on stderr, unless quiet.
    pub fn note(&self, line: &str) {
        if log_format() == LogFormat::Text && !self.quiet {
            eprintln!("{line}");
        }
    }

    /// The run's report folder (a line, or a JSON `done` event), unless quiet.
    pub fn done(&self, what: &str, dir: &std::path::Path) {
        if self.quiet {
            return;
        }
        match log_format() {
            LogFormat::Text => eprintln!("{what:<9} {}", dir.display()),
            LogFormat::Json => json_event(serde_json::json!({
                "event": "done",
                "command": what,
                "folder": dir.display().to_string(),
            })),
        }
    }

    /// An informational event (a line, or a JSON `info` event), unless quiet.
    pub fn info(&self, message: &str) {
        info(self.quiet, message);
    }

    /// A warning on stderr (always shown).
    pub fn warn(&self, line: &str) {
        warn(line);
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
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A memory figure of this process from the text of `/proc/self/status`, in MiB (`VmHWM:` is
/// the peak resident set, `VmRSS:` the current one; the kernel gives both from one count, so the
/// peak is never below the current one within a reading); `None` where the kernel does not
/// report it.
fn status_mib(status: &str, field: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// What the process has used so far, all threads together.
#[derive(Debug, Clone, Copy)]
struct Usage {
    /// User and system CPU seconds.
    cpu_secs: f64,
    /// Page faults served without I/O: each a page the kernel had to map (and zero) anew.
    minor_faults: u64,
}

impl Usage {
    /// What was used between `start` and `self`.
    fn since(self, start: Usage) -> Usage {
        Usage {
            cpu_secs: self.cpu_secs - start.cpu_secs,
            minor_faults: self.minor_faults.saturating_sub(start.minor_faults),
        }
    }
}

/// The process's [`Usage`] so far (`None` off Linux with glibc).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn usage() -> Option<Usage> {
    // SAFETY: getrusage only writes into the zeroed struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(Usage {
        cpu_secs: secs(usage.ru_utime) + secs(usage.ru_stime),
        minor_faults: u64::try_from(usage.ru_minflt).unwrap_or(0),
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn usage() -> Option<Usage> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_by_side_records_both_stages_in_order_and_returns_both_results() {
        let mut p = Progress::new(true);
        let (a, b) = p
            .side_by_side(
                ("first", || Ok::<_, String>(2), |v: &i32| v.to_string()),
                ("second", || Ok("x"), |v: &&str| v.to_string()),
            )
            .unwrap();
        assert_eq!((a, b), (2, "x"));
        let names: Vec<&str> = p.stages().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
        assert!(p.stages().iter().all(|s| s.secs >= 0.0));
    }

    #[test]
    fn side_by_side_reports_the_first_error_after_both_ran() {
        let mut p = Progress::new(true);
        let ran = std::sync::atomic::AtomicBool::new(false);
        let out: Result<((), ()), String> = p.side_by_side(
            (
                "first",
                || Err("disk full".to_string()),
                |_: &()| String::new(),
            ),
            (
                "second",
                || {
                    ran.store(true, std::sync::atomic::Ordering::SeqCst);
                    Ok(())
                },
                |_: &()| String::new(),
            ),
        );
        assert_eq!(out.unwrap_err(), "disk full");
        assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(p.stages().len(), 2);
    }
}
