//! `wavelane decode` end to end, reading what it writes: lossless files
//! decode to the source pixels (gray, RGB, 16-bit; PNM and PNG outputs,
//! several inputs at once), and `--reduce` and `--layers` decode to exactly
//! what the library decodes, reading for `--reduce` only the header and the
//! resolutions kept (the byte count `wavelane info` lists per resolution).

mod common;
mod pictures;

use common::{ok, s, Scratch};
use pictures::{assert_pnm_equals_image, Pnm};
use serde_json::Value;
use wavelane::backend::Backend;
use wavelane::codec::{self, DecodeOptions};

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

#[test]
fn lossless_files_decode_to_the_source_pixels() {
    let dir = Scratch::new("decode-cli", "lossless");
    for (name, pic) in [
        ("gray.pgm", Pnm::test_picture(67, 45, 1, 255)),
        ("rgb.ppm", Pnm::test_picture(40, 33, 3, 255)),
        ("deep.pgm", Pnm::test_picture(31, 20, 1, 65535)),
    ] {
        let src = dir.path(name);
        pic.write(&src);
        let wl = dir.path(&format!("{name}.wl"));
        ok(&["encode", s(&src), "-o", s(&wl), "--backend", "cpu"]);
        let out = dir.path(&format!("out-{name}"));
        ok(&["decode", s(&wl), "-o", s(&out), "--backend", "cpu"]);
        assert_eq!(Pnm::read(&out), pic, "{name}: decoded pixels");
    }
}

/// Several inputs decode into a directory, one PNG per input.
#[test]
fn several_inputs_decode_to_png_files_in_a_directory() {
    let dir = Scratch::new("decode-cli", "several");
    let pics = [
        ("a", Pnm::test_picture(20, 17, 1, 255)),
        ("b", Pnm::test_picture(9, 30, 3, 255)),
    ];
    let mut inputs = Vec::new();
    for (name, pic) in &pics {
        let src = dir.path(&format!("{name}.pnm"));
        pic.write(&src);
        let wl = dir.path(&format!("{name}.wl"));
        ok(&["encode", s(&src), "-o", s(&wl), "--backend", "cpu"]);
        inputs.push(wl);
    }
    let out = dir.path("out");
    std::fs::create_dir_all(&out).unwrap();
    let mut args = vec!["decode"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["-o", s(&out), "--backend", "cpu"]);
    ok(&args);
    for (name, pic) in &pics {
        let png = image::open(out.join(format!("{name}.png")))
            .unwrap_or_else(|e| panic!("{name}.png: {e}"));
        let samples: Vec<u32> = if pic.channels == 1 {
            png.to_luma8()
                .into_raw()
                .into_iter()
                .map(u32::from)
                .collect()
        } else {
            png.to_rgb8()
                .into_raw()
                .into_iter()
                .map(u32::from)
                .collect()
        };
        assert_eq!(
            (png.width() as usize, png.height() as usize),
            (pic.width, pic.height)
        );
        assert!(samples == pic.samples, "{name}.png: decoded pixels differ");
    }
}

/// `--reduce k` reads the header and the resolutions up to `levels - k`,
/// no more (a prefix of that length is all the decoder needs), and writes
/// what the library decodes from that prefix.
#[test]
fn reduce_reads_only_the_resolutions_kept_and_equals_the_library() {
    let dir = Scratch::new("decode-cli", "reduce");
    let pic = Pnm::test_picture(67, 45, 3, 255);
    let src = dir.path("src.ppm");
    pic.write(&src);
    let wl = dir.path("src.wl");
    ok(&[
        "encode",
        s(&src),
        "-o",
        s(&wl),
        "--backend",
        "cpu",
        "--bpp",
        "3",
        "--layers",
        "3",
    ]);
    let bytes = std::fs::read(&wl).unwrap();
    let info = json(&["info", s(&wl), "--json"]);
    let levels = info["levels"].as_u64().unwrap() as usize;
    let resolutions = info["resolutions"].as_array().unwrap();
    assert_eq!(resolutions.len(), levels + 1);
    for k in 0..=levels {
        let out = dir.path(&format!("r{k}.ppm"));
        let report = json(&[
            "decode",
            s(&wl),
            "-o",
            s(&out),
            "--reduce",
            &k.to_string(),
            "--backend",
            "cpu",
            "--json",
        ]);
        let kept = &resolutions[..=levels - k];
        let want_read = info["header_bytes"].as_u64().unwrap()
            + kept
                .iter()
                .flat_map(|r| r["layer_bytes"].as_array().unwrap())
                .map(|b| b.as_u64().unwrap())
                .sum::<u64>();
        assert_eq!(
            report["bytes_read"].as_u64(),
            Some(want_read),
            "--reduce {k}"
        );
        assert_eq!(report["file_bytes"].as_u64(), Some(bytes.len() as u64));
        assert_eq!(want_read < bytes.len() as u64, k > 0, "--reduce {k}");
        let finest = &kept[levels - k];
        let written = Pnm::read(&out);
        assert_eq!(
            (written.width as u64, written.height as u64),
            (
                finest["width"].as_u64().unwrap(),
                finest["height"].as_u64().unwrap()
            ),
            "--reduce {k}: size"
        );
        let opts = DecodeOptions {
            reduce: k as u8,
            ..DecodeOptions::default()
        };
        let prefix = &bytes[..want_read as usize];
        let lib = codec::decode(prefix, &opts, &Backend::Cpu).unwrap();
        assert_pnm_equals_image(&format!("--reduce {k}"), &written, &lib.image);
        if k == 0 {
            // The whole file is near the source (this noisy picture gives
            // about 23 dB at 3 bpp; a wrong decode is far below 20).
            let psnr = pic.psnr(&written);
            assert!(psnr > 20.0, "full decode PSNR {psnr}");
        }
    }
}

/// `--layers n` writes what the library decodes with the first `n`
/// layers, and each layer raises the PSNR against the source.
#[test]
fn layers_decode_equals_the_library_and_improves_with_each_layer() {
    let dir = Scratch::new("decode-cli", "layers");
    let pic = Pnm::test_picture(50, 38, 1, 255);
    let src = dir.path("src.pgm");
    pic.write(&src);
    let wl = dir.path("src.wl");
    ok(&[
        "encode",
        s(&src),
        "-o",
        s(&wl),
        "--backend",
        "cpu",
        "--bpp",
        "4",
        "--layers",
        "3",
    ]);
    let bytes = std::fs::read(&wl).unwrap();
    let mut last = 0.0;
    for n in 1..=3u8 {
        let out = dir.path(&format!("l{n}.pgm"));
        ok(&[
            "decode",
            s(&wl),
            "-o",
            s(&out),
            "--layers",
            &n.to_string(),
            "--backend",
            "cpu",
        ]);
        let written = Pnm::read(&out);
        let opts = DecodeOptions {
            layers: Some(n),
            ..DecodeOptions::default()
        };
        let lib = codec::decode(&bytes, &opts, &Backend::Cpu).unwrap();
        assert_pnm_equals_image(&format!("--layers {n}"), &written, &lib.image);
        let psnr = pic.psnr(&written);
        assert!(psnr > last, "--layers {n}: PSNR {psnr} <= {last}");
        last = psnr;
    }
}
