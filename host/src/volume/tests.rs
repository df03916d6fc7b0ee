//! Round trips, rate targets, slice ranges and hostile files of the
//! volume codec on the CPU backend (the GPU's byte equality is checked in
//! `tests/tests/volume_gpu.rs`).

use super::*;
use crate::backend::Backend;

/// A smooth volume with texture and, for signed types, negative values
/// down to the type's minimum (CT air is -1024 HU; i16 reaches -32768).
fn phantom(w: usize, h: usize, d: usize, t: SampleType) -> Volume {
    let (lo, hi) = t.range();
    let span = (hi - lo) as f64;
    Volume::from_fn(w, h, d, t, |x, y, z| {
        let (fx, fy, fz) = (
            x as f64 / w as f64,
            y as f64 / h as f64,
            z as f64 / d as f64,
        );
        let r = ((fx - 0.5).powi(2) + (fy - 0.5).powi(2) + (fz - 0.5).powi(2)).sqrt();
        let base = if r < 0.35 { 0.7 } else { 0.2 } + 0.1 * (fx * 9.0 + fz * 5.0).sin();
        let noise = ((x * 7919 + y * 104_729 + z * 1_299_709) % 97) as f64 / 97.0 - 0.5;
        let v = lo as f64 + span * (base + 0.02 * noise).clamp(0.0, 1.0);
        if (x + y + z) % 53 == 0 {
            lo // extremes survive exactly
        } else {
            v.round() as i32
        }
    })
}

fn volume_psnr(a: &Volume, b: &Volume) -> f64 {
    let peak = (a.sample.range().1 - a.sample.range().0) as f64;
    let mse: f64 = a
        .samples
        .iter()
        .zip(&b.samples)
        .map(|(&x, &y)| ((x - y) as f64).powi(2))
        .sum::<f64>()
        / a.samples.len() as f64;
    10.0 * (peak * peak / mse.max(1e-12)).log10()
}

#[test]
fn lossless_round_trips_every_sample_type_and_level_choice() {
    for t in [
        SampleType::U8,
        SampleType::I8,
        SampleType::U16,
        SampleType::I16,
    ] {
        for (dims, levels) in [
            ([33, 20, 17], None),
            ([40, 9, 1], None),
            ([70, 5, 2], Some([2, 1, 1])),
            ([16, 16, 40], Some([0, 0, 5])),
            ([9, 7, 6], Some([0, 0, 0])),
        ] {
            let v = phantom(dims[0], dims[1], dims[2], t);
            let o = VolumeOptions {
                levels,
                ..VolumeOptions::lossless()
            };
            let enc = encode_volume(&v, &o, &Backend::Cpu).unwrap();
            let dec =
                decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu).unwrap();
            assert_eq!(dec.volume, v, "{t:?} {dims:?} {levels:?}");
        }
    }
}

#[test]
fn lossy_targets_are_met_and_layers_refine() {
    let v = phantom(64, 48, 24, SampleType::I16);
    let mut last = 0.0;
    for bpp in [0.25, 0.5, 1.0, 2.0] {
        let enc = encode_volume(&v, &VolumeOptions::bpp(bpp), &Backend::Cpu).unwrap();
        let budget = (bpp * v.voxels() as f64 / 8.0).floor() as usize;
        assert!(
            enc.bytes.len() <= budget,
            "{bpp}: {} > {budget}",
            enc.bytes.len()
        );
        assert!(
            enc.bytes.len() * 100 >= budget * 95,
            "{bpp}: {} of {budget}",
            enc.bytes.len()
        );
        let dec =
            decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu).unwrap();
        let p = volume_psnr(&v, &dec.volume);
        assert!(p > last + 1.0, "{bpp} bpv: {p:.2} dB after {last:.2}");
        last = p;
    }
    let o = VolumeOptions {
        layers: 3,
        ..VolumeOptions::bpp(1.0)
    };
    let enc = encode_volume(&v, &o, &Backend::Cpu).unwrap();
    let mut last = 0.0;
    for n in 1..=3 {
        let opts = VolumeDecodeOptions {
            layers: Some(n),
            ..Default::default()
        };
        let dec = decode_volume(&enc.bytes, &opts, &Backend::Cpu).unwrap();
        let p = volume_psnr(&v, &dec.volume);
        assert!(p > last, "layer {n}: {p:.2} after {last:.2}");
        last = p;
    }
}

