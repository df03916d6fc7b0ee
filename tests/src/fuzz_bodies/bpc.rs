//! BPC-PaCo targets: codeblock decode of arbitrary streams (with and without
//! truncation), encode → decode round trip with the rate-control records
//! checked against the decoder, and sequential vs lane-parallel forms.

use wavelane_core::bpc::{
    self, codeword_bound, max_codewords, nonzero_count, pass_count, squared_error, symbol_count,
    Codeblock, CodeblockMut, CodingParams, DecodeLimits, Decoded, EncodeError, GroupTables, Mode,
    PassRecord, ProbabilityTables, Scratch, MAX_HEIGHT, MAX_PASSES,
};

use super::input::{Input, SeedWriter};

/// Every subgroup size the lane forms accept.
pub const SUBGROUP_SIZES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Value written around a decoded codeblock; a decoder that writes outside
/// its codeblock changes it.
const GUARD: i32 = 0x5a5a_5a5a;
/// Guard columns right of each row and guard rows below the codeblock.
const GUARD_COLS: usize = 3;
const GUARD_ROWS: usize = 1;

/// Probability tables chosen by a flags byte: bit 0 the mode, bit 1 uniform
/// instead of the reference preset, bit 2 a pattern of 8 probabilities
/// (0..=127, extremes included) from the input for every table entry.
fn tables_from(flags: u8, inp: &mut Input<'_>) -> ProbabilityTables {
    let mode = if flags & 1 == 0 {
        Mode::TwoPass
    } else {
        Mode::ThreePass
    };
    if flags & 4 != 0 {
        let pattern: [u8; 8] = core::array::from_fn(|_| inp.u8() & 0x7f);
        let mut i = 0;
        let mut next = || {
            i += 1;
            pattern[i % 8]
        };
        let mut g = GroupTables::UNIFORM;
        for row in g.sig.iter_mut().chain(g.cp_sig.iter_mut()) {
            row.iter_mut().for_each(|p| *p = next());
        }
        for row in g.sign.iter_mut().chain(g.cp_sign.iter_mut()) {
            row.iter_mut().for_each(|p| *p = next());
        }
        g.refine.iter_mut().for_each(|p| *p = next());
        ProbabilityTables::new(mode, core::array::from_fn(|_| g.clone()))
            .expect("probabilities <= 127 are valid")
    } else if flags & 2 != 0 {
        ProbabilityTables::uniform(mode)
    } else {
        ProbabilityTables::reference(mode).clone()
    }
}

/// A decode output buffer: the codeblock at stride `width + GUARD_COLS`,
/// with guard rows below, all filled with [`GUARD`].
struct Guarded {
    data: Vec<i32>,
    width: usize,
    height: usize,
}

impl Guarded {
    fn new(width: usize, height: usize) -> Self {
        let stride = width + GUARD_COLS;
        Guarded {
            data: vec![GUARD; stride * (height + GUARD_ROWS)],
            width,
            height,
        }
    }

    fn stride(&self) -> usize {
        self.width + GUARD_COLS
    }

    fn block(&mut self) -> CodeblockMut<'_> {
        let (s, w, h) = (self.stride(), self.width, self.height);
        CodeblockMut::new(&mut self.data, s, w, h).expect("guarded geometry is valid")
    }

    fn view(&self) -> Codeblock<'_> {
        Codeblock::new(&self.data, self.stride(), self.width, self.height).expect("valid geometry")
    }

    /// The codeblock's values, row by row.
    fn values(&self) -> Vec<i32> {
        let v = self.view();
        (0..self.height).flat_map(|y| v.row(y).to_vec()).collect()
    }

    /// Panics if anything outside the codeblock changed.
    fn assert_guards(&self, what: &str) {
        let s = self.stride();
        for (i, &v) in self.data.iter().enumerate() {
            let inside = i / s < self.height && i % s < self.width;
            assert!(
                inside || v == GUARD,
                "{what}: wrote {v} outside the codeblock at {i}"
            );
        }
    }
}

/// One decode by `subgroup` (`None`: the sequential decoder); returns the
/// result and the decoded values after checking the guards.
fn decode_one(
    params: &CodingParams<'_>,
    top: Option<u8>,
    words: &[u16],
    limits: DecodeLimits,
    (width, height): (usize, usize),
    subgroup: Option<u32>,
) -> (Result<Decoded, bpc::DecodeError>, Vec<i32>) {
    let mut out = Guarded::new(width, height);
    let mut scratch = Box::new(Scratch::<MAX_HEIGHT>::new());
    let result = match subgroup {
        None => bpc::decode_sequential(params, top, words, limits, out.block(), &mut scratch),
        Some(s) => bpc::decode_lanes(params, top, words, limits, out.block(), &mut scratch, s),
    };
    out.assert_guards("decode");
    if let Ok(d) = &result {
        assert!(d.codewords_used <= words.len().min(limits.max_codewords));
        assert!(d.passes_completed <= limits.max_passes);
        // An empty codeblock decodes to zeros; otherwise no magnitude can
        // reach 2^(M+1).
        let limit = top.map_or(1, |m| 1u32 << (m as u32 + 1));
        let values = out.values();
        assert!(
            values.iter().all(|v| v.unsigned_abs() < limit),
            "value above 2^(M+1)"
        );
    }
    (result, out.values())
}

