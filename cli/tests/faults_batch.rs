//! Batches that survive faults: an input that is missing, one truncated
//! and one deleted while the batch runs, a missing GPU; exit codes 0 / 1 / 2 / 3 (README,
//! "Exit codes"); `--skip-existing` resuming a batch.

mod common;

use std::io::Write;
use std::process::Command;
use std::time::Duration;

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
    // The batch reads its inputs on two reader threads that take the next
    // index in turn (cli/src/batch/pipeline.rs). Inputs 1 and 2 are named
    // pipes: once both readers wait in them, nothing after them has been
    // read, so the cut and the deletion land before the batch reads
    // `last` and `vanish`, on every run, whatever the machine's speed.
    let gates = ["gate1.ppm", "gate2.ppm"].map(|name| dir.path(name));
    for gate in &gates {
        let made = Command::new("mkfifo").arg(gate).status().unwrap();
        assert!(made.success(), "mkfifo {}", gate.display());
    }
    let gate_images = [ppm(40, 30), ppm(30, 40)];
    let last_image = ppm(96, 64);
    let last = dir.file("last.ppm", &last_image);
    let vanish = dir.file("vanish.ppm", &ppm(32, 32));
    let out = dir.path("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args([
            "encode",
            s(&first),
            s(&gates[0]),
            s(&gates[1]),
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
    // Opening a pipe to write returns once a reader has opened it.
    let (opened, open) = std::sync::mpsc::channel();
    for gate in gates.clone() {
        let opened = opened.clone();
        std::thread::spawn(move || opened.send(std::fs::File::create(gate)));
    }
    let mut writers = Vec::new();
    for _ in &gates {
        match open.recv_timeout(Duration::from_secs(60)) {
            Ok(writer) => writers.push(writer.unwrap()),
            Err(_) => {
                let _ = child.kill();
                panic!("the batch never opened both pipes: more than two readers, or none");
            }
        }
    }
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::remove_file(&vanish).unwrap();
    // Which reader holds which pipe is not known: each pipe gets the image
    // that is then checked against its own output.
    for (writer, image) in writers.iter_mut().zip(&gate_images) {
        writer.write_all(image).unwrap();
    }
    drop(writers);
    let run = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{err}");
    assert!(
        err.contains("last.ppm") && err.contains("vanish.ppm"),
        "{err}"
    );
    assert!(err.contains("2 of 5 files failed"), "{err}");
    assert_eq!(names(&out), ["first.wl", "gate1.wl", "gate2.wl"]);
    // The pipes' outputs are whole images' files (one of the two, each).
    let mut piped: Vec<_> = ["gate1.wl", "gate2.wl"]
        .map(|name| std::fs::read(out.join(name)).unwrap())
        .into();
    let mut whole: Vec<_> = gate_images
        .iter()
        .enumerate()
        .map(|(k, image)| {
            let input = dir.file(&format!("whole{k}.ppm"), image);
            let wl = dir.path(&format!("whole{k}.wl"));
            ok(&[
                "encode",
                s(&input),
                "-o",
                s(&wl),
                "--lossless",
                "--backend",
                "cpu",
            ]);
            std::fs::read(wl).unwrap()
        })
        .collect();
    piped.sort();
    whole.sort();
    assert!(piped == whole, "a piped input was coded from part of it");
    // Resume: --skip-existing encodes only what is missing or bad.
    std::fs::write(&last, &bytes).unwrap();
    let gate = dir.file("gate.ppm", &gate_images[0]);
    std::fs::copy(out.join("gate1.wl"), out.join("gate.wl")).unwrap();
    let mut damaged = std::fs::read(out.join("gate.wl")).unwrap();
    *damaged.last_mut().unwrap() ^= 1;
    std::fs::write(out.join("first.wl"), &damaged[..100]).unwrap();
    let text = ok(&[
        "encode",
        s(&first),
        s(&gate),
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
        !text.contains("gate.ppm ->"),
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
