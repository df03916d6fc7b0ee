//! BPC-PaCo: core sequential = core lanes = CPU backend = GPU, on the
//! reference sample (1024 codeblocks of 64x64) and on random codeblocks of
//! every shape; lossless round trips; truncation; snapshots of the sample's
//! encoding.
//!
//! GPU tests (names contain `gpu`) run on lavapipe here; run them at
//! subgroup sizes 4, 8 and 16 with LP_NATIVE_VECTOR_WIDTH=128/256/512.

mod bpc_common;

use bpc_common::{random_batch, sample, sample_subset};
use wavelane::bpc::{cpu, gpu, CodeblockBatch, EncodedBatch};
use wavelane_core::bpc::{self, DecodeLimits, Mode, ProbabilityTables};
use wavelane_tests::{assert_same, for_random_cases, gpu as test_gpu};

const MODES: [Mode; 2] = [Mode::TwoPass, Mode::ThreePass];

fn cpu_encode(batch: &CodeblockBatch, tables: &ProbabilityTables) -> EncodedBatch {
    cpu::encode(batch, tables, cpu::CoreForm::Sequential).unwrap()
}

#[test]
fn sample_round_trips_losslessly_and_forms_agree() {
    let batch = sample();
    assert_eq!(
        (batch.len(), batch.coefficient_count()),
        (1024, 2048 * 2048)
    );
    for mode in MODES {
        let tables = ProbabilityTables::reference(mode);
        let seq = cpu_encode(&batch, tables);
        let lanes = cpu::encode(&batch, tables, cpu::CoreForm::Lanes).unwrap();
        assert_eq!(seq.tops, lanes.tops);
        assert_same("lanes form codewords", &seq.codewords, &lanes.codewords);
        assert_eq!(seq.offsets, lanes.offsets);
        for form in [cpu::CoreForm::Sequential, cpu::CoreForm::Lanes] {
            let (decoded, summaries) = cpu::decode(&batch, &seq, tables, None, form).unwrap();
            assert_same("decoded sample", &batch.coefficients, &decoded);
            assert!(summaries.iter().all(|s| s.complete));
        }
    }
}

/// The tops the encoder finds are the `M` bytes stored in the sample file.
#[test]
fn sample_top_bitplanes_match_the_reference_file() {
    let file = bpc_common::sample_file();
    let batch = CodeblockBatch::from_ref(&file);
    let enc = cpu_encode(&batch, &ProbabilityTables::REFERENCE_TWO_PASS);
    for (b, top) in file.blocks.iter().zip(&enc.tops) {
        assert_eq!(Some(b.top), *top);
    }
}

/// Digest of the whole encoded sample per mode: any change to the
/// bitstream shows up here.
#[test]
fn sample_encoding_snapshot() {
    let batch = sample();
    let mut report = String::new();
    for mode in MODES {
        let enc = cpu_encode(&batch, ProbabilityTables::reference(mode));
        report += &format!(
            "{}-pass: {} codewords ({:.4} bits/coefficient), digest {:016x}\n",
            mode.passes(),
            enc.codewords.len(),
            enc.codewords.len() as f64 * 16.0 / batch.coefficient_count() as f64,
            enc.digest()
        );
    }
    insta::assert_snapshot!("bpc_sample_encoding", report);
}

