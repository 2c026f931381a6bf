//! Output folders: a report appears whole or not at all.
//!
//! A run writes into a hidden staging folder beside its destination and renames it into place
//! only after every file is written, so a failed or killed run never leaves a half-written report
//! and never touches the previous one. Two layouts:
//!
//! - **history** (the pipeline's `[output] dir`): `DIR/runs/<UTC timestamp>/` per run, and
//!   `DIR/latest`, a symlink switched atomically to the newest complete run. A lock file
//!   (`DIR/.lock`) keeps two runs of one pipeline from writing at once.
//! - **exact** (`--out DIR`): the report is `DIR` itself, replacing an earlier report there.
//!   A folder that exists but does not hold a topicmap report is never replaced.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// Where a run's report goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Destination {
    /// `root/runs/<stamp>/` plus `root/latest`.
    History { root: PathBuf },
    /// Exactly this folder.
    Exact(PathBuf),
}

/// Output failures, each naming the path.
#[derive(Debug, thiserror::Error)]
pub enum StagingError {
    #[error("cannot write to {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another run is writing to {0} (lock file {1}); try again when it has finished")]
    Locked(PathBuf, PathBuf),
    #[error("{0} exists and is not a topicmap report (no run.json); refusing to replace it")]
    NotAReport(PathBuf),
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StagingError + '_ {
    move |source| StagingError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A report being written. Dropped without [`Staging::commit`], it removes itself.
#[derive(Debug)]
pub struct Staging {
    dest: Destination,
    tmp: PathBuf,
    stamp: String,
    _lock: Option<File>,
    committed: bool,
}

impl Staging {
    /// Creates the staging folder (and takes the lock for history destinations).
    pub fn begin(dest: Destination, stamp: &str) -> Result<Staging, StagingError> {
        let pid = std::process::id();
        let (tmp, lock) = match &dest {
            Destination::History { root } => {
                let runs = root.join("runs");
                fs::create_dir_all(&runs).map_err(io(&runs))?;
                let lock_path = root.join(".lock");
                let lock = File::create(&lock_path).map_err(io(&lock_path))?;
                match lock.try_lock() {
                    Ok(()) => {}
                    Err(fs::TryLockError::WouldBlock) => {
                        return Err(StagingError::Locked(root.clone(), lock_path))
                    }
                    Err(fs::TryLockError::Error(e)) => return Err(io(&lock_path)(e)),
                }
                clean_stale(&runs);
                (runs.join(format!(".tmp-{stamp}-{pid}")), Some(lock))
            }
            Destination::Exact(dir) => {
                if dir.exists() && !is_replaceable(dir) {
                    return Err(StagingError::NotAReport(dir.clone()));
                }
                let parent = parent_of(dir);
                fs::create_dir_all(&parent).map_err(io(&parent))?;
                let prefix = format!(".{}.tmp-", file_name(dir));
                clean_orphans(&parent, &prefix);
                (parent.join(format!("{prefix}{pid}")), None)
            }
        };
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
        }
        fs::create_dir_all(&tmp).map_err(io(&tmp))?;
        Ok(Staging {
            dest,
            tmp,
            stamp: stamp.to_string(),
            _lock: lock,
            committed: false,
        })
    }

    /// The folder to write into.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Moves the finished report into place and returns its final folder.
    pub fn commit(mut self) -> Result<PathBuf, StagingError> {
        let final_dir = match &self.dest {
            Destination::History { root } => {
                let runs = root.join("runs");
                let mut target = runs.join(&self.stamp);
                let mut n = 2;
                while target.exists() {
                    target = runs.join(format!("{}-{n}", self.stamp));
                    n += 1;
                }
                fs::rename(&self.tmp, &target).map_err(io(&target))?;
                let rel = Path::new("runs").join(target.file_name().unwrap_or_default());
                let link_tmp = root.join(format!(".latest.tmp-{}", std::process::id()));
                let _ = fs::remove_file(&link_tmp);
                std::os::unix::fs::symlink(&rel, &link_tmp).map_err(io(&link_tmp))?;
                let latest = root.join("latest");
                fs::rename(&link_tmp, &latest).map_err(io(&latest))?;
                target
            }
            Destination::Exact(dir) => {
                let old =
                    parent_of(dir).join(format!(".{}.old-{}", file_name(dir), std::process::id()));
                let had_old = dir.exists();
                if had_old {
                    fs::rename(dir, &old).map_err(io(dir))?;
                }
                if let Err(e) = fs::rename(&self.tmp, dir) {
                    if had_old {
                        let _ = fs::rename(&old, dir);
                    }
                    return Err(io(dir)(e));
                }
                if had_old {
                    let _ = fs::remove_dir_all(&old);
                }
                dir.clone()
            }
        };
        self.committed = true;
        Ok(final_dir)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.tmp);
        }
    }
}

fn parent_of(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn file_name(dir: &Path) -> String {
    dir.file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "report".into())
}

