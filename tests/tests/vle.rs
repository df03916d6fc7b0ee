//! VLE: core vs CPU backend vs GPU (lavapipe here) byte equality, round
//! trips on random, skewed, text, binary and edge-case inputs, compression
//! against the code's bound, and rejection of corrupted files.

use std::sync::Arc;

use rand::{Rng, RngCore};
use wavelane::backend::{Backend, Gpu};
use wavelane::vle::sample::{generate, SampleKind};
use wavelane::vle::{
    compress, cpu, decode, decompress, Encoded, GpuVle, ScanKind, VleCodecError, VleFile,
    VleOptions, CPU_DEVICE_BATCH_BLOCKS, PAIR_MAX_LEN,
};
use wavelane_core::vle::{self as core_vle, CodeTable};
use wavelane_tests::{for_random_cases, gpu, vle_error_kind, TestRng};

/// Real text: this project's own sources.
fn real_text() -> Vec<u8> {
    [
        include_bytes!("../../core/src/vle/huffman.rs").as_slice(),
        include_bytes!("../../core/src/vle/decode.rs").as_slice(),
        include_bytes!("../../shaders/vle/encode.glsl").as_slice(),
    ]
    .concat()
}

/// Real binary data: the first 2 MB of this test executable.
fn real_binary() -> Vec<u8> {
    let exe = std::env::current_exe().expect("test executable path");
    let mut bytes = std::fs::read(exe).expect("read the test executable");
    bytes.truncate(2 << 20);
    bytes
}

/// Byte equality that reports the first difference instead of both buffers.
fn assert_same(got: &[u8], want: &[u8], label: &str) {
    if got != want {
        let at = got.iter().zip(want).position(|(a, b)| a != b);
        panic!(
            "{label}: {} bytes vs {} expected, first difference at byte {at:?}",
            got.len(),
            want.len()
        );
    }
}

/// A GPU stream against core's: its length, bytes and chunk index.
fn assert_equals_core(enc: &Encoded, want: &[u8], index: &[u64], bits: u64, label: &str) {
    assert_eq!(enc.data_bits, bits, "{label}: stream bits");
    assert_same(&enc.data, want, &format!("{label}: GPU vs core"));
    assert_eq!(enc.chunk_offsets(), index, "{label}: chunk index");
}

/// Inputs of every kind, including the edge cases.
fn corpus(rng: &mut TestRng) -> Vec<(String, Vec<u8>)> {
    let mut all = vec![
        ("empty".to_string(), Vec::new()),
        ("one byte".into(), vec![0x5a]),
        ("single symbol".into(), vec![7u8; 100_003]),
        (
            "two symbols".into(),
            (0..50_000).map(|i| (i % 3 == 0) as u8).collect(),
        ),
        ("all 256 once".into(), (0..=255u8).collect()),
        (
            "block edge".into(),
            generate(SampleKind::Text, 4096, rng.next_u64()),
        ),
        (
            "block edge + 1".into(),
            generate(SampleKind::Skewed, 4097, rng.next_u64()),
        ),
        ("real text".into(), real_text()),
        ("real binary".into(), real_binary()),
        ("long codes".into(), long_codes(rng)),
    ];
    for kind in [SampleKind::Text, SampleKind::Skewed, SampleKind::Random] {
        let len = rng.random_range(1..300_000);
        all.push((
            format!("{kind:?} {len}"),
            generate(kind, len, rng.next_u64()),
        ));
    }
    all
}

/// ~9000 rare bytes between runs of 16 common ones: the common symbols take
/// ~95% of the code space, so with max_len >= 12 the rare bytes get
/// codewords of ~12 bits and the blocks holding them are longer than the GPU
/// encoder's shared staging buffer (8 bits a symbol): they take its direct
/// path, next to staged blocks.
fn long_codes(rng: &mut TestRng) -> Vec<u8> {
    let mut v: Vec<u8> = (0..150_000).map(|_| rng.random_range(0..16u8)).collect();
    v.extend((0..9000).map(|_| rng.random_range(16..=255u8)));
    v.extend((0..20_000).map(|_| rng.random_range(0..16u8)));
    v
}

fn options(rng: &mut TestRng) -> VleOptions {
    VleOptions {
        max_len: rng.random_range(8..=24),
        chunk_symbols: 32 * rng.random_range(1..=300),
    }
}

