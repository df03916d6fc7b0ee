//! Target faults: a full disk (a file-size limit, `RLIMIT_FSIZE`, with
//! SIGXFSZ ignored so that writes fail with EFBIG instead of killing the
//! process), a directory that cannot be written, a target that is a
//! directory, and a process killed in the middle of an encode. In every
//! case an existing target is untouched, no partial file appears under the
//! final name, and no temporary file is left (except by the killed process,
//! whose temporary the next run removes).

#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::faults::{names, ppm, temporaries};
use common::{fails, ok, s, Scratch};

/// Runs the binary with files limited to `limit` bytes.
fn with_file_size_limit(limit: u64, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wavelane"));
    cmd.args(args);
    // SAFETY: between fork and exec only async-signal-safe calls
    // (setrlimit, signal) run, touching nothing of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    cmd.output().expect("run wavelane")
}

#[test]
fn full_disk_keeps_the_old_file_and_leaves_nothing() {
    let dir = Scratch::new("faults-disk", "full");
    let input = dir.file("in.ppm", &ppm(256, 192));
    let keep = dir.path("keep.wl");
    ok(&[
        "encode",
        s(&input),
        "-o",
        s(&keep),
        "--bpp",
        "0.5",
        "--backend",
        "cpu",
    ]);
    let old = std::fs::read(&keep).unwrap();
    // The lossless file is far larger than the limit; the old one fits.
    let limit = old.len() as u64 + 4096;
    let run = with_file_size_limit(
        limit,
        &[
            "encode",
            s(&input),
            "-o",
            s(&keep),
            "--lossless",
            "--backend",
            "cpu",
        ],
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("keep.wl") && err.contains("too large"),
        "{err}"
    );
    assert_eq!(std::fs::read(&keep).unwrap(), old, "the good file changed");
    assert_eq!(temporaries(dir.path("").as_path()), Vec::<String>::new());
    // Decode onto the full disk: no debris.
    let out = dir.path("out.ppm");
    let run = with_file_size_limit(
        limit,
        &["decode", s(&keep), "-o", s(&out), "--backend", "cpu"],
    );
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(names(&dir.path("")), ["in.ppm", "keep.wl"]);
}

#[test]
fn unwritable_directory_and_directory_target() {
    let dir = Scratch::new("faults-disk", "ro");
    let input = dir.file("in.ppm", &ppm(64, 48));
    // A directory whose permission bits forbid writing stops a normal
    // user; root (CI runs the tests as root) writes through permission
    // bits, so there the same check runs on a procfs directory, where no
    // one can create files. Which one ran is printed.
    let ro = dir.path("ro");
    std::fs::create_dir(&ro).unwrap();
    let keep = ro.join("keep.wl");
    std::fs::write(&keep, b"old").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let bits_stop_us = std::fs::write(ro.join("probe"), b"").is_err();
    let target = if bits_stop_us {
        eprintln!("read-only directory: permission bits");
        keep.clone()
    } else {
        eprintln!("read-only directory: permission bits do not stop this user; using /proc/self");
        Path::new("/proc/self/keep.wl").to_path_buf()
    };
    let err = fails(&["encode", s(&input), "-o", s(&target), "--backend", "cpu"]);
    assert!(err.contains("keep.wl"), "{err}");
    assert!(!target.exists() || target == keep);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _ = std::fs::remove_file(ro.join("probe"));
    assert_eq!(std::fs::read(&keep).unwrap(), b"old");
    assert_eq!(names(&ro), ["keep.wl"]);
    // A target that is a directory: a clean error, the directory as it was.
    let sub = dir.path("sub.wl");
    std::fs::create_dir(&sub).unwrap();
    let err = fails(&["encode", s(&input), "-o", s(&sub), "--backend", "cpu"]);
    assert!(err.contains("is a directory"), "{err}");
    let wl = dir.path("x.wl");
    ok(&["encode", s(&input), "-o", s(&wl), "--backend", "cpu"]);
    let img = dir.path("img.png");
    std::fs::create_dir(&img).unwrap();
    let err = fails(&["decode", s(&wl), "-o", s(&img), "--backend", "cpu"]);
    assert!(err.contains("is a directory"), "{err}");
    assert!(names(&sub).is_empty() && names(&img).is_empty());
    assert!(temporaries(&dir.path("")).is_empty());
}

#[test]
fn sigkill_mid_encode_leaves_no_output_and_the_next_run_cleans_up() {
    let dir = Scratch::new("faults-disk", "kill");
    let big = dir.file("big.ppm", &ppm(2048, 1536));
    let out = dir.path("out.wl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args([
            "encode",
            s(&big),
            "-o",
            s(&out),
            "--lossless",
            "--backend",
            "cpu",
        ])
        .spawn()
        .expect("start wavelane");
    // The temporary is opened before the encode starts, so it shows the
    // process is inside the encode.
    let start = Instant::now();
    while temporaries(&dir.path("")).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temporary appeared"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before the kill"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(!out.exists(), "a killed encode left {out:?}");
    let stale = temporaries(&dir.path(""));
    assert_eq!(stale.len(), 1, "{stale:?}");
    // The next run of the same target completes and removes the stale file.
    let small = dir.file("small.ppm", &ppm(64, 48));
    ok(&["encode", s(&small), "-o", s(&out), "--backend", "cpu"]);
    assert!(temporaries(&dir.path("")).is_empty());
    ok(&["verify", s(&out)]);
}
