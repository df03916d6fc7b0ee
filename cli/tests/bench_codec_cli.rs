//! `wavelane bench codec` and the transfers and stages of `encode --json`
//! and `decode --json`, through the built binary, on the CPU and on the GPU
//! (lavapipe here; a missing Vulkan device fails the GPU tests).
//!
//! The benchmark checks every repeat itself (each file equal to the first,
//! each decoded image equal to the first, a lossless one equal to the
//! input; a difference exits non-zero); these tests check the JSON's shape
//! and that both backends decode the same image from the same file.

mod common;

use common::{ok, s, Scratch};
use serde_json::Value;

/// Runs `wavelane bench codec --json` on a small generated image (odd
/// sides, so codeblocks and levels end inside the image) and checks the
/// report's shape; returns it.
fn bench(backend: &str, rate: &[&str]) -> Value {
    let mut args = vec![
        "bench",
        "codec",
        "--size",
        "77x45",
        "--repeats",
        "2",
        "--backend",
        backend,
        "--json",
    ];
    args.extend(rate);
    let report: Value = serde_json::from_str(&ok(&args)).expect("JSON report");
    assert_eq!(report["area"], "codec");
    assert_eq!(report["samples"], 77 * 45 * 3);
    assert_eq!(report["repeats"], 2);
    assert!(report["file_bytes"].as_u64().unwrap() > 0, "{report}");
    let results = report["results"].as_array().expect("results");
    let ops: Vec<&str> = results.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["encode", "decode"]);
    for r in results {
        assert_eq!(r["wall"]["ns"].as_array().unwrap().len(), 2, "{r}");
        for key in ["best_ms", "median_ms", "frames_per_s", "gsamples_per_s"] {
            assert!(r[key].as_f64().unwrap() > 0.0, "{key}: {r}");
        }
        let stages = r["stages"].as_array().expect("stages");
        assert!(stages.len() >= 4, "{r}");
        for st in stages {
            assert!(st["name"].is_string(), "{st}");
            assert!(st["best_ms"].as_f64().unwrap() >= 0.0, "{st}");
            let device = st["device"].as_str().unwrap();
            assert!(device == "cpu" || device == "gpu", "{st}");
        }
        let moved = r["transfers"]["upload_bytes"].as_u64().unwrap()
            + r["transfers"]["download_bytes"].as_u64().unwrap();
        if backend == "cpu" {
            assert_eq!(moved, 0, "a CPU run moves nothing: {r}");
            assert!(r["kernel_ms"].is_null(), "{r}");
            assert!(stages.iter().all(|st| st["device"] == "cpu"), "{r}");
        } else {
            assert!(moved > 0, "{r}");
            assert!(r["kernel_ms"]["best"].as_f64().is_some(), "{r}");
            // The DWT runs on the device both ways.
            let dwt = stages.iter().find(|st| st["name"] == "dwt").expect("dwt");
            assert_eq!(dwt["device"], "gpu", "{r}");
        }
    }
    report
}

#[test]
fn bench_codec_gpu_decodes_what_the_cpu_decodes() {
    for rate in [&["--lossless"][..], &["--bpp", "1.5", "--layers", "2"][..]] {
        let cpu = bench("cpu", rate);
        let gpu = bench("gpu", rate);
        // The fixed-point 9/7 and the 5/3 give the same bytes everywhere.
        assert_eq!(cpu["file_crc32"], gpu["file_crc32"], "{rate:?}");
        assert_eq!(cpu["decoded_crc32"], gpu["decoded_crc32"], "{rate:?}");
        let lossless = rate == ["--lossless"];
        assert_eq!(cpu["decoded_equals_input"], lossless, "{rate:?}");
        assert_eq!(gpu["decoded_equals_input"], lossless, "{rate:?}");
        assert!(gpu["device_start_seconds"].as_f64().unwrap() > 0.0);
        assert_eq!(cpu["device_start_seconds"], 0.0);
    }
}

/// `encode --json` and `decode --json` of a lossless 61x37 RGB image on
/// `backend`: both list their stages and report the device's start-up and
/// the backend's reason apart.
fn round_trip(backend: &str) -> (Value, Value) {
    let dir = Scratch::new("bench-codec", &format!("round-trip-{backend}"));
    let image = dir.path("in.png");
    let pixels: Vec<u8> = (0..61 * 37 * 3).map(|i| (i * 7 % 251) as u8).collect();
    image::RgbImage::from_raw(61, 37, pixels)
        .unwrap()
        .save(&image)
        .unwrap();
    let (wl, png) = (dir.path("out.wl"), dir.path("out.png"));
    let enc = ok(&[
        "encode",
        s(&image),
        "-o",
        s(&wl),
        "--lossless",
        "--backend",
        backend,
        "--json",
    ]);
    let dec = ok(&[
        "decode",
        s(&wl),
        "-o",
        s(&png),
        "--backend",
        backend,
        "--json",
    ]);
    let (enc, dec): (Value, Value) = (
        serde_json::from_str(&enc).unwrap(),
        serde_json::from_str(&dec).unwrap(),
    );
    for r in [&enc, &dec] {
        let stages = r["stages"].as_array().expect("stages");
        assert!(stages.len() >= 4, "{r}");
        assert_eq!(r["stages"], r["report"]["stages"]);
        assert_eq!(r["backend_choice"]["asked"], backend, "{r}");
        assert_eq!(r["backend_choice"]["chose"], backend, "{r}");
        assert_eq!(
            r["backend_choice"]["reason"],
            format!("--backend {backend}"),
            "{r}"
        );
        assert!(r["device_start"]["seconds"].as_f64().unwrap() >= 0.0, "{r}");
    }
    (enc, dec)
}

