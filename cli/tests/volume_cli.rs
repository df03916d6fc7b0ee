//! Volumes on the command line: NIfTI (.nii.gz) through `wavelane encode`
//! and `wavelane decode`, raw input with `--dims`, TIFF stacks, `--slices`,
//! and `wavelane info` showing the depth and per-axis levels.

mod common;

use common::{fails, ok, s, Scratch};
use serde_json::Value;
use wavelane::volume::io::{self, VolumeFormat};
use wavelane::volume::{SampleType, Volume};

fn ct(w: usize, h: usize, d: usize) -> Volume {
    Volume::from_fn(w, h, d, SampleType::I16, |x, y, z| {
        let r2 = (x as i32 - 10).pow(2) + (y as i32 - 8).pow(2) + 4 * (z as i32 - 6).pow(2);
        if r2 < 60 {
            40 + (x * y) as i32 % 30
        } else {
            -1024 + (z as i32 * 3)
        }
    })
}

#[test]
fn nifti_round_trip_through_encode_decode_and_info() {
    let dir = Scratch::new("volume-cli", "nifti");
    let mut v = ct(21, 17, 13);
    let mut h = io::write_bytes(&v, VolumeFormat::Nifti).unwrap()[..348].to_vec();
    h[80..84].copy_from_slice(&0.8f32.to_le_bytes());
    h[88..92].copy_from_slice(&2.5f32.to_le_bytes());
    v.nifti_header = Some(h);
    let src = dir.file(
        "ct.nii.gz",
        &io::write_bytes(&v, VolumeFormat::NiftiGz).unwrap(),
    );
    let wl = dir.path("ct.wl");
    ok(&[
        "encode",
        s(&src),
        "-o",
        s(&wl),
        "--lossless",
        "--backend",
        "cpu",
    ]);
    let info: Value = serde_json::from_str(&ok(&["info", s(&wl), "--json"])).unwrap();
    assert_eq!(info["depth"], 13);
    assert_eq!(info["levels"], serde_json::json!([5, 5, 1]));
    assert_eq!(info["voxel_size"], serde_json::json!([0.8, 1.0, 2.5]));
    let text = ok(&["info", s(&wl)]);
    assert!(
        text.contains("21 x 17 x 13 (13 slices)") && text.contains("levels x 5, y 5, z 1"),
        "{text}"
    );
    for name in ["out.nii.gz", "out.nii", "out.tif"] {
        let out = dir.path(name);
        ok(&["decode", s(&wl), "-o", s(&out), "--backend", "cpu"]);
        let back = io::load(&out, None, 1 << 20).unwrap();
        assert_eq!(back.samples, v.samples, "{name}");
        if name != "out.tif" {
            assert_eq!(back.nifti_header, v.nifti_header, "{name}");
        }
    }
    let part = dir.path("part.nii");
    ok(&[
        "decode",
        s(&wl),
        "-o",
        s(&part),
        "--slices",
        "4..6",
        "--backend",
        "cpu",
    ]);
    let back = io::load(&part, None, 1 << 20).unwrap();
    assert_eq!(back.depth, 3);
    assert_eq!(back.samples, v.samples[4 * 21 * 17..7 * 21 * 17]);
    let err = fails(&["decode", s(&wl), "-o", s(&part), "--slices", "5..13"]);
    assert!(err.contains("--slices 5..13"), "{err}");
    // Half size on every axis with levels (z has one), voxels twice as large.
    let small = dir.path("small.nii");
    ok(&[
        "decode",
        s(&wl),
        "-o",
        s(&small),
        "--reduce",
        "1",
        "--backend",
        "cpu",
    ]);
    let back = io::load(&small, None, 1 << 20).unwrap();
    assert_eq!([back.width, back.height, back.depth], [11, 9, 7]);
    let info: Value = serde_json::from_str(&ok(&["info", s(&wl), "--json"])).unwrap();
    assert_eq!(info["voxel_size"], serde_json::json!([0.8, 1.0, 2.5]));
    let h = back.nifti_header.unwrap();
    let f = |at: usize| f32::from_le_bytes(h[at..at + 4].try_into().unwrap());
    assert_eq!([f(80), f(84), f(88)], [1.6, 2.0, 5.0]);
    let err = fails(&["volume", "decode", s(&wl), "-o", s(&small), "--reduce", "6"]);
    assert!(err.contains("--reduce 6"), "{err}");
    // A volume is one job on one device: a device list is refused, not
    // silently ignored, in both directions.
    let again = dir.path("again.wl");
    let err = fails(&["encode", s(&src), "-o", s(&again), "--devices", "0"]);
    assert!(err.contains("--devices") && err.contains("volume"), "{err}");
    assert!(!again.exists());
    let err = fails(&["decode", s(&wl), "-o", s(&small), "--devices", "all"]);
    assert!(err.contains("--devices") && err.contains("volume"), "{err}");
}