/// An existing folder may be replaced when it is empty or holds a topicmap report.
fn is_replaceable(dir: &Path) -> bool {
    match fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none() || dir.join("run.json").is_file(),
        Err(_) => false,
    }
}

/// Keeps the newest `keep` complete runs under `root/runs/` and deletes older ones (the run that
/// `latest` points to is always kept). Returns the folders removed.
pub fn prune(root: &Path, keep: usize) -> Result<Vec<PathBuf>, StagingError> {
    let runs = root.join("runs");
    let latest = fs::read_link(root.join("latest"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_os_string()));
    let mut done: Vec<PathBuf> = fs::read_dir(&runs)
        .map_err(io(&runs))?
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    // Run folders are UTC timestamps: names sort by age.
    done.sort();
    let excess = done.len().saturating_sub(keep.max(1));
    let mut removed = Vec::new();
    for old in done.into_iter().take(excess) {
        if latest.as_deref() == old.file_name() {
            continue;
        }
        fs::remove_dir_all(&old).map_err(io(&old))?;
        removed.push(old);
    }
    Ok(removed)
}

/// Removes staging folders left by killed runs (we hold the lock, so none is live).
fn clean_stale(runs: &Path) {
    if let Ok(entries) = fs::read_dir(runs) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(".tmp-") {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Removes `parent/<prefix><pid>` staging folders whose writer is no longer running (a run killed
/// with SIGKILL cannot clean up after itself). A folder whose process is alive is left alone.
fn clean_orphans(parent: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix(prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_destination_appears_whole_and_replaces_old_report() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("rep");
        let s = Staging::begin(Destination::Exact(out.clone()), "s1").unwrap();
        fs::write(s.path().join("run.json"), "{}").unwrap();
        assert!(!out.exists(), "nothing appears before commit");
        s.commit().unwrap();
        assert!(out.join("run.json").is_file());
        // A failed run (dropped staging) leaves the old report untouched.
        let s = Staging::begin(Destination::Exact(out.clone()), "s2").unwrap();
        fs::write(s.path().join("partial.csv"), "x").unwrap();
        drop(s);
        assert!(!out.join("partial.csv").exists());
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            1,
            "no staging folder left behind"
        );
    }

    #[test]
    fn refuses_to_replace_a_foreign_folder() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join("thesis.tex"), "precious").unwrap();
        let err = Staging::begin(Destination::Exact(d.path().to_path_buf()), "s").unwrap_err();
        assert!(matches!(err, StagingError::NotAReport(_)));
        assert!(d.path().join("thesis.tex").exists());
    }

    #[test]
    fn history_keeps_runs_and_points_latest_at_newest() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("p");
        for stamp in ["20260101T000000Z", "20260102T000000Z"] {
            let s = Staging::begin(Destination::History { root: root.clone() }, stamp).unwrap();
            fs::write(s.path().join("run.json"), stamp).unwrap();
            s.commit().unwrap();
        }
        assert_eq!(
            fs::read_to_string(root.join("latest/run.json")).unwrap(),
            "20260102T000000Z"
        );
        assert!(root.join("runs/20260101T000000Z/run.json").is_file());
    }

    #[test]
    fn keep_prunes_the_oldest_runs_but_never_latest() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("p");
        for stamp in ["20260101T000000Z", "20260102T000000Z", "20260103T000000Z"] {
            let s = Staging::begin(Destination::History { root: root.clone() }, stamp).unwrap();
            fs::write(s.path().join("run.json"), stamp).unwrap();
            s.commit().unwrap();
        }
        let removed = prune(&root, 2).unwrap();
        assert_eq!(removed, vec![root.join("runs/20260101T000000Z")]);
        assert!(root.join("runs/20260103T000000Z").is_dir());
        assert_eq!(
            fs::read_to_string(root.join("latest/run.json")).unwrap(),
            "20260103T000000Z"
        );
    }

    #[test]
    fn a_second_writer_is_locked_out() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("p");
        let _first = Staging::begin(Destination::History { root: root.clone() }, "a").unwrap();
        let err = Staging::begin(Destination::History { root }, "b").unwrap_err();
        assert!(matches!(err, StagingError::Locked(..)), "{err}");
    }

    #[test]
    fn staging_left_by_a_dead_writer_is_removed_but_a_live_one_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("report");
        // pid_max is at most 2^22 on Linux, so this pid cannot be running.
        let dead = d.path().join(".report.tmp-4194305");
        let live = d.path().join(format!(".report.tmp-{}", std::process::id()));
        fs::create_dir_all(&dead).unwrap();
        let s = Staging::begin(Destination::Exact(out.clone()), "x").unwrap();
        assert!(!dead.exists(), "orphaned staging folder not removed");
        assert_eq!(s.path(), live.as_path());
        assert!(live.is_dir(), "our own staging folder must exist");
        fs::write(s.path().join("run.json"), "{}").unwrap();
        s.commit().unwrap();
        assert!(out.join("run.json").is_file());
    }
}
