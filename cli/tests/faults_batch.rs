//! Batches that survive faults: an input that is missing, one truncated
//! and one deleted while the batch runs, a missing GPU; exit codes 0 / 1 / 2 / 3 (README,
//! "Exit codes"); `--skip-existing` resuming a batch.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::faults::{encode_layered, names, ppm, temporaries};
use common::{fails, ok, s, wavelane, Scratch};

#[test]
fn a_missing_input_does_not_stop_the_batch() {
    let dir = Scratch::new("faults-batch", "missing");
    let a = dir.file("a.ppm", &ppm(64, 48));
    let c = dir.file("c.ppm", &ppm(80, 40));
    let gone = dir.path("gone.ppm");
    let out = dir.path("out");
    let run = wavelane(&[
        "encode",
        s(&a),
        s(&gone),
        s(&c),
        "-o",
        s(&out),
        "--backend",
        "cpu",
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{err}");
    assert!(
        err.contains("gone.ppm") && err.contains("1 of 3 files failed"),
        "{err}"
    );
    assert_eq!(names(&out), ["a.wl", "c.wl"]);
    ok(&["verify", s(&out.join("a.wl")), s(&out.join("c.wl"))]);
    // Decode batch: one bad .wl among good ones.
    let bad = dir.file("bad.wl", b"not a wavelane file");
    let imgs = dir.path("imgs");
    let wl_a = out.join("a.wl");
    let run = wavelane(&[
        "decode",
        s(&wl_a),
        s(&bad),
        "-o",
        s(&imgs),
        "--backend",
        "cpu",
    ]);
    assert_eq!(run.status.code(), Some(3));
    assert_eq!(names(&imgs), ["a.png"]);
    // One input: its error is the command's (exit 1); usage errors are 2.
    fails(&["encode", s(&gone), "-o", s(&dir.path("x.wl"))]);
    assert_eq!(
        wavelane(&["encode", "--no-such-flag"]).status.code(),
        Some(2)
    );
}

#[test]
fn an_input_truncated_while_the_batch_runs() {
    let dir = Scratch::new("faults-batch", "cut");
    let first = dir.file("first.ppm", &ppm(64, 48));
    let slow = dir.file("slow.ppm", &ppm(1536, 1024));
    // Batches read ahead of the coder (cli/src/batch/pipeline.rs): with
    // one coder, at most the queue's one input and one per reader thread
    // (two) beyond the one being coded. Three small inputs after the slow
    // one keep the cut ones unread until the slow encode has finished,
    // unless the small ones overtake the slow one while its reader is
    // still reading it (two readers): then the batch reads `last` before
    // the cut, whole, and codes it whole (which is checked too), and the
    // run is repeated until the cut lands.
    let ahead: Vec<_> = (1..=3)
        .map(|k| dir.file(&format!("f{k}.ppm"), &ppm(24, 16)))
        .collect();
    let last_image = ppm(96, 64);
    let last = dir.path("last.ppm");
    let vanish = dir.path("vanish.ppm");
    let out = dir.path("out");
    let whole = dir.path("whole.wl");
    let mut attempts = 0;
    let (run, bytes) = loop {
        attempts += 1;
        let _ = std::fs::remove_dir_all(&out);
        std::fs::write(&last, &last_image).unwrap();
        std::fs::write(&vanish, ppm(32, 32)).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_wavelane"))
            .args([
                "encode",
                s(&first),
                s(&slow),
                s(&ahead[0]),
                s(&ahead[1]),
                s(&ahead[2]),
                s(&last),
                s(&vanish),
                "-o",
                s(&out),
                "--lossless",
                "--backend",
                "cpu",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Once the first output exists the batch is on the slow input: cut
        // one of the later ones and delete the other then.
        let start = Instant::now();
        while !out.join("first.wl").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "first output never came"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        let bytes = std::fs::read(&last).unwrap();
        std::fs::write(&last, &bytes[..bytes.len() / 2]).unwrap();
        std::fs::remove_file(&vanish).unwrap();
        let run = child.wait_with_output().unwrap();
        if !out.join("last.wl").exists() {
            break (run, bytes);
        }
        // Read before the cut: it must be the whole image's file.
        std::fs::write(&last, &last_image).unwrap();
        ok(&[
            "encode",
            s(&last),
            "-o",
            s(&whole),
            "--lossless",
            "--backend",
            "cpu",
        ]);
        assert!(
            std::fs::read(out.join("last.wl")).unwrap() == std::fs::read(&whole).unwrap(),
            "an input read before its cut was coded from part of it"
        );
        assert!(attempts < 5, "the cut never landed before the read");
    };
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{err}");
    assert!(
        err.contains("last.ppm") && err.contains("vanish.ppm"),
        "{err}"
    );
    assert!(err.contains("2 of 7 files failed"), "{err}");
    assert_eq!(
        names(&out),
        ["f1.wl", "f2.wl", "f3.wl", "first.wl", "slow.wl"]
    );
    // Resume: --skip-existing encodes only what is missing or bad.
    std::fs::write(&last, &bytes).unwrap();
    let slow_wl = std::fs::read(out.join("slow.wl")).unwrap();
    let mut damaged = slow_wl.clone();
    *damaged.last_mut().unwrap() ^= 1;
    std::fs::write(out.join("first.wl"), &damaged[..100]).unwrap();
    let text = ok(&[
        "encode",
        s(&first),
        s(&slow),
        s(&last),
        "-o",
        s(&out),
        "--lossless",
        "--backend",
        "cpu",
        "--skip-existing",
    ]);
    assert!(
        text.contains("first.ppm ->") && text.contains("last.ppm ->"),
        "{text}"
    );
    assert!(
        !text.contains("slow.ppm ->"),
        "a complete output was redone: {text}"
    );
    ok(&["verify", s(&out.join("first.wl")), s(&out.join("last.wl"))]);
    assert!(temporaries(&out).is_empty());
}

#[test]
fn no_gpu_falls_back_with_auto_and_fails_cleanly_with_gpu() {
    let dir = Scratch::new("faults-batch", "nogpu");
    let a = dir.file("a.ppm", &ppm(64, 48));
    let wl = dir.path("a.wl");
    encode_layered(&a, &wl);
    let no_driver = dir.path("no-such-icd.json");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_wavelane"))
            .args(args)
            .env("VK_ICD_FILENAMES", &no_driver)
            .env("VK_DRIVER_FILES", &no_driver)
            .env_remove("WAVELANE_DEVICE")
            .output()
            .unwrap()
    };
    let out = dir.path("out");
    for (cmd, input) in [("encode", &a), ("decode", &wl)] {
        let auto = run(&[cmd, s(input), s(input), "-o", s(&out), "--backend", "auto"]);
        assert!(
            auto.status.success(),
            "{}",
            String::from_utf8_lossy(&auto.stderr)
        );
        let _ = std::fs::remove_dir_all(&out);
        let gpu = run(&[
            cmd,
            s(input),
            "-o",
            s(&dir.path("g.out.png")),
            "--backend",
            "gpu",
        ]);
        let err = String::from_utf8_lossy(&gpu.stderr);
        assert_eq!(gpu.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("wavelane: error:") && !err.contains("panicked"),
            "{err}"
        );
    }
    // Nothing but the inputs: no partial or temporary file.
    assert_eq!(names(&dir.path("")), ["a.ppm", "a.wl"]);
}