/// Decode target: a header (flags, group, width, height, top bitplane,
/// codeword and pass limits, subgroup size) and then big-endian codewords.
/// The sequential and lane decoders must agree, write only inside the
/// codeblock, and return either an error or values below `2^(M+1)`.
pub fn bpc_decode(data: &[u8]) {
    let mut inp = Input::new(data);
    let tables = tables_from(inp.u8(), &mut inp);
    let group = inp.range(0, 16); // 16 is out of range: BadGroup
    let width = inp.range(1, 64);
    let height = inp.range(1, MAX_HEIGHT);
    let top = match inp.u8() {
        0xff => None,
        t => Some(t % 29), // 28 is out of range: BadTopBitplane
    };
    let max_codewords = match inp.u16() {
        0xffff => usize::MAX,
        n => n as usize,
    };
    let max_passes = match inp.u8() {
        0xff => usize::MAX,
        n => n as usize,
    };
    let subgroup = SUBGROUP_SIZES[inp.range(0, 5)];
    let words: Vec<u16> = inp
        .rest()
        .chunks_exact(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]))
        .collect();
    let params = CodingParams::new(&tables, group);
    let limits = DecodeLimits {
        max_codewords,
        max_passes,
    };
    let seq = decode_one(&params, top, &words, limits, (width, height), None);
    let lanes = decode_one(
        &params,
        top,
        &words,
        limits,
        (width, height),
        Some(subgroup),
    );
    assert_eq!(
        seq, lanes,
        "sequential and lane decoders differ (subgroup {subgroup})"
    );
    if let (Ok(d), Some(_)) = (&seq.0, top) {
        assert!(d.passes_completed <= pass_count(params.mode(), top));
    }
}

/// A codeblock from the input: width, height, shift and per-coefficient
/// `i16` values scaled by `2^shift` (low bits filled when asked), so
/// magnitudes reach the 28-bit limit; bit 3 of `flags` puts one coefficient
/// just above it.
fn codeblock_from(flags: u8, inp: &mut Input<'_>) -> (Vec<i32>, usize, usize) {
    let width = inp.range(1, 64);
    let height = if flags & 8 != 0 {
        inp.range(1, MAX_HEIGHT)
    } else {
        inp.range(1, 32)
    };
    let shift = inp.range(0, 12) as u32;
    let fill = if flags & 16 != 0 {
        (1i32 << shift) - 1
    } else {
        0
    };
    let mut coeffs: Vec<i32> = (0..width * height)
        .map(|_| {
            let raw = inp.u16() as i16 as i32;
            let mag = (raw.unsigned_abs() << shift) as i32 | if raw != 0 { fill } else { 0 };
            if raw < 0 {
                -mag
            } else {
                mag
            }
        })
        .collect();
    if flags & 32 != 0 {
        let i = inp.range(0, coeffs.len() - 1);
        coeffs[i] = 1 << 28;
    }
    (coeffs, width, height)
}

