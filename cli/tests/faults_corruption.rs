//! Damaged `.wl` and `.wlv` files through `decode`, `decode --partial`,
//! `vle decompress` and `verify`: a cut at every segment boundary and a
//! flipped byte in every segment. Without `--partial` each is an error
//! (exit 1) naming what is wrong; with it the decode succeeds, warns on
//! stderr and leaves out only the damaged part.

mod common;

use common::faults::{encode_layered, ppm, segments};
use common::{fails, ok, s, wavelane, Scratch};

#[test]
fn truncation_at_every_segment_boundary() {
    let dir = Scratch::new("faults", "cut");
    let input = dir.file("in.ppm", &ppm(160, 120));
    let wl = dir.path("in.wl");
    encode_layered(&input, &wl);
    let bytes = std::fs::read(&wl).unwrap();
    let (header_len, segs) = segments(&bytes);
    assert!(segs.len() >= 6, "want several segments, got {segs:?}");
    // Every boundary before the end: the end of the header and of each
    // segment but the last; and one cut inside the header.
    let mut cuts: Vec<usize> = vec![header_len];
    cuts.extend(
        segs.iter()
            .map(|&(_, o, l)| o + l)
            .filter(|&e| e < bytes.len()),
    );
    for &cut in &cuts {
        let f = dir.file("cut.wl", &bytes[..cut]);
        let out = dir.path("cut.ppm");
        let _ = std::fs::remove_file(&out);
        let err = fails(&["decode", s(&f), "-o", s(&out), "--backend", "cpu"]);
        assert!(
            err.contains(&format!("truncated: {cut} of the {} bytes", bytes.len())),
            "cut {cut}: {err}"
        );
        assert!(!out.exists(), "cut {cut}: a failed decode left {out:?}");
        let run = wavelane(&[
            "decode",
            s(&f),
            "-o",
            s(&out),
            "--partial",
            "--backend",
            "cpu",
        ]);
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "cut {cut} --partial: {err}");
        assert!(
            err.contains("warning") && err.contains("truncated"),
            "{err}"
        );
        assert!(out.exists());
        let run = wavelane(&["verify", s(&f)]);
        assert_eq!(run.status.code(), Some(3), "cut {cut}");
        let line = String::from_utf8_lossy(&run.stdout);
        assert!(line.contains("BAD") && line.contains("truncated"), "{line}");
    }
    // Inside the header nothing can be decoded, --partial or not.
    let f = dir.file("head.wl", &bytes[..header_len - 1]);
    for extra in [&[][..], &["--partial"][..]] {
        let mut args = vec!["decode", s(&f), "-o", "unused.ppm", "--backend", "cpu"];
        args.extend_from_slice(extra);
        assert!(fails(&args).contains("truncated"));
    }
}

#[test]
fn a_flipped_byte_in_every_segment() {
    let dir = Scratch::new("faults", "flip");
    let input = dir.file("in.ppm", &ppm(160, 120));
    let wl = dir.path("in.wl");
    encode_layered(&input, &wl);
    let bytes = std::fs::read(&wl).unwrap();
    let (_, segs) = segments(&bytes);
    let good = dir.path("good.ppm");
    ok(&["decode", s(&wl), "-o", s(&good), "--backend", "cpu"]);
    for &(k, offset, len) in &segs {
        let mut bad = bytes.clone();
        bad[offset + len / 2] ^= 0x10;
        let f = dir.file("bad.wl", &bad);
        let out = dir.path("bad.ppm");
        let _ = std::fs::remove_file(&out);
        let err = fails(&["decode", s(&f), "-o", s(&out), "--backend", "cpu"]);
        let name = format!("segment {k} (");
        assert!(err.contains(&name) && err.contains("codeblocks"), "{err}");
        assert!(!out.exists());
        let run = wavelane(&[
            "decode",
            s(&f),
            "-o",
            s(&out),
            "--partial",
            "--backend",
            "cpu",
        ]);
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "segment {k} --partial: {err}");
        // Only the damaged segment is left out.
        assert_eq!(err.matches("left out").count(), 1, "{err}");
        assert!(err.contains(&format!("left out segment {k} (")), "{err}");
        let v = wavelane(&["verify", s(&f)]);
        assert_eq!(v.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&v.stdout).contains(&name));
    }
    // The last segment damaged decodes exactly like the file without it:
    // everything else is used.
    let &(_, offset, len) = segs.last().unwrap();
    let mut bad = bytes.clone();
    bad[offset + len / 2] ^= 0x10;
    let f = dir.file("last.wl", &bad);
    let cut = dir.file("cut.wl", &bytes[..offset]);
    let (a, b) = (dir.path("a.ppm"), dir.path("b.ppm"));
    ok(&[
        "decode",
        s(&f),
        "-o",
        s(&a),
        "--partial",
        "--backend",
        "cpu",
    ]);
    ok(&[
        "decode",
        s(&cut),
        "-o",
        s(&b),
        "--partial",
        "--backend",
        "cpu",
    ]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&good).unwrap());
}

