//! `wavelane bench bpc` end to end through the built binary: `--ops` times
//! exactly the operations asked for, on the CPU and on the GPU (lavapipe
//! here; a missing Vulkan device fails the GPU test), with the JSON fields
//! scripts read, and rejects an unknown operation. Every GPU run also
//! passes the benchmark's own check that its streams equal the CPU
//! encoder's and decode losslessly (a failed check exits non-zero).

mod common;

use common::{ok, wavelane};
use serde_json::Value;

/// Runs `wavelane bench bpc --json ARGS...` on four synthetic codeblocks
/// (a 128x128 image) in 2-pass mode; returns (backend, op) of every result.
fn bench(args: &[&str]) -> Vec<(String, String)> {
    let mut all = vec![
        "bench",
        "bpc",
        "--sizes",
        "128",
        "--passes",
        "2",
        "--repeats",
        "1",
        "--json",
    ];
    all.extend_from_slice(args);
    let report: Value = serde_json::from_str(&ok(&all)).expect("JSON report");
    assert_eq!(report["area"], "bpc");
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            assert_eq!(r["size"], 128, "{r}");
            assert_eq!(r["codeblocks"], 4, "{r}");
            assert!(r["ns"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["bits_per_coefficient"].as_f64().unwrap() > 0.0, "{r}");
            // The job's bytes: 4 per coefficient in, 2 per codeword out
            // (the codewords are 16 bits of the coded bits per coefficient).
            let codewords = r["bits_per_coefficient"].as_f64().unwrap() * 128.0 * 128.0 / 16.0;
            let job = 4 * 128 * 128 + 2 * codewords.round() as u64;
            assert_eq!(r["job_bytes"].as_u64().unwrap(), job, "{r}");
            let (gbs, copy) = (
                r["job_gb_per_s"].as_f64().unwrap(),
                r["copy_gb_per_s"].as_f64().unwrap(),
            );
            assert!(
                (gbs - job as f64 / r["ns"].as_f64().unwrap()).abs() < 1e-9 * gbs,
                "{r}"
            );
            let fraction = r["job_fraction_of_copy"].as_f64().unwrap();
            assert!(copy > 0.0 && (fraction - gbs / copy).abs() < 1e-9, "{r}");
            assert!(
                r["median_ns"].as_f64().unwrap() >= r["ns"].as_f64().unwrap(),
                "{r}"
            );
            (
                r["backend"].as_str().unwrap().to_owned(),
                r["op"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(b, o)| (b.to_string(), o.to_string()))
        .collect()
}

#[test]
fn gpu_bench_bpc_times_the_chosen_ops() {
    let gpu = |ops: &str| bench(&["--backend", "gpu", "--ops", ops]);
    assert_eq!(gpu("encode"), pairs(&[("gpu", "encode")]));
    assert_eq!(gpu("decode"), pairs(&[("gpu", "decode")]));
    let both = pairs(&[("gpu", "encode"), ("gpu", "decode")]);
    assert_eq!(gpu("decode,encode"), both);
    assert_eq!(bench(&["--backend", "gpu"]), both, "both by default");
}

#[test]
fn cpu_bench_bpc_times_the_chosen_ops() {
    let cpu = |ops: &str| bench(&["--backend", "cpu", "--single-thread", "--ops", ops]);
    assert_eq!(
        cpu("encode"),
        pairs(&[("cpu-rayon", "encode"), ("cpu-1thread", "encode")])
    );
    // The single-thread measurement is an encoding: not timed here.
    assert_eq!(cpu("decode"), pairs(&[("cpu-rayon", "decode")]));
}

#[test]
fn bench_bpc_rejects_an_unknown_op() {
    let out = wavelane(&["bench", "bpc", "--backend", "cpu", "--ops", "pack"]);
    assert_eq!(out.status.code(), Some(2), "clap rejects --ops pack");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pack"), "{stderr}");
}
