//! Hostile input to the GPU decoders (run on lavapipe here): random bytes,
//! truncated streams and maximal counts. Each decode must return (an error
//! or output), agree with the CPU decoder, and write nothing outside its
//! output: outputs are surrounded by guard regions filled with a pattern
//! that must survive. Through the host API the guards are the gaps between
//! codeblocks; dispatching the shaders directly, they are extra words
//! around the output the push constants and descriptors describe.

use std::sync::Arc;

use rand::{Rng, RngCore};
use wavelane::backend::gpu::{Dispatch, Gpu};
use wavelane::backend::Backend;
use wavelane::bpc::{cpu as bpc_cpu, gpu as bpc_gpu, BlockDesc, CodeblockBatch, EncodedBatch};
use wavelane::shaders::{self, Shader};
use wavelane::vle::{self, VleFile, VleOptions};
use wavelane_core::bpc::{DecodeLimits, Mode, ProbabilityTables};
use wavelane_core::vle::{CodeTable, DecodeTable};
use wavelane_tests::{for_random_cases, gpu, vle_error_kind, TestRng};

const GUARD: i32 = 0x5a5a_5a5a;

// ------------------------------------------------------------ BPC-PaCo

/// Codeblocks of assorted sizes laid out with gaps (stride = width + 3, 17
/// unused coefficients between codeblocks, and before the first and after
/// the last) that no decoder may touch.
fn gapped_layout(sizes: &[(usize, usize, usize)]) -> (CodeblockBatch, Vec<bool>) {
    let mut batch = CodeblockBatch::default();
    let mut at = 17;
    for &(w, h, group) in sizes {
        batch.blocks.push(BlockDesc {
            offset: at,
            stride: w + 3,
            width: w,
            height: h,
            group,
        });
        at += (w + 3) * h + 17;
    }
    batch.coefficients = vec![0; at];
    let mut inside = vec![false; at];
    for d in &batch.blocks {
        for y in 0..d.height {
            let row = d.offset + y * d.stride;
            inside[row..row + d.width]
                .iter_mut()
                .for_each(|c| *c = true);
        }
    }
    (batch, inside)
}

