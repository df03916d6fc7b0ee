//! Each device stage against the host function it mirrors, on lavapipe
//! here: the same planes after the colour transform, the DWT and
//! quantization (with each block's error), the same dequantized and
//! decoded samples, including the extreme values hostile files decode to.
//! They also check that the device route is the one taken, which the
//! end-to-end tests (tests/tests/codec_gpu_stages.rs) cannot see.

use crate::codec::input::Input;
use crate::codec::interleaved::Interleaved;
use std::borrow::Cow;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::backend::Backend;
use crate::codec::codeblocks::codeblocks;
use crate::codec::distortion::{block_sums, Real};
use crate::codec::image::Image;
use crate::codec::options::{EncodeOptions, RateTarget};
use crate::codec::plan::{plan, Plan};
use crate::codec::planes::{Coefficients, Resident};
use crate::codec::quant;
use crate::codec::stages::{colour as colour_stage, dwt as dwt_stage, quantize as quant_stage};

fn gpu() -> Arc<Gpu> {
    Gpu::shared().expect(
        "these GPU tests need a Vulkan device (lavapipe: apt-get install mesa-vulkan-drivers)",
    )
}

fn image(rng: &mut ChaCha8Rng, w: usize, h: usize, comps: usize, bits: u8, signed: bool) -> Image {
    let (lo, hi) = crate::codec::colour::sample_range(bits, signed);
    Image {
        width: w,
        height: h,
        bit_depth: bits,
        signed,
        planes: (0..comps)
            .map(|_| (0..w * h).map(|_| rng.random_range(lo..=hi)).collect())
            .collect(),
    }
}

fn host<H>(r: Resident<H>) -> H {
    match r {
        Resident::Host(h) => h,
        Resident::Device(_) => panic!("expected host planes"),
    }
}

fn device<H>(r: Resident<H>) -> DevicePlanes {
    match r {
        Resident::Device(d) => d,
        Resident::Host(_) => panic!("the device route was not taken"),
    }
}

