//! Property tests on random codeblocks: both forms agree, streams round
//! trip, truncation behaves as spec section 8 says.

use std::vec::Vec;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

/// A random codeblock: `density` of the coefficients nonzero, magnitudes
/// with up to `bits` bits (log-uniform, so small values dominate as in real
/// data), signs random.
pub(super) fn random_block(
    rng: &mut ChaCha8Rng,
    width: usize,
    height: usize,
    density: f64,
    bits: u32,
) -> Vec<i32> {
    (0..width * height)
        .map(|_| {
            if !rng.random_bool(density) {
                return 0;
            }
            let b = rng.random_range(1..=bits);
            let mag = rng.random_range(1u32 << (b - 1)..=((1u64 << b) - 1) as u32);
            if rng.random_bool(0.5) {
                -(mag as i32)
            } else {
                mag as i32
            }
        })
        .collect()
}

/// Random tables; sometimes with zero probabilities, the worst case for the
/// coder (a symbol can exhaust a codeword alone).
pub(super) fn random_tables(rng: &mut ChaCha8Rng, mode: Mode) -> ProbabilityTables {
    let low = if rng.random_bool(0.3) { 0 } else { 1 };
    let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
    for g in groups.iter_mut() {
        for row in g.sig.iter_mut().chain(g.cp_sig.iter_mut()) {
            row.iter_mut()
                .for_each(|p| *p = rng.random_range(low..=127));
        }
        for row in g.sign.iter_mut().chain(g.cp_sign.iter_mut()) {
            row.iter_mut()
                .for_each(|p| *p = rng.random_range(low..=127));
        }
        g.refine
            .iter_mut()
            .for_each(|p| *p = rng.random_range(low..=127));
    }
    ProbabilityTables::new(mode, groups).unwrap()
}

pub(super) struct Case {
    pub data: Vec<i32>,
    pub stride: usize,
    pub width: usize,
    pub height: usize,
    pub tables: ProbabilityTables,
    pub group: usize,
}

pub(super) fn case(seed: u64, max_height: usize) -> Case {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let width = rng.random_range(1..=64);
    let height = rng.random_range(1..=max_height);
    let stride = width + rng.random_range(0..3);
    let density = [0.0, 0.01, 0.1, 0.5, 1.0][rng.random_range(0..5)];
    let bits = [1, 3, 8, 16, 28][rng.random_range(0..5)];
    let mut data = random_block(&mut rng, stride, height, density, bits);
    data.truncate((height - 1) * stride + width);
    let mode = if rng.random_bool(0.5) {
        Mode::TwoPass
    } else {
        Mode::ThreePass
    };
    let tables = if rng.random_bool(0.5) {
        ProbabilityTables::reference(mode).clone()
    } else {
        random_tables(&mut rng, mode)
    };
    let group = rng.random_range(0..GROUPS);
    Case {
        data,
        stride,
        width,
        height,
        tables,
        group,
    }
}

struct SymbolCounter(usize);

impl SymbolObserver for SymbolCounter {
    fn symbol(&mut self, _: SymbolClass, _: u8, _: u8, _: bool) {
        self.0 += 1;
    }
}

/// Every observed symbol, in order.
#[derive(Default)]
struct SymbolLog(Vec<(SymbolClass, u8, u8, bool)>);

impl SymbolObserver for SymbolLog {
    fn symbol(&mut self, class: SymbolClass, bitplane: u8, context: u8, symbol: bool) {
        self.0.push((class, bitplane, context, symbol));
    }
}

/// Symbols counted per (class, bitplane, context) as `(zeros, total)`, by
/// popcounts of whole phases: the way the table trainer counts.
#[derive(Default)]
struct PhaseCounts(std::collections::BTreeMap<(u8, u8, u8), (u32, u32)>);

impl SymbolObserver for PhaseCounts {
    fn symbol(&mut self, _: SymbolClass, _: u8, _: u8, _: bool) {
        panic!("a counting observer sees whole phases");
    }

    fn phase(&mut self, class: SymbolClass, bitplane: u8, by_context: &[u32], ones: u32) {
        for (k, &m) in by_context.iter().enumerate() {
            if m != 0 {
                let cell = self.0.entry((class as u8, bitplane, k as u8)).or_default();
                cell.0 += (m & !ones).count_ones();
                cell.1 += m.count_ones();
            }
        }
    }
}

