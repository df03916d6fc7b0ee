//! `wavelane dwt` end to end through the built binary: the raw output is
//! wavelane-core's transform of the level-shifted image in Mallat layout
//! (i32 LE for 53/97i, f32 LE for 97), `--json` lists subbands that tile the
//! image, `--inverse` gives the image back, `--png` writes a viewable
//! picture, the GPU backend writes the same bytes, and bad input is a clear
//! error (exit code 1, no panic).

mod common;

use std::path::Path;

use common::{ok, s, wavelane, Scratch};
use wavelane_core::dwt::{forward_2d, Cdf53, Cdf97, ImageLayout};

const W: usize = 37;
const H: usize = 23;

fn fails(args: &[&str], needle: &str) {
    let stderr = common::fails(args);
    assert!(stderr.contains(needle), "wavelane {args:?}: {stderr}");
}

/// An 8-bit test picture: gradient, a disc and some hashed noise.
fn pixels() -> Vec<u8> {
    (0..W * H)
        .map(|i| {
            let (x, y) = ((i % W) as i32, (i / W) as i32);
            let disc = if (x - 18).pow(2) + (y - 11).pow(2) < 64 {
                90
            } else {
                0
            };
            let noise = ((i as u32).wrapping_mul(2_654_435_761) >> 28) as i32;
            (x * 3 + y * 2 + disc + noise).clamp(0, 255) as u8
        })
        .collect()
}

fn write_pgm(path: &Path, px: &[u8]) {
    let mut bytes = format!("P5\n{W} {H}\n255\n").into_bytes();
    bytes.extend_from_slice(px);
    std::fs::write(path, bytes).expect("write pgm");
}

/// The samples of a binary 8-bit PGM.
fn read_pgm(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).expect("read pgm");
    let header = format!("P5\n{W} {H}\n255\n");
    assert!(
        bytes.starts_with(header.as_bytes()),
        "unexpected PGM header"
    );
    bytes[header.len()..].to_vec()
}

fn shifted(px: &[u8]) -> Vec<i32> {
    px.iter().map(|&v| v as i32 - 128).collect()
}

#[test]
fn forward_53_is_core_and_inverse_restores_the_image() {
    let dir = Scratch::new("dwt-cli", "53");
    let (pgm, raw, back) = (dir.path("in.pgm"), dir.path("c.raw"), dir.path("back.pgm"));
    let px = pixels();
    write_pgm(&pgm, &px);
    let json = ok(&[
        "dwt",
        s(&pgm),
        "--wavelet",
        "53",
        "--levels",
        "3",
        "-o",
        s(&raw),
        "--json",
    ]);
    let mut want = shifted(&px);
    let mut scratch = vec![0i32; W.max(H)];
    forward_2d::<Cdf53>(&mut want, ImageLayout::new(W, H), 3, &mut scratch).unwrap();
    let got: Vec<i32> = std::fs::read(&raw)
        .unwrap()
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(
        got, want,
        "raw output = core forward_2d of the shifted image"
    );

    let report: serde_json::Value = serde_json::from_str(&json).expect("JSON report");
    assert_eq!(report["width"], W);
    assert_eq!(report["height"], H);
    let bands = report["subbands"].as_array().expect("subbands");
    assert_eq!(bands.len(), 3 * 3 + 1);
    let area: u64 = bands
        .iter()
        .map(|b| b["width"].as_u64().unwrap() * b["height"].as_u64().unwrap())
        .sum();
    assert_eq!(area, (W * H) as u64, "subbands tile the image");

    let (w, h) = (W.to_string(), H.to_string());
    ok(&[
        "dwt",
        s(&raw),
        "--inverse",
        "--width",
        &w,
        "--height",
        &h,
        "--wavelet",
        "53",
        "--levels",
        "3",
        "-o",
        s(&back),
    ]);
    assert_eq!(read_pgm(&back), px);
}