#[test]
fn encode_and_decode_on_the_cpu_report_zero_transfers() {
    let (enc, dec) = round_trip("cpu");
    for r in [&enc, &dec] {
        assert_eq!(r["transfers"]["upload_bytes"], 0, "{r}");
        assert_eq!(r["transfers"]["download_bytes"], 0, "{r}");
        let stages = r["stages"].as_array().unwrap();
        assert!(stages.iter().all(|st| st["device"] == "cpu"), "{r}");
        assert_eq!(r["device_start"]["seconds"], 0.0, "{r}");
    }
}

#[test]
fn encode_and_decode_on_the_gpu_count_the_bytes_they_move() {
    let (enc, dec) = round_trip("gpu");
    // Whatever stays on the device, the samples (at least a byte each)
    // go up for an encode and the image comes back from a decode.
    let samples = 61 * 37 * 3;
    assert!(
        enc["transfers"]["upload_bytes"].as_u64().unwrap() >= samples,
        "{enc}"
    );
    assert!(
        dec["transfers"]["download_bytes"].as_u64().unwrap() >= samples,
        "{dec}"
    );
    for r in [&enc, &dec] {
        let stages = r["stages"].as_array().unwrap();
        let dwt = stages.iter().find(|st| st["name"] == "dwt").expect("dwt");
        assert_eq!(dwt["device"], "gpu", "{r}");
        assert_eq!(r["device_start"]["while_reading"], true, "{r}");
    }
    // A stage that dispatched nothing and moved nothing is a CPU stage on
    // the GPU backend too: the container is parsed on the host.
    let stages = dec["stages"].as_array().unwrap();
    let parse = stages
        .iter()
        .find(|st| st["name"] == "parse")
        .expect("parse");
    assert_eq!(parse["device"], "cpu", "{dec}");
}

/// Runs `wavelane bench codec --frames` on a small generated image and
/// checks the batch report's shape; returns it.
fn bench_frames(frames: usize, args: &[&str]) -> Value {
    let n = frames.to_string();
    let mut all = vec![
        "bench", "codec", "--size", "61x37", "--frames", &n, "--json",
    ];
    all.extend(args);
    let report: Value = serde_json::from_str(&ok(&all)).expect("JSON report");
    assert_eq!(report["area"], "codec-batch", "{report}");
    assert_eq!(report["frames"], frames);
    assert_eq!(report["samples"], 61 * 37 * 3);
    let results = report["results"].as_array().expect("results");
    let ops: Vec<&str> = results.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["encode", "decode"]);
    for r in results {
        let seconds = r["seconds"].as_f64().unwrap();
        let fps = r["frames_per_s"].as_f64().unwrap();
        assert!(
            seconds > 0.0 && (fps * seconds - frames as f64).abs() < 1e-6,
            "{r}"
        );
        let gs = r["gsamples_per_s"].as_f64().unwrap();
        assert!((gs * 1e9 - fps * (61.0 * 37.0 * 3.0)).abs() < 1.0, "{r}");
        let moved = r["transfers"]["upload_bytes"].as_u64().unwrap()
            + r["transfers"]["download_bytes"].as_u64().unwrap();
        let gbps = r["transfer_gb_per_s"].as_f64().unwrap();
        assert!((gbps * 1e9 * seconds - moved as f64).abs() < 1.0, "{r}");
    }
    report
}

#[test]
fn bench_codec_frames_on_the_cpu_moves_nothing() {
    let report = bench_frames(3, &["--backend", "cpu", "--lossless"]);
    assert_eq!(report["workers"], 1);
    for r in report["results"].as_array().unwrap() {
        assert_eq!(r["transfer_gb_per_s"], 0.0, "{r}");
        assert_eq!(r["dispatches"], 0, "{r}");
    }
}

#[test]
fn bench_codec_frames_on_gpu_devices_counts_every_frame_transfers() {
    let frames = 4;
    let report = bench_frames(
        frames,
        &["--backend", "gpu", "--devices", "0,0", "--bpp", "2"],
    );
    assert_eq!(report["workers"], 2, "{report}");
    assert_eq!(report["devices"], serde_json::json!([0, 0]));
    let samples = (61 * 37 * 3 * frames) as u64;
    let (enc, dec) = (&report["results"][0], &report["results"][1]);
    // Every frame's samples go up for an encode and come back from a
    // decode: the devices' counters over the whole batch.
    assert!(
        enc["transfers"]["upload_bytes"].as_u64().unwrap() >= samples,
        "{enc}"
    );
    assert!(
        dec["transfers"]["download_bytes"].as_u64().unwrap() >= samples,
        "{dec}"
    );
    assert!(
        enc["dispatches"].as_u64().unwrap() >= frames as u64,
        "{enc}"
    );
}
