//! The runtime-dispatched copies of the hot loops (`backend::simd`,
//! `fastest!`) code the same bytes: the built binary encodes one image,
//! lossless and lossy, under every `WAVELANE_SIMD` level and the files are
//! compared byte for byte with the baseline copy's. Levels this CPU lacks
//! are reported on the test's stderr (uncaptured) and not compared; the
//! baseline and the CPU's best level are always compared.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Command;

use common::{s, Scratch};
use wavelane::backend::simd::{cpu_level, Level, ENV};

/// A 3-channel 8-bit PPM of `w x h`: smooth gradients, an edge, and a noisy
/// patch (xorshift), so that both sparse and dense phases occur.
fn test_ppm(w: usize, h: usize) -> Vec<u8> {
    let mut out = format!("P6\n{w} {h}\n255\n").into_bytes();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for y in 0..h {
        for x in 0..w {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = if x > w / 2 && y > h / 3 {
                (state % 61) as i32 - 30
            } else {
                (state % 5) as i32 - 2
            };
            let edge = if (x + y / 2) % 48 < 20 { 70 } else { 0 };
            for c in 0..3 {
                let v = (x * (2 + c) + y * (3 - c)) as i32 / 3 + edge + noise;
                out.push(v.clamp(0, 255) as u8);
            }
        }
    }
    out
}

/// Encodes `src` to `dst` with `WAVELANE_SIMD=level` and returns the level
/// the binary says ran.
fn encode(level: Level, src: &Path, dst: &Path, mode: &[&str]) -> Level {
    let out = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args(["encode", s(src), "-o", s(dst), "--backend", "cpu"])
        .args(mode)
        .env(ENV, level.name())
        .output()
        .expect("run wavelane");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{ENV}={} wavelane encode {mode:?} failed: {stderr}",
        level.name()
    );
    let ran = Level::ALL
        .into_iter()
        .find(|l| stderr.contains(&format!("the {} copy of the hot loops runs", l.name())));
    ran.unwrap_or_else(|| panic!("no notice of the level that ran: {stderr}"))
}

#[test]
fn every_simd_level_encodes_the_same_bytes() {
    let dir = Scratch::new("simd", "same-bytes");
    let src = dir.file("img.ppm", &test_ppm(200, 136));
    let best = cpu_level();
    let mut report = std::io::stderr().lock();
    for (name, mode) in [
        ("lossless", &["--lossless"][..]),
        ("lossy", &["--bpp", "1"][..]),
    ] {
        let base_path = dir.path(&format!("{name}-baseline.wl"));
        assert_eq!(
            encode(Level::Baseline, &src, &base_path, mode),
            Level::Baseline
        );
        let base = std::fs::read(&base_path).unwrap();
        let mut compared = vec![Level::Baseline];
        for level in [Level::V3, Level::V4] {
            let path = dir.path(&format!("{name}-{}.wl", level.name()));
            let ran = encode(level, &src, &path, mode);
            assert_eq!(
                ran,
                level.min(best),
                "the binary and the test disagree on the CPU"
            );
            if ran != level {
                writeln!(
                    report,
                    "simd_cli: {name}: {ENV}={} not compared: this CPU lacks it (best: {})",
                    level.name(),
                    best.name()
                )
                .unwrap();
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                bytes == base,
                "{name}: the {} copy codes other bytes than the baseline ({} vs {} bytes)",
                level.name(),
                bytes.len(),
                base.len()
            );
            compared.push(level);
        }
        // The CPU's best level is always among the compared ones.
        assert!(compared.contains(&best));
        let names: Vec<&str> = compared.iter().map(|l| l.name()).collect();
        writeln!(
            report,
            "simd_cli: {name}: {} bytes, identical under {}",
            base.len(),
            names.join(", ")
        )
        .unwrap();
    }
}

/// Runs `wavelane ARGS` with `WAVELANE_SIMD=level`; returns the level the
/// binary says ran.
fn run_at(level: Level, args: &[&str]) -> Level {
    let out = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args(args)
        .env(ENV, level.name())
        .output()
        .expect("run wavelane");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{ENV}={} wavelane {args:?} failed: {stderr}",
        level.name()
    );
    let ran = Level::ALL
        .into_iter()
        .find(|l| stderr.contains(&format!("the {} copy of the hot loops runs", l.name())));
    ran.unwrap_or_else(|| panic!("no notice of the level that ran: {stderr}"))
}

/// The decoder's copies (the phase decoder, the inverse 5/3, colour and
/// level shift) give the same image at every level: a lossless file (which
/// must give back the source), a 1 bpp file, and that file cut to 60% of
/// its bytes (decoded with `--partial`, so that codeblocks stop
/// mid-stream). Fails if no level above the baseline could be compared
/// on a CPU that has one.
#[test]
fn every_simd_level_decodes_the_same_image() {
    let dir = Scratch::new("simd", "same-image");
    let source = test_ppm(200, 136);
    let src = dir.file("img.ppm", &source);
    let lossless = dir.path("lossless.wl");
    let lossy = dir.path("lossy.wl");
    encode(Level::Baseline, &src, &lossless, &["--lossless"]);
    encode(Level::Baseline, &src, &lossy, &["--bpp", "1"]);
    let bytes = std::fs::read(&lossy).unwrap();
    let cut = dir.file("cut.wl", &bytes[..bytes.len() * 3 / 5]);
    let best = cpu_level();
    let mut report = std::io::stderr().lock();
    for (name, file, extra) in [
        ("lossless", &lossless, &[][..]),
        ("lossy", &lossy, &[][..]),
        ("truncated", &cut, &["--partial"][..]),
    ] {
        let decode = |level: Level| {
            let out = dir.path(&format!("{name}-{}.ppm", level.name()));
            let mut args = vec!["decode", s(file), "-o", s(&out), "--backend", "cpu"];
            args.extend_from_slice(extra);
            let ran = run_at(level, &args);
            (ran, std::fs::read(&out).unwrap())
        };
        let (ran, base) = decode(Level::Baseline);
        assert_eq!(ran, Level::Baseline);
        if name == "lossless" {
            assert!(
                base == source,
                "the lossless decode differs from the source"
            );
        }
        let mut compared = vec![Level::Baseline];
        for level in [Level::V3, Level::V4] {
            let (ran, image) = decode(level);
            assert_eq!(
                ran,
                level.min(best),
                "the binary and the test disagree on the CPU"
            );
            if ran != level {
                continue;
            }
            assert!(
                image == base,
                "{name}: the {} copy decodes another image than the baseline",
                level.name()
            );
            compared.push(level);
        }
        assert!(compared.contains(&best));
        if best > Level::Baseline {
            assert!(
                compared.len() > 1,
                "{name}: no level above the baseline ran"
            );
        }
        let names: Vec<&str> = compared.iter().map(|l| l.name()).collect();
        writeln!(
            report,
            "simd_cli: decode {name}: identical under {}",
            names.join(", ")
        )
        .unwrap();
    }
}

#[test]
fn an_unknown_level_is_ignored_with_a_notice() {
    let dir = Scratch::new("simd", "unknown");
    let src = dir.file("img.ppm", &test_ppm(40, 24));
    let dst = dir.path("img.wl");
    let out = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args([
            "encode",
            s(&src),
            "-o",
            s(&dst),
            "--lossless",
            "--backend",
            "cpu",
        ])
        .env(ENV, "avx9000")
        .output()
        .expect("run wavelane");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("WAVELANE_SIMD=\"avx9000\" is not baseline, v3 or v4; ignored"),
        "{stderr}"
    );
    assert!(!stderr.contains("copy of the hot loops runs"), "{stderr}");
}
