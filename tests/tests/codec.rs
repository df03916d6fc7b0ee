//! The image codec end to end (issue 5): lossless round trips at every bit
//! depth, odd and tiny sizes, rate control accuracy, lossy quality bounds,
//! progressive decoding (--reduce, --layers, truncated prefixes), corrupt
//! files, and CPU = GPU.

use rand::{Rng, RngCore};
use wavelane::backend::Backend;
use wavelane::codec::file::{Container, ReadOptions};
use wavelane::codec::{
    self, progressive, CodecError, DecodeOptions, EncodeOptions, FormatError, Image, RateTarget,
};
use wavelane_cli::demo::demo_image;
use wavelane_core::dwt::{level_size, Wavelet};
use wavelane_tests::{assert_same, for_random_cases, gpu, TestRng};

/// A random image: a smooth ramp plus noise of random strength (so both
/// well-compressing and incompressible content occur), every sample in range.
fn random_image(rng: &mut TestRng, w: usize, h: usize, comps: usize, bits: u8) -> Image {
    let max = (1i64 << bits) - 1;
    let noise = 1i64 << rng.random_range(0..=bits as u32);
    let phase: Vec<i64> = (0..comps).map(|_| rng.random_range(0..=max)).collect();
    let mut image = Image::from_fn(w, h, comps, bits, |_, _, _| 0);
    for (c, plane) in image.planes.iter_mut().enumerate() {
        for (i, v) in plane.iter_mut().enumerate() {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let ramp = (phase[c] + (x * 3 + y * 5) * (max / 64 + 1)) % (max + 1);
            let n = rng.random_range(0..noise) - noise / 2;
            *v = (ramp + n).clamp(0, max) as i32;
        }
    }
    image
}

fn decode_all(bytes: &[u8]) -> Result<Image, CodecError> {
    Ok(codec::decode(bytes, &DecodeOptions::default(), &Backend::Cpu)?.image)
}

/// A 128x96 crop of the demo photograph (real content, small enough for
/// debug builds).
fn photo_crop(w: usize, h: usize) -> Image {
    let full = demo_image();
    let mut planes = Vec::new();
    for p in &full.planes {
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            let row = (y + 100) * full.width + 120;
            out.extend_from_slice(&p[row..row + w]);
        }
        planes.push(out);
    }
    Image {
        width: w,
        height: h,
        planes,
        ..full
    }
}

#[test]
fn lossless_round_trip_is_bit_exact_for_every_bit_depth_gray_and_rgb() {
    for_random_cases("lossless bit depths", 2, |rng| {
        for bits in 1..=16u8 {
            for comps in [1usize, 3] {
                let (w, h) = (rng.random_range(1..=70), rng.random_range(1..=50));
                let image = random_image(rng, w, h, comps, bits);
                let encoded = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu)
                    .unwrap_or_else(|e| panic!("{bits}-bit {comps}x{w}x{h}: {e}"));
                let back = decode_all(&encoded.bytes).unwrap();
                assert_eq!(back, image, "{bits}-bit, {comps} components, {w}x{h}");
            }
        }
    });
}

#[test]
fn lossless_round_trip_of_two_and_four_components_and_signed_samples() {
    for_random_cases("lossless components", 3, |rng| {
        for comps in [2usize, 4] {
            let bits = rng.random_range(1..=16);
            let image = random_image(rng, 33, 17, comps, bits);
            let encoded = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu).unwrap();
            assert_eq!(decode_all(&encoded.bytes).unwrap(), image);
        }
        let bits = rng.random_range(2..=16u8);
        let mut image = random_image(rng, 29, 23, 1, bits);
        image.signed = true;
        for v in &mut image.planes[0] {
            *v -= 1 << (bits - 1);
        }
        let encoded = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu).unwrap();
        assert_eq!(
            decode_all(&encoded.bytes).unwrap(),
            image,
            "signed {bits}-bit"
        );
    });
}

