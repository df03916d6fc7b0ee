//! Helpers of the fault-injection tests (`faults_*.rs`, `verify_cli.rs`):
//! deterministic images, `.wl` files with several segments, and listings
//! that show temporary files.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;

use super::{ok, s};

/// A `w x h` RGB PPM of a gradient plus noise (so that every resolution
/// and layer carries data), deterministic.
pub fn ppm(w: usize, h: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = format!("P6 {w} {h} 255\n").into_bytes();
    for y in 0..h {
        for xx in 0..w {
            for c in 0..3 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let noise = (x >> 59) as usize;
                out.push(((xx * 3 + y * 2 + c * 40 + noise) % 256) as u8);
            }
        }
    }
    out
}

/// Encodes `input` to `out` with three levels and two layers (eight data
/// segments), on the CPU.
pub fn encode_layered(input: &Path, out: &Path) {
    ok(&[
        "encode",
        s(input),
        "-o",
        s(out),
        "--bpp",
        "3",
        "--layers",
        "2",
        "--levels",
        "3",
        "--backend",
        "cpu",
    ]);
}

/// The names in `dir`, sorted (temporaries included: they start with '.').
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The temporary files of `wavelane::output` in `dir`.
pub fn temporaries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| wavelane::output::is_temporary(Path::new(n)))
        .collect()
}

/// (index, offset, length) of every non-empty data segment, and the
/// header length.
pub fn segments(wl: &[u8]) -> (usize, Vec<(usize, usize, usize)>) {
    let c = wavelane::codec::file::Container::parse(wl, Default::default()).expect("parse");
    let segs = c
        .segments
        .iter()
        .enumerate()
        .filter(|(_, s)| s.len > 0)
        .map(|(k, s)| (k, s.offset as usize, s.len as usize))
        .collect();
    (c.header_len, segs)
}
