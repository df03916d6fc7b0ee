//! `wavelane bpc encode-blocks` / `decode-blocks` and `wavelane train-lut`,
//! run through the CLI's own parser and dispatcher on a part of the
//! reference sample: the files they write are checked against the library
//! (the OUT.bin layout of docs/format.md), round trips are lossless, the CPU
//! and GPU backends write the same bytes, and trained tables code losslessly.

mod bpc_common;

use std::path::{Path, PathBuf};

use clap::Parser;
use wavelane::bpc::formats::{self, RefFile};
use wavelane::bpc::{cpu, lut_json, CodeblockBatch};
use wavelane_cli::{self as cli, Cli};
use wavelane_core::bpc::{DecodeLimits, Mode, ProbabilityTables, GROUPS, TABLE_BITPLANES};

/// A fresh scratch directory for one test.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wavelane-bpc-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `wavelane ARGS...`, panicking with the CLI's error.
fn wavelane(args: &[&str]) {
    let cli = Cli::try_parse_from(std::iter::once("wavelane").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("wavelane {args:?}: {e}"));
    if let Err(e) = cli::run(cli) {
        panic!("wavelane {args:?} failed: {e}");
    }
}

/// The first `n` codeblocks of the sample (LL and coarse levels first) plus
/// a few fine ones, written as a BPCREF01 file.
fn sample_part(dir: &Path, n: usize) -> (PathBuf, RefFile) {
    let mut file = bpc_common::sample_file();
    let total = file.blocks.len();
    let keep: Vec<usize> = (0..n)
        .map(|i| if i < n / 2 { i } else { i * total / n })
        .collect();
    file.blocks = keep.into_iter().map(|i| file.blocks[i].clone()).collect();
    let path = dir.join("part.bin");
    std::fs::write(&path, file.to_bytes().unwrap()).unwrap();
    (path, file)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn encode_and_decode_blocks_round_trip_on_cpu() {
    let dir = scratch_dir("cpu");
    let (input, file) = sample_part(&dir, 12);
    let batch = CodeblockBatch::from_ref(&file);
    for mode in [Mode::TwoPass, Mode::ThreePass] {
        let passes = mode.passes().to_string();
        let out = dir.join(format!("enc{passes}.bin"));
        wavelane(&[
            "bpc",
            "encode-blocks",
            s(&input),
            "-o",
            s(&out),
            "--passes",
            &passes,
            "--backend",
            "cpu",
        ]);
        // The documented layout, byte for byte.
        let tables = ProbabilityTables::reference(mode);
        let want = cpu::encode(&batch, tables, cpu::CoreForm::Sequential).unwrap();
        assert_eq!(
            read(&out),
            formats::write_encoded(&want),
            "{mode:?} OUT.bin"
        );

        let decoded = dir.join(format!("dec{passes}.bin"));
        wavelane(&[
            "bpc",
            "decode-blocks",
            s(&out),
            "--like",
            s(&input),
            "-o",
            s(&decoded),
            "--passes",
            &passes,
            "--backend",
            "cpu",
        ]);
        assert_eq!(read(&decoded), read(&input), "{mode:?} lossless round trip");

        // Truncated to 40 codewords per codeblock: what the library decodes.
        let cut = dir.join(format!("cut{passes}.bin"));
        wavelane(&[
            "bpc",
            "decode-blocks",
            s(&out),
            "--like",
            s(&input),
            "-o",
            s(&cut),
            "--passes",
            &passes,
            "--backend",
            "cpu",
            "--max-codewords",
            "40",
        ]);
        let (want_cut, _) = cpu::decode_with_limits(
            &batch,
            &want,
            tables,
            DecodeLimits::codewords(40),
            cpu::CoreForm::Sequential,
        )
        .unwrap();
        let got_cut = RefFile::parse(&read(&cut)).unwrap();
        assert_eq!(got_cut.blocks.len(), file.blocks.len());
        for (i, b) in got_cut.blocks.iter().enumerate() {
            let d = batch.blocks[i];
            let want: Vec<i16> = want_cut[d.offset..d.offset + formats::REF_BLOCK_LEN]
                .iter()
                .map(|&v| v.clamp(i16::MIN as i32, i16::MAX as i32) as i16)
                .collect();
            assert_eq!(b.coefficients, want, "{mode:?} truncated block {i}");
        }
        assert_ne!(
            read(&cut),
            read(&input),
            "40 codewords cannot be lossless here"
        );
    }
}

#[test]
fn gpu_encode_and_decode_blocks_write_the_cpu_bytes() {
    let dir = scratch_dir("gpu");
    let (input, _) = sample_part(&dir, 8);
    for passes in ["2", "3"] {
        let mut outs = Vec::new();
        for backend in ["cpu", "gpu"] {
            let out = dir.join(format!("enc-{backend}-{passes}.bin"));
            wavelane(&[
                "bpc",
                "encode-blocks",
                s(&input),
                "-o",
                s(&out),
                "--passes",
                passes,
                "--backend",
                backend,
            ]);
            let cut = dir.join(format!("cut-{backend}-{passes}.bin"));
            wavelane(&[
                "bpc",
                "decode-blocks",
                s(&out),
                "--like",
                s(&input),
                "-o",
                s(&cut),
                "--passes",
                passes,
                "--backend",
                backend,
                "--max-codewords",
                "100",
            ]);
            let full = dir.join(format!("dec-{backend}-{passes}.bin"));
            wavelane(&[
                "bpc",
                "decode-blocks",
                s(&out),
                "--like",
                s(&input),
                "-o",
                s(&full),
                "--passes",
                passes,
                "--backend",
                backend,
            ]);
            assert_eq!(
                read(&full),
                read(&input),
                "{backend} {passes}-pass round trip"
            );
            outs.push((read(&out), read(&cut)));
        }
        assert_eq!(
            outs[0].0, outs[1].0,
            "{passes}-pass: GPU OUT.bin differs from CPU"
        );
        assert_eq!(
            outs[0].1, outs[1].1,
            "{passes}-pass: GPU truncated decode differs"
        );
    }
}

/// A 256x256 8-bit test picture: smooth shading, edges and a little noise.
fn training_image(path: &Path) {
    let img = image::GrayImage::from_fn(256, 256, |x, y| {
        let shade = (x + 2 * y) / 3;
        let edge = if (x / 32 + y / 48) % 2 == 0 { 60 } else { 0 };
        let noise = (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) % 7;
        image::Luma([((shade + edge + noise) % 256) as u8])
    });
    img.save(path).unwrap();
}

#[test]
fn train_lut_tables_have_the_reference_layout_and_code_losslessly() {
    let dir = scratch_dir("train");
    let (input, _) = sample_part(&dir, 8);
    let png = dir.join("train.png");
    training_image(&png);
    for mode in [Mode::TwoPass, Mode::ThreePass] {
        let passes = mode.passes().to_string();
        let lut = dir.join(format!("lut{passes}.json"));
        wavelane(&[
            "train-lut",
            s(&png),
            s(&input),
            "-o",
            s(&lut),
            "--passes",
            &passes,
        ]);
        let text = String::from_utf8(read(&lut)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["passes"], mode.passes() as u64);
        let groups = json["groups"].as_array().unwrap();
        assert_eq!(groups.len(), GROUPS);
        for g in groups {
            assert_eq!(g["sig"].as_array().unwrap().len(), TABLE_BITPLANES);
            assert_eq!(g["sig"][0].as_array().unwrap().len(), 9);
            assert_eq!(g["sign"][0].as_array().unwrap().len(), 4);
            assert_eq!(g["ref"].as_array().unwrap().len(), TABLE_BITPLANES);
            assert_eq!(!g["cp_sig"].is_null(), mode == Mode::ThreePass);
        }
        let tables = lut_json::tables_from_json(&text).unwrap();
        assert_eq!(tables.mode(), mode);
        assert_ne!(
            &tables,
            ProbabilityTables::reference(mode),
            "trained = reference?"
        );

        let out = dir.join(format!("enc{passes}.bin"));
        let dec = dir.join(format!("dec{passes}.bin"));
        let lut_arg = s(&lut);
        wavelane(&[
            "bpc",
            "encode-blocks",
            s(&input),
            "-o",
            s(&out),
            "--passes",
            &passes,
            "--lut",
            lut_arg,
            "--backend",
            "cpu",
        ]);
        wavelane(&[
            "bpc",
            "decode-blocks",
            s(&out),
            "--like",
            s(&input),
            "-o",
            s(&dec),
            "--passes",
            &passes,
            "--lut",
            lut_arg,
            "--backend",
            "cpu",
        ]);
        assert_eq!(
            read(&dec),
            read(&input),
            "{mode:?} round trip with trained tables"
        );
    }
}

/// `train-lut --codec` trains on the codec's own front end: the tables
/// equal `codec::tables::train` on the same image, and a 16-bit image is
/// refused (the presets' rows are for 8-bit samples).
#[test]
fn train_lut_codec_path_equals_the_codec_trainer() {
    use wavelane::codec::{self, EncodeOptions, RateTarget};
    let dir = scratch_dir("train-codec");
    let png = dir.join("train.png");
    training_image(&png);
    let image = wavelane::image_io::load(&png).unwrap();
    for (path, target) in [
        ("lossless", RateTarget::Lossless),
        ("lossy", RateTarget::AllPasses),
    ] {
        let lut = dir.join(format!("{path}.json"));
        wavelane(&[
            "train-lut",
            s(&png),
            "-o",
            s(&lut),
            "--codec",
            path,
            "--passes",
            "3",
        ]);
        let cli = lut_json::tables_from_json(&String::from_utf8(read(&lut)).unwrap()).unwrap();
        let options = EncodeOptions {
            target,
            passes: 3,
            ..EncodeOptions::default()
        };
        let library = codec::tables::train(std::slice::from_ref(&image), &options).unwrap();
        assert_eq!(cli, library, "{path}");
    }
    let mut deep = image.clone();
    deep.bit_depth = 16;
    let options = EncodeOptions::default();
    assert!(codec::tables::train(&[deep], &options).is_err());
}
