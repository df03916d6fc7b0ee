//! Small cases worked by hand from the spec text.
//!
//! Most use uniform tables (every `P = 64`). Then, from spec section 6, a
//! fresh codeword `S = 2^16 - 1` becomes `2^15 - 1` whatever the symbol
//! (`f = floor(S / 2)`; symbol 1 adds `f + 1 = 2^15` to `L`): each codeword
//! holds exactly 16 symbols of its lane and its value is those symbols read
//! as a binary number, first symbol most significant (a lane's last codeword
//! is padded with zero bits). So each case below is worked out by listing
//! the symbols of every lane in canonical order and the slots they reserve.

use std::vec::Vec;

use super::*;

const TWO: ProbabilityTables = ProbabilityTables::uniform(Mode::TwoPass);
const THREE: ProbabilityTables = ProbabilityTables::uniform(Mode::ThreePass);

/// Encodes with every form (the lane form at every subgroup size, the
/// plane-map form for 2-pass tables), checks they agree and
/// that decoding restores the block; returns the codewords and records.
fn encode_all(
    tables: &ProbabilityTables,
    data: &[i32],
    width: usize,
    height: usize,
) -> (Vec<u16>, Vec<PassRecord>) {
    let block = Codeblock::new(data, width, width, height).unwrap();
    let params = CodingParams::new(tables, 0);
    let mut scratch = Scratch::<64>::new();
    let mut out = [0u16; 256];
    let mut records = [PassRecord::EMPTY; MAX_PASSES];
    let enc =
        encode_sequential(&block, &params, &mut scratch, &mut out, Some(&mut records)).unwrap();
    let words = out[..enc.codewords].to_vec();
    let recs = records[..enc.passes].to_vec();
    for s in [1, 2, 4, 8, 16, 32] {
        let mut out2 = [0u16; 256];
        let mut rec2 = [PassRecord::EMPTY; MAX_PASSES];
        let enc2 =
            encode_lanes(&block, &params, &mut scratch, &mut out2, Some(&mut rec2), s).unwrap();
        assert_eq!(enc2, enc);
        assert_eq!(&out2[..enc.codewords], &words[..]);
        assert_eq!(&rec2[..enc.passes], &recs[..]);
    }
    // The plane-map form codes 2-pass tables only.
    let mut maps = PlaneMaps::<64>::new();
    let mut out3 = [0u16; 256];
    let by_maps = encode_plane_maps(&block, &params, &mut maps, &mut out3);
    if tables.mode() == Mode::TwoPass {
        assert_eq!(by_maps, Ok(enc));
        assert_eq!(&out3[..enc.codewords], &words[..]);
    } else {
        assert_eq!(by_maps, Err(EncodeError::NeedsTwoPasses));
    }
    let mut back = std::vec![0i32; data.len()];
    let out = CodeblockMut::new(&mut back, width, width, height).unwrap();
    let dec = decode_sequential(
        &params,
        enc.top_bitplane,
        &words,
        DecodeLimits::ALL,
        out,
        &mut scratch,
    )
    .unwrap();
    assert!(dec.complete);
    assert_eq!(back, data);
    (words, recs)
}

fn decode_truncated(
    tables: &ProbabilityTables,
    top: u8,
    words: &[u16],
    m: usize,
    width: usize,
    height: usize,
) -> (Vec<i32>, Decoded) {
    let params = CodingParams::new(tables, 0);
    let mut scratch = Scratch::<64>::new();
    let mut back = std::vec![0i32; width * height];
    let out = CodeblockMut::new(&mut back, width, width, height).unwrap();
    let dec = decode_sequential(
        &params,
        Some(top),
        words,
        DecodeLimits::codewords(m),
        out,
        &mut scratch,
    )
    .unwrap();
    let mut back2 = std::vec![0i32; width * height];
    for s in [4, 8, 16, 32] {
        let out = CodeblockMut::new(&mut back2, width, width, height).unwrap();
        let dec2 = decode_lanes(
            &params,
            Some(top),
            words,
            DecodeLimits::codewords(m),
            out,
            &mut scratch,
            s,
        )
        .unwrap();
        assert_eq!((dec2, &back2), (dec, &back));
    }
    (back, dec)
}