#[test]
fn fixed_and_float_97_round_trip_and_float_is_f32() {
    let dir = Scratch::new("dwt-cli", "97");
    let pgm = dir.path("in.pgm");
    let px = pixels();
    write_pgm(&pgm, &px);
    let (w, h) = (W.to_string(), H.to_string());
    for wavelet in ["97i", "97"] {
        let raw = dir.path(&format!("{wavelet}.raw"));
        let back = dir.path(&format!("{wavelet}.pgm"));
        ok(&[
            "dwt",
            s(&pgm),
            "--wavelet",
            wavelet,
            "--levels",
            "4",
            "-o",
            s(&raw),
        ]);
        ok(&[
            "dwt",
            s(&raw),
            "--inverse",
            "--width",
            &w,
            "--height",
            &h,
            "--wavelet",
            wavelet,
            "--levels",
            "4",
            "-o",
            s(&back),
        ]);
        assert_eq!(read_pgm(&back), px, "{wavelet} round trip");
    }
    let mut want: Vec<f32> = shifted(&px).iter().map(|&v| v as f32).collect();
    let mut scratch = vec![0f32; W.max(H)];
    forward_2d::<Cdf97>(&mut want, ImageLayout::new(W, H), 4, &mut scratch).unwrap();
    let got: Vec<f32> = std::fs::read(dir.path("97.raw"))
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, want, "float 9/7 output = core, as f32 LE");
}

#[test]
fn png_view_has_the_image_size() {
    let dir = Scratch::new("dwt-cli", "png");
    let (pgm, raw, png) = (dir.path("in.pgm"), dir.path("c.raw"), dir.path("view.png"));
    write_pgm(&pgm, &pixels());
    ok(&[
        "dwt",
        s(&pgm),
        "--levels",
        "2",
        "-o",
        s(&raw),
        "--png",
        s(&png),
    ]);
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
    let be =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    assert_eq!((be(16), be(20)), (W as u32, H as u32), "IHDR size");
}

#[test]
fn gpu_backend_writes_the_same_coefficients() {
    let dir = Scratch::new("dwt-cli", "gpu");
    let pgm = dir.path("in.pgm");
    write_pgm(&pgm, &pixels());
    for wavelet in ["53", "97i"] {
        let (cpu, gpu) = (dir.path("cpu.raw"), dir.path("gpu.raw"));
        for (backend, out) in [("cpu", &cpu), ("gpu", &gpu)] {
            ok(&[
                "dwt",
                s(&pgm),
                "--wavelet",
                wavelet,
                "--levels",
                "5",
                "-o",
                s(out),
                "--backend",
                backend,
            ]);
        }
        assert_eq!(
            std::fs::read(&gpu).unwrap(),
            std::fs::read(&cpu).unwrap(),
            "{wavelet}: GPU = CPU (GPU runs need a Vulkan device: lavapipe with \
             VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json)"
        );
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = Scratch::new("dwt-cli", "errors");
    let (pgm, raw) = (dir.path("in.pgm"), dir.path("c.raw"));
    write_pgm(&pgm, &pixels());
    fails(
        &["dwt", s(&pgm), "--levels", "9", "-o", s(&raw)],
        "allows at most",
    );
    // The operating system's reason, once: the error's own text quotes its
    // cause, so the "caused by" lines must not repeat it.
    let stderr = common::fails(&["dwt", s(&dir.path("missing.pgm")), "-o", s(&raw)]);
    assert!(stderr.contains("missing.pgm"), "{stderr}");
    let reason = std::fs::read(dir.path("missing.pgm"))
        .unwrap_err()
        .to_string();
    assert_eq!(stderr.matches(&reason).count(), 1, "{stderr}");
    std::fs::write(&raw, [0u8; 12]).unwrap();
    fails(
        &[
            "dwt",
            s(&raw),
            "--inverse",
            "--width",
            "4",
            "--height",
            "4",
            "--levels",
            "1",
            "-o",
            s(&dir.path("x.pgm")),
        ],
        "need 64",
    );
    std::fs::write(dir.path("junk.pgm"), b"P5\n9999999 1\n255\n").unwrap();
    let out = wavelane(&["dwt", s(&dir.path("junk.pgm")), "-o", s(&raw)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}
