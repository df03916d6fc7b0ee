//! `wavelane encode` options read back from what it writes: the header
//! fields they set (read at the offsets of docs/format.md), and the decoded
//! pixels against the source picture (PSNR computed here, not taken from
//! the encoder's report).

mod common;
mod pictures;

use std::path::Path;

use common::{ok, s, Scratch};
use pictures::Pnm;

/// Encodes `src` with `extra` options and returns the `.wl` bytes and the
/// decoded picture.
fn round_trip(dir: &Scratch, tag: &str, src: &Path, extra: &[&str]) -> (Vec<u8>, Pnm) {
    let wl = dir.path(&format!("{tag}.wl"));
    let mut args = vec!["encode", s(src), "-o", s(&wl), "--backend", "cpu"];
    args.extend_from_slice(extra);
    ok(&args);
    let ext = if src.extension().is_some_and(|e| e == "ppm") {
        "ppm"
    } else {
        "pgm"
    };
    let out = dir.path(&format!("{tag}.{ext}"));
    ok(&["decode", s(&wl), "-o", s(&out), "--backend", "cpu"]);
    (std::fs::read(&wl).unwrap(), Pnm::read(&out))
}

fn gray(dir: &Scratch) -> (std::path::PathBuf, Pnm) {
    let pic = Pnm::test_picture(64, 48, 1, 255);
    let src = dir.path("src.pgm");
    pic.write(&src);
    (src, pic)
}

/// `--psnr Y` gives a file whose decoded picture reaches Y dB, a higher
/// target a larger file, and the PSNR the encoder reports (`--json`) is
/// the one of the decoded picture.
#[test]
fn psnr_target_is_reached_by_the_decoded_picture() {
    let dir = Scratch::new("encode-cli", "psnr");
    let (src, pic) = gray(&dir);
    let mut last_size = 0;
    for target in [30.0, 38.0] {
        let wl = dir.path(&format!("p{target}.wl"));
        let report: serde_json::Value = serde_json::from_str(&ok(&[
            "encode",
            s(&src),
            "-o",
            s(&wl),
            "--backend",
            "cpu",
            "--psnr",
            &format!("{target}"),
            "--json",
        ]))
        .unwrap();
        let out = dir.path(&format!("p{target}.pgm"));
        ok(&["decode", s(&wl), "-o", s(&out), "--backend", "cpu"]);
        let psnr = pic.psnr(&Pnm::read(&out));
        assert!(psnr >= target, "--psnr {target}: decoded PSNR {psnr}");
        let reported = report["report"]["measured_psnr"].as_f64().unwrap();
        assert!(
            (reported - psnr).abs() < 1e-6,
            "reported {reported}, decoded {psnr}"
        );
        let size = std::fs::metadata(&wl).unwrap().len();
        assert!(size > last_size, "--psnr {target}: {size} bytes");
        last_size = size;
    }
}

/// `--layers n` writes n layers (header byte 33), `--wavelet` the wavelet
/// id (byte 26); the 5/3 without a target is lossless, the 9/7s near the
/// source at the rate asked.
#[test]
fn layers_and_wavelet_are_written_and_decode() {
    let dir = Scratch::new("encode-cli", "wavelet");
    let (src, pic) = gray(&dir);
    for (wavelet, id) in [("53", 0u8), ("97", 1), ("97i", 2)] {
        for layers in [1u8, 3, 7] {
            let tag = format!("{wavelet}-{layers}");
            let mut extra = vec!["--wavelet", wavelet];
            let n = layers.to_string();
            extra.extend(["--layers", &n]);
            if wavelet != "53" {
                extra.extend(["--bpp", "3"]);
            }
            let (bytes, out) = round_trip(&dir, &tag, &src, &extra);
            assert_eq!((bytes[26], bytes[33]), (id, layers), "{tag}");
            let psnr = pic.psnr(&out);
            if wavelet == "53" {
                assert_eq!(out, pic, "{tag}: 5/3 lossless");
            } else {
                // This noisy picture gives about 30 dB at 3 bpp.
                assert!(psnr > 26.0, "{tag}: PSNR {psnr}");
            }
        }
    }
}

