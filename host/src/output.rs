//! Atomic output files: nothing wavelane writes ever appears under its
//! final name half-written (docs/format.md, "Writing files").
//!
//! [`AtomicFile::create`] opens a temporary file next to the target, named
//! `.NAME.wavelane-tmp-PID-RAND` (hidden, recognisable by
//! [`is_temporary`], never matching a name wavelane reads or writes).
//! [`AtomicFile::commit`] flushes it, syncs it to the disk, renames it over
//! the target and syncs the directory, so after a crash the target is
//! either the old file or the complete new one. Any error, or dropping the
//! file without committing, removes the temporary and leaves an existing
//! target untouched. A process killed outright (SIGKILL, power loss) can
//! leave a temporary behind: the next [`AtomicFile::create`] for the same
//! target removes those whose process is gone ([`clean_stale`]).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The marker between the target's name and the process id.
const MARKER: &str = ".wavelane-tmp-";

/// A file being written; it becomes the target only on [`commit`](Self::commit).
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    temporary: PathBuf,
    target: PathBuf,
}

/// The directory holding `target` (`.` for a bare file name).
fn parent_of(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The prefix every temporary of `target` starts with: `.NAME.wavelane-tmp-`.
fn temporary_prefix(target: &Path) -> Option<OsString> {
    let name = target.file_name()?;
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(MARKER);
    Some(prefix)
}

/// Whether `path` names a temporary file of [`AtomicFile`] (of any target).
pub fn is_temporary(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') && n.contains(MARKER))
}

/// A name unique within this process and unlikely to repeat across
/// processes with the same id: the clock's nanoseconds mixed with a counter.
fn random_suffix() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // SplitMix64 finaliser: spreads nearby inputs over the whole range.
    let mut z = nanos ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether process `pid` still runs. Where that cannot be told (no
/// `/proc`), every process counts as running, so nothing is removed.
fn process_alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes the temporaries of `target` left by processes that no longer
/// run (a killed earlier run); returns how many. Temporaries of running
/// processes, and anything that is not a temporary of this target, are
/// left alone.
pub fn clean_stale(target: &Path) -> io::Result<usize> {
    let Some(prefix) = temporary_prefix(target) else {
        return Ok(0);
    };
    let prefix = prefix.to_string_lossy().into_owned();
    let mut removed = 0;
    for entry in fs::read_dir(parent_of(target))? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Adds the path to an I/O error's message, keeping its kind.
fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl AtomicFile {
    /// Opens a temporary file for `target` in the target's directory,
    /// after removing stale temporaries of the same target. Fails early
    /// (before any work is done) where the directory cannot be written.
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let prefix = temporary_prefix(&target).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a file name", target.display()),
            )
        })?;
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("{}: is a directory", target.display()),
            ));
        }
        // Cleaning is best effort: a directory we cannot list or a stale
        // file we cannot remove must not stop this run, whose own
        // temporary has a different name.
        let _ = clean_stale(&target);
        let mut name = prefix;
        name.push(format!("{}-{:016x}", std::process::id(), random_suffix()));
        let temporary = parent_of(&target).join(name);
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .map_err(|e| with_path(&target, e))?;
        Ok(AtomicFile {
            file: Some(file),
            temporary,
            target,
        })
    }

    /// The final name.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary file's name.
    pub fn temporary(&self) -> &Path {
        &self.temporary
    }

    /// Flushes and syncs the data, renames the temporary over the target
    /// and syncs the directory. On error the temporary is removed and the
    /// target is as it was.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("only commit takes the file");
        let target = self.target.clone();
        let result = (|| {
            let mut file = file;
            file.flush()?;
            file.sync_all()?;
            drop(file);
            fs::rename(&self.temporary, &self.target)?;
            // The rename is durable only once the directory is synced.
            // Some systems cannot open a directory for syncing; the rename
            // itself has happened by then, so that is not an error.
            if let Ok(dir) = File::open(parent_of(&self.target)) {
                let _ = dir.sync_all();
            }
            Ok(())
        })();
        if result.is_ok() {
            // Renamed: nothing left for Drop to remove.
            self.temporary = PathBuf::new();
        }
        result.map_err(|e| with_path(&target, e))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let file = self.file.as_mut().expect("writes come before commit");
        file.write(buf).map_err(|e| with_path(&self.target, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        let file = self.file.as_mut().expect("writes come before commit");
        file.flush().map_err(|e| with_path(&self.target, e))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file = None;
        if !self.temporary.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// Writes `bytes` to `target` atomically (see the module documentation).
pub fn write_atomic(target: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(target)?;
    file.write_all(bytes)?;
    file.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "wavelane-output-{name}-{}-{:x}",
            std::process::id(),
            random_suffix()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commit_replaces_and_drop_keeps_the_old_file() {
        let dir = scratch("commit");
        let target = dir.join("out.bin");
        fs::write(&target, b"old").unwrap();
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"half").unwrap();
        assert!(is_temporary(f.temporary()));
        assert_eq!(fs::read(&target).unwrap(), b"old");
        drop(f);
        assert_eq!(entries(&dir), ["out.bin"]);
        assert_eq!(fs::read(&target).unwrap(), b"old");
        write_atomic(&target, b"new").unwrap();
        assert_eq!(entries(&dir), ["out.bin"]);
        assert_eq!(fs::read(&target).unwrap(), b"new");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed() {
        let dir = scratch("stale");
        let target = dir.join("a.wl");
        // u32::MAX - 1 is above any pid_max, so no such process runs.
        let dead = dir.join(format!(".a.wl{MARKER}{}-00", u32::MAX - 1));
        let other = dir.join(format!(".b.wl{MARKER}{}-00", u32::MAX - 1));
        let alive = dir.join(format!(".a.wl{MARKER}{}-00", std::process::id()));
        for p in [&dead, &other, &alive] {
            fs::write(p, b"x").unwrap();
        }
        assert!(is_temporary(&dead) && !is_temporary(&target));
        write_atomic(&target, b"done").unwrap();
        let left = entries(&dir);
        assert!(!left.contains(&dead.file_name().unwrap().to_string_lossy().into_owned()));
        assert!(left.contains(&other.file_name().unwrap().to_string_lossy().into_owned()));
        assert!(left.contains(&alive.file_name().unwrap().to_string_lossy().into_owned()));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_target_is_an_error() {
        let dir = scratch("dir");
        let err = write_atomic(&dir, b"x").unwrap_err();
        assert!(err.to_string().contains("directory"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