fn rec(kind: PassKind, bitplane: u8, codewords: u32, distortion_decrease: i128) -> PassRecord {
    PassRecord {
        kind,
        bitplane,
        codewords,
        distortion_decrease,
    }
}

use PassKind::{Cleanup as CP, Refinement as MRP, Significance as SPP};

/// One coefficient, -5 = -0b101, so M = 2. 2-pass, lane 0 codes:
/// j=2 SPP: b2 = 1 (slot 0), then its sign: no neighbours, context (0, not
/// negative predicted), the value is negative: symbol 1. j=2 MRP: becomes
/// refinable, no symbol. j=1 MRP: b1 = 0. j=0 MRP: b0 = 1.
/// Symbols 1101 -> codeword 0b1101 << 12 = 0xD000.
/// Distortion: 25 -> (5 - 6)^2 = 1 at j=2 SPP; 6 -> 0b100 | 1 = 5 at j=1.
#[test]
fn single_negative_coefficient_two_pass() {
    let (words, recs) = encode_all(&TWO, &[-5], 1, 1);
    assert_eq!(words, [0xD000]);
    let want = [
        rec(SPP, 2, 1, 24),
        rec(MRP, 2, 1, 0),
        rec(SPP, 1, 1, 0),
        rec(MRP, 1, 1, 1),
        rec(SPP, 0, 1, 0),
        rec(MRP, 0, 1, 0),
    ];
    assert_eq!(recs, want);
}

/// The same coefficient in 3-pass mode: bitplane 2 has the CP alone (every
/// coefficient starts pending), which codes b2 = 1 and the sign and makes it
/// refinable at once; bitplanes 1 and 0 refine it in their MRP. Same
/// symbols, same codeword; 1 + 3 * 2 = 7 passes.
#[test]
fn single_negative_coefficient_three_pass() {
    let (words, recs) = encode_all(&THREE, &[-5], 1, 1);
    assert_eq!(words, [0xD000]);
    let want = [
        rec(CP, 2, 1, 24),
        rec(SPP, 1, 1, 0),
        rec(MRP, 1, 1, 1),
        rec(CP, 1, 1, 0),
        rec(SPP, 0, 1, 0),
        rec(MRP, 0, 1, 0),
        rec(CP, 0, 1, 0),
    ];
    assert_eq!(recs, want);
}

/// Width 4, height 8, M = 0, 2-pass: lane 0 owns columns 0-1, lane 1
/// columns 2-3. Nonzero: (row 0, col 2) = 1 and (row 7, col 1) = -1.
///
/// SPP j=0, steps (0,0) .. (7,1); every present coefficient codes b0.
/// - (0,0): lane 0 (col 0) codes 0 in slot 0, lane 1 (col 2) codes 1 in
///   slot 1 (phase A, lane order), then its sign: no significant
///   neighbours, predicted positive, positive: symbol 0 (phase B).
/// - Steps (0,1) .. (7,0), 14 steps: both lanes code 0s. Lane 1 has now
///   coded 16 symbols (1, 0, fourteen 0s): its codeword 1 = 0x8000 is full.
///   Lane 0 has coded 15 zeros.
/// - (7,1), phase A: lane 0 codes b0 = 1 of col 1 as its 16th symbol
///   (codeword 0 = 0x0001 is full); lane 1 needs a new codeword for col 3:
///   slot 2, symbol 0. Phase B: lane 0's sign needs a new codeword: slot 3,
///   after lane 1's although lane 0 is the lower lane, because slots are
///   taken phase by phase. Neighbours not significant: predicted positive,
///   value negative: symbol 1 -> 0x8000.
#[test]
fn slots_are_taken_phase_by_phase() {
    let mut data = [0i32; 32];
    data[2] = 1;
    data[7 * 4 + 1] = -1;
    let (words, recs) = encode_all(&TWO, &data, 4, 8);
    assert_eq!(words, [0x0001, 0x8000, 0x0000, 0x8000]);
    assert_eq!(recs, [rec(SPP, 0, 4, 2), rec(MRP, 0, 4, 0)]);

    // Truncated to 3 codewords, decoding stops at the first symbol needing
    // slot 3: the sign of (7, 1). Its significance was decoded but a value
    // without a sign stays 0; everything before it stands.
    let (back, dec) = decode_truncated(&TWO, 0, &words, 3, 4, 8);
    let mut want = data;
    want[7 * 4 + 1] = 0;
    assert_eq!(back, want);
    assert_eq!(
        (dec.codewords_used, dec.passes_completed, dec.complete),
        (3, 0, false)
    );
    // Truncated to 2: in (7, 1) phase A lane 0 still decodes from its open
    // codeword 0, then lane 1 needs slot 2 and decoding stops.
    let (back, dec) = decode_truncated(&TWO, 0, &words, 2, 4, 8);
    assert_eq!(back, want);
    assert_eq!(dec.codewords_used, 2);
    // Truncated to 1: lane 1's first symbol, in step (0, 0), needs slot 1.
    let (back, _) = decode_truncated(&TWO, 0, &words, 1, 4, 8);
    assert_eq!(back, [0; 32]);
}