/// `--tables` picks the preset id of header byte 31 (0 reference, 3 the
/// lossless natural preset, 254 a preset adjusted in the header); every
/// choice stays lossless.
#[test]
fn tables_choice_is_written_and_stays_lossless() {
    let dir = Scratch::new("encode-cli", "tables");
    let (src, pic) = gray(&dir);
    for (tables, ids) in [
        ("reference", &[0u8][..]),
        ("natural", &[3]),
        ("trained", &[254]),
        ("auto", &[3, 254]),
    ] {
        let (bytes, out) = round_trip(&dir, tables, &src, &["--tables", tables]);
        assert!(
            ids.contains(&bytes[31]),
            "--tables {tables}: id {}",
            bytes[31]
        );
        assert_eq!(out, pic, "--tables {tables}: lossless");
    }
}

/// `--qstep` scales the 9/7 quantization steps (the 16-bit floats from
/// header offset 36) by the ratio of the steps asked for, and both decode
/// near the source.
#[test]
fn qstep_scales_the_written_steps() {
    let dir = Scratch::new("encode-cli", "qstep");
    let (src, pic) = gray(&dir);
    let step = |bytes: &[u8], i: usize| {
        let v = u16::from_le_bytes([bytes[36 + 2 * i], bytes[37 + 2 * i]]) as u64;
        let (e, m) = (v >> 11, v & 0x7ff);
        ((2048 + m) << e) >> 11
    };
    let args = |q| ["--wavelet", "97i", "--qstep", q, "--bpp", "3"];
    let (fine, fine_out) = round_trip(&dir, "q1", &src, &args("1"));
    let (coarse, coarse_out) = round_trip(&dir, "q8", &src, &args("8"));
    let levels = fine[27] as usize;
    assert_eq!(levels, coarse[27] as usize);
    for i in 0..1 + 3 * levels {
        let (a, b) = (step(&fine, i) as f64, step(&coarse, i) as f64);
        assert!((b / a - 8.0).abs() < 0.02, "step {i}: {a} and {b}");
    }
    // Both decode near the source (about 30 dB for this noisy picture).
    for out in [fine_out, coarse_out] {
        assert!(pic.psnr(&out) > 24.0, "PSNR {}", pic.psnr(&out));
    }
}

/// `--bit-depth 12` on 16-bit PGM samples below 4096: header byte 23 says
/// 12 and the file decodes to the same samples.
#[test]
fn bit_depth_is_declared_and_lossless() {
    let dir = Scratch::new("encode-cli", "depth");
    let mut pic = Pnm::test_picture(37, 29, 1, 65535);
    pic.samples.iter_mut().for_each(|v| *v >>= 4);
    let src = dir.path("src.pgm");
    pic.write(&src);
    let wl = dir.path("d.wl");
    ok(&[
        "encode",
        s(&src),
        "-o",
        s(&wl),
        "--backend",
        "cpu",
        "--bit-depth",
        "12",
    ]);
    let bytes = std::fs::read(&wl).unwrap();
    assert_eq!(bytes[23], 12);
    let out = dir.path("d.pgm");
    ok(&["decode", s(&wl), "-o", s(&out), "--backend", "cpu"]);
    let back = Pnm::read(&out);
    assert!(
        back.samples == pic.samples,
        "12-bit samples differ after decoding"
    );
}

/// Several inputs encode into a directory, one `.wl` per input, each the
/// same file as encoding that input alone.
#[test]
fn several_inputs_encode_to_a_directory() {
    let dir = Scratch::new("encode-cli", "several");
    let names = ["a.pgm", "b.ppm", "c.pgm"];
    for (i, name) in names.iter().enumerate() {
        Pnm::test_picture(
            20 + 7 * i,
            30 - 5 * i,
            if name.ends_with("ppm") { 3 } else { 1 },
            255,
        )
        .write(&dir.path(name));
    }
    let out = dir.path("out");
    std::fs::create_dir_all(&out).unwrap();
    let inputs: Vec<_> = names.iter().map(|n| dir.path(n)).collect();
    let mut args = vec!["encode"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--backend", "cpu"]);
    ok(&args);
    for (name, input) in names.iter().zip(&inputs) {
        let stem = name.split('.').next().unwrap();
        let batch = std::fs::read(out.join(format!("{stem}.wl")))
            .unwrap_or_else(|e| panic!("{stem}.wl: {e}"));
        let alone = dir.path(&format!("{stem}-alone.wl"));
        ok(&["encode", s(input), "-o", s(&alone), "--backend", "cpu"]);
        assert!(
            batch == std::fs::read(&alone).unwrap(),
            "{name}: batch and single encodes differ"
        );
    }
}
