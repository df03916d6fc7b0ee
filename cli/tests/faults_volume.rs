//! Damaged volume files through `decode`, `volume decode --partial` and
//! `verify`: a cut after every segment and a flipped byte in every
//! segment. Without `--partial` each is an error (exit 1) naming what is
//! wrong and pointing to `--partial`; with it the decode succeeds, warns
//! on stderr per segment left out, and writes the volume.

mod common;

use common::{fails, ok, s, wavelane, Scratch};
use wavelane::volume::format::VolumeContainer;
use wavelane::volume::io::{self, VolumeFormat};
use wavelane::volume::{SampleType, Volume};

/// A two-layer lossy volume file, and its bytes.
fn volume_file(dir: &Scratch) -> (std::path::PathBuf, Vec<u8>) {
    let v = Volume::from_fn(36, 20, 10, SampleType::U16, |x, y, z| {
        ((x * 97 + y * 31 + z * z * 11) % 4096) as i32
    });
    let raw = dir.file("v.raw", &io::write_bytes(&v, VolumeFormat::Raw).unwrap());
    let wl = dir.path("v.wl");
    ok(&[
        "volume",
        "encode",
        s(&raw),
        "-o",
        s(&wl),
        "--dims",
        "36x20x10",
        "--sample",
        "u16",
        "--bpp",
        "2",
        "--layers",
        "2",
        "--backend",
        "cpu",
    ]);
    let bytes = std::fs::read(&wl).unwrap();
    (wl, bytes)
}

#[test]
fn a_cut_volume_is_refused_unless_partial() {
    let dir = Scratch::new("faults-volume", "cut");
    let (_, bytes) = volume_file(&dir);
    let c = VolumeContainer::parse(&bytes, u64::MAX).unwrap();
    let ends: Vec<usize> = c
        .segments
        .iter()
        .filter(|t| t.len > 0)
        .map(|t| t.offset + t.len)
        .filter(|&e| e < bytes.len())
        .chain([c.header_len])
        .collect();
    assert!(ends.len() >= 4, "want several segments: {:?}", c.segments);
    for cut in ends {
        let f = dir.file("cut.wl", &bytes[..cut]);
        let out = dir.path("cut.raw");
        let _ = std::fs::remove_file(&out);
        let err = fails(&["decode", s(&f), "-o", s(&out), "--backend", "cpu"]);
        assert!(
            err.contains(&format!("truncated: {cut} of the {} bytes", bytes.len()))
                && err.contains("--partial"),
            "cut {cut}: {err}"
        );
        assert!(!out.exists(), "cut {cut}: a failed decode left {out:?}");
        let run = wavelane(&[
            "volume",
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
        assert!(err.contains("missing from the cut file"), "{err}");
        assert_eq!(std::fs::metadata(&out).unwrap().len(), 36 * 20 * 10 * 2);
        let run = wavelane(&["verify", s(&f)]);
        assert_eq!(run.status.code(), Some(3), "cut {cut}");
        let line = String::from_utf8_lossy(&run.stdout);
        assert!(line.contains("BAD") && line.contains("truncated"), "{line}");
    }
    let head = dir.file("head.wl", &bytes[..c.header_len - 1]);
    for extra in [&[][..], &["--partial"][..]] {
        let mut args = vec!["decode", s(&head), "-o", "unused.raw", "--backend", "cpu"];
        args.extend_from_slice(extra);
        assert!(fails(&args).contains("truncated"));
    }
}

#[test]
fn a_flipped_byte_in_every_volume_segment_is_named() {
    let dir = Scratch::new("faults-volume", "flip");
    let (_, bytes) = volume_file(&dir);
    let c = VolumeContainer::parse(&bytes, u64::MAX).unwrap();
    for (k, t) in c.segments.iter().enumerate().filter(|(_, t)| t.len > 0) {
        let mut bad = bytes.clone();
        bad[t.offset + t.len - 1] ^= 0x40;
        let f = dir.file("bad.wl", &bad);
        let out = dir.path("bad.raw");
        let _ = std::fs::remove_file(&out);
        let (a, b) = c.segment_codeblocks(k);
        let named = format!(
            "segment {k} (resolution {}, layer {}, bytes {}..{}, codeblocks {a}..={b}): CRC mismatch",
            t.resolution,
            t.layer,
            t.offset,
            t.offset + t.len
        );
        let err = fails(&["decode", s(&f), "-o", s(&out), "--backend", "cpu"]);
        assert!(
            err.contains(&named) && err.contains("--partial"),
            "{k}: {err}"
        );
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
        assert!(err.contains(&format!("left out {named}")), "{k}: {err}");
        assert!(out.exists());
        let run = wavelane(&["verify", s(&f), "--json"]);
        assert_eq!(run.status.code(), Some(3));
        let j: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        let text = j.to_string();
        assert!(
            text.contains("CRC mismatch") && text.contains(&format!("\"segment\":{k}")),
            "{text}"
        );
    }
}
