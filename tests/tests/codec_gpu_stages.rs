//! The image stages on the device (host/src/codec/stages/device.rs): a
//! GPU encode uploads the samples and keeps the planes on the device
//! through level shift, colour transform, DWT and quantization; a GPU
//! decode dequantizes, transforms back, undoes the colour transform and
//! clamps there. The files must be the CPU backend's byte for byte and the
//! decoded images the CPU's, for the 5/3 and the fixed-point 9/7, lossless
//! and lossy, 1..=4 components, 1..=16-bit samples, signed or not, odd
//! sizes, reduced resolutions and fewer layers; and hostile files must get
//! the CPU decoder's errors. (That the device route is the one taken on
//! lavapipe is checked by the stage-level unit tests beside the driver.)

use rand::Rng;
use wavelane::backend::Backend;
use wavelane::codec::file::ReadOptions;
use wavelane::codec::{
    self, ColourTransform, DecodeOptions, EncodeOptions, Image, Interleaved, RateTarget,
};
use wavelane_core::dwt::Wavelet;
use wavelane_tests::{assert_same, for_random_cases, gpu, TestRng};

/// A ramp with noise, `bits` deep, signed if asked.
fn random_image(
    rng: &mut TestRng,
    w: usize,
    h: usize,
    comps: usize,
    bits: u8,
    signed: bool,
) -> Image {
    let max = (1i64 << bits) - 1;
    let noise = 1i64 << rng.random_range(0..=bits as u32);
    let phase: Vec<i64> = (0..comps).map(|_| rng.random_range(0..=max)).collect();
    let mut image = Image::from_fn(w, h, comps, bits, |_, _, _| 0);
    let half = if signed { 1i64 << (bits - 1) } else { 0 };
    for (c, plane) in image.planes.iter_mut().enumerate() {
        for (i, v) in plane.iter_mut().enumerate() {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let ramp = (phase[c] + (x * 3 + y * 5) * (max / 64 + 1)) % (max + 1);
            let n = rng.random_range(0..noise) - noise / 2;
            *v = ((ramp + n).clamp(0, max) - half) as i32;
        }
    }
    image.signed = signed;
    image
}

/// Options for case `kind`: lossless 5/3, lossy fixed-point 9/7 at a rate,
/// lossy 5/3 with every pass, lossy fixed-point 9/7 in layers, a PSNR
/// target (fixed-point 9/7 or 5/3), the last two with or without early
/// termination, and (with three or more components) the colour transform
/// the case's target would not pick by default.
fn options(rng: &mut TestRng, kind: u32, comps: usize) -> EncodeOptions {
    let mut o = match kind {
        0 => EncodeOptions::lossless(),
        1 => EncodeOptions::bpp(rng.random_range(0.5..4.0)),
        2 => EncodeOptions {
            target: RateTarget::AllPasses,
            wavelet: Some(Wavelet::Cdf53),
            ..EncodeOptions::default()
        },
        3 => EncodeOptions {
            target: RateTarget::Bpp(3.0),
            layers: 3,
            early_termination: rng.random_range(0..2) == 1,
            ..EncodeOptions::default()
        },
        _ => EncodeOptions {
            target: RateTarget::Psnr(rng.random_range(25.0..45.0)),
            wavelet: [None, Some(Wavelet::Cdf53)][rng.random_range(0..2)],
            early_termination: rng.random_range(0..2) == 1,
            ..EncodeOptions::default()
        },
    };
    if comps >= 3 && kind != 0 && rng.random_range(0..3) == 0 {
        o.colour = Some(ColourTransform::Rct);
    }
    if rng.random_range(0..3) == 0 {
        o.levels = Some(rng.random_range(0..=3));
    }
    o
}

/// Random images and targets: the GPU file is the CPU file, and every
/// decode of it (all of it, reduced, fewer layers) is the CPU's image.
#[test]
fn gpu_stages_write_the_cpu_files_and_decode_the_cpu_images() {
    let gpu = Backend::Gpu(gpu());
    for_random_cases("gpu stages", 16, |rng| {
        let comps = rng.random_range(1..=4);
        let bits = rng.random_range(1..=16u8);
        let signed = rng.random_range(0..4) == 0;
        let (w, h) = (rng.random_range(1..=71), rng.random_range(1..=53));
        let image = random_image(rng, w, h, comps, bits, signed);
        let kind = rng.random_range(0..5);
        let opts = options(rng, kind, comps);
        let cpu = codec::encode(&image, &opts, &Backend::Cpu);
        let on_gpu = codec::encode(&image, &opts, &gpu);
        let (cpu, on_gpu) = match (cpu, on_gpu) {
            (Ok(c), Ok(g)) => (c.bytes, g.bytes),
            (Err(c), Err(g)) => {
                assert_eq!(c.to_string(), g.to_string(), "encode errors differ");
                return;
            }
            (c, g) => panic!(
                "one backend failed: cpu {:?}, gpu {:?}",
                c.map(|_| ()),
                g.map(|_| ())
            ),
        };
        let what = format!("{w}x{h}x{comps} {bits}-bit signed={signed} {opts:?}");
        assert_same(&format!("file of {what}"), &cpu, &on_gpu);
        // Interleaved input (uploaded as it is on the GPU) writes the
        // same file on both backends.
        let inter = Interleaved::from_image(&image);
        for backend in [&Backend::Cpu, &gpu] {
            let file = codec::encode_interleaved(&inter, &opts, backend)
                .unwrap()
                .bytes;
            let on = backend.describe();
            assert_same(&format!("interleaved file of {what} on {on}"), &cpu, &file);
        }
        let levels = codec::decode(&cpu, &DecodeOptions::default(), &Backend::Cpu)
            .map(|d| d.report.resolutions - 1)
            .unwrap_or(0);
        for reduce in 0..=levels.min(2) as u8 {
            for layers in [None, Some(1)] {
                let d = DecodeOptions {
                    reduce,
                    layers,
                    ..DecodeOptions::default()
                };
                let c = codec::decode(&cpu, &d, &Backend::Cpu).unwrap().image;
                let g = codec::decode(&cpu, &d, &gpu).unwrap().image;
                let what = format!("decode of {what}, --reduce {reduce} --layers {layers:?}");
                assert!(c == g, "{what}");
                // The interleaved decode (the GPU's own download) holds
                // the same samples on both backends.
                let want = Interleaved::from_image(&c);
                for backend in [&Backend::Cpu, &gpu] {
                    let i = codec::decode_interleaved(&cpu, &d, backend).unwrap().image;
                    assert!(i == want, "interleaved {what} on {}", backend.describe());
                }
            }
        }
    });
}