/// Per-pass records on real data: decoding the recorded codewords through
/// each pass gives the recorded distortion, and on this image every pass
/// lowers the squared error (the quality rises monotonically with the
/// codewords kept at pass boundaries).
#[test]
fn sample_truncation_at_pass_boundaries_gives_recorded_distortion() {
    let batch = sample_subset(48);
    for mode in MODES {
        let tables = ProbabilityTables::reference(mode);
        let (enc, records) =
            cpu::encode_with_records(&batch, tables, cpu::CoreForm::Sequential).unwrap();
        for (i, recs) in records.iter().enumerate() {
            let original = batch.block(i).unwrap();
            let mut remaining = bpc_common::energy(&original) as i128;
            let mut previous = remaining;
            let (top, words) = enc.block(i);
            let params = bpc::CodingParams::new(tables, batch.blocks[i].group);
            let mut scratch = bpc::Scratch::<64>::new();
            for (p, r) in recs.iter().enumerate() {
                remaining -= r.distortion_decrease;
                let mut out = vec![0i32; 64 * 64];
                let limits = DecodeLimits {
                    max_codewords: r.codewords as usize,
                    max_passes: p + 1,
                };
                let dst = bpc::CodeblockMut::new(&mut out, 64, 64, 64).unwrap();
                bpc::decode_sequential(&params, top, words, limits, dst, &mut scratch).unwrap();
                let got =
                    bpc::squared_error(&original, &bpc::Codeblock::new(&out, 64, 64, 64).unwrap())
                        .unwrap();
                assert_eq!(got as i128, remaining, "block {i} pass {p}");
                assert!(
                    remaining <= previous,
                    "block {i} pass {p}: error rose from {previous} to {remaining}"
                );
                previous = remaining;
            }
            assert_eq!(remaining, 0);
        }
    }
}

#[test]
fn random_codeblocks_cpu_backend_equals_core() {
    for_random_cases("bpc random cpu", 6, |rng| {
        let (batch, tables) = random_batch(rng, 40, 96);
        let seq = cpu_encode(&batch, &tables);
        let lanes = cpu::encode(&batch, &tables, cpu::CoreForm::Lanes).unwrap();
        assert_eq!(seq, lanes);
        let m = rand::Rng::random_range(rng, 0..60);
        let a = cpu::decode(&batch, &seq, &tables, Some(m), cpu::CoreForm::Sequential).unwrap();
        let b = cpu::decode(&batch, &seq, &tables, Some(m), cpu::CoreForm::Lanes).unwrap();
        assert_eq!(a, b);
        let (full, _) = cpu::decode(&batch, &seq, &tables, None, cpu::CoreForm::Lanes).unwrap();
        for i in 0..batch.len() {
            let d = batch.blocks[i];
            for y in 0..d.height {
                let row = d.offset + y * d.stride;
                assert_eq!(
                    &full[row..row + d.width],
                    &batch.coefficients[row..row + d.width]
                );
            }
        }
    });
}

#[test]
fn gpu_encodes_sample_subset_like_core() {
    let gpu = test_gpu();
    let batch = sample_subset(64);
    for mode in MODES {
        let tables = ProbabilityTables::reference(mode);
        let want = cpu_encode(&batch, tables);
        let (got, _) = gpu::encode(&gpu, &batch, tables).unwrap();
        assert_eq!(want.tops, got.tops, "{mode:?}");
        assert_eq!(want.offsets, got.offsets, "{mode:?}");
        assert_same("GPU codewords", &want.codewords, &got.codewords);
    }
}

#[test]
fn gpu_decodes_sample_subset_like_core() {
    let gpu = test_gpu();
    let batch = sample_subset(64);
    for mode in MODES {
        let tables = ProbabilityTables::reference(mode);
        let enc = cpu_encode(&batch, tables);
        let (decoded, summaries, _) =
            gpu::decode(&gpu, &batch, &enc, tables, DecodeLimits::ALL).unwrap();
        assert_same("GPU decoded sample", &batch.coefficients, &decoded);
        assert!(summaries.iter().all(|s| s.complete));
        // Truncated to a few hundred codewords per codeblock.
        let limits = DecodeLimits::codewords(300);
        let want = cpu::decode_with_limits(&batch, &enc, tables, limits, cpu::CoreForm::Sequential)
            .unwrap();
        let (got, summaries, _) = gpu::decode(&gpu, &batch, &enc, tables, limits).unwrap();
        assert_same("GPU truncated decode", &want.0, &got);
        assert_eq!(want.1, summaries);
    }
}

