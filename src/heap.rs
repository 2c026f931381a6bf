//! The heap: how many glibc malloc arenas the process's threads share.
//!
//! glibc gives each thread that allocates a heap ("arena") of its own, up to eight per core, and
//! memory freed in one arena is never reused by another. The stages of an in-memory run
//! allocate on rayon's threads and free on others, so many arenas held dead memory at the peak:
//! one shared arena removes that and, with two cores, costs no measurable time.
//!
//! A streaming run is different: a reader thread parses the next chunk, the worker threads
//! clean, tokenize and place the current one, and a sink writes the one before, all allocating
//! at once. On one arena they queue for its lock (a sixth of the assign pass's CPU time went to
//! the lock's futex on a 1M-document run); two arenas remove most of the waiting for a little
//! more memory, which a streaming run bounds anyway (docs/benchmarks.md has the figures).
//!
//! glibc fixes the number of arenas when a second thread first allocates, so [`limit_arenas`]
//! is called once, before any thread starts. `MALLOC_ARENA_MAX`, when set, still wins.

/// Arenas for a streaming run (reader, workers and sink allocate at once).
pub const STREAMING_ARENAS: usize = 2;

/// Lets the process's threads share at most `n` malloc arenas (glibc on Linux; elsewhere
/// nothing). Call it before any thread starts: glibc reads the limit once.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn limit_arenas(n: usize) {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only changes allocator settings; the callers call it before any
        // thread starts.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, n.clamp(1, 64) as libc::c_int);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn limit_arenas(_n: usize) {}
