//! `wavelane bench dwt` end to end through the built binary: every wavelet,
//! forward and inverse, on the GPU (lavapipe here; a missing Vulkan device
//! fails the test) and on the CPU, with the JSON fields scripts read. Every
//! GPU run also passes the benchmark's own check that its result equals the
//! CPU backend's (a difference exits non-zero), on an odd size whose strips
//! and blocks end inside the image.

mod common;

use common::ok;
use serde_json::Value;

/// Runs `wavelane bench dwt --json` on a 77x77 image, 3 levels, all three
/// wavelets both ways (with `--strip-rows` if given); returns (wavelet,
/// direction) of every result. GPU forward results report each level's
/// strip height (`strip_rows` if given), others none.
fn bench(backend: &str, strip_rows: Option<&str>) -> Vec<(String, String)> {
    let mut args = vec![
        "bench",
        "dwt",
        "--size",
        "77",
        "--levels",
        "3",
        "--wavelet",
        "53,97,97i",
        "--inverse",
        "--repeats",
        "1",
        "--backend",
        backend,
        "--json",
    ];
    if let Some(rows) = strip_rows {
        args.extend(["--strip-rows", rows]);
    }
    let out = ok(&args);
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["area"], "dwt");
    assert_eq!(report["size"], 77);
    assert!(report["copy_gb_per_s"].as_f64().unwrap() > 0.0, "{report}");
    // 8-bit samples in, 32-bit coefficients out.
    assert_eq!(report["job_bytes"], 5 * 77 * 77, "{report}");
    let copy = report["copy_gb_per_s"].as_f64().unwrap();
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            assert!(r["best_ms"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["achieved_gb_per_s"].as_f64().unwrap() > 0.0, "{r}");
            let job = r["job_gb_per_s"].as_f64().unwrap();
            let best_ns = r["best_ms"].as_f64().unwrap() * 1e6;
            assert!(
                (job - 5.0 * 77.0 * 77.0 / best_ns).abs() < 1e-6 * job,
                "{r}"
            );
            let fraction = r["job_fraction_of_copy"].as_f64().unwrap();
            assert!((fraction - job / copy).abs() < 1e-9, "{r}");
            let rows: Vec<u64> = r["strip_rows"]
                .as_array()
                .expect("strip_rows")
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            if backend == "gpu" && r["direction"] == "forward" {
                assert_eq!(rows.len(), 3, "{r}");
                assert!(rows.iter().all(|&n| n >= 1), "{r}");
                if let Some(want) = strip_rows {
                    assert!(rows.iter().all(|&n| n.to_string() == want), "{r}");
                }
            } else {
                assert!(rows.is_empty(), "{r}");
            }
            (
                r["wavelet"].as_str().unwrap().to_owned(),
                r["direction"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn expected() -> Vec<(String, String)> {
    ["Cdf53", "Cdf97", "Fixed97"]
        .iter()
        .flat_map(|w| {
            ["forward", "inverse"]
                .iter()
                .map(move |d| (w.to_string(), d.to_string()))
        })
        .collect()
}

#[test]
fn gpu_bench_dwt_checks_every_wavelet_both_ways() {
    assert_eq!(bench("gpu", None), expected());
}

#[test]
fn gpu_bench_dwt_takes_a_strip_height() {
    assert_eq!(bench("gpu", Some("3")), expected());
}

#[test]
fn cpu_bench_dwt_times_every_wavelet_both_ways() {
    assert_eq!(bench("cpu", None), expected());
}
