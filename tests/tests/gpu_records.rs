//! The GPU encoder's rate-control records (`bpc::gpu::records`): pass
//! records and candidate cuts (`bpc::cuts`) equal to the CPU driver's, integer for
//! integer, on random codeblocks (2 and 3 passes, every shape, tables
//! shifted as for early termination, empty and 16-bit-deep blocks, sums at
//! the edge of the 64-bit bound and the CPU fallback past it) and on real
//! codeblocks; and `.wl` files that the GPU backend codes with them
//! (`--bpp`, `--psnr`, `--layers 3`, early termination) byte-identical to
//! the CPU backend's.
//!
//! GPU tests (names contain `gpu`) run on lavapipe here; scripts/test.sh
//! reruns them at subgroup sizes 4 and 16.

mod bpc_common;

use bpc_common::{random_batch, random_tables, sample_subset};
use rand::Rng;
use wavelane::backend::Backend;
use wavelane::bpc::{cpu, gpu, BlockDesc, CodeblockBatch};
use wavelane::codec::{self, EncodeOptions, Image, RateTarget};
use wavelane_core::bpc::{GroupTables, Mode, ProbabilityTables, GROUPS, TABLE_BITPLANES};
use wavelane_core::dwt::Wavelet;
use wavelane_tests::{for_random_cases, gpu as test_gpu, TestRng};

const MODES: [Mode; 2] = [Mode::TwoPass, Mode::ThreePass];

/// The GPU, which must be able to write the records (else every check
/// below would compare the CPU with itself through the fallback).
fn records_gpu() -> std::sync::Arc<wavelane::backend::Gpu> {
    let g = test_gpu();
    if let Some(why) = gpu::records_unsupported(&g) {
        panic!("this GPU cannot write the records: {why}");
    }
    g
}

/// GPU codewords, records and candidate cuts equal the CPU's for `batch`; returns how
/// many coded codeblocks had their records summed on the device.
fn assert_gpu_records_equal(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    what: &str,
) -> usize {
    let g = records_gpu();
    let (cpu_enc, (cpu_records, cpu_cuts)) = cpu::encode_with_cuts(batch, tables).unwrap();
    let (gpu_enc, (gpu_records, gpu_cuts), _) = gpu::encode_with_cuts(&g, batch, tables).unwrap();
    assert_eq!(gpu_enc, cpu_enc, "{what}: codewords");
    assert_eq!(gpu_records.len(), batch.len(), "{what}: record lists");
    assert_eq!(gpu_cuts.len(), batch.len(), "{what}: cut lists");
    for b in 0..batch.len() {
        assert_eq!(
            gpu_records[b], cpu_records[b],
            "{what}: records of codeblock {b}"
        );
        assert_eq!(
            gpu_cuts[b], cpu_cuts[b],
            "{what}: candidate cuts of codeblock {b}"
        );
    }
    let (enc, records, _) = gpu::encode_with_records(&g, batch, tables).unwrap();
    assert_eq!(enc, cpu_enc, "{what}: codewords (records only)");
    assert_eq!(records, cpu_records, "{what}: records (records only)");
    (0..batch.len())
        .filter(|&b| {
            let d = batch.blocks[b];
            cpu_enc.tops[b].is_some() && gpu::records_fit(d.width, d.height, cpu_enc.tops[b])
        })
        .count()
}

fn tables_of(mode: Mode, rng: &mut TestRng) -> ProbabilityTables {
    loop {
        let t = random_tables(rng);
        if t.mode() == mode {
            return t;
        }
    }
}

#[test]
fn gpu_records_and_cuts_equal_the_cpus_on_random_blocks() {
    for_random_cases("GPU records, random blocks", 2, |rng| {
        for mode in MODES {
            let (batch, _) = random_batch(rng, 24, 96);
            let tables = tables_of(mode, rng);
            let on_device = assert_gpu_records_equal(&batch, &tables, &format!("{mode:?}"));
            assert!(on_device > 0, "no codeblock was summed on the device");
        }
    });
}