/// What a tracing observer learns: the decrease reported before each slot
/// opens, and the total.
#[derive(Default)]
struct SlotTrace {
    before_slot: Vec<i128>,
    decreased: i128,
}

impl SymbolObserver for SlotTrace {
    const TRACE: bool = true;
    fn symbol(&mut self, _: SymbolClass, _: u8, _: u8, _: bool) {}
    fn slot(&mut self, slot: u32) {
        assert_eq!(slot as usize, self.before_slot.len(), "slots open in order");
        self.before_slot.push(self.decreased);
    }
    fn decrease(&mut self, decrease: i64) {
        self.decreased += decrease as i128;
    }
}

/// A tracing observer that asks for no distortion: it learns the slots,
/// and must never be told a decrease.
#[derive(Default)]
struct SlotsOnly(u32);

impl SymbolObserver for SlotsOnly {
    const TRACE: bool = true;
    const DISTORTION: bool = false;
    fn symbol(&mut self, _: SymbolClass, _: u8, _: u8, _: bool) {}
    fn slot(&mut self, slot: u32) {
        assert_eq!(slot, self.0, "slots open in order");
        self.0 += 1;
    }
    fn decrease(&mut self, _: i64) {
        panic!("an observer without distortion was told a decrease");
    }
}

pub(super) struct Stream {
    enc: Encoded,
    pub words: Vec<u16>,
    records: Vec<PassRecord>,
}

pub(super) fn encode_case(c: &Case) -> Stream {
    let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
    let params = CodingParams::new(&c.tables, c.group);
    let mut scratch = Scratch::<256>::new();
    let mut words = std::vec![0u16; max_codewords_any(c.width, c.height)];
    let mut records = [PassRecord::EMPTY; MAX_PASSES];
    let enc = encode_sequential(
        &block,
        &params,
        &mut scratch,
        &mut words,
        Some(&mut records),
    )
    .unwrap();
    words.truncate(enc.codewords);
    let symbols = symbol_count(c.width, c.height, enc.top_bitplane, nonzero_count(&block));
    let bound = codeword_bound(c.width, symbols, c.tables.min_probability());
    assert!(
        enc.codewords <= bound,
        "{} codewords > bound {bound}",
        enc.codewords
    );
    assert!(bound <= max_codewords(c.width, c.height, enc.top_bitplane));
    // The symbol count is exact: the trainer's observer sees every symbol.
    let mut counter = SymbolCounter(0);
    let mut again = std::vec![0u16; words.len()];
    encode_sequential_observed(
        &block,
        &params,
        &mut scratch,
        &mut again,
        None,
        &mut counter,
    )
    .unwrap();
    assert_eq!(counter.0, symbols);
    Stream {
        enc,
        words,
        records: records[..enc.passes].to_vec(),
    }
}

/// Decodes with both forms (subgroup sizes 4 and 32), checks they agree.
/// The output buffer starts as the input with garbage in the codeblock:
/// the decoder must overwrite all of the codeblock and none of the padding
/// between rows.
pub(super) fn decode_case(c: &Case, s: &Stream, limits: DecodeLimits) -> (Vec<i32>, Decoded) {
    let params = CodingParams::new(&c.tables, c.group);
    let mut scratch = Scratch::<256>::new();
    let mut garbage = c.data.clone();
    for y in 0..c.height {
        garbage[y * c.stride..y * c.stride + c.width].fill(0x5eed);
    }
    let mut a = garbage.clone();
    let out = CodeblockMut::new(&mut a, c.stride, c.width, c.height).unwrap();
    let da = decode_sequential(
        &params,
        s.enc.top_bitplane,
        &s.words,
        limits,
        out,
        &mut scratch,
    )
    .unwrap();
    for sub in [4, 32] {
        let mut b = garbage.clone();
        let out = CodeblockMut::new(&mut b, c.stride, c.width, c.height).unwrap();
        let db = decode_lanes(
            &params,
            s.enc.top_bitplane,
            &s.words,
            limits,
            out,
            &mut scratch,
            sub,
        )
        .unwrap();
        assert_eq!((da, &a), (db, &b), "lanes decoder (subgroup {sub}) differs");
    }
    let mut mags = LaneMagnitudes::<256>::new();
    let mut b = garbage.clone();
    let out = CodeblockMut::new(&mut b, c.stride, c.width, c.height).unwrap();
    let db = decode_phases(
        &params,
        s.enc.top_bitplane,
        &s.words,
        limits,
        out,
        &mut scratch,
        &mut mags,
    )
    .unwrap();
    assert_eq!((da, &a), (db, &b), "phase decoder differs");
    // Into separate rows, with magnitudes left over from elsewhere (the
    // phase decoder does not clear them).
    mags.fill(0x0bad_cafe);
    let mut b = garbage.clone();
    let mut rows: Vec<&mut [i32]> = b.chunks_mut(c.stride).map(|r| &mut r[..c.width]).collect();
    let out = CodeblockRows::new(&mut rows).unwrap();
    let db = decode_phases_rows(
        &params,
        s.enc.top_bitplane,
        &s.words,
        limits,
        out,
        &mut scratch,
        &mut mags,
    )
    .unwrap();
    assert_eq!((da, &a), (db, &b), "phase decoder into rows differs");
    (a, da)
}