#[test]
fn wlv_truncation_and_flipped_bytes_are_errors() {
    let dir = Scratch::new("faults", "wlv");
    let data = ppm(100, 100);
    let input = dir.file("data.bin", &data);
    let wlv = dir.path("data.wlv");
    ok(&[
        "vle",
        "compress",
        s(&input),
        "-o",
        s(&wlv),
        "--backend",
        "cpu",
    ]);
    let bytes = std::fs::read(&wlv).unwrap();
    let back = dir.path("back.bin");
    for cut in [10, 40, bytes.len() / 2, bytes.len() - 1] {
        let f = dir.file("cut.wlv", &bytes[..cut]);
        let err = fails(&["vle", "decompress", s(&f), "-o", s(&back)]);
        assert!(err.contains("truncated"), "cut {cut}: {err}");
        assert!(!back.exists());
        let v = wavelane(&["verify", s(&f)]);
        assert_eq!(v.status.code(), Some(3), "cut {cut}");
    }
    for at in [bytes.len() / 3, bytes.len() - 2] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x01;
        let f = dir.file("bad.wlv", &bad);
        fails(&["vle", "decompress", s(&f), "-o", s(&back)]);
        assert!(!back.exists());
        let v = wavelane(&["verify", s(&f)]);
        assert_eq!(v.status.code(), Some(3), "flip at {at}");
    }
    ok(&["vle", "decompress", s(&wlv), "-o", s(&back)]);
    assert_eq!(std::fs::read(&back).unwrap(), data);
}

/// Runs `vle decompress --partial --json` and checks its output against
/// `data`: equal outside the chunks it lists as left out (each with
/// `damage`), zeros inside them. Returns the number left out and stderr.
fn partial_matches(
    f: &std::path::Path,
    back: &std::path::Path,
    data: &[u8],
    damage: &str,
) -> (usize, String) {
    let run = wavelane(&[
        "vle",
        "decompress",
        s(f),
        "-o",
        s(back),
        "--partial",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let damaged = summary["damaged_chunks"].as_array().unwrap();
    let out = std::fs::read(back).unwrap();
    assert_eq!(out.len(), data.len());
    let mut left_out = vec![false; data.len()];
    for d in damaged {
        assert_eq!(d["damage"], damage, "{summary}");
        let (a, b) = (
            d["bytes"][0].as_u64().unwrap(),
            d["bytes"][1].as_u64().unwrap(),
        );
        left_out[a as usize..b as usize].fill(true);
    }
    for (i, ((&o, &d), &gone)) in out.iter().zip(data).zip(&left_out).enumerate() {
        assert_eq!(o, if gone { 0 } else { d }, "byte {i}");
    }
    (damaged.len(), stderr)
}

#[test]
fn wlv_partial_restores_every_intact_chunk() {
    let dir = Scratch::new("faults", "wlv-partial");
    // 8 chunks of 4096 symbols (the last one short).
    let data = ppm(100, 100);
    let input = dir.file("data.bin", &data);
    let wlv = dir.path("data.wlv");
    ok(&["vle", "compress", s(&input), "-o", s(&wlv)]);
    let bytes = std::fs::read(&wlv).unwrap();
    let back = dir.path("back.bin");
    // A flipped byte two thirds of the way into the file, in the data: the
    // chunk that holds it (or the two it straddles).
    let mut bad = bytes.clone();
    bad[bytes.len() - bytes.len() / 3] ^= 0x40;
    let f = dir.file("bad.wlv", &bad);
    let err = fails(&["vle", "decompress", s(&f), "-o", s(&back)]);
    assert!(err.contains("damaged chunks (CRC mismatch)"), "{err}");
    assert!(!back.exists());
    let v = wavelane(&["verify", s(&f)]);
    assert_eq!(v.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&v.stdout).contains("CRC mismatch"));
    let (n, stderr) = partial_matches(&f, &back, &data, "crc");
    assert!((1..=2).contains(&n), "{n} chunks left out");
    assert!(stderr.contains("left out chunk"), "{stderr}");
    // A cut file: the chunks before the cut come back, the rest are zeros.
    let cut = dir.file("cut.wlv", &bytes[..bytes.len() / 2]);
    let (n, stderr) = partial_matches(&cut, &back, &data, "missing");
    assert!((3..8).contains(&n), "{n} chunks left out of 8");
    assert!(
        stderr.contains("truncated") && stderr.contains("past the end"),
        "{stderr}"
    );
    // A damaged header locates nothing: an error, no output.
    let mut bad = bytes.clone();
    bad[21] ^= 0x01;
    let f = dir.file("badhead.wlv", &bad);
    std::fs::remove_file(&back).unwrap();
    let err = fails(&["vle", "decompress", s(&f), "-o", s(&back), "--partial"]);
    assert!(err.contains("index CRC"), "{err}");
    assert!(!back.exists());
}