/// Round-trip target: arbitrary coefficients are encoded by both encoders
/// (equal words and records), decoded exactly, and truncated both at an
/// arbitrary codeword and at a pass boundary, where the decoder's error must
/// equal the energy minus the recorded distortion decreases.
pub fn bpc_roundtrip(data: &[u8]) {
    let mut inp = Input::new(data);
    let flags = inp.u8();
    let tables = tables_from(flags, &mut inp);
    let group = inp.range(0, 15);
    let subgroup = SUBGROUP_SIZES[inp.range(0, 5)];
    let cut = inp.u16() as usize;
    let pass_cut = inp.u8() as usize;
    let (coeffs, width, height) = codeblock_from(flags, &mut inp);
    let params = CodingParams::new(&tables, group);
    let block = Codeblock::new(&coeffs, width, width, height).expect("valid geometry");

    let mut scratch = Box::new(Scratch::<MAX_HEIGHT>::new());
    let mut words = vec![0u16; max_codewords(width, height, Some(bpc::MAX_BITPLANE))];
    let mut records = [PassRecord::EMPTY; MAX_PASSES];
    let seq = bpc::encode_sequential(
        &block,
        &params,
        &mut scratch,
        &mut words,
        Some(&mut records),
    );
    let mut lane_words = vec![0u16; words.len()];
    let mut lane_records = [PassRecord::EMPTY; MAX_PASSES];
    let lanes = bpc::encode_lanes(
        &block,
        &params,
        &mut scratch,
        &mut lane_words,
        Some(&mut lane_records),
        subgroup,
    );
    assert_eq!(seq, lanes, "encoders disagree (subgroup {subgroup})");
    if flags & 32 != 0 {
        assert_eq!(seq, Err(EncodeError::CoefficientTooLarge));
        return;
    }
    let enc = seq.expect("in-range coefficients encode");
    let n = enc.codewords;
    assert_eq!(
        &words[..n],
        &lane_words[..n],
        "encoders wrote different words"
    );
    let passes = enc.passes;
    assert_eq!(
        &records[..passes],
        &lane_records[..passes],
        "different pass records"
    );

    let top = bpc::most_significant_bitplane(&block).expect("in range");
    assert_eq!(enc.top_bitplane, top);
    assert_eq!(passes, pass_count(params.mode(), top));
    let symbols = symbol_count(width, height, top, nonzero_count(&block));
    assert!(
        n <= codeword_bound(width, symbols, tables.min_probability()),
        "codeword bound broken"
    );
    assert!(n <= max_codewords(width, height, top));

    // Complete stream: exact reconstruction.
    let words = &words[..n];
    let all = decode_one(
        &params,
        top,
        words,
        DecodeLimits::ALL,
        (width, height),
        None,
    );
    let d = all.0.expect("own stream decodes");
    assert!(d.complete && d.codewords_used == n && d.passes_completed == passes);
    assert_eq!(all.1, coeffs, "lossless round trip failed");
    let all_lanes = decode_one(
        &params,
        top,
        words,
        DecodeLimits::ALL,
        (width, height),
        Some(subgroup),
    );
    assert_eq!(all, all_lanes);

    // Truncated at an arbitrary codeword.
    let k = cut % (n + 1);
    let cut_seq = decode_one(
        &params,
        top,
        words,
        DecodeLimits::codewords(k),
        (width, height),
        None,
    );
    let c = cut_seq.0.expect("a truncated stream decodes");
    assert!(c.codewords_used <= k);
    assert_eq!(
        c.complete,
        k == n,
        "completeness after truncation at {k} of {n}"
    );
    let cut_lanes = decode_one(
        &params,
        top,
        words,
        DecodeLimits::codewords(k),
        (width, height),
        Some(subgroup),
    );
    assert_eq!(cut_seq, cut_lanes);

    // Truncated after a whole pass, as rate control does: the records say
    // how many codewords that takes and how much error remains.
    if passes > 0 {
        let p = pass_cut % passes;
        let limits = DecodeLimits {
            max_codewords: records[p].codewords as usize,
            max_passes: p + 1,
        };
        let (r, values) = decode_one(&params, top, words, limits, (width, height), None);
        let r = r.expect("pass-truncated stream decodes");
        assert_eq!(r.passes_completed, p + 1, "pass truncation stopped early");
        let decoded = Codeblock::new(&values, width, width, height).expect("geometry");
        let error = squared_error(&block, &decoded).expect("same size") as i128;
        let energy: i128 = coeffs.iter().map(|&v| (v as i128) * (v as i128)).sum();
        let decrease: i128 = records[..=p].iter().map(|r| r.distortion_decrease).sum();
        assert_eq!(
            error,
            energy - decrease,
            "records disagree with the decoder after pass {p}"
        );
    }
}

/// Differential target: one codeblock (or one arbitrary stream, by the
/// first byte's low bit) through the sequential form and the lane form at
/// every subgroup size.
pub fn bpc_lanes_diff(data: &[u8]) {
    let mut inp = Input::new(data);
    if inp.u8() & 1 == 0 {
        let flags = inp.u8();
        let tables = tables_from(flags, &mut inp);
        let group = inp.range(0, 15);
        let (coeffs, width, height) = codeblock_from(flags & !32, &mut inp);
        let params = CodingParams::new(&tables, group);
        let block = Codeblock::new(&coeffs, width, width, height).expect("valid geometry");
        let mut scratch = Box::new(Scratch::<MAX_HEIGHT>::new());
        let cap = max_codewords(width, height, Some(bpc::MAX_BITPLANE));
        let mut want = vec![0u16; cap];
        let r = bpc::encode_sequential(&block, &params, &mut scratch, &mut want, None);
        for s in SUBGROUP_SIZES {
            let mut got = vec![0u16; cap];
            let l = bpc::encode_lanes(&block, &params, &mut scratch, &mut got, None, s);
            assert_eq!(r, l, "encode result, subgroup {s}");
            assert_eq!(want, got, "encoded words, subgroup {s}");
        }
    } else {
        let tables = tables_from(inp.u8(), &mut inp);
        let group = inp.range(0, 15);
        let width = inp.range(1, 64);
        let height = inp.range(1, 64);
        let top = Some(inp.range(0, 27) as u8);
        let words: Vec<u16> = inp
            .rest()
            .chunks_exact(2)
            .map(|p| u16::from_be_bytes([p[0], p[1]]))
            .collect();
        let params = CodingParams::new(&tables, group);
        let want = decode_one(
            &params,
            top,
            &words,
            DecodeLimits::ALL,
            (width, height),
            None,
        );
        for s in SUBGROUP_SIZES {
            let got = decode_one(
                &params,
                top,
                &words,
                DecodeLimits::ALL,
                (width, height),
                Some(s),
            );
            assert_eq!(want, got, "decode, subgroup {s}");
        }
    }
}