fn energy(c: &Case) -> u128 {
    let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
    let zeros = std::vec![0i32; c.data.len()];
    let z = Codeblock::new(&zeros, c.stride, c.width, c.height).unwrap();
    squared_error(&block, &z).unwrap()
}

fn error_of(c: &Case, decoded: &[i32]) -> (u128, u32) {
    let mut sum = 0u128;
    let mut max = 0u32;
    for y in 0..c.height {
        for x in 0..c.width {
            let i = y * c.stride + x;
            let d = (c.data[i] as i64 - decoded[i] as i64).unsigned_abs();
            sum += (d as u128) * (d as u128);
            max = max.max(d as u32);
        }
    }
    (sum, max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn lanes_encoder_equals_sequential(seed in any::<u64>()) {
        let c = case(seed, 24);
        let s = encode_case(&c);
        let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        for sub in [1u32, 2, 4, 8, 16, 32] {
            let mut words = std::vec![0u16; s.words.len()];
            let mut records = [PassRecord::EMPTY; MAX_PASSES];
            let enc = encode_lanes(&block, &params, &mut scratch, &mut words, Some(&mut records), sub).unwrap();
            prop_assert_eq!(enc, s.enc);
            prop_assert_eq!(&words, &s.words);
            prop_assert_eq!(&records[..enc.passes], &s.records[..]);
        }
        // One codeword short is an error for both forms.
        if let Some(short) = s.words.len().checked_sub(1) {
            let mut words = std::vec![0u16; short];
            let e1 = encode_sequential(&block, &params, &mut scratch, &mut words, None);
            let e2 = encode_lanes(&block, &params, &mut scratch, &mut words, None, 8);
            prop_assert_eq!(e1, Err(EncodeError::OutputTooSmall { capacity: short }));
            prop_assert_eq!(e2, e1);
        }
    }

    /// The observing walk reports exactly the encoder's symbols.
    #[test]
    fn observe_symbols_reports_the_encoders_symbols(seed in any::<u64>()) {
        let c = case(seed, 24);
        let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        let mut coded = SymbolLog::default();
        let mut words = std::vec![0u16; max_codewords_any(c.width, c.height)];
        let enc = encode_sequential_observed(&block, &params, &mut scratch, &mut words, None, &mut coded).unwrap();
        let mut seen = SymbolLog::default();
        let walked = observe_symbols(&block, &params, &mut scratch, &mut seen).unwrap();
        prop_assert_eq!(&seen.0, &coded.0);
        // Counting whole phases gives the counts of the symbols one by one.
        let mut counted = PhaseCounts::default();
        observe_symbols(&block, &params, &mut scratch, &mut counted).unwrap();
        let mut want = std::collections::BTreeMap::new();
        for &(class, j, k, bit) in &coded.0 {
            let cell: &mut (u32, u32) = want.entry((class as u8, j, k)).or_default();
            cell.0 += !bit as u32;
            cell.1 += 1;
        }
        prop_assert_eq!(counted.0, want);
        prop_assert_eq!(walked.top_bitplane, enc.top_bitplane);
        prop_assert_eq!(walked.passes, enc.passes);
        prop_assert_eq!(walked.codewords, 0);
    }

    /// Without distortion the encoder codes the same stream and records
    /// the same passes, with every `distortion_decrease` 0, whether it
    /// codes whole phases or (tracing) lane by lane.
    #[test]
    fn without_distortion_codes_the_same_stream(seed in any::<u64>()) {
        let c = case(seed, 16);
        let s = encode_case(&c);
        let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        let want: Vec<PassRecord> = s
            .records
            .iter()
            .map(|r| PassRecord { distortion_decrease: 0, ..*r })
            .collect();
        let mut words = std::vec![0u16; s.words.len()];
        let mut records = [PassRecord::EMPTY; MAX_PASSES];
        let enc = encode_sequential_observed(
            &block, &params, &mut scratch, &mut words, Some(&mut records), &mut WithoutDistortion,
        ).unwrap();
        prop_assert_eq!(enc, s.enc);
        prop_assert_eq!(&words, &s.words);
        prop_assert_eq!(&records[..enc.passes], &want[..]);
        let mut traced = SlotsOnly::default();
        let mut words = std::vec![0u16; s.words.len()];
        let enc = encode_sequential_observed(
            &block, &params, &mut scratch, &mut words, Some(&mut records), &mut traced,
        ).unwrap();
        prop_assert_eq!(enc, s.enc);
        prop_assert_eq!(&words, &s.words);
        prop_assert_eq!(traced.0 as usize, s.words.len());
        prop_assert_eq!(&records[..enc.passes], &want[..]);
    }

    /// Reading the magnitudes' bits from [`BitPlanes`] codes the same
    /// stream, records, symbols, slots and decreases as reading the
    /// coefficients, for every kind of observer; the planes are reused
    /// from another codeblock (stale masks above its top bitplane).
    #[test]
    fn bit_planes_code_the_same_stream(seed in any::<u64>(), other in any::<u64>()) {
        let c = case(seed, 24);
        let s = encode_case(&c);
        let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        let mut planes = std::boxed::Box::new(BitPlanes::<256>::new());
        let o = case(other, 24);
        let other_block = Codeblock::new(&o.data, o.stride, o.width, o.height).unwrap();
        let mut other_words = std::vec![0u16; max_codewords_any(o.width, o.height)];
        encode_sequential_planes(
            &other_block, &CodingParams::new(&o.tables, o.group), &mut scratch, &mut planes,
            &mut other_words, None, &mut (),
        ).unwrap();

        let mut words = std::vec![0u16; s.words.len()];
        let mut records = [PassRecord::EMPTY; MAX_PASSES];
        let mut log = SymbolLog::default();
        let enc = encode_sequential_planes(
            &block, &params, &mut scratch, &mut planes, &mut words, Some(&mut records), &mut log,
        ).unwrap();
        prop_assert_eq!(enc, s.enc);
        prop_assert_eq!(&words, &s.words);
        prop_assert_eq!(&records[..enc.passes], &s.records[..]);
        let mut want_log = SymbolLog::default();
        let mut again = std::vec![0u16; s.words.len()];
        encode_sequential_observed(&block, &params, &mut scratch, &mut again, None, &mut want_log).unwrap();
        prop_assert_eq!(&log.0, &want_log.0);

        // Tracing, with and without the decreases.
        let mut want_trace = SlotTrace::default();
        encode_sequential_observed(&block, &params, &mut scratch, &mut again, None, &mut want_trace).unwrap();
        let mut trace = SlotTrace::default();
        let mut words = std::vec![0u16; s.words.len()];
        encode_sequential_planes(&block, &params, &mut scratch, &mut planes, &mut words, Some(&mut records), &mut trace).unwrap();
        prop_assert_eq!(&words, &s.words);
        prop_assert_eq!(&records[..enc.passes], &s.records[..]);
        prop_assert_eq!(&trace.before_slot, &want_trace.before_slot);
        prop_assert_eq!(trace.decreased, want_trace.decreased);
        let mut slots = SlotsOnly::default();
        let mut words = std::vec![0u16; s.words.len()];
        encode_sequential_planes(&block, &params, &mut scratch, &mut planes, &mut words, None, &mut slots).unwrap();
        prop_assert_eq!(&words, &s.words);
        prop_assert_eq!(slots.0 as usize, s.words.len());

        // Without distortion, phase by phase.
        let mut words = std::vec![0u16; s.words.len()];
        let enc = encode_sequential_planes(
            &block, &params, &mut scratch, &mut planes, &mut words, Some(&mut records), &mut WithoutDistortion,
        ).unwrap();
        prop_assert_eq!(enc, s.enc);
        prop_assert_eq!(&words, &s.words);
        for (r, want) in records[..enc.passes].iter().zip(&s.records) {
            prop_assert_eq!(*r, PassRecord { distortion_decrease: 0, ..*want });
        }

        // The observer walk, symbol by symbol and counted by phase.
        let mut seen = SymbolLog::default();
        let walked = observe_symbols_planes(&block, &params, &mut scratch, &mut planes, &mut seen).unwrap();
        prop_assert_eq!(&seen.0, &want_log.0);
        prop_assert_eq!(walked.top_bitplane, s.enc.top_bitplane);
        let (mut counted, mut want_counts) = (PhaseCounts::default(), PhaseCounts::default());
        observe_symbols_planes(&block, &params, &mut scratch, &mut planes, &mut counted).unwrap();
        observe_symbols(&block, &params, &mut scratch, &mut want_counts).unwrap();
        prop_assert_eq!(counted.0, want_counts.0);
    }

    #[test]
    fn round_trip_and_pass_boundary_truncation(seed in any::<u64>()) {
        let c = case(seed, 12);
        let s = encode_case(&c);
        let (full, d) = decode_case(&c, &s, DecodeLimits::ALL);
        prop_assert!(d.complete);
        prop_assert_eq!(d.codewords_used, s.words.len());
        prop_assert_eq!(&full, &c.data);
        // Every pass boundary: the recorded codewords decode exactly the
        // recorded distortion; after a whole bitplane j every error is < 2^j.
        let mut remaining = energy(&c) as i128;
        let mut last = remaining;
        let total: i128 = s.records.iter().map(|r| r.distortion_decrease).sum();
        prop_assert_eq!(total, remaining);
        for (p, r) in s.records.iter().enumerate() {
            remaining -= r.distortion_decrease;
            let limits = DecodeLimits { max_codewords: r.codewords as usize, max_passes: p + 1 };
            let (dec, d) = decode_case(&c, &s, limits);
            prop_assert_eq!(d.passes_completed, p + 1);
            prop_assert_eq!(d.codewords_used, r.codewords as usize);
            let (err, max) = error_of(&c, &dec);
            prop_assert_eq!(err as i128, remaining);
            if r.kind != PassKind::Refinement {
                prop_assert!(remaining <= last, "a significance pass increased the error");
            }
            let bitplane_done = s.records.get(p + 1).is_none_or(|next| next.bitplane != r.bitplane);
            if bitplane_done {
                prop_assert!((max as u64) < (1u64 << r.bitplane), "error {max} after bitplane {}", r.bitplane);
            }
            last = remaining;
            // The same codewords without a pass limit decode at least as far.
            let (_, d) = decode_case(&c, &s, DecodeLimits::codewords(r.codewords as usize));
            prop_assert!(d.passes_completed > p);
        }
    }

    /// A tracing observer knows the error of the stream cut after any
    /// number of codewords: the decrease it was told before slot `m`
    /// opened is exactly what a decoder given `m` codewords removes.
    #[test]
    fn slot_traces_give_the_error_at_every_cut(seed in any::<u64>()) {
        let c = case(seed, 12);
        let s = encode_case(&c);
        let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        let mut trace = SlotTrace::default();
        let mut words = std::vec![0u16; s.words.len()];
        encode_sequential_observed(&block, &params, &mut scratch, &mut words, None, &mut trace).unwrap();
        prop_assert_eq!(&words, &s.words);
        prop_assert_eq!(trace.before_slot.len(), s.words.len());
        let energy = energy(&c) as i128;
        prop_assert_eq!(trace.decreased, energy);
        for (m, before) in trace.before_slot.iter().enumerate() {
            let (dec, _) = decode_case(&c, &s, DecodeLimits::codewords(m));
            prop_assert_eq!(error_of(&c, &dec).0 as i128, energy - before, "cut at {} codewords", m);
        }
    }

    #[test]
    fn truncation_at_any_codeword_is_a_prefix(seed in any::<u64>(), cut in 0.0f64..1.0) {
        let c = case(seed, 16);
        let s = encode_case(&c);
        let m = (s.words.len() as f64 * cut) as usize;
        let (dec, d) = decode_case(&c, &s, DecodeLimits::codewords(m));
        prop_assert_eq!(d.codewords_used, m);
        prop_assert_eq!(d.complete, s.words.is_empty());
        // More codewords never decode fewer passes, and what was decoded
        // with m codewords is consistent with the original: signs agree and
        // every reconstructed value is within its bitplane's half step.
        let (_, d2) = decode_case(&c, &s, DecodeLimits::codewords(m + 1));
        prop_assert!(d2.passes_completed >= d.passes_completed);
        prop_assert!(d2.codewords_used == m + 1 || d2.complete);
        for (v, r) in c.data.iter().zip(&dec) {
            if *r != 0 {
                prop_assert_eq!(v.signum(), r.signum());
                let step = 1u32 << r.unsigned_abs().trailing_zeros();
                prop_assert!(v.unsigned_abs().abs_diff(r.unsigned_abs()) <= step);
            }
        }
        // Reading past the stream is impossible: a stream cut short behaves
        // like the same stream with a codeword limit.
        let cut_stream = Stream { enc: s.enc, words: s.words[..m].to_vec(), records: Vec::new() };
        let (dec3, d3) = decode_case(&c, &cut_stream, DecodeLimits::ALL);
        prop_assert_eq!((dec3, d3), (dec, d));
    }

    #[test]
    fn garbage_streams_never_panic(seed in any::<u64>(), words in proptest::collection::vec(any::<u16>(), 0..400), top in 0u8..=27) {
        let c = case(seed, 16);
        let s = Stream { enc: Encoded { top_bitplane: Some(top), codewords: words.len(), passes: 0 }, words, records: Vec::new() };
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        let mut a = std::vec![0i32; c.data.len()];
        let out = CodeblockMut::new(&mut a, c.stride, c.width, c.height).unwrap();
        let ra = decode_sequential(&params, Some(top), &s.words, DecodeLimits::ALL, out, &mut scratch);
        let mut b = std::vec![0i32; c.data.len()];
        let out = CodeblockMut::new(&mut b, c.stride, c.width, c.height).unwrap();
        let rb = decode_lanes(&params, Some(top), &s.words, DecodeLimits::ALL, out, &mut scratch, 16);
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(&a, &b);
        let mut mags = LaneMagnitudes::<256>::new();
        let mut b = std::vec![0i32; c.data.len()];
        let out = CodeblockMut::new(&mut b, c.stride, c.width, c.height).unwrap();
        let rb = decode_phases(&params, Some(top), &s.words, DecodeLimits::ALL, out, &mut scratch, &mut mags);
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(&a, &b);
        mags.fill(0x0bad_cafe);
        let mut b = std::vec![0i32; c.data.len()];
        let mut rows: Vec<&mut [i32]> = b.chunks_mut(c.stride).map(|r| &mut r[..c.width]).collect();
        let out = CodeblockRows::new(&mut rows).unwrap();
        let rb = decode_phases_rows(&params, Some(top), &s.words, DecodeLimits::ALL, out, &mut scratch, &mut mags);
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn tall_and_full_codeblocks_agree() {
    for seed in 0..6u64 {
        let mut c = case(seed, 256);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        c.width = 64;
        c.stride = 64;
        c.height = [256, 64, 1][seed as usize % 3];
        c.data = random_block(&mut rng, 64, c.height, 0.7, 12);
        let s = encode_case(&c);
        let block = Codeblock::new(&c.data, 64, 64, c.height).unwrap();
        let params = CodingParams::new(&c.tables, c.group);
        let mut scratch = Scratch::<256>::new();
        let mut words = std::vec![0u16; s.words.len()];
        let enc = encode_lanes(&block, &params, &mut scratch, &mut words, None, 16).unwrap();
        assert_eq!((enc, &words), (s.enc, &s.words));
        let mut back = std::vec![0i32; c.data.len()];
        let out = CodeblockMut::new(&mut back, 64, 64, c.height).unwrap();
        decode_lanes(
            &params,
            s.enc.top_bitplane,
            &s.words,
            DecodeLimits::ALL,
            out,
            &mut scratch,
            8,
        )
        .unwrap();
        assert_eq!(back, c.data);
        let mut mags = LaneMagnitudes::<256>::new();
        let mut back = std::vec![0x5eed; c.data.len()];
        let out = CodeblockMut::new(&mut back, 64, 64, c.height).unwrap();
        decode_phases(
            &params,
            s.enc.top_bitplane,
            &s.words,
            DecodeLimits::ALL,
            out,
            &mut scratch,
            &mut mags,
        )
        .unwrap();
        assert_eq!(back, c.data);
    }
}
