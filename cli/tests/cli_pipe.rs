//! A closed output pipe (`wavelane info x.wl | head -c 0`) ends the program
//! quietly, as for other Unix tools, instead of a panic.

mod common;

use std::process::{Command, Stdio};

use common::{ok, s, Scratch};

#[cfg(unix)]
#[test]
fn closed_stdout_pipe_ends_quietly_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;

    let dir = Scratch::new("pipe", "closed-stdout");
    let mut pgm = b"P5\n4 3\n255\n".to_vec();
    pgm.extend((0u8..12).map(|v| v * 20));
    let src = dir.file("small.pgm", &pgm);
    let wl = dir.path("small.wl");
    ok(&[
        "encode",
        s(&src),
        "-o",
        s(&wl),
        "--lossless",
        "--backend",
        "cpu",
    ]);

    // The reading end is gone before the program writes anything.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args(["info", s(&wl), "--json"])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("run wavelane");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "expected the default SIGPIPE end, got {:?}; stderr: {stderr}",
        out.status
    );
}