/// `tables` with every row moved down by `shift` bitplanes, as the codec
/// codes a codeblock whose lowest `shift` bitplanes early termination
/// dropped (codec::stages::entropy::shifted_tables).
fn shifted(tables: &ProbabilityTables, shift: usize) -> ProbabilityTables {
    let mut groups: [GroupTables; GROUPS] = tables.groups().clone();
    for (g, src) in groups.iter_mut().zip(tables.groups()) {
        *g = GroupTables::UNIFORM;
        for j in 0..TABLE_BITPLANES - shift {
            g.sig[j] = src.sig[j + shift];
            g.sign[j] = src.sign[j + shift];
            g.refine[j] = src.refine[j + shift];
            g.cp_sig[j] = src.cp_sig[j + shift];
            g.cp_sign[j] = src.cp_sign[j + shift];
        }
    }
    ProbabilityTables::new(tables.mode(), groups).unwrap()
}

#[test]
fn gpu_records_equal_the_cpus_on_real_codeblocks_and_shifted_tables() {
    let batch = sample_subset(24);
    for mode in MODES {
        let tables = ProbabilityTables::natural_lossless(mode);
        for shift in [0, 1, 3] {
            let what = format!("sample, {mode:?}, tables shifted by {shift}");
            let on_device = assert_gpu_records_equal(&batch, &shifted(tables, shift), &what);
            assert!(
                on_device >= 20,
                "{what}: {on_device} codeblocks on the device"
            );
        }
    }
}

/// A codeblock of `width x height` at `offset` of `coefficients`, filled
/// by `value(y, x)`.
fn push_block(
    batch: &mut CodeblockBatch,
    width: usize,
    height: usize,
    mut value: impl FnMut(usize, usize) -> i32,
) {
    let offset = batch.coefficients.len();
    for y in 0..height {
        for x in 0..width {
            batch.coefficients.push(value(y, x));
        }
    }
    batch.blocks.push(BlockDesc {
        offset,
        stride: width,
        width,
        height,
        group: batch.blocks.len() % GROUPS,
    });
}

fn signed(rng: &mut TestRng, mag: i32) -> i32 {
    if rng.random_bool(0.5) {
        -mag
    } else {
        mag
    }
}

#[test]
fn gpu_records_equal_the_cpus_on_empty_deep_and_bound_edge_blocks() {
    for_random_cases("GPU records, deep blocks", 1, |rng| {
        let mut batch = CodeblockBatch::default();
        // Empty codeblocks (no records, no cuts) between coded ones.
        push_block(&mut batch, 64, 64, |_, _| 0);
        push_block(&mut batch, 7, 3, |_, _| 0);
        push_block(&mut batch, 1, 1, |_, _| -1);
        // 16-bit-deep content: magnitudes of 16, 17 and 18 bits, dense
        // and sparse (what 16-bit samples become after the transform).
        for bits in [16, 17, 18] {
            push_block(&mut batch, 64, 64, |_, _| {
                let mag = rng.random_range(0..1i32 << bits);
                signed(rng, mag)
            });
            push_block(&mut batch, 33, 47, |_, _| {
                let mag = if rng.random_bool(0.05) {
                    rng.random_range(1..1i32 << bits)
                } else {
                    0
                };
                signed(rng, mag)
            });
        }
        // At the 64-bit bound: 64x256 at top bitplane 23 fits (the sums
        // reach 2^61), at 24 it does not and the CPU gives its records;
        // 64x64 fits up to top 24.
        push_block(&mut batch, 64, 256, |_, _| {
            let mag = rng.random_range((1i32 << 23)..(1i32 << 24));
            signed(rng, mag)
        });
        push_block(&mut batch, 64, 256, |_, _| {
            let mag = rng.random_range((1i32 << 24)..(1i32 << 25));
            signed(rng, mag)
        });
        push_block(&mut batch, 64, 64, |_, _| {
            let mag = rng.random_range((1i32 << 24)..(1i32 << 25));
            signed(rng, mag)
        });
        let edge = batch.len() - 3;
        for mode in MODES {
            let tables = ProbabilityTables::natural_lossless(mode);
            let on_device = assert_gpu_records_equal(&batch, tables, &format!("{mode:?}"));
            // Every codeblock but the two empty ones and the one past the bound.
            assert_eq!(on_device, batch.len() - 2 - 1, "{mode:?}");
        }
        let d = |i: usize| batch.blocks[i];
        assert!(gpu::records_fit(d(edge).width, d(edge).height, Some(23)));
        assert!(!gpu::records_fit(
            d(edge + 1).width,
            d(edge + 1).height,
            Some(24)
        ));
        assert!(gpu::records_fit(
            d(edge + 2).width,
            d(edge + 2).height,
            Some(24)
        ));
    });
}

