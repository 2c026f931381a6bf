//! The heap: topicmap allocates through mimalloc (`src/main.rs`), told how to hand memory back
//! by the kind of run.
//!
//! A streaming run allocates and frees a chunk's worth of texts, tokens and tables per chunk,
//! on a reader thread, the worker threads and a sink at once. With glibc's malloc, 11 % of the
//! 10M run's assign-pass CPU samples were in malloc, free and their lists, and 4 % more in the
//! kernel zeroing pages glibc had returned to the system and took back a chunk later. mimalloc
//! keeps a heap per thread, and a streaming run tells it never to return freed memory
//! ([`Workload::Streaming`]): the next chunk reuses it. The run's memory is still bounded by
//! its chunk and sample, though its peak varies more from run to run (2.4 to 3.3 GiB at 10M).
//!
//! Every other command holds its corpus whole: there the peak matters more than the churn, so
//! mimalloc returns freed memory after 10 ms and commits its arenas only as pages are
//! used ([`Workload::Whole`]; committed whole, arXiv's peak was half as large again), which
//! keeps the peak near glibc's. docs/benchmarks.md has the figures for both.
//!
//! The sentence transformer is churn again inside a whole run: each batch allocates and frees
//! tens of megabytes of activations, and with a 10 ms purge delay mimalloc gave them back to
//! the system and took them back a batch later, page fault by page fault. While it runs, freed
//! memory is kept for mimalloc's own default of a second ([`KeepFreed`]).
//!
//! Between the stages of a whole run, every thread hands its freed memory back at once
//! ([`between_stages`]). A stage frees much of what it allocated, often on other threads than
//! the ones that allocated it; mimalloc returns such pages only once their own thread runs the
//! allocator again after the purge delay, so the next stage, allocating afresh, stacked its
//! memory on top of its predecessor's garbage (60 MiB of it after the TF-IDF stage on arXiv).
//! Each stage's peak is then its own.
//!
//! `MIMALLOC_PURGE_DELAY` and `MIMALLOC_ARENA_EAGER_COMMIT`, when set, still win.

use std::ffi::CStr;
use std::os::raw::{c_int, c_long};
use std::sync::atomic::{AtomicBool, Ordering};

/// mimalloc v3's option numbers (`mi_option_e` in its `include/mimalloc.h`; the sys crate
/// names only the options v2 and v3 share).
const ARENA_EAGER_COMMIT: c_int = 4;
const PURGE_DELAY: c_int = 15;
/// How long a command that holds its corpus whole lets mimalloc keep freed memory, in
/// milliseconds (mimalloc v3's own default is 1,000; `include/mimalloc.h` still says 10).
const WHOLE_PURGE_DELAY_MS: c_long = 10;
/// How long freed memory is kept while batches of the same size come one after another.
const BATCHES_PURGE_DELAY_MS: c_long = 1_000;

/// How a command uses memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// The corpus held whole: return freed memory soon (a lower peak).
    Whole,
    /// Chunk after chunk of about the same size: keep freed memory for the next one.
    Streaming,
}

/// Tunes mimalloc for `workload`. `src/main.rs` calls it for [`Workload::Whole`] before the
/// first allocation (mimalloc reads how to commit its arenas when it makes the first one), for
/// every command; a streaming run calls it again before its passes. It allocates nothing.
pub fn tune(workload: Workload) {
    let purge_delay: c_long = match workload {
        Workload::Whole => WHOLE_PURGE_DELAY_MS,
        Workload::Streaming => -1,
    };
    set(ARENA_EAGER_COMMIT, c"MIMALLOC_ARENA_EAGER_COMMIT", 0);
    set(PURGE_DELAY, c"MIMALLOC_PURGE_DELAY", purge_delay);
    WHOLE.store(workload == Workload::Whole, Ordering::Relaxed);
}

/// While it lives, mimalloc keeps freed memory for a second before it returns it (unless
/// `MIMALLOC_PURGE_DELAY` is set); then the delay in force before is back.
#[derive(Debug)]
pub struct KeepFreed {
    previous: c_long,
}

/// Starts a [`KeepFreed`]: the encoder calls it before its batches.
#[must_use = "freed memory is kept only while the guard lives"]
pub fn keep_freed() -> KeepFreed {
    // SAFETY: mi_option_get only reads an option.
    let previous = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
    // A negative delay (a streaming run's) already keeps freed memory for good.
    let delay = if previous < 0 {
        previous
    } else {
        previous.max(BATCHES_PURGE_DELAY_MS)
    };
    set(PURGE_DELAY, c"MIMALLOC_PURGE_DELAY", delay);
    KeepFreed { previous }
}

impl Drop for KeepFreed {
    fn drop(&mut self) {
        set(PURGE_DELAY, c"MIMALLOC_PURGE_DELAY", self.previous);
    }
}

/// Whether this is a [`Workload::Whole`] run (set by [`tune`]).
static WHOLE: AtomicBool = AtomicBool::new(false);

/// Hands every thread's freed memory back to the system now (the calling thread and rayon's),
/// in a [`Workload::Whole`] run; a streaming run keeps it for the next chunk.
pub fn between_stages() {
    if !WHOLE.load(Ordering::Relaxed) {
        return;
    }
    // SAFETY: mi_collect only walks the calling thread's own heap; `force` also purges the
    // pages it frees at once instead of after the delay.
    let collect = || unsafe { libmimalloc_sys::mi_collect(true) };
    collect();
    rayon::broadcast(|_| collect());
}

/// Sets mimalloc's `option` unless its environment variable `var` is set.
fn set(option: c_int, var: &CStr, value: c_long) {
    // SAFETY: getenv reads the environment, which topicmap writes only at the start of `main`
    // (`embed::encoder::one_candle_thread_per_batch`, from main.rs), after this and before any thread; mi_option_set
    // only stores an option's value, which mimalloc reads atomically.
    unsafe {
        if libc::getenv(var.as_ptr()).is_null() {
            libmimalloc_sys::mi_option_set(option, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_numbers_are_mimalloc_v3s() {
        // Before anything sets them, each option holds mimalloc v3's default (src/options.c):
        // arenas committed eagerly on overcommit systems (2), purging after 1,000 ms.
        // SAFETY: mi_option_get only reads an option.
        let (eager, delay) = unsafe {
            (
                libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT),
                libmimalloc_sys::mi_option_get(PURGE_DELAY),
            )
        };
        if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            assert_eq!(eager, 2, "arena_eager_commit's default");
        }
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(delay, 1000, "purge_delay's default");
            keep_freed_holds_freed_memory_for_a_second_then_restores_the_delay();
        }
    }

    /// Called from the test above, so that no other test reads the delay meanwhile.
    fn keep_freed_holds_freed_memory_for_a_second_then_restores_the_delay() {
        // SAFETY: mi_option_get only reads an option.
        let get = || unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        set(PURGE_DELAY, c"MIMALLOC_PURGE_DELAY", WHOLE_PURGE_DELAY_MS);
        {
            let _keep = keep_freed();
            assert_eq!(get(), BATCHES_PURGE_DELAY_MS);
        }
        assert_eq!(get(), WHOLE_PURGE_DELAY_MS);
        // A streaming run's "never" is not shortened.
        set(PURGE_DELAY, c"MIMALLOC_PURGE_DELAY", -1);
        {
            let _keep = keep_freed();
            assert_eq!(get(), -1);
        }
        set(PURGE_DELAY, c"MIMALLOC_PURGE_DELAY", 1000);
    }
}