/// Random codeblocks of every width 1..=64 and heights up to 256, empty
/// ones, large magnitudes, random tables with zero probabilities, both
/// modes; truncated decoding at random codeword counts and pass limits.
#[test]
fn gpu_random_codeblocks_equal_core() {
    let gpu = test_gpu();
    for_random_cases("bpc random gpu", 4, |rng| {
        let (batch, tables) = random_batch(rng, 24, 64);
        let want = cpu_encode(&batch, &tables);
        let (got, _) = gpu::encode(&gpu, &batch, &tables).unwrap();
        assert_eq!(want, got);
        let limits = DecodeLimits {
            max_codewords: rand::Rng::random_range(rng, 0..200),
            max_passes: rand::Rng::random_range(rng, 1..40),
        };
        for limits in [DecodeLimits::ALL, limits] {
            let (w, ws) =
                cpu::decode_with_limits(&batch, &want, &tables, limits, cpu::CoreForm::Sequential)
                    .unwrap();
            let (g, gs, _) = gpu::decode(&gpu, &batch, &got, &tables, limits).unwrap();
            assert_same("GPU random decode", &w, &g);
            assert_eq!(ws, gs);
        }
    });
}

/// Hostile input: garbage codewords and wrong M decode to the same
/// result (or the same error) as core, and never crash the device.
#[test]
fn gpu_decoder_handles_garbage_like_core() {
    let gpu = test_gpu();
    for_random_cases("bpc garbage gpu", 2, |rng| {
        let (batch, tables) = random_batch(rng, 16, 40);
        let mut enc = cpu_encode(&batch, &tables);
        for w in enc.codewords.iter_mut() {
            *w = rand::Rng::random(rng);
        }
        for t in enc.tops.iter_mut() {
            if t.is_some() {
                *t = Some(rand::Rng::random_range(rng, 0..=27));
            }
        }
        let w = cpu::decode(&batch, &enc, &tables, None, cpu::CoreForm::Sequential);
        let g = gpu::decode(&gpu, &batch, &enc, &tables, DecodeLimits::ALL);
        match (w, g) {
            (Ok((w, ws)), Ok((g, gs, _))) => {
                assert_same("GPU garbage decode", &w, &g);
                assert_eq!(ws, gs);
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("core {:?} but GPU {:?}", a.map(|x| x.1), b.map(|x| x.1)),
        }
    });
}

/// Regression: lavapipe ends every loop of a shader invocation once the
/// invocation has run 65535 loop iterations in all, and the shaders once
/// spent several per step (a loop over the two column parities and one over
/// the subgroups in each team ballot). Long codeblocks (many rows and
/// bitplanes) then silently stopped coding part-way: a random 55x58
/// codeblock with M = 26 decoded its last cleanup pass short ("stream
/// decoded completely after 6596 of its 6608 codewords"). The tallest
/// codeblock with the most bitplanes, dense, must round-trip on the GPU in
/// both modes exactly like core.
#[test]
fn gpu_tallest_deepest_codeblock_equals_core() {
    let gpu = test_gpu();
    for_random_cases("bpc tallest gpu", 1, |rng| {
        let (w, h) = (64, bpc::MAX_HEIGHT);
        let mut batch = CodeblockBatch {
            coefficients: (0..w * h)
                .map(|_| {
                    let top = rand::Rng::random_range(rng, 0..=bpc::COEFFICIENT_BITS);
                    let v = rand::Rng::random_range(rng, 0..(1i32 << top));
                    if rand::Rng::random_bool(rng, 0.5) {
                        -v
                    } else {
                        v
                    }
                })
                .collect(),
            ..Default::default()
        };
        batch.coefficients[0] = -((1 << bpc::COEFFICIENT_BITS) - 1);
        batch.blocks.push(wavelane::bpc::BlockDesc {
            offset: 0,
            stride: w,
            width: w,
            height: h,
            group: 3,
        });
        for mode in MODES {
            let tables = ProbabilityTables::reference(mode);
            let want = cpu_encode(&batch, tables);
            assert_eq!(want.tops, vec![Some(27)]);
            let (got, _) = gpu::encode(&gpu, &batch, tables).unwrap();
            assert_eq!(want.offsets, got.offsets, "{mode:?} codeword counts");
            assert_same(
                "GPU tall codeblock codewords",
                &want.codewords,
                &got.codewords,
            );
            let (decoded, summaries, _) =
                gpu::decode(&gpu, &batch, &got, tables, DecodeLimits::ALL).unwrap();
            assert_same("GPU decoded tall codeblock", &batch.coefficients, &decoded);
            assert!(summaries[0].complete, "{mode:?}: {summaries:?}");
        }
    });
}

/// The encoder takes codeblocks heaviest first: `bpc_measure` counts them
/// per top bitplane and `bpc_order` places them. Driven directly, on
/// codeblocks of every top bitplane 0..=27, empty ones and one refused
/// (region outside the buffer): the order is a permutation of the batch by
/// decreasing M, with the empty and refused codeblocks last.
#[test]
fn gpu_codeblock_order_is_by_decreasing_top_bitplane() {
    use wavelane::backend::gpu::Dispatch;
    use wavelane::shaders;
    let gpu = test_gpu();
    // 4x2 codeblocks at 8-coefficient strides: codeblock i's top bitplane is
    // (7 * i) % 30, where 28 and 29 stand for an all-zero codeblock.
    let count = 600usize;
    let mut coefficients = vec![0i32; count * 8];
    let mut want_top = Vec::new();
    for i in 0..count {
        let t = (7 * i) % 30;
        if t <= 27 {
            coefficients[i * 8 + 3] = if i % 2 == 0 { 1 << t } else { -(1 << t) };
        }
        want_top.push(if t <= 27 { t as u32 } else { 0xFF });
    }
    let mut desc: Vec<u32> = (0..count as u32)
        .flat_map(|i| [8 * i, 4, 4 | 2 << 8, 0])
        .collect();
    // The last codeblock's region runs past the buffer: refused, empty.
    desc[4 * (count - 1)] = (count * 8 - 2) as u32;
    want_top[count - 1] = 0xFF;
    let n = count as u32;
    let coefficients = gpu.upload(&coefficients).unwrap();
    let blocks = gpu.upload(&desc).unwrap();
    let tops = gpu.zeroed::<u32>(n as u64).unwrap();
    let caps = gpu.zeroed::<u32>(n as u64).unwrap();
    let offsets = gpu.zeroed::<u32>(n as u64).unwrap();
    let status = gpu.zeroed::<u32>(n as u64).unwrap();
    let buckets = gpu.zeroed::<u32>(58).unwrap();
    let order = gpu.upload(&vec![u32::MAX; count]).unwrap();
    gpu.run(&[
        Dispatch::new(&shaders::BPC_MEASURE, [n, 1, 1])
            .buffer(&coefficients)
            .buffer(&blocks)
            .buffer(&tops)
            .buffer(&caps)
            .buffer(&offsets)
            .buffer(&status)
            .buffer(&buckets)
            .push(&[n, 1]),
        // Two workgroups of 256 for 600 codeblocks: places are taken
        // across workgroups, and the first one loops to a third batch.
        Dispatch::new(&shaders::BPC_ORDER, [2, 1, 1])
            .buffer(&tops)
            .buffer(&buckets)
            .buffer(&order)
            .push(&[n]),
    ])
    .unwrap();
    assert_eq!(gpu.download(&tops).unwrap(), want_top);
    let order = gpu.download(&order).unwrap();
    let mut seen = order.clone();
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..n).collect::<Vec<_>>(),
        "not a permutation: {order:?}"
    );
    // Empty (0xFF) sorts as -1: last.
    let weight =
        |b: u32| want_top[b as usize] as i64 - if want_top[b as usize] == 0xFF { 256 } else { 0 };
    for w in order.windows(2) {
        assert!(
            weight(w[0]) >= weight(w[1]),
            "codeblock {} (top {}) placed before {} (top {}): {order:?}",
            w[0],
            want_top[w[0] as usize],
            w[1],
            want_top[w[1] as usize]
        );
    }
}