#[test]
fn raw_and_tiff_inputs_with_levels_and_a_rate() {
    let dir = Scratch::new("volume-cli", "raw");
    let v = ct(30, 20, 9);
    let raw = dir.file("ct.raw", &io::write_bytes(&v, VolumeFormat::Raw).unwrap());
    let wl = dir.path("ct.wl");
    let args = [
        "volume",
        "encode",
        s(&raw),
        "-o",
        s(&wl),
        "--dims",
        "30x20x9",
        "--sample",
        "i16",
    ];
    ok(&[&args[..], &["--levels", "2,1,3", "--backend", "cpu"]].concat());
    let info: Value = serde_json::from_str(&ok(&["volume", "info", s(&wl), "--json"])).unwrap();
    assert_eq!(info["levels"], serde_json::json!([2, 1, 3]));
    let out = dir.path("back.raw");
    ok(&[
        "volume",
        "decode",
        s(&wl),
        "-o",
        s(&out),
        "--backend",
        "cpu",
    ]);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&raw).unwrap());
    // A rate: the file fits the budget of bits per voxel.
    let tif = dir.file("ct.tif", &io::write_bytes(&v, VolumeFormat::Tiff).unwrap());
    let lossy = dir.path("lossy.wl");
    let report = ok(&[
        "volume",
        "encode",
        s(&tif),
        "-o",
        s(&lossy),
        "--bpp",
        "1",
        "--layers",
        "2",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&report).unwrap();
    assert!(
        report["bits_per_voxel"].as_f64().unwrap() <= 1.0,
        "{report}"
    );
    assert!(std::fs::metadata(&lossy).unwrap().len() <= (30 * 20 * 9) / 8);
    // Bad arguments are errors naming what is wrong.
    let err = fails(&[
        "volume",
        "encode",
        s(&raw),
        "-o",
        s(&wl),
        "--dims",
        "30x20x8",
        "--sample",
        "i16",
    ]);
    assert!(err.contains("is 9600 bytes"), "{err}");
    let err = fails(&[&args[..], &["--levels", "2,1"]].concat());
    assert!(err.contains("X,Y,Z"), "{err}");
}

#[test]
fn the_volume_demo_prints_its_table_and_writes_the_slices() {
    let dir = Scratch::new("volume-cli", "demo");
    let out = ok(&[
        "volume",
        "demo",
        "-o",
        s(&dir.path("d")),
        "--rates",
        "0.5,1",
    ]);
    for row in ["lossless", "0.5 bpv", "1 bpv"] {
        assert!(out.lines().any(|l| l.starts_with(row)), "{row}: {out}");
    }
    let lossless = out.lines().find(|l| l.starts_with("lossless")).unwrap();
    assert!(lossless.contains("inf"), "{lossless}");
    let png = image::open(dir.path("d/slices.png")).unwrap();
    // Axial 96 wide, coronal 96, sagittal 80, 2-pixel gaps; two rows of 80.
    assert_eq!((png.width(), png.height()), (96 + 2 + 96 + 2 + 80, 160));
    assert!(dir.path("d/phantom-0.5bpv.wl").is_file());
}