/// `--slices a..b` gives exactly the slices of a full decode, from fewer
/// codeblocks, on every range of a volume with Z levels, lossless and
/// lossy.
#[test]
fn slice_ranges_decode_exactly_the_full_decodes_slices() {
    let v = phantom(20, 12, 19, SampleType::U16);
    for o in [
        VolumeOptions {
            levels: Some([2, 2, 3]),
            codeblock_height: Some(4),
            ..VolumeOptions::lossless()
        },
        VolumeOptions {
            levels: Some([1, 2, 4]),
            codeblock_height: Some(4),
            ..VolumeOptions::bpp(2.0)
        },
    ] {
        let enc = encode_volume(&v, &o, &Backend::Cpu).unwrap();
        let full =
            decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu).unwrap();
        let plane = v.width * v.height;
        let mut fewer = false;
        for a in 0..v.depth {
            for b in a..v.depth {
                let opts = VolumeDecodeOptions {
                    slices: Some((a, b)),
                    ..Default::default()
                };
                let part = decode_volume(&enc.bytes, &opts, &Backend::Cpu).unwrap();
                assert_eq!(part.volume.depth, b - a + 1);
                assert_eq!(
                    part.volume.samples,
                    full.volume.samples[a * plane..(b + 1) * plane],
                    "slices {a}..={b} of {:?}",
                    o.target
                );
                fewer |= part.report.blocks_decoded < part.report.blocks_total;
            }
        }
        assert!(fewer, "some range must skip codeblocks");
        let bad = VolumeDecodeOptions {
            slices: Some((3, v.depth)),
            ..Default::default()
        };
        assert!(decode_volume(&enc.bytes, &bad, &Backend::Cpu).is_err());
    }
}

#[test]
fn nifti_header_survives_encode_and_decode() {
    let mut v = phantom(10, 8, 6, SampleType::I16);
    let mut nii = Vec::new();
    io::nifti::write(&v, &mut nii).unwrap();
    let mut h = nii[..io::nifti::HEADER_LEN].to_vec();
    h[80..84].copy_from_slice(&0.75f32.to_le_bytes());
    h[88..92].copy_from_slice(&3.0f32.to_le_bytes());
    h[252..254].copy_from_slice(&1i16.to_le_bytes());
    v.nifti_header = Some(h.clone());
    let enc = encode_volume(&v, &VolumeOptions::lossless(), &Backend::Cpu).unwrap();
    let dec = decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu).unwrap();
    assert_eq!(dec.volume.nifti_header.as_deref(), Some(&h[..]));
    let mut out = Vec::new();
    io::nifti::write(&dec.volume, &mut out).unwrap();
    let back = io::nifti::read(&out[..], 1 << 20).unwrap();
    assert_eq!(back, v);
}

/// Every truncation and many single-byte changes of a file are typed
/// errors or decode, never a panic; the header CRC catches header changes.
#[test]
fn damaged_files_are_errors_not_panics() {
    let v = phantom(24, 10, 9, SampleType::U8);
    let o = VolumeOptions {
        layers: 2,
        ..VolumeOptions::bpp(3.0)
    };
    let bytes = encode_volume(&v, &o, &Backend::Cpu).unwrap().bytes;
    let opts = VolumeDecodeOptions::default();
    for cut in 0..bytes.len() {
        assert!(
            decode_volume(&bytes[..cut], &opts, &Backend::Cpu).is_err(),
            "cut {cut}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(decode_volume(&longer, &opts, &Backend::Cpu).is_err());
    for i in (0..bytes.len()).step_by(7) {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        // A changed data byte fails its segment's CRC; a header byte the
        // header CRC.
        assert!(decode_volume(&b, &opts, &Backend::Cpu).is_err(), "byte {i}");
    }
    // Budget: the voxel count is checked before anything is allocated.
    let tight = VolumeDecodeOptions {
        max_voxels: v.voxels() as u64 - 1,
        ..Default::default()
    };
    assert!(matches!(
        decode_volume(&bytes, &tight, &Backend::Cpu),
        Err(VolumeError::Format(
            crate::codec::FormatError::TooLarge { .. }
        ))
    ));
}

/// A CT-like i16 volume spans 12 bits, not 16: the default step follows
/// the span, so a rate target is met instead of every pass fitting far
/// below it.
#[test]
fn a_twelve_bit_volume_in_i16_meets_its_rate() {
    let v = Volume::from_fn(48, 40, 16, SampleType::I16, |x, y, z| {
        let n = ((x * 7919 + y * 104_729 + z * 1_299_709) % 61) as i32 - 30;
        -1024 + ((x * 37 + y * 23 + z * 51) % 4000) as i32 + n
    });
    for bpp in [1.0, 2.0] {
        let enc = encode_volume(&v, &VolumeOptions::bpp(bpp), &Backend::Cpu).unwrap();
        let budget = (bpp * v.voxels() as f64 / 8.0).floor() as usize;
        assert!(
            enc.bytes.len() * 100 >= budget * 95 && enc.bytes.len() <= budget,
            "{bpp} bits/voxel: {} bytes of {budget}",
            enc.bytes.len()
        );
    }
}