/// Colour, DWT and quantization on the device give the host stages'
/// planes, indices, noise and (lossy targets) distortion sums, for both
/// integer wavelets, every colour transform, 1..=16 bits and odd sizes.
#[test]
fn gpu_front_end_stages_equal_the_host_stages() {
    let gpu = gpu();
    let on_gpu = Backend::Gpu(gpu.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    for case in 0..10 {
        let comps = [1, 2, 3, 4][case % 4];
        let bits = [1, 8, 12, 16, 5][case % 5];
        let signed = case % 3 == 1;
        let (w, h) = (rng.random_range(1..=70), rng.random_range(1..=45));
        let img = image(&mut rng, w, h, comps, bits, signed);
        let opts = match case % 3 {
            0 => EncodeOptions::lossless(),
            1 => EncodeOptions::bpp(2.0),
            _ => EncodeOptions {
                target: RateTarget::AllPasses,
                base_step: Some(rng.random_range(0.3..9.0)),
                ..EncodeOptions::default()
            },
        };
        let Plan { header, .. } = plan(&img.shape(), &opts).unwrap();
        let what = format!("case {case}: {w}x{h}x{comps} {bits}-bit {opts:?}");
        assert!(encodes(&gpu, &header), "{what}: not on the device");
        let planes = || Input::Planes(Cow::Borrowed(&img));
        let cpu_samples = host(colour_stage::forward(&Backend::Cpu, planes(), &header).unwrap());
        let samples = colour_stage::forward(&on_gpu, planes(), &header).unwrap();
        let samples = device(samples);
        assert_eq!(
            download(&samples).unwrap(),
            cpu_samples.data,
            "{what}: colour"
        );
        // Interleaved samples (uploaded as they are on the device) make
        // the same planes on both backends.
        let inter = Interleaved::from_image(&img);
        for backend in [&Backend::Cpu, &on_gpu] {
            let got = match colour_stage::forward(backend, Input::Interleaved(&inter), &header) {
                Ok(Resident::Host(p)) => p.data,
                Ok(Resident::Device(d)) => download(&d).unwrap(),
                Err(e) => panic!("{what}: {e}"),
            };
            assert!(got == cpu_samples.data, "{what}: colour of interleaved");
        }

        let levels = header.levels as u32;
        let cpu_coeffs = host(
            dwt_stage::forward(
                Resident::Host(cpu_samples),
                header.wavelet,
                w,
                h,
                levels,
                &Backend::Cpu,
            )
            .unwrap(),
        );
        let coeffs = dwt_stage::forward(
            Resident::Device(samples),
            header.wavelet,
            w,
            h,
            levels,
            &on_gpu,
        )
        .unwrap();
        let Coefficients::Int(cpu_int) = &cpu_coeffs else {
            panic!("integer wavelet")
        };
        let cpu_int = cpu_int.data.clone();
        assert_eq!(
            download(&device(coeffs.clone())).unwrap(),
            cpu_int,
            "{what}: DWT"
        );

        let blocks = codeblocks(w, h, comps, levels, header.codeblock_height as usize);
        let lossy = opts.target != RateTarget::Lossless;
        let cpu_q = quant_stage::quantize(
            &Backend::Cpu,
            &header,
            Resident::Host(cpu_coeffs),
            &blocks,
            lossy,
        )
        .unwrap();
        let q = quant_stage::quantize(&on_gpu, &header, coeffs, &blocks, lossy).unwrap();
        // The real-valued distortions' sums, made on the device from the
        // coefficients before they became indices: the host's exactly.
        match (&q.real, &cpu_q.real) {
            (Some(Real::Sums(g)), Some(Real::Sums(c))) => {
                assert!(g == c, "{what}: distortion sums")
            }
            (None, None) => assert!(!lossy, "{what}: no sums"),
            _ => panic!("{what}: the sums are not both integer sums"),
        }
        let indices = download(&device(q.indices)).unwrap();
        assert_eq!(indices, host(cpu_q.indices), "{what}: indices");
        assert_eq!(
            q.noise.to_bits(),
            cpu_q.noise.to_bits(),
            "{what}: noise {} vs {}",
            q.noise,
            cpu_q.noise
        );
    }
}
/// Coefficients anywhere in i32 (i32::MIN included) and steps anywhere in
/// the header's range: the quantization shader's indices and each block's
/// squared error equal the host arithmetic's (u128 there).
#[test]
fn gpu_quantize_matches_the_host_arithmetic_at_the_extremes() {
    let gpu = gpu();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (w, h, comps) = (67, 40, 2);
    let img = image(&mut rng, w, h, comps, 8, false);
    let Plan { mut header, .. } = plan(&img.shape(), &EncodeOptions::bpp(1.0)).unwrap();
    for list in header.steps.iter_mut() {
        for s in list.iter_mut() {
            *s = match rng.random_range(0..4) {
                0 => crate::codec::header::QuantStep::ONE,
                _ => crate::codec::header::QuantStep(rng.random_range(0..=u16::MAX)),
            };
        }
    }
    let extremes = [
        i32::MIN,
        i32::MIN + 1,
        -1,
        0,
        1,
        i32::MAX,
        1 << 28,
        -(1 << 28),
    ];
    let data: Vec<i32> = (0..w * h * comps)
        .map(|i| match i % 3 {
            0 => extremes[rng.random_range(0..extremes.len())],
            1 => rng.random(),
            _ => rng.random_range(-5000..5000),
        })
        .collect();
    let planes = upload(&gpu, &data, w * h, comps).unwrap();
    let blocks = codeblocks(
        w,
        h,
        comps,
        header.levels as u32,
        header.codeblock_height as usize,
    );
    let (errors, sums) = quantize(&planes, &header, &blocks, false).unwrap();
    assert!(sums.is_none());
    let got = download(&planes).unwrap();
    for (i, b) in blocks.iter().enumerate() {
        let q16 = header.step(b.component as usize, b.band as usize).q16();
        let mut err = 0u128;
        for y in b.rect.y..b.rect.y + b.rect.height {
            for x in b.rect.x..b.rect.x + b.rect.width {
                let at = b.component as usize * w * h + y * w + x;
                let c = data[at];
                let q = if q16 == quant::UNIT_STEP {
                    c
                } else {
                    quant::quantize_i32(c, q16)
                };
                assert_eq!(got[at], q, "index of {c} at step {q16}");
                let r = quant::dequantize_i32(q, 0, q16, quant::half_bin(q16, 0));
                err += ((c as i64 - r as i64).unsigned_abs() as u128).pow(2);
            }
        }
        assert_eq!(
            errors[i],
            err.min(u64::MAX as u128) as u64,
            "block {i} error"
        );
    }
}

/// The distortion sums at their edge: full 64x256 blocks of coefficients
/// anywhere in i32 (i32::MIN, indices clamped at the unit step, the
/// largest magnitudes a step leaves) and steps anywhere in the header's
/// range, from the smallest (every index clamped to 2^28 - 1) to the
/// largest: the shader's 128-bit sums equal the host's `i128` ones
/// exactly, before the planes are quantized in the same submission.
#[test]
fn gpu_distortion_sums_equal_the_host_sums_at_the_extremes() {
    let gpu = gpu();
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let (w, h, comps) = (64 * 2 + 5, 256 + 7, 2);
    let img = image(&mut rng, w, h, comps, 8, false);
    // No DWT levels: one band a component, tiled by full 64x256 blocks.
    let opts = EncodeOptions {
        levels: Some(0),
        ..EncodeOptions::bpp(1.0)
    };
    let Plan { mut header, .. } = plan(&img.shape(), &opts).unwrap();
    assert_eq!(header.codeblock_height, 256);
    let extremes = [
        i32::MIN,
        i32::MIN + 1,
        i32::MAX,
        i32::MAX - 1,
        1 << 28,
        -(1 << 28),
        (1 << 28) - 1,
        -1,
        1,
    ];
    for round in 0..3 {
        for list in header.steps.iter_mut() {
            for s in list.iter_mut() {
                *s = match (round, rng.random_range(0..4)) {
                    (0, _) => crate::codec::header::QuantStep(0), // q16 = 1
                    (1, _) => crate::codec::header::QuantStep(u16::MAX), // the largest
                    (_, 0) => crate::codec::header::QuantStep::ONE,
                    _ => crate::codec::header::QuantStep(rng.random_range(0..=u16::MAX)),
                };
            }
        }
        // Mostly extremes, so that the largest terms add up in one block.
        let data: Vec<i32> = (0..w * h * comps)
            .map(|_| match rng.random_range(0..4) {
                0 => rng.random(),
                _ => extremes[rng.random_range(0..extremes.len())],
            })
            .collect();
        let planes = upload(&gpu, &data, w * h, comps).unwrap();
        let blocks = codeblocks(w, h, comps, 0, 256);
        assert!(blocks
            .iter()
            .any(|b| b.rect.width * b.rect.height == 64 * 256));
        let (_, sums) = quantize(&planes, &header, &blocks, true).unwrap();
        let want = block_sums(
            &header,
            &crate::codec::planes::Planes::new(data, w * h),
            &blocks,
        );
        let sums = sums.expect("sums asked for");
        assert_eq!(sums.len(), blocks.len());
        for (i, (got, want)) in sums.iter().zip(&want).enumerate() {
            assert!(got == want, "round {round}: block {i} ({:?})", blocks[i]);
        }
        // The sums reach past 64 bits, where a 64-bit sum would wrap.
        assert!(
            want.iter()
                .any(|s| s.0.iter().any(|v| v.unsigned_abs() >= 1 << 64)),
            "round {round}: no sum past 64 bits"
        );
    }
}

/// Dequantization of indices anywhere in i32 with any shift, step and
/// half-bin flag: the shader equals `quant::dequantize_i32`, and skips
/// the blocks whose indices are their coefficients.
#[test]
fn gpu_dequantize_matches_the_host_arithmetic_at_the_extremes() {
    let gpu = gpu();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let (w, h, comps) = (70, 33, 3);
    let blocks = codeblocks(w, h, comps, 2, 16);
    let data: Vec<i32> = (0..w * h * comps)
        .map(|i| match i % 2 {
            0 => rng.random(),
            _ => rng.random_range(-300..300),
        })
        .collect();
    let rules: Vec<Rule> = blocks
        .iter()
        .map(|_| Rule {
            shift: [0, 0, 1, 5, 31, 40, 255][rng.random_range(0..7)],
            q16: match rng.random_range(0..3) {
                0 => quant::UNIT_STEP,
                1 => rng.random_range(1..=u32::MAX as u64),
                _ => rng.random_range(1..1 << 20),
            },
            half: rng.random(),
        })
        .collect();
    let planes = upload(&gpu, &data, w * h, comps).unwrap();
    dequantize(&planes, &blocks, &rules, w).unwrap();
    let got = download(&planes).unwrap();
    for (b, r) in blocks.iter().zip(&rules) {
        for y in b.rect.y..b.rect.y + b.rect.height {
            for x in b.rect.x..b.rect.x + b.rect.width {
                let at = b.component as usize * w * h + y * w + x;
                let want = if r.q16 == quant::UNIT_STEP && r.shift == 0 {
                    data[at]
                } else {
                    quant::dequantize_i32(data[at], r.shift, r.q16, r.half)
                };
                assert_eq!(
                    got[at], want,
                    "{} shift {} q16 {} half {}",
                    data[at], r.shift, r.q16, r.half
                );
            }
        }
    }
}

/// The decoder's colour stage on planes holding anything (what a hostile
/// file can decode to): gain, inverse RCT/ICT, shift out, clamp and
/// packing on the device give the host's samples, for every colour
/// transform, 1..=16 bits, signed or not, with and without fractional
/// bits and the reduced 9/7's gain.
#[test]
fn gpu_colour_inverse_equals_the_host_stage() {
    let gpu = gpu();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let base = image(&mut rng, 9, 7, 3, 8, false);
    let Plan { header, .. } = plan(&base.shape(), &EncodeOptions::bpp(2.0)).unwrap();
    for case in 0..18 {
        let mut hd = header.clone();
        hd.components = [1, 3, 4][case % 3];
        hd.colour = [
            ColourTransform::None,
            ColourTransform::Rct,
            ColourTransform::Ict,
        ][case / 3 % 3];
        hd.bit_depth = [1, 7, 8, 9, 12, 16][case % 6];
        hd.signed = case % 4 == 3;
        hd.fraction_bits = [0, 4, 2][case % 3];
        let (w, h) = (rng.random_range(1..=37), rng.random_range(1..=21));
        let len = w * h;
        let comps = hd.components as usize;
        let data: Vec<i32> = (0..len * comps)
            .map(|i| match i % 4 {
                0 => rng.random(),
                1 => [i32::MIN, i32::MAX, 0, -1][rng.random_range(0..4)],
                _ => rng.random_range(-70_000..70_000),
            })
            .collect();
        // The reduced 9/7's gains K^(-2k) lie in (0, 1).
        let gain = (case % 2 == 1).then(|| rng.random_range(0.01..1.0f64));
        let mut planes: Vec<Vec<i32>> = data.chunks_exact(len).map(|p| p.to_vec()).collect();
        if let Some(scale) = gain {
            planes
                .iter_mut()
                .flatten()
                .for_each(|v| *v = (*v as f64 * scale).round() as i32);
        }
        let want_inter =
            colour_stage::inverse_interleaved(Resident::Host(planes.clone()), &hd, (w, h)).unwrap();
        let want = colour_stage::inverse(Resident::Host(planes), &hd).unwrap();
        assert_eq!(want_inter.to_image().planes, want, "case {case}");
        let on_device = || {
            let mut dev = upload(&gpu, &data, len, comps).unwrap();
            dev.gain = gain;
            Resident::Device(dev)
        };
        assert!(
            has_float64(&gpu),
            "lavapipe has f64: the gain shader must be tested"
        );
        let got = colour_stage::inverse(on_device(), &hd).unwrap();
        let got_inter = colour_stage::inverse_interleaved(on_device(), &hd, (w, h)).unwrap();
        let what = format!(
            "case {case}: {:?} {}-bit signed={} fraction {} gain {gain:?}",
            hd.colour, hd.bit_depth, hd.signed, hd.fraction_bits
        );
        assert!(got == want, "{what}");
        assert!(got_inter == want_inter, "{what}, interleaved");
    }
}

/// The table fit's counts of blocks on the device planes
/// (`Formed::count_symbols`, the counting build of the encoder) equal the
/// host's of the same indices, for a sample and for the passes through a
/// bitplane, in both modes; and they are counted on the device, so the
/// planes never come down.
#[test]
fn gpu_symbol_counts_on_device_planes_equal_the_hosts_without_downloading_them() {
    use crate::bpc::train::{sampled, BlockSymbols};
    use crate::codec::stages::codeblocks::form;
    use wavelane_core::bpc::{Mode, PassKind};
    let gpu = gpu();
    let backend = Backend::Gpu(gpu.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let (w, h, comps) = (150, 97, 3);
    let img = image(&mut rng, w, h, comps, 8, false);
    let Plan { header, .. } = plan(&img.shape(), &EncodeOptions::lossless()).unwrap();
    let blocks = codeblocks(w, h, comps, 3, 32);
    // Sparse indices of mixed magnitudes, as quantization leaves them.
    let data: Vec<i32> = (0..w * h * comps)
        .map(|_| match rng.random_range(0..4) {
            0 => 0,
            1 => rng.random_range(-3..=3),
            _ => rng.random_range(-900..=900),
        })
        .collect();
    let planes = upload(&gpu, &data, w * h, comps).unwrap();
    let mut on_device = form(&backend, &header, &blocks, Resident::Device(planes)).unwrap();
    assert!(
        on_device.device().is_some(),
        "the planes bind: the device route"
    );
    let mut on_host = form(&Backend::Cpu, &header, &blocks, Resident::Host(data)).unwrap();
    let n = blocks.len();
    let selections = [
        (0..n)
            .map(|i| match sampled(i, 3) {
                true => BlockSymbols::All,
                false => BlockSymbols::None,
            })
            .collect::<Vec<_>>(),
        (0..n)
            .map(|i| BlockSymbols::Through {
                kind: [
                    PassKind::Significance,
                    PassKind::Refinement,
                    PassKind::Cleanup,
                ][i % 3],
                bitplane: (i % 9) as u8,
            })
            .collect(),
    ];
    for mode in [Mode::TwoPass, Mode::ThreePass] {
        for which in &selections {
            let got = on_device.count_symbols(mode, which).unwrap();
            let want = on_host.count_symbols(mode, which).unwrap();
            assert!(want.symbols() > 0);
            assert!(got == want, "{mode:?}: the device's counts differ");
        }
    }
    assert!(
        !on_device.has_host(),
        "the device's indices were downloaded to count them"
    );
}
