//! Batches of `encode` and `decode` (cli/src/batch): every output equals
//! what coding its input alone gives, reports come in input order, a
//! directory stands for its files, `--json` adds a summary, and
//! `--devices` runs one worker per listed device (lavapipe in the test
//! set-up: one device, listed twice or as `all`).

mod common;

use std::path::{Path, PathBuf};

use common::faults::{names, ppm, temporaries};
use common::{fails, ok, s, wavelane, Scratch};
use serde_json::Value;

/// Inputs of different sizes (so that they take unequal times), named so
/// that their order on the command line is not their sorted order.
fn inputs(dir: &Scratch) -> Vec<PathBuf> {
    [
        ("d", 96, 64),
        ("a", 40, 72),
        ("c", 130, 50),
        ("b", 64, 64),
        ("e", 33, 17),
    ]
    .iter()
    .map(|(name, w, h)| dir.file(&format!("{name}.ppm"), &ppm(*w, *h)))
    .collect()
}

/// Each input encoded alone (then decoded alone), with the extra
/// arguments of each command.
fn alone(dir: &Scratch, inputs: &[PathBuf], extra: Extra) -> Vec<(Vec<u8>, Vec<u8>)> {
    inputs
        .iter()
        .map(|input| {
            let stem = input.file_stem().unwrap().to_str().unwrap();
            let wl = dir.path(&format!("{stem}.alone.wl"));
            let png = dir.path(&format!("{stem}.alone.png"));
            let mut args = vec!["encode", s(input), "-o", s(&wl)];
            args.extend(extra.0);
            ok(&args);
            let mut args = vec!["decode", s(&wl), "-o", s(&png)];
            args.extend(extra.1);
            ok(&args);
            (std::fs::read(&wl).unwrap(), std::fs::read(&png).unwrap())
        })
        .collect()
}