/// Lossy files default to the tallest codeblocks (fewer blocks cut by rate
/// control), lossless ones to 64 rows; an explicit height wins either way.
#[test]
fn codeblock_height_defaults_follow_the_target() {
    let image = photo_crop(64, 48);
    let height = |options: EncodeOptions| {
        let bytes = codec::encode(&image, &options, &Backend::Cpu)
            .unwrap()
            .bytes;
        decode_all(&bytes).unwrap();
        Container::parse(&bytes, ReadOptions::default())
            .unwrap()
            .header
            .codeblock_height
    };
    assert_eq!(
        height(EncodeOptions::lossless()),
        codec::LOSSLESS_CODEBLOCK_HEIGHT
    );
    assert_eq!(
        height(EncodeOptions::bpp(1.0)),
        codec::LOSSY_CODEBLOCK_HEIGHT
    );
    assert_eq!(codec::LOSSY_CODEBLOCK_HEIGHT, 256);
    for (target, rows) in [(RateTarget::Lossless, 32), (RateTarget::Bpp(1.0), 64)] {
        let options = EncodeOptions {
            target,
            codeblock_height: Some(rows),
            ..EncodeOptions::default()
        };
        assert_eq!(height(options), rows);
    }
}

#[test]
fn tiny_and_odd_sizes_round_trip_lossless_and_decode_lossy() {
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(5);
    for (w, h) in [
        (1, 1),
        (1, 2),
        (2, 1),
        (1, 37),
        (37, 1),
        (2, 2),
        (3, 5),
        (65, 3),
        (129, 1),
        (1, 257),
    ] {
        for comps in [1, 3] {
            let image = random_image(&mut rng, w, h, comps, 8);
            let lossless = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu)
                .unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
            assert_eq!(decode_all(&lossless.bytes).unwrap(), image, "{w}x{h}");
            let lossy = codec::encode(&image, &EncodeOptions::bpp(2.0), &Backend::Cpu)
                .unwrap_or_else(|e| panic!("{w}x{h} lossy: {e}"));
            let back = decode_all(&lossy.bytes).unwrap();
            assert_eq!((back.width, back.height), (w, h));
            assert_eq!(back.planes.len(), comps);
        }
    }
}

/// Rate control fills a `--bpp` budget to within 0.5% (never above it) on
/// real content, for one and several layers.
#[test]
fn rate_control_hits_the_bpp_target_within_half_a_percent() {
    let image = photo_crop(128, 96);
    let pixels = (image.width * image.height) as f64;
    for layers in [1u8, 3] {
        for bpp in [0.25, 0.5, 1.0, 2.0, 4.0] {
            let opts = EncodeOptions {
                target: RateTarget::Bpp(bpp),
                layers,
                ..EncodeOptions::default()
            };
            let encoded = codec::encode(&image, &opts, &Backend::Cpu).unwrap();
            let got = encoded.bytes.len() as f64 * 8.0 / pixels;
            assert!(
                got <= bpp && got >= bpp * 0.995,
                "{layers} layers, --bpp {bpp}: file is {got:.4} bpp"
            );
            decode_all(&encoded.bytes).unwrap();
        }
    }
}

/// Documented lossy quality (docs/perf/codec.md): on the demo crop the
/// PSNR rises with the rate and exceeds these floors.
#[test]
fn lossy_psnr_rises_with_rate_and_meets_documented_floors() {
    let image = photo_crop(128, 96);
    let mut last = 0.0;
    for (bpp, floor) in [(0.5, 28.0), (1.0, 32.0), (2.0, 36.5), (4.0, 41.0)] {
        let encoded = codec::encode(&image, &EncodeOptions::bpp(bpp), &Backend::Cpu).unwrap();
        let psnr = codec::psnr(&image, &decode_all(&encoded.bytes).unwrap()).unwrap();
        assert!(psnr >= floor, "--bpp {bpp}: PSNR {psnr:.2} dB < {floor}");
        assert!(
            psnr > last,
            "--bpp {bpp}: PSNR {psnr:.2} not above {last:.2}"
        );
        last = psnr;
    }
}

/// A `--psnr` target is a floor (docs/codec.md, "Targets and layers"):
/// the decoded file reaches it, and the report says what it measured.
#[test]
fn psnr_target_is_reached() {
    for (w, h) in [(96, 64), (64, 48)] {
        let image = photo_crop(w, h);
        for target in [30.0, 36.0, 42.0, 46.0] {
            let opts = EncodeOptions {
                target: RateTarget::Psnr(target),
                ..EncodeOptions::default()
            };
            let encoded = codec::encode(&image, &opts, &Backend::Cpu).unwrap();
            let psnr = codec::psnr(&image, &decode_all(&encoded.bytes).unwrap()).unwrap();
            assert!(psnr >= target, "{w}x{h} --psnr {target}: got {psnr:.3}");
            assert_eq!(encoded.report.measured_psnr, Some(psnr));
        }
    }
}