/// Damaged and truncated files, CRCs unchecked so that the damage reaches
/// the decoder's stages: the GPU decode returns what the CPU decode
/// returns, the same image or the same error.
#[test]
fn gpu_stages_give_hostile_files_the_cpu_results() {
    let gpu = Backend::Gpu(gpu());
    for_random_cases("gpu stages hostile", 6, |rng| {
        let comps = [1, 3, 4][rng.random_range(0..3)];
        let bits = rng.random_range(6..=16u8);
        let image = random_image(rng, 45, 38, comps, bits, false);
        let kind = rng.random_range(0..4);
        let opts = options(rng, kind, comps);
        let file = codec::encode(&image, &opts, &Backend::Cpu).unwrap().bytes;
        let read = ReadOptions {
            check_crc: false,
            ..ReadOptions::default()
        };
        for _ in 0..12 {
            let mut bad = file.clone();
            match rng.random_range(0..3) {
                0 => bad.truncate(rng.random_range(0..file.len())),
                _ => {
                    // Past the header's first bytes, so that most damage
                    // reaches the index and the codewords.
                    for _ in 0..rng.random_range(1..=8) {
                        let at = rng.random_range(file.len().min(24)..file.len());
                        bad[at] ^= 1 << rng.random_range(0..8);
                    }
                }
            }
            for reduce in [0, 1] {
                let d = DecodeOptions {
                    reduce,
                    read,
                    ..DecodeOptions::default()
                };
                let c = codec::decode(&bad, &d, &Backend::Cpu).map(|d| d.image);
                let g = codec::decode(&bad, &d, &gpu).map(|d| d.image);
                let gi = codec::decode_interleaved(&bad, &d, &gpu).map(|d| d.image);
                match (&c, gi) {
                    (Ok(c), Ok(gi)) => assert!(gi == Interleaved::from_image(c)),
                    (Err(c), Err(gi)) => assert_eq!(c.to_string(), gi.to_string()),
                    (_, gi) => panic!("interleaved: gpu {:?}", gi.map(|_| ())),
                }
                match (c, g) {
                    (Ok(c), Ok(g)) => assert!(c == g, "hostile file decoded differently"),
                    (Err(c), Err(g)) => assert_eq!(c.to_string(), g.to_string()),
                    (c, g) => panic!(
                        "one backend failed: cpu {:?}, gpu {:?}",
                        c.map(|_| ()).map_err(|e| e.to_string()),
                        g.map(|_| ()).map_err(|e| e.to_string())
                    ),
                }
            }
        }
    });
}

/// A `--psnr` target with early termination reads the full-rate noise
/// estimate (the target's distortion less the noise decides the shifts),
/// which the GPU backend now takes from each block's exact error on the
/// device: the files of both backends must still be the same, on images
/// large enough to have blocks whose shifts that estimate moves.
#[test]
fn gpu_psnr_with_early_termination_writes_the_cpu_files() {
    let gpu = Backend::Gpu(gpu());
    for_random_cases("gpu psnr early termination", 4, |rng| {
        let comps = 3;
        let bits = [8, 12][rng.random_range(0..2)];
        let (w, h) = (rng.random_range(150..=200), rng.random_range(120..=160));
        // Smooth, with a little noise: its low bitplanes are not worth
        // their bytes, so early termination drops some.
        let max = (1i64 << bits) - 1;
        let mut image = Image::from_fn(w, h, comps, bits, |x, y, c| {
            let t = (x as f64 * 0.05 + c as f64).sin() * (y as f64 * 0.04).cos();
            ((0.5 + 0.4 * t) * max as f64) as i32
        });
        for plane in image.planes.iter_mut() {
            for v in plane.iter_mut() {
                *v = (*v as i64 + rng.random_range(-2..=2)).clamp(0, max) as i32;
            }
        }
        let opts = EncodeOptions {
            target: RateTarget::Psnr(rng.random_range(24.0..29.0)),
            early_termination: true,
            ..EncodeOptions::default()
        };
        let cpu = codec::encode(&image, &opts, &Backend::Cpu).unwrap();
        let on_gpu = codec::encode(&image, &opts, &gpu).unwrap();
        let what = format!("{w}x{h}x{comps} {bits}-bit {opts:?}");
        assert!(cpu.report.bitplanes_skipped > 0, "{what}: no shift");
        assert_same(&format!("file of {what}"), &cpu.bytes, &on_gpu.bytes);
    });
}
