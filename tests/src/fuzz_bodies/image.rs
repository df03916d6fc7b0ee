//! Image file input: the PGM/PPM readers (`wavelane::image_io`, planar
//! and interleaved), which take whatever file a user passes to `wavelane
//! encode`.

use wavelane::codec::{Image, Interleaved};
use wavelane::image_io::{decode_bytes, decode_interleaved_bytes, encode_bytes, FileFormat};

/// `image_pnm`: any bytes starting like a PGM/PPM file either fail with an
/// error or give a whole image whose samples fit its bit depth, and that
/// image survives a PNM write and read unchanged.
pub fn image_pnm(data: &[u8]) {
    if !matches!(data, [b'P', b'2' | b'3' | b'5' | b'6', ..]) {
        return;
    }
    // The interleaved reader (`wavelane encode`'s) agrees with the planar
    // one: the same image, or the same error.
    let planar = decode_bytes(data);
    match (&planar, decode_interleaved_bytes(data)) {
        (Ok(p), Ok(i)) => assert!(i == Interleaved::from_image(p), "interleaved read"),
        (Err(p), Err(i)) => assert_eq!(p.to_string(), i.to_string()),
        (p, i) => panic!("readers disagree: {:?} / {:?}", p.is_ok(), i.is_ok()),
    }
    let Ok(image) = planar else {
        return;
    };
    assert!(
        matches!(image.planes.len(), 1 | 3),
        "PNM holds 1 or 3 planes"
    );
    assert!((1..=16).contains(&image.bit_depth));
    let limit = 1i32 << image.bit_depth;
    for plane in &image.planes {
        assert_eq!(plane.len(), image.width * image.height, "plane size");
        assert!(
            plane.iter().all(|&v| (0..limit).contains(&v)),
            "sample range"
        );
    }
    let written = encode_bytes(&image, FileFormat::Pnm).expect("a decoded PNM is writable");
    let again = decode_bytes(&written).expect("a written PNM reads back");
    assert_eq!(again, image, "PNM write + read changed the image");
}

/// Seeds: small gray and RGB files in every variant (ASCII and binary,
/// 8 and 16 bits, an odd maxval, comments), and their truncations' edge.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let gray = Image::from_fn(7, 5, 1, 8, |x, y, _| ((x * 37 + y * 11) % 256) as i32);
    let rgb = Image::from_fn(5, 3, 3, 12, |x, y, c| {
        ((x * 500 + y * 300 + c * 900) % 4096) as i32
    });
    for image in [&gray, &rgb] {
        let binary = encode_bytes(image, FileFormat::Pnm).expect("seed image");
        seeds.push(binary.clone());
        // Cut inside the pixel data: must be an error.
        seeds.push(binary[..binary.len() - 3].to_vec());
    }
    // ASCII forms with a comment and an odd maxval (bit depth 7).
    let mut p2 = b"P2\n# a comment\n4 2\n100\n".to_vec();
    for v in [0, 1, 50, 99, 100, 7, 8, 9] {
        p2.extend_from_slice(format!("{v} ").as_bytes());
    }
    seeds.push(p2);
    let mut p3 = b"P3 2 2 65535\n".to_vec();
    for v in [0, 65535, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] {
        p3.extend_from_slice(format!("{v}\n").as_bytes());
    }
    seeds.push(p3);
    // A header that promises far more samples than the file holds.
    seeds.push(b"P2 65535 65535 255 1 2 3".to_vec());
    seeds
}