/// The 5/3 codes at step 1: a base step for it is refused rather than
/// silently ignored (the step it uses anyway is accepted).
#[test]
fn a_base_step_on_the_53_is_an_options_error() {
    let image = photo_crop(64, 48);
    let with_step = |step: f64| EncodeOptions {
        wavelet: Some(Wavelet::Cdf53),
        base_step: Some(step),
        ..EncodeOptions::bpp(1.0)
    };
    let e = codec::encode(&image, &with_step(4.0), &Backend::Cpu).unwrap_err();
    assert!(
        matches!(e, CodecError::Options(codec::OptionsError::StepOn53)),
        "{e:?}"
    );
    codec::encode(&image, &with_step(1.0), &Backend::Cpu).unwrap();
}

/// Every prefix that holds the main header decodes to an image of the right
/// size; shorter prefixes give a typed truncation error.
#[test]
fn truncated_prefixes_decode_to_valid_images() {
    let image = photo_crop(64, 48);
    let opts = EncodeOptions {
        target: RateTarget::Bpp(2.0),
        layers: 3,
        ..EncodeOptions::default()
    };
    let bytes = codec::encode(&image, &opts, &Backend::Cpu).unwrap().bytes;
    let header_len = progressive::header_len_from_prefix(&bytes).unwrap() as usize;
    assert!(header_len < bytes.len());
    let full = decode_all(&bytes).unwrap();
    let full_psnr = codec::psnr(&image, &full).unwrap();
    for cut in (header_len..bytes.len()).step_by(7) {
        let d = codec::decode(&bytes[..cut], &DecodeOptions::default(), &Backend::Cpu)
            .unwrap_or_else(|e| panic!("prefix of {cut} bytes: {e}"));
        assert!(d.report.truncated);
        assert_eq!((d.image.width, d.image.height), (64, 48));
        assert!(d.image.validate().is_ok());
        assert!(codec::psnr(&image, &d.image).unwrap() <= full_psnr + 1e-9);
    }
    for cut in [0, 5, 14, header_len - 1] {
        match decode_all(&bytes[..cut]) {
            Err(CodecError::Format(FormatError::Truncated { .. })) => {}
            other => panic!("prefix of {cut} bytes: {other:?}"),
        }
    }
}

/// The image `--reduce k` must give for a lossless 5/3 file of an 8-bit
/// RGB `image`: level shift, forward RCT (docs/format.md, colour transform
/// 1), k levels of wavelane-core's 5/3 per component, the LL band, inverse
/// RCT, shift back, clamped to the sample range.
fn reduced_53_reference(image: &Image, k: u32) -> Image {
    use wavelane_core::dwt::{forward_2d, Cdf53, ImageLayout};
    let (w, h) = (image.width, image.height);
    assert_eq!((image.planes.len(), image.bit_depth), (3, 8));
    let px = |c: usize, i: usize| image.planes[c][i] - 128;
    let mut planes: Vec<Vec<i32>> = vec![Vec::new(); 3];
    for i in 0..w * h {
        let (r, g, b) = (px(0, i), px(1, i), px(2, i));
        planes[0].push((r + 2 * g + b) >> 2);
        planes[1].push(b - g);
        planes[2].push(r - g);
    }
    let (lw, lh) = level_size(w, h, k);
    let mut scratch = vec![0i32; w.max(h)];
    let ll: Vec<Vec<i32>> = planes
        .into_iter()
        .map(|mut p| {
            forward_2d::<Cdf53>(&mut p, ImageLayout::new(w, h), k, &mut scratch).unwrap();
            (0..lh)
                .flat_map(|y| p[y * w..y * w + lw].to_vec())
                .collect()
        })
        .collect();
    let mut out: Vec<Vec<i32>> = vec![Vec::new(); 3];
    for ((&y, &u), &v) in ll[0].iter().zip(&ll[1]).zip(&ll[2]) {
        let g = y - ((u + v) >> 2);
        for (c, s) in [v + g, g, u + g].into_iter().enumerate() {
            out[c].push((s + 128).clamp(0, 255));
        }
    }
    Image {
        width: lw,
        height: lh,
        planes: out,
        ..image.clone()
    }
}

