//! Helpers shared by the CLI tests: a scratch directory and runs of the
//! built `wavelane` binary.

#![allow(dead_code)] // each test binary uses its own subset

pub mod faults;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory for one test, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `$TMPDIR/wavelane-<area>-<pid>-<test>`, created empty.
    pub fn new(area: &str, test: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("wavelane-{area}-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// Writes `bytes` to `name` in the directory and returns its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).expect("write scratch file");
        p
    }

    /// The path of `name` in the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the built binary.
pub fn wavelane(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args(args)
        .output()
        .expect("run wavelane")
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Runs and asserts success, returning stdout.
pub fn ok(args: &[&str]) -> String {
    let out = wavelane(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "wavelane {args:?} failed: {stderr}\n(GPU runs need a Vulkan device: \
         VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json with lavapipe)"
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs and asserts a clean failure (exit code 1, a `wavelane: error:`
/// line, no panic), returning stderr.
pub fn fails(args: &[&str]) -> String {
    let out = wavelane(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "wavelane {args:?}: {stderr}");
    // Notices (e.g. the backend choice) may come first; the error line must be there.
    assert!(
        stderr.lines().any(|l| l.starts_with("wavelane: error:")),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}