/// A codeblock whose coefficients mix every magnitude class.
fn sample_block(width: usize, height: usize, seed: u32) -> Vec<i32> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..width * height)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let mag = (x >> 8) & ((1 << (x % 12)) - 1);
            if x & 1 == 1 {
                -(mag as i32)
            } else {
                mag as i32
            }
        })
        .collect()
}

/// Seeds: the header of each target followed by streams our encoder wrote.
pub fn seeds_decode() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (flags, width, height, seed) in [
        (0u8, 64, 64, 1u32),
        (1, 64, 64, 2),
        (0, 13, 7, 3),
        (3, 5, 40, 4),
    ] {
        let mode = if flags & 1 == 0 {
            Mode::TwoPass
        } else {
            Mode::ThreePass
        };
        let tables = if flags & 2 != 0 {
            ProbabilityTables::uniform(mode)
        } else {
            ProbabilityTables::reference(mode).clone()
        };
        let coeffs = sample_block(width, height, seed);
        let block = Codeblock::new(&coeffs, width, width, height).expect("geometry");
        let params = CodingParams::new(&tables, 4);
        let mut scratch = Box::new(Scratch::<MAX_HEIGHT>::new());
        let mut words = vec![0u16; max_codewords(width, height, Some(bpc::MAX_BITPLANE))];
        let enc = bpc::encode_sequential(&block, &params, &mut scratch, &mut words, None)
            .expect("sample encodes");
        let bytes: Vec<u8> = words[..enc.codewords]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect();
        for (max_cw, max_passes) in [
            (0xffffu16, 0xffu8),
            ((enc.codewords / 2) as u16, 0xff),
            (0xffff, 3),
        ] {
            seeds.push(
                SeedWriter::new()
                    .u8(flags)
                    .u8(4)
                    .u8(width as u8 - 1)
                    .u8(height as u8 - 1)
                    .u8(enc.top_bitplane.unwrap_or(0xff))
                    .u16(max_cw)
                    .u8(max_passes)
                    .u8(3)
                    .bytes(&bytes)
                    .finish(),
            );
        }
    }
    seeds
}

/// Seeds for the round-trip and differential targets: small codeblocks of
/// every flag combination.
pub fn seeds_roundtrip() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for flags in [0u8, 1, 2, 3, 4 | 1, 8, 16 | 1, 32] {
        let coeffs = sample_block(16, 8, flags as u32);
        let mut w = SeedWriter::new().u8(flags);
        if flags & 4 != 0 {
            w = w.bytes(&[0, 127, 1, 64, 100, 20, 126, 3]);
        }
        w = w.u8(2).u8(flags % 6).u16(1000).u8(5).u8(15).u8(7).u8(3);
        for c in coeffs {
            w = w.u16(c as i16 as u16);
        }
        seeds.push(w.u8(9).finish());
    }
    seeds
}

/// Seeds for [`bpc_lanes_diff`]: encode and decode variants.
pub fn seeds_lanes_diff() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = seeds_roundtrip()
        .into_iter()
        .map(|s| {
            // bpc_lanes_diff reads (mode byte, flags, tables, group, block)
            // where bpc_roundtrip reads (flags, tables, group, subgroup,
            // cut, pass cut, block): rebuild the header.
            let flags = s[0];
            let table_bytes = if flags & 4 != 0 { 8 } else { 0 };
            let mut v = vec![0u8, flags];
            v.extend_from_slice(&s[1..1 + table_bytes + 1]);
            v.extend_from_slice(&s[1 + table_bytes + 5..]);
            v
        })
        .collect();
    for s in seeds_decode().into_iter().take(4) {
        // decode variant: 1, table flags, group, width, height, top, words
        let mut v = vec![1u8, s[0], s[1], s[2], s[3] % 64, s[4]];
        v.extend_from_slice(&s[9..]);
        seeds.push(v);
    }
    seeds
}