/// `--reduce k` gives the LL image of level k, and needs only a prefix of
/// the file; `--layers n` decodes the first n layers with rising quality.
#[test]
fn reduce_and_layers_read_only_what_they_need() {
    let image = photo_crop(100, 70);
    for wavelet in [Wavelet::Cdf53, Wavelet::Fixed97, Wavelet::Cdf97] {
        let opts = EncodeOptions {
            target: if wavelet == Wavelet::Cdf53 {
                RateTarget::Lossless
            } else {
                RateTarget::Bpp(3.0)
            },
            wavelet: Some(wavelet),
            levels: Some(3),
            layers: 4,
            ..EncodeOptions::default()
        };
        let bytes = codec::encode(&image, &opts, &Backend::Cpu).unwrap().bytes;
        let c = Container::parse(&bytes, ReadOptions::default()).unwrap();
        for k in 0..=3u8 {
            let opts = DecodeOptions {
                reduce: k,
                ..DecodeOptions::default()
            };
            let whole = codec::decode(&bytes, &opts, &Backend::Cpu).unwrap();
            assert_eq!(
                (whole.image.width, whole.image.height),
                level_size(100, 70, k as u32)
            );
            let prefix = progressive::prefix_len(&c, k) as usize;
            let part = codec::decode(&bytes[..prefix], &opts, &Backend::Cpu).unwrap();
            assert_eq!(part.image, whole.image, "{wavelet:?} --reduce {k}");
            if k > 0 {
                assert!(prefix < bytes.len());
            }
            if wavelet == Wavelet::Cdf53 {
                // Lossless: exactly the LL band of an independent k-level
                // transform (level shift, RCT, core 5/3, inverse RCT).
                assert!(
                    whole.image == reduced_53_reference(&image, k as u32),
                    "--reduce {k}: not the LL band of the 5/3"
                );
            }
        }
        let mut last = 0.0;
        for n in 1..=4u8 {
            let opts = DecodeOptions {
                layers: Some(n),
                ..DecodeOptions::default()
            };
            let d = codec::decode(&bytes, &opts, &Backend::Cpu).unwrap();
            let psnr = codec::psnr(&image, &d.image).unwrap_or(f64::INFINITY);
            assert!(psnr > last, "{wavelet:?} layers {n}: {psnr} <= {last}");
            last = psnr;
        }
        if wavelet == Wavelet::Cdf53 {
            assert!(
                last.is_infinite(),
                "all layers of a lossless file are exact"
            );
        }
    }
}

/// Any single corrupted byte is detected (CRC or field check); random
/// damage, also with CRCs off, gives errors or images, never a panic.
#[test]
fn corrupted_files_give_errors_never_panics() {
    let image = photo_crop(48, 40);
    let opts = EncodeOptions {
        target: RateTarget::Bpp(2.0),
        layers: 2,
        ..EncodeOptions::default()
    };
    let bytes = codec::encode(&image, &opts, &Backend::Cpu).unwrap().bytes;
    for i in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[i] ^= 0x10;
        assert!(
            decode_all(&bad).is_err(),
            "flipped bit in byte {i} went unnoticed"
        );
    }
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(matches!(
        decode_all(&extra),
        Err(CodecError::Format(FormatError::TrailingData(1)))
    ));
    let mut version = bytes.clone();
    version[8] = 99;
    assert!(matches!(
        decode_all(&version),
        Err(CodecError::Format(FormatError::UnsupportedVersion(99)))
    ));
    let unchecked = DecodeOptions {
        read: ReadOptions {
            check_crc: false,
            ..ReadOptions::default()
        },
        ..DecodeOptions::default()
    };
    for_random_cases("corrupt .wl", 300, |rng| {
        let mut bad = bytes.clone();
        for _ in 0..rng.random_range(1..=4) {
            let i = rng.random_range(0..bad.len());
            bad[i] = rng.next_u32() as u8;
        }
        if rng.random_bool(0.2) {
            bad.truncate(rng.random_range(0..bad.len()));
        }
        if let Ok(d) = codec::decode(&bad, &unchecked, &Backend::Cpu) {
            assert!(d.image.width * d.image.height > 0);
        }
    });
}