/// Extra arguments of `encode` and of `decode`.
type Extra<'a> = (&'a [&'a str], &'a [&'a str]);

/// Runs a batch with `--json` and returns its report.
fn batch_json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    serde_json::from_str(&ok(&args)).expect("JSON output")
}

/// The `input` of each file report, as file names.
fn report_inputs(v: &Value) -> Vec<String> {
    v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|r| {
            let p = PathBuf::from(r["input"].as_str().unwrap());
            p.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect()
}

fn file_names(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// Encodes and decodes `inputs` as batches with `extra` arguments and
/// checks every output against `want`, and the reports' order and summary.
fn check_batch(
    dir: &Scratch,
    tag: &str,
    inputs: &[PathBuf],
    extra: Extra,
    want: &[(Vec<u8>, Vec<u8>)],
) {
    let wl_dir = dir.path(&format!("{tag}-wl"));
    let mut args = vec!["encode"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["-o", s(&wl_dir)]);
    args.extend(extra.0);
    let enc = batch_json(&args);
    assert_eq!(report_inputs(&enc), file_names(inputs), "{tag}: {enc}");
    assert_eq!(enc["summary"]["files"], inputs.len(), "{tag}");
    assert_eq!(enc["summary"]["ok"], inputs.len(), "{tag}");
    assert_eq!(enc["summary"]["failed"], 0, "{tag}");
    assert!(enc["summary"]["megabytes_per_second"].as_f64().unwrap() > 0.0);
    // Decode the directory: its .wl files, sorted.
    let png_dir = dir.path(&format!("{tag}-png"));
    let mut args = vec!["decode", s(&wl_dir), "-o", s(&png_dir)];
    args.extend(extra.1);
    let dec = batch_json(&args);
    let mut sorted = inputs.to_vec();
    sorted.sort_by_key(|p| p.file_name().unwrap().to_owned());
    let wl_names: Vec<String> = file_names(&sorted)
        .iter()
        .map(|n| {
            Path::new(n)
                .with_extension("wl")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(report_inputs(&dec), wl_names, "{tag}: {dec}");
    for (input, (wl, png)) in inputs.iter().zip(want) {
        let stem = input.file_stem().unwrap().to_str().unwrap();
        let got = std::fs::read(wl_dir.join(format!("{stem}.wl"))).unwrap();
        assert!(
            got == *wl,
            "{tag}: {stem}.wl differs from encoding it alone"
        );
        let got = std::fs::read(png_dir.join(format!("{stem}.png"))).unwrap();
        assert!(
            got == *png,
            "{tag}: {stem}.png differs from decoding it alone"
        );
    }
    assert!(temporaries(&wl_dir).is_empty() && temporaries(&png_dir).is_empty());
}

#[test]
fn a_cpu_batch_equals_each_file_alone_in_input_order() {
    let dir = Scratch::new("batch", "cpu");
    let inputs = inputs(&dir);
    let cpu = &["--backend", "cpu"][..];
    for (tag, extra) in [
        ("lossless", (&["--lossless", "--backend", "cpu"][..], cpu)),
        (
            "lossy",
            (
                &["--bpp", "2", "--layers", "2", "--backend", "cpu"][..],
                &["--backend", "cpu", "--reduce", "1"][..],
            ),
        ),
    ] {
        let want = alone(&dir, &inputs, extra);
        check_batch(&dir, tag, &inputs, extra, &want);
    }
    // Text reports come in input order too, one line per file.
    let out = dir.path("text");
    let mut args = vec!["encode"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--backend", "cpu"]);
    let text = ok(&args);
    let order: Vec<String> = text
        .lines()
        .map(|l| {
            let input = l.split(" -> ").next().unwrap();
            Path::new(input)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(order, file_names(&inputs), "{text}");
}

#[test]
fn a_directory_is_its_images_and_a_failure_is_counted() {
    let dir = Scratch::new("batch", "directory");
    let images = dir.path("images");
    std::fs::create_dir(&images).unwrap();
    std::fs::write(images.join("b.ppm"), ppm(50, 40)).unwrap();
    std::fs::write(images.join("a.ppm"), ppm(30, 20)).unwrap();
    std::fs::write(images.join("notes.txt"), b"not an image").unwrap();
    std::fs::write(images.join("c.ppm"), b"P6 broken").unwrap();
    let out = dir.path("out");
    let run = wavelane(&[
        "encode",
        s(&images),
        "-o",
        s(&out),
        "--backend",
        "cpu",
        "--json",
    ]);
    assert_eq!(
        run.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report_inputs(&v), ["a.ppm", "b.ppm"], "{v}");
    assert_eq!(v["summary"]["ok"], 2, "{v}");
    assert_eq!(v["summary"]["failed"], 1, "{v}");
    assert_eq!(names(&out), ["a.wl", "b.wl"]);
    // One image in a directory still goes into the output directory.
    let one = dir.path("one");
    std::fs::create_dir(&one).unwrap();
    std::fs::write(one.join("x.ppm"), ppm(20, 20)).unwrap();
    ok(&[
        "encode",
        s(&one),
        "-o",
        s(&dir.path("one-out")),
        "--backend",
        "cpu",
    ]);
    assert_eq!(names(&dir.path("one-out")), ["x.wl"]);
    let empty = dir.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = fails(&[
        "encode",
        s(&empty),
        "-o",
        s(&dir.path("e")),
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("no .png"), "{err}");
}

#[test]
fn two_inputs_with_one_output_name_fail_the_second() {
    let dir = Scratch::new("batch", "clash");
    let sub = dir.path("sub");
    std::fs::create_dir(&sub).unwrap();
    let a = dir.file("x.ppm", &ppm(30, 20));
    let b = dir.file("sub/x.ppm", &ppm(40, 20));
    let out = dir.path("out");
    let run = wavelane(&["encode", s(&a), s(&b), "-o", s(&out), "--backend", "cpu"]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{err}");
    assert!(err.contains("is also that of"), "{err}");
    let want = ok(&[
        "encode",
        s(&a),
        "-o",
        s(&dir.path("x.wl")),
        "--backend",
        "cpu",
    ]);
    assert!(!want.is_empty());
    assert_eq!(
        std::fs::read(out.join("x.wl")).unwrap(),
        std::fs::read(dir.path("x.wl")).unwrap()
    );
}

#[test]
fn gpu_batches_on_devices_equal_each_file_alone_in_input_order() {
    let dir = Scratch::new("batch", "gpu-devices");
    let inputs = inputs(&dir);
    let gpu = &["--backend", "gpu"][..];
    let want = alone(&dir, &inputs, (&["--lossless", "--backend", "gpu"], gpu));
    for (tag, devices) in [("twice", "0,0"), ("all", "all")] {
        let enc = ["--lossless", "--backend", "gpu", "--devices", devices];
        let dec = ["--backend", "gpu", "--devices", devices];
        check_batch(&dir, tag, &inputs, (&enc, &dec), &want);
    }
    // The summary names the workers: two on device 0.
    let out = dir.path("summary");
    let mut args = vec!["encode"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--devices", "0,0"]);
    let v = batch_json(&args);
    assert_eq!(v["summary"]["workers"], 2, "{v}");
    assert_eq!(v["summary"]["devices"], serde_json::json!([0, 0]), "{v}");
    assert_eq!(
        v["files"][0]["backend_choice"]["reason"], "--devices 0,0",
        "{v}"
    );
}

#[test]
fn gpu_devices_that_do_not_exist_are_a_clear_error() {
    let dir = Scratch::new("batch", "gpu-bad-devices");
    let a = dir.file("a.ppm", &ppm(20, 20));
    let b = dir.file("b.ppm", &ppm(20, 20));
    let out = dir.path("out");
    let err = fails(&["encode", s(&a), s(&b), "-o", s(&out), "--devices", "0,57"]);
    assert!(
        err.contains("there is no device 57") && err.contains("wavelane devices"),
        "{err}"
    );
    assert!(
        !out.exists(),
        "nothing is written before the devices are checked"
    );
    let err = fails(&[
        "encode",
        s(&a),
        s(&b),
        "-o",
        s(&out),
        "--devices",
        "0",
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("conflicts with --backend cpu"), "{err}");
    let run = wavelane(&["decode", s(&a), "-o", s(&out), "--devices", "zero"]);
    assert_eq!(
        run.status.code(),
        Some(2),
        "a malformed list is a usage error"
    );
}
