//! `wavelane encode` and `decode` at every pool size down to one thread.
//!
//! Both run each file through the batch pipeline, whose threads use the
//! rayon pool while the main thread waits for their outcomes; a main
//! thread that were one of the pool's workers would take no work there,
//! so one thread would deadlock and two would code on one
//! (cli/src/main.rs says why the pool is built as it is). A hang is caught
//! by a deadline here rather than left to hang the suite.

mod common;
mod pictures;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{s, Scratch};
use pictures::Pnm;

/// Far above the few hundred milliseconds these runs take on one loaded
/// core under a debug build.
const DEADLINE: Duration = Duration::from_secs(120);

/// Runs the binary with `RAYON_NUM_THREADS=threads` and asserts that it
/// succeeds before [`DEADLINE`].
fn run_with_threads(threads: usize, args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run wavelane");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for wavelane") {
            let out = child.wait_with_output().expect("stderr");
            assert!(
                status.success(),
                "wavelane {args:?} with {threads} thread(s): {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        if start.elapsed() > DEADLINE {
            child.kill().expect("kill wavelane");
            child.wait().expect("reap wavelane");
            panic!("wavelane {args:?} with {threads} thread(s) still ran after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn encode_decode(dir: &Scratch, threads: usize, src: &Path, extra: &[&str]) -> (Vec<u8>, Pnm) {
    let wl = dir.path(&format!("t{threads}.wl"));
    let out = dir.path(&format!("t{threads}.ppm"));
    let mut args = vec!["encode", s(src), "-o", s(&wl), "--backend", "cpu"];
    args.extend_from_slice(extra);
    run_with_threads(threads, &args);
    run_with_threads(
        threads,
        &["decode", s(&wl), "-o", s(&out), "--backend", "cpu"],
    );
    (std::fs::read(&wl).expect("read .wl"), Pnm::read(&out))
}

/// Lossless encode and decode finish with one, two and three threads, give
/// the same file at every pool size, and decode to the source.
#[test]
fn lossless_runs_at_every_pool_size() {
    let dir = Scratch::new("threads", "lossless");
    let pic = Pnm::test_picture(96, 64, 3, 255);
    let src = dir.path("src.ppm");
    pic.write(&src);
    let (file, decoded) = encode_decode(&dir, 1, &src, &["--lossless"]);
    assert_eq!(decoded.to_bytes(), pic.to_bytes(), "lossless round trip");
    for threads in [2, 3] {
        let (other, decoded) = encode_decode(&dir, threads, &src, &["--lossless"]);
        assert!(other == file, "{threads} threads gave another file");
        assert_eq!(decoded.to_bytes(), pic.to_bytes(), "{threads} threads");
    }
}

/// A lossy encode (rate control, its own parallel stages) finishes on one
/// thread with the same file as on two.
#[test]
fn lossy_runs_on_one_thread() {
    let dir = Scratch::new("threads", "lossy");
    let pic = Pnm::test_picture(96, 64, 3, 255);
    let src = dir.path("src.ppm");
    pic.write(&src);
    let (one, _) = encode_decode(&dir, 1, &src, &["--bpp", "1"]);
    let (two, _) = encode_decode(&dir, 2, &src, &["--bpp", "1"]);
    assert!(one == two, "one and two threads gave different files");
}