/// A header that claims a huge image is refused before anything is
/// allocated.
#[test]
fn memory_budget_is_enforced() {
    let image = photo_crop(40, 30);
    let bytes = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu)
        .unwrap()
        .bytes;
    let opts = DecodeOptions {
        read: ReadOptions {
            max_samples: 1000,
            ..ReadOptions::default()
        },
        ..DecodeOptions::default()
    };
    assert!(matches!(
        codec::decode(&bytes, &opts, &Backend::Cpu),
        Err(CodecError::Format(FormatError::TooLarge { .. }))
    ));
}

/// The GPU backend writes the same files as the CPU backend (lossless 5/3,
/// whose codeblocks it codes on the GPU, in three and two passes and at 16
/// bits; fixed-point 9/7 with layers, three passes and early termination)
/// and decodes them to the same images. Small, because lavapipe at subgroup
/// size 4 is slow.
#[test]
fn gpu_encodes_and_decodes_the_same_bytes_as_the_cpu() {
    let gpu = Backend::Gpu(gpu());
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(11);
    let image = random_image(&mut rng, 77, 41, 3, 12);
    let deep = random_image(&mut rng, 70, 66, 1, 16);
    let cpu_file = codec::encode(&deep, &EncodeOptions::lossless(), &Backend::Cpu)
        .unwrap()
        .bytes;
    let gpu_file = codec::encode(&deep, &EncodeOptions::lossless(), &gpu)
        .unwrap()
        .bytes;
    assert_same("16-bit gray file", &cpu_file, &gpu_file);
    for (opts, reduce) in [
        (EncodeOptions::lossless(), 0),
        (
            EncodeOptions {
                passes: 2,
                ..EncodeOptions::lossless()
            },
            0,
        ),
        (
            EncodeOptions {
                target: RateTarget::Bpp(2.0),
                levels: Some(3),
                layers: 3,
                passes: 3,
                early_termination: true,
                ..EncodeOptions::default()
            },
            1,
        ),
    ] {
        let cpu_file = codec::encode(&image, &opts, &Backend::Cpu).unwrap().bytes;
        let gpu_file = codec::encode(&image, &opts, &gpu).unwrap().bytes;
        assert_same("file", &cpu_file, &gpu_file);
        let d = DecodeOptions {
            reduce,
            ..DecodeOptions::default()
        };
        let c = codec::decode(&cpu_file, &d, &Backend::Cpu).unwrap().image;
        let g = codec::decode(&cpu_file, &d, &gpu).unwrap().image;
        assert_eq!(c, g, "decode, --reduce {reduce}");
    }
}

/// `encode_owned` reuses the image's planes for the transform: the file must
/// be `encode`'s, for every component count, bit depth, signedness and
/// target (a PSNR target keeps the image to measure against).
#[test]
fn encode_owned_writes_the_same_file_as_encode() {
    for_random_cases("encode_owned", 12, |rng| {
        let comps = [1, 3, 4][rng.random_range(0..3)];
        let bits = rng.random_range(1..=16u8);
        let (w, h) = (rng.random_range(1..=70), rng.random_range(1..=70));
        let mut image = random_image(rng, w, h, comps, bits);
        if rng.random_range(0..2) == 1 {
            let half = 1i32 << (bits - 1);
            image.planes.iter_mut().flatten().for_each(|v| *v -= half);
            image.signed = true;
        }
        let options = match rng.random_range(0..3) {
            0 => EncodeOptions::lossless(),
            1 => EncodeOptions::bpp(1.0),
            _ => EncodeOptions {
                target: RateTarget::Psnr(30.0),
                ..EncodeOptions::lossless()
            },
        };
        let borrowed = codec::encode(&image, &options, &Backend::Cpu)
            .unwrap()
            .bytes;
        let owned = codec::encode_owned(image, &options, &Backend::Cpu)
            .unwrap()
            .bytes;
        let what = format!("{w}x{h}x{comps} {bits}-bit {:?}", options.target);
        assert_same(&what, &borrowed, &owned);
    });
}
