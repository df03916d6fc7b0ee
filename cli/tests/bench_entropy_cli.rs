//! `wavelane bench vle` and `bench cavlc` JSON read back: every field is
//! there, the rates agree with the sizes and times printed beside them,
//! and the compressed size matches what the library writes for the same
//! input. Runs are tiny: the numbers are checked for consistency, not speed.

mod common;

use common::ok;
use serde_json::Value;
use wavelane::backend::Backend;
use wavelane::vle::sample::{generate, SampleKind};
use wavelane::vle::{compress, VleFile, VleOptions};

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("no number {k} in {v}"))
}

/// Checks a `bench vle` report and returns the (backend, op) pairs.
fn check_vle(v: &Value, bytes: f64) -> Vec<(String, String)> {
    assert_eq!(v["area"], "vle");
    assert_eq!(f(v, "input_bytes"), bytes);
    let mut pairs = Vec::new();
    for r in v["results"].as_array().unwrap() {
        let (best, median, rate) = (f(r, "best_ms"), f(r, "median_ms"), f(r, "gb_per_s"));
        assert!(best > 0.0 && best <= median, "{r}");
        assert!(close(rate, bytes / (best * 1e-3) / 1e9), "{r}");
        // The copy bandwidth is the GPU's: only GPU rows are a fraction of it.
        if r["backend"] == "gpu" {
            let copy = f(v, "gpu_copy_gb_per_s");
            assert!(close(f(r, "fraction_of_copy"), rate / copy), "{r}");
        } else {
            assert!(r["fraction_of_copy"].is_null(), "{r}");
        }
        pairs.push((
            r["backend"].as_str().unwrap().to_string(),
            r["op"].as_str().unwrap().to_string(),
        ));
    }
    pairs
}

#[test]
fn bench_vle_json_is_consistent_with_the_library() {
    for (kind, sample) in [("text", SampleKind::Text), ("random", SampleKind::Random)] {
        let v = json(&[
            "bench",
            "vle",
            "--size-mb",
            "1",
            "--kind",
            kind,
            "--seed",
            "3",
            "--max-len",
            "12",
            "--repeats",
            "2",
            "--backend",
            "cpu",
            "--json",
        ]);
        assert_eq!(v["input_kind"], kind);
        assert_eq!(v["options"]["max_len"], 12);
        assert!(v["gpu"].is_null() && v["gpu_copy_gb_per_s"].is_null());
        let pairs = check_vle(&v, 1e6);
        let cpu = |op: &str| ("cpu".to_string(), op.to_string());
        assert_eq!(pairs, vec![cpu("encode"), cpu("decode")]);
        // The library, on the same generated input with the same options,
        // gives the compressed size the bench reports.
        let data = generate(sample, 1_000_000, 3);
        let opts = VleOptions {
            max_len: 12,
            chunk_symbols: v["options"]["chunk_symbols"].as_u64().unwrap() as usize,
        };
        let file = compress(&data, &Backend::Cpu, &opts).unwrap();
        let bits = VleFile::parse(&file).unwrap().data_bits as f64 / 1e6;
        // The report prints about seven significant digits.
        let reported = f(&v, "compressed_bits_per_byte");
        assert!(
            (reported - bits).abs() < 1e-5,
            "{kind}: bench {reported}, library {bits}"
        );
    }
}

#[test]
fn bench_vle_gpu_json_is_consistent() {
    let v = json(&[
        "bench",
        "vle",
        "--size-mb",
        "1",
        "--repeats",
        "1",
        "--backend",
        "gpu",
        "--json",
    ]);
    assert!(v["gpu"].is_string(), "{v}");
    assert!(f(&v, "gpu_copy_gb_per_s") > 0.0);
    let pairs = check_vle(&v, 1e6);
    for op in ["encode", "decode"] {
        assert!(pairs.contains(&("gpu".into(), op.into())), "{pairs:?}");
    }
}

/// Checks a `bench cavlc` report: per size, every op codes the same
/// blocks into the same bits, and the rate is blocks over the best time.
fn check_cavlc(v: &Value, sizes: &[&str], ops: &[&str]) {
    assert_eq!(v["area"], "cavlc");
    assert_eq!(v["qp"], 30);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), sizes.len() * ops.len(), "{v}");
    for size in sizes {
        let rows: Vec<&Value> = results.iter().filter(|r| r["size"] == *size).collect();
        let got: Vec<&str> = rows.iter().map(|r| r["op"].as_str().unwrap()).collect();
        assert_eq!(got, ops, "{size}");
        let (blocks, bits) = (f(rows[0], "blocks"), f(rows[0], "bits"));
        assert!(blocks > 0.0 && bits > 0.0);
        for r in rows {
            assert_eq!((f(r, "blocks"), f(r, "bits")), (blocks, bits), "{r}");
            let (best, median) = (f(r, "best_ms"), f(r, "median_ms"));
            assert!(best > 0.0 && best <= median, "{r}");
            assert!(close(f(r, "blocks_per_s"), blocks / (best * 1e-3)), "{r}");
        }
    }
}

#[test]
fn bench_cavlc_json_is_consistent() {
    let v = json(&[
        "bench",
        "cavlc",
        "--sizes",
        "64x48,96x80",
        "--qp",
        "30",
        "--repeats",
        "2",
        "--backend",
        "cpu",
        "--json",
    ]);
    check_cavlc(&v, &["64x48", "96x80"], &["cpu-encode", "cpu-decode"]);
    // A larger picture has more blocks.
    let r = v["results"].as_array().unwrap();
    assert!(f(&r[2], "blocks") > f(&r[0], "blocks"));
}

#[test]
fn bench_cavlc_gpu_json_is_consistent() {
    let v = json(&[
        "bench",
        "cavlc",
        "--sizes",
        "64x48",
        "--qp",
        "30",
        "--repeats",
        "1",
        "--backend",
        "gpu",
        "--json",
    ]);
    let ops: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect();
    check_cavlc(&v, &["64x48"], &ops);
    assert!(ops.iter().any(|o| o.starts_with("gpu")), "{ops:?}");
}