/// The reference: core's sequential encoder on the whole input.
fn core_encode(data: &[u8], opts: &VleOptions) -> (CodeTable, Vec<u8>, Vec<u64>, u64) {
    let mut hist = [0u64; 256];
    core_vle::histogram(data, &mut hist);
    let table = CodeTable::from_histogram(&hist, opts.max_len).unwrap();
    let bits = table.encoded_bits(&hist).unwrap();
    let mut out = vec![0u8; bits.div_ceil(8) as usize];
    let mut index = vec![0u64; core_vle::chunk_count(data.len(), opts.chunk_symbols)];
    let end = core_vle::encode(data, &table, opts.chunk_symbols, &mut out, &mut index).unwrap();
    assert_eq!(end, bits);
    (table, out, index, bits)
}

#[test]
fn cpu_equals_core_and_round_trips() {
    for_random_cases("vle cpu", 3, |rng| {
        for (name, data) in corpus(rng) {
            let opts = options(rng);
            let (table, want, index, bits) = core_encode(&data, &opts);
            assert_eq!(cpu::histogram(&data), {
                let mut h = [0u64; 256];
                core_vle::histogram(&data, &mut h);
                h
            });
            let enc = cpu::encode(&data, &table, opts.chunk_symbols).unwrap();
            assert_same(&enc.data, &want, &format!("{name}: CPU vs core ({opts:?})"));
            assert_eq!(enc.data_bits, bits, "{name}");
            let file = compress(&data, &Backend::Cpu, &opts).unwrap();
            let parsed = VleFile::parse(&file).unwrap();
            assert_eq!(parsed.chunk_offsets(), index, "{name}: chunk index");
            assert_same(&decompress(&file, &Backend::Cpu).unwrap(), &data, &name);
        }
    });
}

