//! `wavelane vle compress|decompress` end to end through the built binary:
//! round trips of empty, one-distinct-byte, text and binary files on the
//! CPU and the GPU (lavapipe here; a missing Vulkan device fails the test),
//! identical files from both backends, the `--json` summary, and clear
//! errors (exit code 1, a message naming the failure, no panic) on
//! truncated, corrupted and foreign inputs and on bad options.

mod common;

use common::{fails, ok, s, wavelane, Scratch};
use std::path::Path;
use wavelane::vle::VleFile;

/// Deterministic test inputs: (name, bytes).
fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let random: Vec<u8> = (0..70_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect();
    let text = include_bytes!("../../host/src/vle/mod.rs").repeat(3);
    vec![
        ("empty", Vec::new()),
        ("one-byte", vec![0xff]),
        ("one-distinct", vec![b'z'; 50_001]),
        ("text", text),
        ("random", random),
    ]
}

#[test]
fn cpu_round_trips_every_kind_of_file() {
    let dir = Scratch::new("vle-cli", "cpu");
    for (name, bytes) in inputs() {
        let input = dir.file(name, &bytes);
        let packed = dir.path(&format!("{name}.wlv"));
        let back = dir.path(&format!("{name}.out"));
        let text = ok(&[
            "vle",
            "compress",
            s(&input),
            "-o",
            s(&packed),
            "--backend",
            "cpu",
        ]);
        assert!(
            text.contains(&format!("{} -> ", bytes.len())),
            "{name}: {text}"
        );
        let text = ok(&[
            "vle",
            "decompress",
            s(&packed),
            "-o",
            s(&back),
            "--backend",
            "cpu",
        ]);
        // Sizes in the direction of the operation: file -> original.
        let packed_len = std::fs::metadata(&packed).unwrap().len();
        assert!(
            text.contains(&format!("{packed_len} -> {} bytes", bytes.len())),
            "{name}: {text}"
        );
        assert_eq!(std::fs::read(&back).unwrap(), bytes, "{name}");
    }
}