/// The bound of the device's sums: `width * height * (2^(top+1) - 1)^2`
/// below 2^63.
#[test]
fn records_fit_is_the_energy_bound() {
    assert!(gpu::records_fit(64, 256, Some(23)));
    assert!(!gpu::records_fit(64, 256, Some(24)));
    assert!(gpu::records_fit(64, 64, Some(24)));
    assert!(!gpu::records_fit(64, 64, Some(25)));
    assert!(gpu::records_fit(1, 1, Some(27)));
    assert!(gpu::records_fit(64, 256, None));
    // 2 * (2^31 - 1)^2 < 2^63 <= 3 * (2^31 - 1)^2.
    assert!(gpu::records_fit(2, 1, Some(30)));
    assert!(!gpu::records_fit(3, 1, Some(30)));
}

/// A smooth image with noise, `bits` deep.
fn test_image(rng: &mut TestRng, w: usize, h: usize, comps: usize, bits: u8) -> Image {
    let max = (1i32 << bits) - 1;
    let mut image = Image::from_fn(w, h, comps, bits, |x, y, c| {
        ((x * 7 + y * 3 + c * 40) as i32 * (max / 90 + 1)) % (max + 1)
    });
    for v in image.planes.iter_mut().flatten() {
        *v = (*v + rng.random_range(-(max / 16)..=max / 16)).clamp(0, max);
    }
    image
}

#[test]
fn gpu_lossy_and_layered_files_equal_the_cpus() {
    let g = Backend::Gpu(records_gpu());
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(26);
    let images = [
        test_image(&mut rng, 61, 37, 1, 12),
        test_image(&mut rng, 45, 29, 3, 8),
    ];
    // (target, layers, passes, early termination)
    let targets = [
        (RateTarget::Bpp(1.0), 1, 3, false),
        (RateTarget::Bpp(1.0), 1, 2, false),
        (RateTarget::Psnr(38.0), 1, 3, false),
        (RateTarget::Bpp(2.0), 3, 3, false),
        (RateTarget::Bpp(1.5), 1, 3, true),
    ];
    for image in &images {
        for wavelet in [Wavelet::Cdf53, Wavelet::Fixed97] {
            for (target, layers, passes, early_termination) in targets {
                let opts = EncodeOptions {
                    target,
                    wavelet: Some(wavelet),
                    layers,
                    passes,
                    early_termination,
                    ..EncodeOptions::default()
                };
                let what = format!(
                    "{} components, {wavelet:?}, {target:?}, {layers} layers, {passes} passes, early termination {early_termination}",
                    image.planes.len()
                );
                let cpu_file = codec::encode(image, &opts, &Backend::Cpu)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .bytes;
                let gpu_file = codec::encode(image, &opts, &g)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .bytes;
                assert!(cpu_file == gpu_file, "{what}: the GPU file differs");
            }
        }
    }
}