/// Empirical entropy in bits per symbol.
fn entropy(hist: &[u64; 256]) -> f64 {
    let n: u64 = hist.iter().sum();
    hist.iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

#[test]
fn compression_is_within_one_percent_of_the_code_bound() {
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(7);
    for kind in [SampleKind::Text, SampleKind::Skewed, SampleKind::Random] {
        let data = generate(kind, 2 << 20, rng.next_u64());
        let hist = cpu::histogram(&data);
        let opts = VleOptions {
            max_len: 24,
            ..VleOptions::default()
        };
        let file = compress(&data, &Backend::Cpu, &opts).unwrap();
        let parsed = VleFile::parse(&file).unwrap();
        // The stream is exactly the code's bound sum(count * len) ...
        let bound = parsed.table.encoded_bits(&hist).unwrap();
        assert_eq!(parsed.data_bits, bound, "{kind:?}");
        // ... the container adds less than 1% ...
        let bound_bytes = bound.div_ceil(8) as f64;
        assert!(
            (file.len() as f64) < bound_bytes * 1.01,
            "{kind:?}: file {} bytes, code bound {bound_bytes}",
            file.len()
        );
        // ... and an unrestricted-length Huffman code is within one bit per
        // symbol of the entropy (limit 24 does not bind on these inputs).
        let h = entropy(&hist);
        let per_symbol = bound as f64 / data.len() as f64;
        assert!(
            per_symbol >= h - 1e-9 && per_symbol < h + 1.0,
            "{kind:?}: {per_symbol} vs H = {h}"
        );
    }
}

#[test]
fn corrupted_files_are_errors() {
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(11);
    let data = generate(SampleKind::Text, 20_000, 3);
    let opts = VleOptions {
        max_len: 16,
        chunk_symbols: 1024,
    };
    let file = compress(&data, &Backend::Cpu, &opts).unwrap();
    // Every truncation.
    for len in 0..file.len() {
        assert!(
            decompress(&file[..len], &Backend::Cpu).is_err(),
            "truncated to {len}"
        );
    }
    // A byte appended.
    let mut longer = file.clone();
    longer.push(0);
    assert!(matches!(
        decompress(&longer, &Backend::Cpu),
        Err(VleCodecError::Malformed(_))
    ));
    // Single-bit flips everywhere in the header, table and index, and at
    // random places in the data: CRC-32 catches every single-bit error that
    // the structure checks let through.
    let data_start = file.len() - VleFile::parse(&file).unwrap().data.len();
    let mut positions: Vec<usize> = (0..data_start * 8).collect();
    positions.extend((0..2000).map(|_| rng.random_range(data_start * 8..file.len() * 8)));
    for bit in positions {
        let mut bad = file.clone();
        bad[bit / 8] ^= 0x80 >> (bit % 8);
        match decompress(&bad, &Backend::Cpu) {
            Err(_) => {}
            Ok(out) => panic!(
                "bit {bit} flipped decoded without error ({} bytes)",
                out.len()
            ),
        }
    }
    // Random garbage with a valid-looking header start.
    for _ in 0..500 {
        let mut junk = file[..32].to_vec();
        junk.extend((0..rng.random_range(0..400)).map(|_| rng.random::<u8>()));
        assert!(decompress(&junk, &Backend::Cpu).is_err());
    }
}

/// An encoder with `scan` and 1 or 3 persistent workgroups or the device
/// default (one per block on lavapipe), at random: the look-back must work
/// with any. Returns it with the count (0: the default).
fn random_encoder(g: &Arc<Gpu>, scan: ScanKind, rng: &mut TestRng) -> (GpuVle, u32) {
    let workgroups = [1, 3, 0][rng.random_range(0..3)];
    let v = GpuVle::new(g.clone()).with_scan(scan).unwrap();
    match workgroups {
        0 => (v, 0),
        n => (v.with_workgroups(n), n),
    }
}

/// Every inter-block scan the device can run: the 32-bit fallback, and
/// GVLE's 64-bit scan where the device has 64-bit buffer atomics.
fn scan_kinds(g: &Gpu) -> Vec<ScanKind> {
    if g.info().int64_atomics {
        vec![ScanKind::Atomic64, ScanKind::Atomic32]
    } else {
        vec![ScanKind::Atomic32]
    }
}

#[test]
fn gpu_histogram_and_encode_equal_cpu() {
    let g = gpu();
    let scans = scan_kinds(&g);
    for_random_cases("vle gpu encode", 2, |rng| {
        let mut inputs = corpus(rng);
        inputs.retain(|(name, _)| name != "real binary");
        let mut binary = real_binary();
        binary.truncate(600_000);
        inputs.push(("real binary 600k".into(), binary));
        // 2.2M symbols: 538 blocks, 5 scan segments (look-backs pass whole
        // segments and stop at published prefixes).
        inputs.push((
            "text 2.2M".into(),
            generate(SampleKind::Text, 2_200_000, rng.next_u64()),
        ));
        for (name, data) in inputs {
            let opts = options(rng);
            let (table, want, index, bits) = core_encode(&data, &opts);
            for &scan in &scans {
                let (v, workgroups) = random_encoder(&g, scan, rng);
                let input = v.upload(&data, opts.chunk_symbols).unwrap();
                let (hist, _) = v.histogram(&input).unwrap();
                assert_eq!(hist, cpu::histogram(&data), "{name}: GPU histogram");
                let (enc, _) = v.encode(&input, &table, opts.chunk_symbols).unwrap();
                let label = format!("{name}: {scan:?}, {workgroups} workgroups, {opts:?}");
                assert_equals_core(&enc, &want, &index, bits, &label);
            }
        }
    });
}

/// The encoder packs codewords in pairs when no codeword is longer than
/// `PAIR_MAX_LEN` (16) bits and one at a time otherwise: the same geometric
/// input, with runs of its rarest symbols side by side at every alignment
/// (pairs of two 16-bit codewords), coded under a limit of 16 (pairs) and
/// of 24 (codewords longer than 16 bits, the general shader), must equal
/// core.
#[test]
fn gpu_pair_and_single_packing_equal_core() {
    let g = gpu();
    for_random_cases("vle gpu pairs", 2, |rng| {
        let mut data: Vec<u8> = (0..20u8)
            .flat_map(|s| std::iter::repeat_n(s, 1 << (19 - s)))
            .collect();
        for i in (1..data.len()).rev() {
            data.swap(i, rng.random_range(0..=i));
        }
        for skip in 0..3 {
            let at = rng.random_range(0..data.len());
            let rare: Vec<u8> = (0..6).map(|k| 14 + (k + skip) as u8 % 6).collect();
            data.splice(at..at, rare);
        }
        for limit in [PAIR_MAX_LEN, 24] {
            let opts = VleOptions {
                max_len: limit,
                chunk_symbols: 4096,
            };
            let (table, want, index, bits) = core_encode(&data, &opts);
            assert_eq!(
                table.max_len() > PAIR_MAX_LEN,
                limit > PAIR_MAX_LEN,
                "longest codeword {} under the limit {limit}",
                table.max_len()
            );
            let v = GpuVle::new(g.clone());
            let input = v.upload(&data, opts.chunk_symbols).unwrap();
            let (enc, _) = v.encode(&input, &table, opts.chunk_symbols).unwrap();
            let label = format!("max_len {limit}");
            assert_equals_core(&enc, &want, &index, bits, &label);
        }
    });
}

#[test]
fn gpu_multi_batch_equals_cpu() {
    // A small buffer limit forces many batches whose streams start at every
    // bit offset modulo 32.
    let g = gpu();
    for_random_cases("vle gpu batches", 2, |rng| {
        let data = generate(
            SampleKind::Skewed,
            rng.random_range(50_000..200_000),
            rng.next_u64(),
        );
        let opts = VleOptions {
            max_len: rng.random_range(10..=24),
            chunk_symbols: 32 * rng.random_range(1..40),
        };
        let (table, want, _, _) = core_encode(&data, &opts);
        let v = GpuVle::new(g.clone()).with_buffer_limit(rng.random_range(8_000..40_000));
        let input = v.upload(&data, opts.chunk_symbols).unwrap();
        let (enc, _) = v.encode(&input, &table, opts.chunk_symbols).unwrap();
        assert_same(&enc.data, &want, &format!("{opts:?}"));
        let file = enc.file(data.len() as u64, cpu::crc32(&data)).to_bytes();
        let (back, _) = v.decode(&VleFile::parse(&file).unwrap()).unwrap();
        assert_same(&back, &data, "GPU decode");
    });
}

/// The pipeline GPUs get (`VLE_LOOP_BUDGET` = 0: no loop budget, each
/// block's waits bounded on their own) must code what core codes, for every
/// packing and scan and with one, three or one workgroup per block; on
/// lavapipe, whose loops end at 65535 iterations, only small inputs are safe
/// without the budget, which is what this runs. The budget pipeline is the
/// one every other GPU test here gets on lavapipe.
#[test]
fn gpu_encoder_without_loop_budget_equals_core() {
    let g = gpu();
    let scans = scan_kinds(&g);
    for_random_cases("vle gpu no budget", 2, |rng| {
        let inputs = [
            generate(
                SampleKind::Text,
                rng.random_range(20_000..300_000),
                rng.next_u64(),
            ),
            generate(
                SampleKind::Random,
                rng.random_range(20_000..100_000),
                rng.next_u64(),
            ),
            long_codes(rng),
        ];
        for data in inputs {
            for max_len in [PAIR_MAX_LEN, 24] {
                let opts = VleOptions {
                    max_len,
                    chunk_symbols: 4096,
                };
                let (table, want, index, bits) = core_encode(&data, &opts);
                for &scan in &scans {
                    let (v, workgroups) = random_encoder(&g, scan, rng);
                    let v = v.with_loop_budget(None);
                    let input = v.upload(&data, opts.chunk_symbols).unwrap();
                    let (enc, _) = v.encode(&input, &table, opts.chunk_symbols).unwrap();
                    let label = format!(
                        "{} symbols, {scan:?}, {workgroups} workgroups, max_len {max_len}",
                        data.len()
                    );
                    assert_equals_core(&enc, &want, &index, bits, &label);
                }
            }
        }
    });
}

/// `encode_counted` sizes the output for the stream's exact length: with the
/// input's own histogram it codes what core codes; with a histogram that
/// understates the input, the encoder runs out of room and reports it, never
/// a shorter or wrong stream.
#[test]
fn gpu_counted_encode_is_exact_or_an_error() {
    let g = gpu();
    for_random_cases("vle gpu counted", 2, |rng| {
        let data = generate(
            SampleKind::Text,
            rng.random_range(10_000..400_000),
            rng.next_u64(),
        );
        let opts = VleOptions::default();
        let (table, want, index, bits) = core_encode(&data, &opts);
        let v = GpuVle::new(g.clone());
        let input = v.upload(&data, opts.chunk_symbols).unwrap();
        let (hist, _) = v.histogram(&input).unwrap();
        let (enc, _) = v
            .encode_counted(&input, &table, opts.chunk_symbols, &hist)
            .unwrap();
        assert_equals_core(&enc, &want, &index, bits, "counted");
        let mut short = hist;
        let top = (0..256).max_by_key(|&s| hist[s]).unwrap();
        short[top] /= 2;
        let err = v
            .encode_counted(&input, &table, opts.chunk_symbols, &short)
            .expect_err("an understated histogram must not give a stream");
        assert!(
            matches!(err, VleCodecError::GpuEncode(ref what) if what.contains("output past the buffer")),
            "{err}"
        );
    });
}

/// An input of many more blocks than a CPU device (lavapipe) takes in one
/// dispatch (`CPU_DEVICE_BATCH_BLOCKS`): before the host cut such inputs
/// into batches, lavapipe ran out of loop iterations from about 8 MB on two
/// threads and the GPU encoder failed.
#[test]
fn gpu_compresses_inputs_beyond_one_cpu_device_dispatch() {
    let backend = Backend::Gpu(gpu());
    let blocks = 4 * CPU_DEVICE_BATCH_BLOCKS as usize + 3;
    let data = generate(SampleKind::Text, blocks * 4096 - 77, 7);
    let opts = VleOptions::default();
    let cpu_file = compress(&data, &Backend::Cpu, &opts).unwrap();
    let gpu_file = compress(&data, &backend, &opts).unwrap();
    assert_same(&gpu_file, &cpu_file, "GPU vs CPU file");
    assert_same(
        &decompress(&gpu_file, &backend).unwrap(),
        &data,
        "GPU decode",
    );
}

#[test]
fn gpu_compress_and_decompress_equal_cpu() {
    let backend = Backend::Gpu(gpu());
    for_random_cases("vle gpu files", 2, |rng| {
        for (name, data) in corpus(rng) {
            let opts = options(rng);
            let cpu_file = compress(&data, &Backend::Cpu, &opts).unwrap();
            let gpu_file = compress(&data, &backend, &opts).unwrap();
            assert_same(
                &gpu_file,
                &cpu_file,
                &format!("{name}: GPU vs CPU file ({opts:?})"),
            );
            assert_same(
                &decompress(&cpu_file, &backend).unwrap(),
                &data,
                &format!("{name}: GPU decode"),
            );
        }
    });
}

#[test]
fn gpu_decoder_rejects_corrupted_data() {
    let backend = Backend::Gpu(gpu());
    let data = generate(SampleKind::Text, 50_000, 9);
    let opts = VleOptions {
        max_len: 12,
        chunk_symbols: 2048,
    };
    let file = compress(&data, &Backend::Cpu, &opts).unwrap();
    let parsed = VleFile::parse(&file).unwrap();
    let data_start = file.len() - parsed.data.len();
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(5);
    let mut structural = 0;
    for _ in 0..40 {
        let mut bad = file.clone();
        let bit = rng.random_range(data_start * 8..file.len() * 8);
        bad[bit / 8] ^= 0x80 >> (bit % 8);
        let parsed = VleFile::parse(&bad).unwrap();
        // The GPU decoder itself must reject what the CPU decoder rejects;
        // what both decode, the checksum rejects.
        let on_cpu = decode(&parsed, &Backend::Cpu);
        let on_gpu = decode(&parsed, &backend);
        assert_eq!(
            on_cpu.as_ref().err().map(vle_error_kind),
            on_gpu.as_ref().err().map(vle_error_kind),
            "bit {bit}"
        );
        if let (Ok(a), Ok(b)) = (&on_cpu, &on_gpu) {
            assert_same(b, a, "GPU vs CPU decode of a corrupted file");
        } else {
            structural += 1;
        }
        let cpu_err = decompress(&bad, &Backend::Cpu).expect_err("the CRC or the code rejects it");
        let gpu_err = decompress(&bad, &backend).expect_err("the CRC or the code rejects it");
        assert_eq!(
            vle_error_kind(&cpu_err),
            vle_error_kind(&gpu_err),
            "bit {bit}: CPU {cpu_err} / GPU {gpu_err}"
        );
    }
    assert!(structural > 0, "some flips must break the code structure");
}
