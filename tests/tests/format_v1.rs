//! Real version-1 `.wl` files (written by the encoder before format
//! version 2; kept in tests/data/wl-v1, the same bytes as the fuzz corpus's
//! `regress-format-v1-*` seeds) must keep decoding, on the CPU, to the
//! same pixels: a hash of the decoded image is pinned per file. docs/format.md
//! (version history) says a version-1 file reads as the version-2 file with
//! the same bytes.

use wavelane::backend::Backend;
use wavelane::codec::{self, DecodeOptions, Image};

/// FNV-1a 64 over the geometry and every sample (i32 little-endian).
fn image_hash(image: &Image) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&(image.width as u32).to_le_bytes());
    eat(&(image.height as u32).to_le_bytes());
    eat(&[
        image.bit_depth,
        image.signed as u8,
        image.planes.len() as u8,
    ]);
    for plane in &image.planes {
        for v in plane {
            eat(&v.to_le_bytes());
        }
    }
    h
}

/// (file, width, height, decoded-pixel hash).
const FILES: [(&str, usize, usize, u64); 2] = [
    (
        "lossless-53-reference-tables.wl",
        13,
        7,
        0x535c_f043_fd7b_e21f,
    ),
    ("fixed97-embedded-tables.wl", 13, 7, 0x779e_46c2_e755_1a0a),
];

#[test]
fn real_version_1_files_decode_to_their_pinned_images() {
    for (name, width, height, want) in FILES {
        let path = format!("{}/data/wl-v1/{name}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(&bytes[8..10], &[1, 0], "{name} is a version-1 file");
        let decoded = codec::decode(&bytes, &DecodeOptions::default(), &Backend::Cpu)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .image;
        assert_eq!((decoded.width, decoded.height), (width, height), "{name}");
        if name.starts_with("lossless") {
            // Its source, a ramp, comes back exactly.
            let ramp: Vec<i32> = (0..width * height)
                .map(|i| ((19 * (i % width) + 7 * (i / width)) % 256) as i32)
                .collect();
            assert!(decoded.planes == [ramp], "{name}: not the ramp it encodes");
        }
        let got = image_hash(&decoded);
        assert_eq!(got, want, "{name}: decoded pixels hash {got:#018x}");
    }
}