#[test]
fn json_summary_describes_the_file() {
    let dir = Scratch::new("vle-cli", "json");
    let bytes = include_bytes!("../../host/src/vle/format.rs").to_vec();
    let input = dir.file("in", &bytes);
    let packed = dir.path("in.wlv");
    let out = ok(&[
        "vle",
        "compress",
        s(&input),
        "-o",
        s(&packed),
        "--backend",
        "cpu",
        "--json",
        "--max-len",
        "12",
        "--chunk-symbols",
        "1024",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON summary");
    let packed_len = std::fs::metadata(&packed).unwrap().len();
    assert_eq!(v["original_bytes"], bytes.len() as u64);
    assert_eq!(v["compressed_bytes"], packed_len);
    assert_eq!(v["chunk_symbols"], 1024);
    assert_eq!(v["chunks"], bytes.len().div_ceil(1024));
    assert!(v["longest_code_bits"].as_u64().unwrap() <= 12);
    assert_eq!(v["crc32"], format!("{:08x}", crc32fast::hash(&bytes)));
    let bpb = v["bits_per_byte"].as_f64().unwrap();
    assert!(bpb > 3.0 && bpb < 6.0, "Rust source at {bpb} bits/byte");
    let back = dir.path("back");
    let out = ok(&[
        "vle",
        "decompress",
        s(&packed),
        "-o",
        s(&back),
        "--backend",
        "cpu",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON summary");
    assert_eq!(v["operation"], "decompressed");
    assert_eq!(v["original_bytes"], bytes.len() as u64);
    assert_eq!(std::fs::read(&back).unwrap(), bytes);
}

#[test]
fn gpu_writes_the_cpu_file_and_decodes_it() {
    let dir = Scratch::new("vle-cli", "gpu");
    for (name, bytes) in inputs() {
        let input = dir.file(name, &bytes);
        let cpu = dir.path(&format!("{name}.cpu.wlv"));
        let gpu = dir.path(&format!("{name}.gpu.wlv"));
        let back = dir.path(&format!("{name}.out"));
        ok(&[
            "vle",
            "compress",
            s(&input),
            "-o",
            s(&cpu),
            "--backend",
            "cpu",
        ]);
        ok(&[
            "vle",
            "compress",
            s(&input),
            "-o",
            s(&gpu),
            "--backend",
            "gpu",
        ]);
        assert!(
            std::fs::read(&cpu).unwrap() == std::fs::read(&gpu).unwrap(),
            "{name}: GPU and CPU files differ"
        );
        ok(&[
            "vle",
            "decompress",
            s(&cpu),
            "-o",
            s(&back),
            "--backend",
            "gpu",
        ]);
        assert_eq!(std::fs::read(&back).unwrap(), bytes, "{name}");
    }
}

#[test]
fn cpu_and_gpu_reject_corrupted_and_foreign_inputs_with_clear_errors() {
    let dir = Scratch::new("vle-cli", "corrupt");
    let bytes = include_bytes!("../../host/src/vle/cpu.rs").repeat(4);
    let input = dir.file("in", &bytes);
    let packed = dir.path("in.wlv");
    ok(&[
        "vle",
        "compress",
        s(&input),
        "-o",
        s(&packed),
        "--backend",
        "cpu",
    ]);
    let good = std::fs::read(&packed).unwrap();
    let out = dir.path("out");

    let truncated = dir.file("truncated.wlv", &good[..good.len() - 10]);
    let err = fails(&[
        "vle",
        "decompress",
        s(&truncated),
        "-o",
        s(&out),
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("truncated"), "{err}");
    let header_only = dir.file("header.wlv", &good[..20]);
    let err = fails(&[
        "vle",
        "decompress",
        s(&header_only),
        "-o",
        s(&out),
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("truncated in the header"), "{err}");

    // A flipped byte of the recorded checksum: the index CRC, which covers
    // the header, catches it.
    let mut bad_crc = good.clone();
    bad_crc[21] ^= 0x10;
    let decompress_cpu =
        |f: &Path| fails(&["vle", "decompress", s(f), "-o", s(&out), "--backend", "cpu"]);
    let err = decompress_cpu(&dir.file("crc.wlv", &bad_crc));
    assert!(err.contains("index CRC mismatch"), "{err}");
    // With the index CRC made to match, everything decodes and the
    // checksum of the output does not match.
    let parsed = VleFile::parse(&good).unwrap();
    let data_at = parsed.byte_len() - parsed.data.len();
    let covered = data_at - 4;
    let index_crc = crc32fast::hash(&bad_crc[..covered]);
    bad_crc[covered..data_at].copy_from_slice(&index_crc.to_le_bytes());
    let err = decompress_cpu(&dir.file("crc.wlv", &bad_crc));
    assert!(err.contains("checksum mismatch"), "{err}");

    // Flipped bits in the data: an error on either backend, whichever check
    // catches it (a chunk that does not decode, or the checksum).
    for backend in ["cpu", "gpu"] {
        for at in [good.len() - 1, good.len() - 700, good.len() / 2 + 333] {
            let mut bad = good.clone();
            bad[at] ^= 0x24;
            let bad = dir.file("data.wlv", &bad);
            let err = fails(&[
                "vle",
                "decompress",
                s(&bad),
                "-o",
                s(&out),
                "--backend",
                backend,
            ]);
            assert!(
                err.contains("damaged chunks (CRC mismatch)") || err.contains("padding"),
                "{backend}, byte {at}: {err}"
            );
        }
    }

    let err = fails(&[
        "vle",
        "decompress",
        s(&input),
        "-o",
        s(&out),
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("not a wavelane VLE file"), "{err}");
    let missing = dir.path("missing.wlv");
    let err = fails(&[
        "vle",
        "decompress",
        s(&missing),
        "-o",
        s(&out),
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("cannot read"), "{err}");
    assert!(!out.exists(), "nothing is written on failure");
}

#[test]
fn bad_options_are_clear_errors() {
    let dir = Scratch::new("vle-cli", "options");
    let input = dir.file("in", &(0..=255u8).collect::<Vec<_>>());
    let out = dir.path("out.wlv");
    let err = fails(&[
        "vle",
        "compress",
        s(&input),
        "-o",
        s(&out),
        "--backend",
        "cpu",
        "--chunk-symbols",
        "33",
    ]);
    assert!(err.contains("chunk size 33"), "{err}");
    // 256 distinct bytes need codes of at least 8 bits.
    let err = fails(&[
        "vle",
        "compress",
        s(&input),
        "-o",
        s(&out),
        "--backend",
        "cpu",
        "--max-len",
        "7",
    ]);
    assert!(err.contains("256 distinct symbols"), "{err}");
    let bad = wavelane(&[
        "vle",
        "compress",
        s(&input),
        "-o",
        s(&out),
        "--max-len",
        "25",
    ]);
    assert_eq!(bad.status.code(), Some(2), "clap rejects --max-len 25");
    assert!(!out.exists());
}