/// Hostile encoded codeblocks: random words, valid streams cut short,
/// all-ones and all-zero words at the highest bitplane, empty codeblocks
/// with stray codewords, and out-of-range bitplanes are not representable
/// in an EncodedBatch (u8 `M` values above 27 are tested by dispatching).
fn hostile_streams(
    rng: &mut TestRng,
    like: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> EncodedBatch {
    let mut coeffs = like.clone();
    for c in coeffs.coefficients.iter_mut() {
        *c = (rng.next_u32() as i32) >> rng.random_range(4..31);
    }
    let valid = bpc_cpu::encode(&coeffs, tables, bpc_cpu::CoreForm::Sequential).expect("encodes");
    let mut out = EncodedBatch {
        tops: Vec::new(),
        offsets: vec![0],
        codewords: Vec::new(),
    };
    for i in 0..like.len() {
        let (top, words) = valid.block(i);
        let (top, words): (Option<u8>, Vec<u16>) = match rng.random_range(0..6) {
            0 => (top, words.to_vec()),
            1 => (top, words[..rng.random_range(0..=words.len())].to_vec()),
            2 => (
                Some(27),
                (0..rng.random_range(0..3000))
                    .map(|_| rng.random())
                    .collect(),
            ),
            3 => (
                Some(rng.random_range(0..=27)),
                vec![0xffff; rng.random_range(0..2000)],
            ),
            4 => (Some(27), vec![0; rng.random_range(0..2000)]),
            _ => (None, vec![rng.random(); rng.random_range(0..3)]),
        };
        out.tops.push(top);
        out.codewords.extend(words);
        out.offsets.push(out.codewords.len());
    }
    out
}

#[test]
fn gpu_bpc_decode_hostile_streams_match_cpu_and_stay_in_their_codeblocks() {
    let gpu = gpu();
    for_random_cases("gpu hostile BPC-PaCo decode", 6, |rng| {
        let mode = if rng.random() {
            Mode::TwoPass
        } else {
            Mode::ThreePass
        };
        let tables = ProbabilityTables::reference(mode);
        let sizes: Vec<(usize, usize, usize)> = (0..rng.random_range(1..8))
            .map(|_| {
                let w = [1, 2, 13, 33, 64][rng.random_range(0..5)];
                let h = [1, 7, 64, 256][rng.random_range(0..4)];
                (w, h, rng.random_range(0..16))
            })
            .collect();
        let (like, inside) = gapped_layout(&sizes);
        let encoded = hostile_streams(rng, &like, tables);
        let limits = match rng.random_range(0..3) {
            0 => DecodeLimits::ALL,
            1 => DecodeLimits::codewords(rng.random_range(0..500)),
            _ => DecodeLimits {
                max_codewords: usize::MAX,
                max_passes: rng.random_range(0..90),
            },
        };
        let cpu = bpc_cpu::decode_with_limits(
            &like,
            &encoded,
            tables,
            limits,
            bpc_cpu::CoreForm::Sequential,
        );
        let dev = bpc_gpu::decode(&gpu, &like, &encoded, tables, limits);
        match (cpu, dev) {
            (Ok((c, cs)), Ok((g, gs, _))) => {
                assert_eq!(cs, gs, "decode summaries differ");
                for (i, (a, b)) in c.iter().zip(&g).enumerate() {
                    assert!(inside[i] || *b == 0, "GPU wrote {b} into the gap at {i}");
                    assert_eq!(a, b, "coefficient {i} differs");
                }
            }
            (Err(c), Err(g)) => assert_eq!(c.to_string(), g.to_string(), "different errors"),
            (c, g) => panic!("CPU {:?} vs GPU {:?}", c.err(), g.err()),
        }
        dispatch_over_guarded_gaps(&gpu, &like, &inside, &encoded, (tables, mode), limits);
    });
}

/// The host API hands the shader a zeroed buffer, so a stray 0 written into
/// a gap would pass the check above. Here the same codeblocks go to every
/// decoder build that takes them, dispatched directly over a buffer filled
/// with [`GUARD`] (above 2^28, which no decoded magnitude reaches: `M` is
/// at most 27): every gap must still hold it, and where the CPU decodes,
/// the codeblocks and summaries must equal the CPU's.
fn dispatch_over_guarded_gaps(
    gpu: &Arc<Gpu>,
    like: &CodeblockBatch,
    inside: &[bool],
    encoded: &EncodedBatch,
    (tables, mode): (&ProbabilityTables, Mode),
    limits: DecodeLimits,
) {
    let cpu =
        bpc_cpu::decode_with_limits(like, encoded, tables, limits, bpc_cpu::CoreForm::Sequential);
    let descriptors: Vec<[u32; 4]> = like
        .blocks
        .iter()
        .map(|d| {
            let size = d.width | d.height << 8 | d.group << 20;
            [d.offset as u32, d.stride as u32, size as u32, 0]
        })
        .collect();
    // As the host builds them: first codeword, codewords given, top
    // bitplane (0xff: empty), passes allowed.
    let streams: Vec<[u32; 4]> = (0..like.len())
        .map(|i| {
            let (top, words) = encoded.block(i);
            [
                encoded.offsets[i] as u32,
                words.len().min(limits.max_codewords) as u32,
                top.map_or(0xff, u32::from),
                limits.max_passes.min(u32::MAX as usize) as u32,
            ]
        })
        .collect();
    let mut packed: Vec<u32> = encoded
        .codewords
        .chunks(2)
        .map(|p| p[0] as u32 | (*p.get(1).unwrap_or(&0) as u32) << 16)
        .collect();
    // A storage buffer cannot be empty; no stream reaches this word.
    if packed.is_empty() {
        packed.push(0);
    }
    let tallest = like.blocks.iter().map(|d| d.height).max().unwrap_or(0);
    for &(shader, rows, build_mode) in &BPC_DECODERS {
        // The 256-row build takes either mode (the host uses it for both).
        if tallest > rows as usize || (rows != 256 && build_mode != mode) {
            continue;
        }
        let (out, summary) = dispatch_bpc_decode(
            gpu,
            (shader, mode),
            inside.len(),
            &descriptors,
            &streams,
            &packed,
        );
        let name = shader.name;
        if let Some(i) = (0..out.len()).find(|&i| !inside[i] && out[i] != GUARD) {
            panic!("{name} wrote {:#x} into the gap at {i}", out[i]);
        }
        if let Ok((c, cs)) = &cpu {
            for (i, (a, b)) in c.iter().zip(&out).enumerate() {
                assert!(
                    !inside[i] || a == b,
                    "{name}: coefficient {i}: CPU {a}, GPU {b}"
                );
            }
            for (block, (d, s)) in cs.iter().zip(summary.chunks_exact(4)).enumerate() {
                let gpu_d = (s[0] as usize, s[1] as usize, s[2] == 1);
                let cpu_d = (d.codewords_used, d.passes_completed, d.complete);
                assert_eq!(cpu_d, gpu_d, "{name}: summary of codeblock {block}");
            }
        }
    }
}

/// A BPC-PaCo codeblock descriptor as the shaders read it (group 3).
fn bpc_desc(offset: u32, stride: u32, w: u32, h: u32) -> [u32; 4] {
    [offset, stride, w | h << 8 | 3 << 20, 0]
}

/// Descriptors of regions that run past the end of a coefficient buffer of
/// `len` values, or whose 32-bit index arithmetic wraps.
fn regions_outside(len: usize) -> [[u32; 4]; 5] {
    [
        bpc_desc((len - 100) as u32, 64, 64, 64),
        bpc_desc((len - 63) as u32, 64, 64, 1),
        bpc_desc(u32::MAX - 40, 64, 64, 64),
        bpc_desc(0x8000_0000, 0x8000_0000, 64, 4),
        bpc_desc(0, 0x4000_0001, 64, 5),
    ]
}

/// The decoder shaders, the codeblock rows each holds and the tables' mode
/// each is given (the 2-pass build codes 2-pass tables only).
const BPC_DECODERS: [(&Shader, u32, Mode); 3] = [
    (&shaders::BPC_DECODE, 256, Mode::ThreePass),
    (&shaders::BPC_DECODE64, 64, Mode::ThreePass),
    (&shaders::BPC_DECODE64_2PASS, 64, Mode::TwoPass),
];

/// One direct dispatch of the `bpc_decode` shader over a coefficient
/// buffer filled with [`GUARD`]; returns the buffer and the summaries.
fn dispatch_bpc_decode(
    gpu: &Arc<Gpu>,
    (shader, mode): (&'static Shader, Mode),
    coeff_len: usize,
    descriptors: &[[u32; 4]],
    streams: &[[u32; 4]],
    packed: &[u32],
) -> (Vec<i32>, Vec<u32>) {
    let n = descriptors.len() as u32;
    let blocks: Vec<u32> = descriptors.iter().flatten().copied().collect();
    let streams: Vec<u32> = streams.iter().flatten().copied().collect();
    let tables = bpc_gpu::flatten_tables(ProbabilityTables::reference(mode));
    let packed = gpu.upload(packed).unwrap();
    let blocks = gpu.upload(&blocks).unwrap();
    let tables = gpu.upload(&tables).unwrap();
    let streams = gpu.upload(&streams).unwrap();
    let out = gpu.upload(&vec![GUARD; coeff_len]).unwrap();
    let summary = gpu.upload(&vec![0xdead_beefu32; 4 * n as usize]).unwrap();
    gpu.run(&[Dispatch::new(shader, [n.max(1), 1, 1])
        .buffer(&packed)
        .buffer(&blocks)
        .buffer(&tables)
        .buffer(&streams)
        .buffer(&out)
        .buffer(&summary)
        .push(&[n, (mode == Mode::ThreePass) as u32])])
        .unwrap();
    (gpu.download(&out).unwrap(), gpu.download(&summary).unwrap())
}

/// Descriptors the host would reject (zero or too large sizes, a stride
/// below the width, regions running past the buffer or wrapping 32-bit
/// indices) and streams with absurd counts: the shader must write only
/// inside `[offset, offset + (h-1) * stride + w)` of valid descriptors,
/// report bad descriptors, and never touch the guard words.
#[test]
fn gpu_bpc_decode_shader_bounds_hostile_descriptors() {
    let gpu = gpu();
    let len = 4096usize;
    // (descriptor, stream, region the descriptor may write: offset, stride, w, h)
    type Region = (usize, usize, usize, usize);
    let cases: Vec<([u32; 4], [u32; 4], Option<Region>)> = vec![
        (
            bpc_desc(100, 64, 64, 16),
            [0, u32::MAX, 27, u32::MAX],
            Some((100, 64, 64, 16)),
        ),
        (bpc_desc(100, 64, 0, 16), [0, 10, 27, 100], None),
        (bpc_desc(100, 64, 65, 16), [0, 10, 27, 100], None),
        (bpc_desc(100, 64, 64, 0), [0, 10, 27, 100], None),
        (bpc_desc(100, 10, 64, 4), [0, 10, 27, 100], None),
        (bpc_desc(100, 64, 64, 257), [0, 10, 27, 100], None),
        // Valid for the 256-row shader only.
        (
            bpc_desc(0, 32, 16, 100),
            [0, 100, 27, 1000],
            Some((0, 32, 16, 100)),
        ),
        (
            bpc_desc(200, 64, 64, 4),
            [u32::MAX - 3, u32::MAX, 27, 1000],
            Some((200, 64, 64, 4)),
        ),
        (
            bpc_desc(300, 64, 64, 4),
            [0, 100, 28, 1000],
            Some((300, 64, 64, 4)),
        ),
        (
            bpc_desc(300, 64, 64, 4),
            [0, 100, 0xff, 1000],
            Some((300, 64, 64, 4)),
        ),
    ];
    let packed: Vec<u32> = (0..500u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    for ((d, s, region), &(shader, rows, mode)) in cases
        .iter()
        .flat_map(|c| BPC_DECODERS.iter().map(move |sh| (*c, sh)))
    {
        let region = region.filter(|&(_, _, _, h)| h <= rows as usize);
        let (out, summary) = dispatch_bpc_decode(&gpu, (shader, mode), len, &[d], &[s], &packed);
        for (i, &v) in out.iter().enumerate() {
            let allowed = region.is_some_and(|(o, stride, w, h)| {
                i >= o && i < o + (h - 1) * stride + w && (i - o) % stride < w
            });
            assert!(
                allowed || v == GUARD,
                "descriptor {d:?} stream {s:?}: wrote {v:#x} at {i}"
            );
        }
        match region {
            None => assert_eq!(
                summary[2], 4,
                "bad descriptor {d:?} not reported: {summary:?}"
            ),
            Some(_) => assert!(summary[2] <= 3, "outcome {summary:?} for {d:?} {s:?}"),
        }
    }
}

/// Regions that run past the end of the coefficient buffer, or whose
/// 32-bit index arithmetic wraps (the wrapped indices would alias the start
/// of the buffer): the shader must refuse them as bad descriptors and write
/// nothing at all.
#[test]
fn gpu_bpc_decode_shader_regions_never_wrap() {
    let gpu = gpu();
    let len = 4096usize;
    let packed: Vec<u32> = (0..500u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    // One codeblock with a plausible stream, through one decoder build.
    let decode_one = |shader, mode, d| {
        dispatch_bpc_decode(
            &gpu,
            (shader, mode),
            len,
            &[d],
            &[[0, 300, 27, 1000]],
            &packed,
        )
    };
    for d in regions_outside(len) {
        for &(shader, _, mode) in &BPC_DECODERS {
            let (out, summary) = decode_one(shader, mode, d);
            if let Some(i) = out.iter().position(|&v| v != GUARD) {
                panic!("descriptor {d:?} wrote {:#x} at {i}", out[i]);
            }
            assert_eq!(summary[2], 4, "descriptor {d:?} not refused: {summary:?}");
        }
    }
    // The last region that fits exactly is decoded.
    let d = bpc_desc((len - 64) as u32, 64, 64, 1);
    for &(shader, _, mode) in &BPC_DECODERS {
        let (out, summary) = decode_one(shader, mode, d);
        assert!(summary[2] <= 3, "descriptor {d:?} refused: {summary:?}");
        assert!(out[..len - 64].iter().all(|&v| v == GUARD));
        assert!(out[len - 64..].iter().all(|&v| v != GUARD));
    }
}

/// The encoder shaders and the tables' mode each is given.
const BPC_ENCODERS: [(&Shader, Mode); 3] = [
    (&shaders::BPC_ENCODE, Mode::ThreePass),
    (&shaders::BPC_ENCODE64, Mode::ThreePass),
    (&shaders::BPC_ENCODE64_2PASS, Mode::TwoPass),
];

/// One direct dispatch of an encoder shader for one codeblock `d` over
/// `coefficients`, with a scratch of [`GUARD`] halves; returns the scratch
/// and the codeword count.
fn dispatch_bpc_encode(
    gpu: &Arc<Gpu>,
    (shader, mode): (&'static Shader, Mode),
    coefficients: &[i32],
    d: [u32; 4],
) -> (Vec<u16>, u32) {
    let tables = bpc_gpu::flatten_tables(ProbabilityTables::reference(mode));
    let coefficients = gpu.upload(coefficients).unwrap();
    let blocks = gpu.upload(&d).unwrap();
    let tables = gpu.upload(&tables).unwrap();
    // The top bitplane bpc_measure would have found for these magnitudes
    // (below 2^10), a capacity far above what 64 coefficients need.
    let tops = gpu.upload(&[9u32]).unwrap();
    let caps = gpu.upload(&[3000u32]).unwrap();
    let offsets = gpu.upload(&[0u32]).unwrap();
    let scratch = gpu.upload(&vec![GUARD as u16; 4000]).unwrap();
    let counts = gpu.upload(&[0xdead_beefu32]).unwrap();
    let status = gpu.upload(&[0u32]).unwrap();
    let order = gpu.upload(&[0u32]).unwrap();
    gpu.run(&[Dispatch::new(shader, [1, 1, 1])
        .buffer(&coefficients)
        .buffer(&blocks)
        .buffer(&tables)
        .buffer(&tops)
        .buffer(&caps)
        .buffer(&offsets)
        .buffer(&scratch)
        .buffer(&counts)
        .buffer(&status)
        .buffer(&order)
        .push(&[1, (mode == Mode::ThreePass) as u32])])
        .unwrap();
    (
        gpu.download(&scratch).unwrap(),
        gpu.download(&counts).unwrap()[0],
    )
}

/// The encoders load coefficients without a bound per load, relying on one
/// region check per codeblock (`bpc_region_ok`, bpc/bpc.glsl). The host
/// never hands them such a region (bpc_measure refuses it first), so this
/// drives them directly: regions past the end of the coefficient buffer or
/// whose 32-bit index arithmetic wraps must be refused (no codeword, not a
/// scratch half written), and the last region that fits must be coded.
#[test]
fn gpu_bpc_encode_shader_refuses_regions_outside_the_buffer() {
    let gpu = gpu();
    let len = 4096usize;
    let coefficients: Vec<i32> = (0..len as i32).map(|i| (i * 37 % 1000) - 500).collect();
    for &(shader, mode) in &BPC_ENCODERS {
        for d in regions_outside(len) {
            let (scratch, count) = dispatch_bpc_encode(&gpu, (shader, mode), &coefficients, d);
            assert_eq!(count, 0, "{}: descriptor {d:?} coded", shader.name);
            if let Some(i) = scratch.iter().position(|&v| v != GUARD as u16) {
                panic!(
                    "{}: descriptor {d:?} wrote {:#x} at {i}",
                    shader.name, scratch[i]
                );
            }
        }
        let fits = bpc_desc((len - 64) as u32, 64, 64, 1);
        let (scratch, count) = dispatch_bpc_encode(&gpu, (shader, mode), &coefficients, fits);
        assert!(count > 0, "{}: descriptor {fits:?} refused", shader.name);
        assert!(scratch[..count as usize].iter().any(|&v| v != GUARD as u16));
    }
}

// ------------------------------------------------------------ VLE

/// Files that parse but whose data is hostile: flipped data bits (codes
/// that match nothing or end in the wrong place), and codes from a
/// different table of the same lengths.
fn hostile_vle_files(rng: &mut TestRng) -> Vec<Vec<u8>> {
    let len = rng.random_range(0..20_000);
    let alphabet = rng.random_range(1..=256u32);
    let data: Vec<u8> = (0..len)
        .map(|_| (rng.next_u32() % alphabet) as u8)
        .collect();
    let opts = VleOptions {
        max_len: rng.random_range(8..=24),
        chunk_symbols: 32 * rng.random_range(1..=64),
    };
    let good = vle::compress(&data, &Backend::Cpu, &opts).unwrap();
    let parsed = VleFile::parse(&good).unwrap();
    let data_at = good.len() - parsed.data.len();
    let mut files = vec![good.clone()];
    if parsed.data.len() > 1 {
        for _ in 0..3 {
            let mut f = good.clone();
            for _ in 0..rng.random_range(1..20) {
                // The last byte holds the zero padding the parser checks.
                let i = rng.random_range(data_at..good.len() - 1);
                f[i] ^= 1 << rng.random_range(0..8);
            }
            files.push(f);
        }
    }
    files
}

#[test]
fn gpu_vle_decode_hostile_files_match_cpu() {
    let gpu = Backend::Gpu(gpu());
    for_random_cases("gpu hostile VLE decode", 6, |rng| {
        for file in hostile_vle_files(rng) {
            let Ok(parsed) = VleFile::parse(&file) else {
                continue;
            };
            let cpu = vle::decode(&parsed, &Backend::Cpu);
            let dev = vle::decode(&parsed, &gpu);
            match (cpu, dev) {
                (Ok(c), Ok(g)) => assert!(c == g, "GPU and CPU decode differ"),
                (Err(c), Err(g)) => assert_eq!(
                    vle_error_kind(&c),
                    vle_error_kind(&g),
                    "CPU and GPU reject for different reasons: {c} / {g}"
                ),
                (c, g) => panic!("CPU {:?} vs GPU {:?}", c.err(), g.err()),
            }
        }
    });
}

/// Direct dispatches of `vle_decode` with hostile chunk offsets (past the
/// data, decreasing, maximal), tables (random words) and counts; the
/// output buffer has guard words after the `n_symbols` bytes the push
/// constants announce, which must survive.
#[test]
fn gpu_vle_decode_shader_keeps_to_its_output() {
    let gpu = gpu();
    for_random_cases("gpu hostile vle_decode dispatch", 8, |rng| {
        let lut_bits = rng.random_range(1..=11u32);
        let chunk_symbols = 32 * rng.random_range(1..=8u32);
        let n_chunks = rng.random_range(1..=64u32);
        let n_symbols = rng.random_range(1..=n_chunks * chunk_symbols);
        let data: Vec<u32> = (0..rng.random_range(1..400))
            .map(|_| rng.random())
            .collect();
        let tables: Vec<u32> = if rng.random() {
            // A real table of some code, so chunks decode for a while.
            let mut lens = [0u8; 256];
            lens.iter_mut()
                .take(rng.random_range(2..=256))
                .for_each(|l| *l = 8);
            lens[0] = 8;
            let t = CodeTable::from_lengths(&lens).unwrap();
            let d = DecodeTable::<2048>::new(&t).unwrap();
            let mut v: Vec<u32> = d.lut()[..1 << lut_bits].iter().map(|&e| e as u32).collect();
            v.extend(d.first_codes());
            v.extend(d.counts().iter().map(|&c| c as u32));
            v.extend(d.offsets().iter().map(|&o| o as u32));
            v.extend(d.sorted_symbols().iter().map(|&s| s as u32));
            v
        } else {
            (0..rng.random_range(1..3000))
                .map(|_| rng.random())
                .collect()
        };
        let offsets: Vec<u32> = match rng.random_range(0..3) {
            0 => {
                let mut o: Vec<u32> = (0..=n_chunks)
                    .map(|_| rng.random_range(0..data.len() as u32 * 40))
                    .collect();
                o.sort();
                o
            }
            1 => (0..=n_chunks).map(|_| rng.random()).collect(),
            _ => (0..=n_chunks)
                .map(|c| {
                    if c == n_chunks {
                        u32::MAX
                    } else {
                        c * 8 * chunk_symbols
                    }
                })
                .collect(),
        };
        let out_words = (n_symbols as usize).div_ceil(4);
        const GUARD_WORDS: usize = 64;
        let pattern = 0xa5a5_5a5au32;
        let out = gpu.upload(&vec![pattern; out_words + GUARD_WORDS]).unwrap();
        let data = gpu.upload(&data).unwrap();
        let tables = gpu.upload(&tables).unwrap();
        let offsets = gpu.upload(&offsets).unwrap();
        let control = gpu.upload(&[0u32, u32::MAX]).unwrap();
        let max_len = rng.random_range(0..=40u32);
        gpu.run(&[
            Dispatch::new(&shaders::VLE_DECODE, [n_chunks.div_ceil(64), 1, 1])
                .buffer(&data)
                .buffer(&tables)
                .buffer(&offsets)
                .buffer(&out)
                .buffer(&control)
                .push(&[n_chunks, chunk_symbols, n_symbols, lut_bits, max_len]),
        ])
        .unwrap();
        let out = gpu.download(&out).unwrap();
        let guard = &out[out_words..];
        assert!(
            guard.iter().all(|&w| w == pattern),
            "vle_decode wrote past n_symbols: {:x?}",
            &guard[..8]
        );
        // A partial last word may only hold symbols in its used bytes.
        let tail = n_symbols as usize % 4;
        if tail != 0 {
            let last = out[out_words - 1];
            assert!(
                last == pattern || last >> (8 * tail) == 0,
                "last word {last:#x} has bytes past n_symbols"
            );
        }
        let control = gpu.download(&control).unwrap();
        assert!(
            control[1] == u32::MAX || control[1] < n_chunks,
            "failing chunk {} of {n_chunks}",
            control[1]
        );
    });
}