/// Width 2 (one lane), height 3, 3-pass, values
/// ```text
/// 2 0
/// 0 0
/// 0 1
/// ```
/// M = 1. j=1 CP (everything pending): (0,0) codes 1 and sign 0, then five
/// 0s for the other coefficients: 7 symbols. j=0 SPP: (0,1), (1,0), (1,1)
/// each have the significant (0,0) as neighbour (ctx 1): three 0s; (2,0)
/// and (2,1) have ctx 0: no symbol, pending for the CP. j=0 MRP: (0,0)
/// refines b0 = 0. j=0 CP: (2,0) codes 0, (2,1) codes 1 and sign 0.
/// Symbols: 1000000 000 0 010 -> 1000 0000 0000 1000 = 0x8008.
/// Distortion: 4 -> (2-3)^2 = 1 in the CP of j=1 (decrease 3); the MRP
/// takes 3 to 2 (decrease 1); the last CP finds the 1 (decrease 1).
#[test]
fn three_pass_cleanup_codes_context_zero_coefficients() {
    let data = [2, 0, 0, 0, 0, 1];
    let (words, recs) = encode_all(&THREE, &data, 2, 3);
    assert_eq!(words, [0x8008]);
    assert_eq!(
        recs,
        [
            rec(CP, 1, 1, 3),
            rec(SPP, 0, 1, 0),
            rec(MRP, 0, 1, 1),
            rec(CP, 0, 1, 1)
        ]
    );
}

/// Context-dependent probabilities, worked through the arithmetic of spec
/// section 6. Width 3, one row, values 1, 0, -1; M = 0; 2-pass tables with
/// `sig[0][ctx] = 100 - 10 ctx`, everything else 64.
/// - (0,0) phase A: lanes 0 (col 0) and 1 (col 2) have no significant
///   neighbours: P = 100, f = 65535 * 100 >> 7 = 51199; symbol 1:
///   L = 51200, S = 14335 for both, in slots 0 and 1.
/// - Phase B: both sign contexts are (0, positive predicted). Lane 0 is
///   positive: symbol 0, S = 14335 * 64 >> 7 = 7167. Lane 1 is negative:
///   symbol 1, L = 51200 + 7168 = 58368, S = 7167.
/// - (0,1): lane 0 (col 1) has 2 significant neighbours: P = 80,
///   f = 7167 * 80 >> 7 = 4479, symbol 0: S = 4479. Column 3 is absent.
///
/// Codewords: 51200, 58368.
#[test]
fn arithmetic_with_context_dependent_probabilities() {
    let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
    for ctx in 0..9 {
        groups[0].sig[0][ctx] = 100 - 10 * ctx as u8;
    }
    let tables = ProbabilityTables::new(Mode::TwoPass, groups).unwrap();
    let (words, recs) = encode_all(&tables, &[1, 0, -1], 3, 1);
    assert_eq!(words, [51200, 58368]);
    assert_eq!(recs, [rec(SPP, 0, 2, 2), rec(MRP, 0, 2, 0)]);
}

/// An all-zero codeblock is empty: no codewords, no passes, decodes to 0.
#[test]
fn empty_codeblock() {
    let (words, recs) = encode_all(&TWO, &[0; 12], 3, 4);
    assert!(words.is_empty() && recs.is_empty());
    let params = CodingParams::new(&TWO, 0);
    let mut back = [7i32; 12];
    let out = CodeblockMut::new(&mut back, 3, 3, 4).unwrap();
    let mut scratch = Scratch::<8>::new();
    let err = decode_sequential(&params, None, &[1], DecodeLimits::ALL, out, &mut scratch);
    assert_eq!(
        err,
        Err(DecodeError::TrailingCodewords { used: 0, given: 1 })
    );
    let out = CodeblockMut::new(&mut back, 3, 3, 4).unwrap();
    let dec = decode_sequential(&params, None, &[], DecodeLimits::ALL, out, &mut scratch).unwrap();
    assert!(dec.complete);
    assert_eq!(back, [0; 12]);
}

#[test]
fn errors_are_reported_not_panicked() {
    let params = CodingParams::new(&TWO, 0);
    let mut scratch = Scratch::<4>::new();
    let big = [1 << 28];
    let block = Codeblock::new(&big, 1, 1, 1).unwrap();
    let mut out = [0u16; 4];
    assert_eq!(
        encode_sequential(&block, &params, &mut scratch, &mut out, None),
        Err(EncodeError::CoefficientTooLarge)
    );
    let min = [i32::MIN];
    let block = Codeblock::new(&min, 1, 1, 1).unwrap();
    assert_eq!(
        encode_lanes(&block, &params, &mut scratch, &mut out, None, 32),
        Err(EncodeError::CoefficientTooLarge)
    );
    let tall = [1i32; 5];
    let block = Codeblock::new(&tall, 1, 1, 5).unwrap();
    assert_eq!(
        encode_sequential(&block, &params, &mut scratch, &mut out, None),
        Err(EncodeError::HeightExceedsScratch)
    );
    let data = [3i32; 4];
    let block = Codeblock::new(&data, 2, 2, 2).unwrap();
    let mut tiny = [0u16; 0];
    assert_eq!(
        encode_sequential(&block, &params, &mut scratch, &mut tiny, None),
        Err(EncodeError::OutputTooSmall { capacity: 0 })
    );
    let mut few = [PassRecord::EMPTY; 3];
    assert_eq!(
        encode_sequential(&block, &params, &mut scratch, &mut out, Some(&mut few)),
        Err(EncodeError::RecordsTooSmall { needed: 4 })
    );
    let bad_group = CodingParams::new(&TWO, 16);
    assert_eq!(
        encode_sequential(&block, &bad_group, &mut scratch, &mut out, None),
        Err(EncodeError::BadGroup)
    );
    assert_eq!(
        encode_lanes(&block, &params, &mut scratch, &mut out, None, 12),
        Err(EncodeError::BadSubgroupSize)
    );
    let mut back = [0i32; 4];
    let dst = CodeblockMut::new(&mut back, 2, 2, 2).unwrap();
    assert_eq!(
        decode_sequential(&params, Some(28), &[], DecodeLimits::ALL, dst, &mut scratch),
        Err(DecodeError::BadTopBitplane(28))
    );
    assert_eq!(
        Codeblock::new(&data, 2, 65, 1).unwrap_err(),
        GeometryError::BadGeometry
    );
    assert_eq!(
        Codeblock::new(&data, 1, 2, 2).unwrap_err(),
        GeometryError::BadGeometry
    );
    assert_eq!(
        Codeblock::new(&data, 2, 2, 3).unwrap_err(),
        GeometryError::SliceTooShort
    );
}
