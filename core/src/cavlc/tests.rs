//! Golden vectors (the CAVLCU paper's appendix B, cross-checked by decoding our
//! streams with ffmpeg), round trips of random blocks of every kind and nC
//! class, and hostile input for the decoder.

use super::tables::*;
use super::*;
use crate::bits::{BitReader, BitWriter};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::string::String;
use std::vec::Vec;

fn bits_of(kind: BlockKind, nc: i8, coeffs: &[i16]) -> String {
    let mut buf = [0u8; 80];
    let mut w = BitWriter::new(&mut buf);
    encode_block(&mut w, kind, nc, coeffs).unwrap();
    let n = w.bit_position();
    (0..n)
        .map(|i| {
            if buf[i / 8] >> (7 - i % 8) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

fn bytes_of(bits: &str) -> Vec<u8> {
    let mut v = std::vec![0u8; bits.len().div_ceil(8)];
    for (i, b) in bits.bytes().enumerate() {
        if b == b'1' {
            v[i / 8] |= 0x80 >> (i % 8);
        }
    }
    v
}

const GOLDEN: &[(&[i16], i8, BlockKind, &str)] = &[
    (
        &[5, 1, 0, -1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        5,
        BlockKind::Luma4x4,
        "1010001100001000110110",
    ),
    (&[0; 16], 0, BlockKind::Luma4x4, "1"),
    (&[0; 16], 9, BlockKind::Luma4x4, "000011"),
    (
        &[0, 3, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        0,
        BlockKind::Luma4x4,
        "000100000110001",
    ),
    (
        &[7, -6, 5, 4, -3, 3, 2, 2, -2, 2, 1, -1, 0, 0, 0, 0],
        3,
        BlockKind::Luma4x4,
        "00000000011011010011010010001000110001000100001110001000000",
    ),
    (
        &[1; 16],
        0,
        BlockKind::Luma4x4,
        "00000000000010000001101010101010101010101010",
    ),
    (
        &[-100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        0,
        BlockKind::Luma4x4,
        "00010100000000000000010000101001111",
    ),
    (
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1],
        1,
        BlockKind::Luma4x4,
        "011000000001",
    ),
    (
        &[2; 15],
        4,
        BlockKind::Intra16x16Ac,
        "000000010110010010010010010010010010010010010010010010",
    ),
    (&[3, 0, -1, 1], -1, BlockKind::ChromaDc, "000001001001010"),
    (&[1, 1, -1, -1], -1, BlockKind::ChromaDc, "00000001101"),
];

#[test]
fn golden_vectors_encode_and_decode() {
    for &(coeffs, nc, kind, bits) in GOLDEN {
        assert_eq!(bits_of(kind, nc, coeffs), bits, "encode {coeffs:?} nC {nc}");
        let buf = bytes_of(bits);
        let mut r = BitReader::with_bit_len(&buf, bits.len());
        let mut out = [0i16; 16];
        let out = &mut out[..kind.max_coeffs()];
        let tc = decode_block(&mut r, kind, nc, out).unwrap();
        assert_eq!(out, coeffs);
        assert_eq!(r.remaining_bits(), 0);
        assert_eq!(tc as usize, coeffs.iter().filter(|&&c| c != 0).count());
    }
}

fn all_code_rows() -> Vec<Vec<Code>> {
    let mut rows: Vec<Vec<Code>> = Vec::new();
    for t in [&COEFF_TOKEN_NC0, &COEFF_TOKEN_NC2, &COEFF_TOKEN_NC4] {
        rows.push(t.iter().flatten().copied().collect());
    }
    rows.push(COEFF_TOKEN_CHROMA_DC.iter().flatten().copied().collect());
    rows.push(
        (0..=16)
            .flat_map(|tc| (0..=3.min(tc)).map(move |t1| coeff_token_flc(tc, t1)))
            .collect(),
    );
    rows.extend(TOTAL_ZEROS_4X4.iter().map(|r| r.to_vec()));
    rows.extend(TOTAL_ZEROS_CHROMA_DC.iter().map(|r| r.to_vec()));
    rows.extend(RUN_BEFORE.iter().map(|r| r.to_vec()));
    rows
}

#[test]
fn every_table_is_prefix_free() {
    for row in all_code_rows() {
        let codes: Vec<Code> = row.into_iter().filter(|c| c.len > 0).collect();
        for (i, a) in codes.iter().enumerate() {
            for (j, b) in codes.iter().enumerate() {
                if i != j && a.len <= b.len {
                    assert_ne!(b.bits >> (b.len - a.len), a.bits, "{a:?} prefixes {b:?}");
                }
            }
        }
    }
}

#[test]
fn table_shapes_follow_the_standard() {
    // Entries exist exactly where TrailingOnes <= min(TotalCoeff, 3).
    for t in [&COEFF_TOKEN_NC0, &COEFF_TOKEN_NC2, &COEFF_TOKEN_NC4] {
        for (tc, row) in t.iter().enumerate() {
            for (t1, c) in row.iter().enumerate() {
                assert_eq!(c.len > 0, t1 <= tc, "tc {tc} t1 {t1}");
            }
        }
    }
    // total_zeros rows cover 0..=16-TotalCoeff (4x4) and 0..=4-TotalCoeff (chroma DC).
    for (i, row) in TOTAL_ZEROS_4X4.iter().enumerate() {
        assert!(row
            .iter()
            .enumerate()
            .all(|(tz, c)| (c.len > 0) == (tz <= 15 - i)));
    }
    for (i, row) in TOTAL_ZEROS_CHROMA_DC.iter().enumerate() {
        assert!(row
            .iter()
            .enumerate()
            .all(|(tz, c)| (c.len > 0) == (tz <= 3 - i)));
    }
    for (i, row) in RUN_BEFORE.iter().enumerate() {
        let max = if i == 6 { 14 } else { i + 1 };
        assert!(row
            .iter()
            .enumerate()
            .all(|(r, c)| (c.len > 0) == (r <= max)));
    }
    // Longest codes: 16, 14, 10 and 8 bits (the CAVLCU paper's appendix A).
    let longest = |t: &[[Code; 4]]| t.iter().flatten().map(|c| c.len).max().unwrap();
    assert_eq!(longest(&COEFF_TOKEN_NC0), 16);
    assert_eq!(longest(&COEFF_TOKEN_NC2), 14);
    assert_eq!(longest(&COEFF_TOKEN_NC4), 10);
    assert_eq!(longest(&COEFF_TOKEN_CHROMA_DC), 8);
}

fn random_block(rng: &mut ChaCha8Rng, kind: BlockKind) -> Vec<i16> {
    let n = kind.max_coeffs();
    let density: f64 = rng.random_range(0.0..=1.0);
    let big = rng.random_bool(0.2);
    (0..n)
        .map(|_| {
            if !rng.random_bool(density) {
                0
            } else if big {
                rng.random_range(-2063..=2063)
            } else {
                let m: i16 = if rng.random_bool(0.5) {
                    1
                } else {
                    rng.random_range(1..20)
                };
                if rng.random_bool(0.5) {
                    m
                } else {
                    -m
                }
            }
        })
        .collect()
}

fn nc_for(rng: &mut ChaCha8Rng, kind: BlockKind) -> i8 {
    match kind {
        BlockKind::ChromaDc => -1,
        _ => rng.random_range(0..=16),
    }
}

#[test]
fn random_blocks_round_trip_in_every_sink() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for _ in 0..20_000 {
        let kind = BlockKind::ALL[rng.random_range(0..5)];
        let nc = nc_for(&mut rng, kind);
        let coeffs = random_block(&mut rng, kind);
        let mut buf = [0u8; 80];
        let mut w = BitWriter::new(&mut buf);
        let tc = encode_block(&mut w, kind, nc, &coeffs).unwrap();
        let len = w.bit_position();
        assert!(len as u32 <= MAX_BLOCK_BITS);
        let mut counter = BitCounter::default();
        encode_block(&mut counter, kind, nc, &coeffs).unwrap();
        assert_eq!(counter.bits as usize, len);
        let mut slot = WordSlot::default();
        encode_block(&mut slot, kind, nc, &coeffs).unwrap();
        let mut buf2 = [0u8; 80];
        let mut w2 = BitWriter::new(&mut buf2);
        slot.write_to(&mut w2).unwrap();
        assert_eq!(buf, buf2);
        let mut r = BitReader::with_bit_len(&buf, len);
        let mut out = std::vec![0i16; kind.max_coeffs()];
        assert_eq!(decode_block(&mut r, kind, nc, &mut out).unwrap(), tc);
        assert_eq!(out, coeffs, "{kind:?} nC {nc}");
        assert_eq!(r.remaining_bits(), 0);
    }
}

#[test]
fn every_coeff_token_entry_round_trips() {
    // For each (TotalCoeff, TrailingOnes) and nC class build a block with
    // exactly those symbols and check the token bits and the round trip.
    for kind in BlockKind::ALL {
        let ncs: &[i8] = if kind == BlockKind::ChromaDc {
            &[-1]
        } else {
            &[0, 2, 4, 8]
        };
        let max = kind.max_coeffs();
        for &nc in ncs {
            for tc in 0..=max {
                for t1 in 0..=tc.min(3) {
                    let mut coeffs = std::vec![0i16; max];
                    for (i, c) in coeffs.iter_mut().rev().take(tc).enumerate() {
                        *c = if i < t1 { -1 } else { 2 };
                    }
                    let mut buf = [0u8; 80];
                    let mut w = BitWriter::new(&mut buf);
                    encode_block(&mut w, kind, nc, &coeffs).unwrap();
                    let len = w.bit_position();
                    let mut r = BitReader::with_bit_len(&buf, len);
                    let mut out = std::vec![0i16; max];
                    decode_block(&mut r, kind, nc, &mut out).unwrap();
                    assert_eq!(out, coeffs);
                }
            }
        }
    }
}

#[test]
fn level_limits() {
    let fits = |c: &[i16; 16]| encode_block(&mut BitCounter::default(), BlockKind::Luma4x4, 0, c);
    // suffixLength 0 without the minus-one rule (three trailing ones first):
    // +-2063 is the largest magnitude with level_prefix 15.
    let mut c = [0i16; 16];
    c[13..].copy_from_slice(&[1, 1, 1]);
    for (l, ok) in [(2063, true), (-2063, true), (2064, false), (-2064, false)] {
        c[12] = l;
        assert_eq!(fits(&c).is_ok(), ok, "{l}");
    }
    assert_eq!(fits(&c), Err(CavlcError::LevelTooLarge(-2064)));
    // The first level after fewer than three trailing ones is coded minus one.
    let mut c = [0i16; 16];
    c[15] = 2064;
    assert!(fits(&c).is_ok());
    c[15] = -2065;
    assert_eq!(fits(&c), Err(CavlcError::LevelTooLarge(-2065)));
    // suffixLength 1 (second level after a small one): again 2063.
    let mut c = [0i16; 16];
    c[15] = 2;
    c[14] = 2063;
    assert!(fits(&c).is_ok());
    c[14] = 2064;
    assert!(fits(&c).is_err());
    c[14] = i16::MIN;
    assert_eq!(fits(&c), Err(CavlcError::LevelTooLarge(i16::MIN)));
    assert!(level_fits(2063) && level_fits(-2063) && !level_fits(2064) && !level_fits(i16::MIN));
}

#[test]
fn bad_arguments_are_errors() {
    let mut sink = BitCounter::default();
    assert_eq!(
        encode_block(&mut sink, BlockKind::ChromaDc, 0, &[0; 4]),
        Err(CavlcError::BadNc(0))
    );
    assert_eq!(
        encode_block(&mut sink, BlockKind::Luma4x4, -1, &[0; 16]),
        Err(CavlcError::BadNc(-1))
    );
    assert_eq!(
        encode_block(&mut sink, BlockKind::ChromaAc, 0, &[0; 16]),
        Err(CavlcError::WrongCoeffCount {
            expected: 15,
            got: 16
        })
    );
    let mut out = [0i16; 4];
    let mut r = BitReader::new(&[0xff]);
    assert_eq!(
        decode_block(&mut r, BlockKind::ChromaDc, 2, &mut out),
        Err(CavlcError::BadNc(2))
    );
    let mut slot = WordSlot::default();
    assert_eq!(
        slot.put(0, 33),
        Err(CavlcError::Bits(crate::bits::BitError::TooManyBits))
    );
}

#[test]
fn hostile_input_gives_errors_not_panics() {
    let mut rng = ChaCha8Rng::seed_from_u64(66);
    let mut seen_ok = 0;
    for _ in 0..50_000 {
        let len = rng.random_range(0..12);
        let buf: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let kind = BlockKind::ALL[rng.random_range(0..5)];
        let nc = if rng.random_bool(0.1) {
            rng.random_range(-3..=20)
        } else {
            nc_for(&mut rng, kind)
        };
        let mut r = BitReader::new(&buf);
        let mut out = std::vec![0i16; kind.max_coeffs()];
        if let Ok(tc) = decode_block(&mut r, kind, nc, &mut out) {
            seen_ok += 1;
            assert_eq!(out.iter().filter(|&&c| c != 0).count(), tc as usize);
            assert!(r.bit_position() <= buf.len() * 8);
        }
    }
    assert!(seen_ok > 1000);
}

#[test]
fn decoder_rejects_specific_bad_codes() {
    let mut out16 = [0i16; 16];
    let mut out15 = [0i16; 15];
    // nC >= 8, FLC 000010 = TotalCoeff 1 with TrailingOnes 2: impossible.
    let mut r = BitReader::new(&[0b0000_1000]);
    assert_eq!(
        decode_block(&mut r, BlockKind::Luma4x4, 8, &mut out16),
        Err(CavlcError::InvalidCoeffToken)
    );
    // nC 0..2: sixteen zeros match no coeff_token.
    let mut r = BitReader::new(&[0, 0, 0xff]);
    assert_eq!(
        decode_block(&mut r, BlockKind::Luma4x4, 0, &mut out16),
        Err(CavlcError::InvalidCoeffToken)
    );
    // TotalCoeff 16 in an AC block (FLC 111100 = TC 16, T1 0).
    let mut r = BitReader::new(&[0b1111_0000, 0xff, 0xff]);
    assert_eq!(
        decode_block(&mut r, BlockKind::Intra16x16Ac, 8, &mut out15),
        Err(CavlcError::TooManyCoeffs(16))
    );
    // AC block, TotalCoeff 1 (T1 1, "01" under nC 0), sign +, total_zeros 15
    // ("000000001") does not fit in 15 positions.
    let mut r = BitReader::new(&[0b0100_0000, 0b0001_0000]);
    assert_eq!(
        decode_block(&mut r, BlockKind::Intra16x16Ac, 0, &mut out15),
        Err(CavlcError::InvalidTotalZeros)
    );
    // level_prefix of 16 zeros.
    let mut r = BitReader::new(&[0b0001_0100, 0, 0, 0x80]);
    assert_eq!(
        decode_block(&mut r, BlockKind::Luma4x4, 0, &mut out16),
        Err(CavlcError::LevelPrefixTooLarge)
    );
    // Truncated: "0001 01" (TC 1, T1 0) and nothing more.
    let mut r = BitReader::with_bit_len(&[0b0001_0100], 6);
    assert!(matches!(
        decode_block(&mut r, BlockKind::Luma4x4, 0, &mut out16),
        Err(CavlcError::Bits(_))
    ));
}

/// A random picture of `mb_width x mb_height` macroblocks in one slice:
/// every macroblock kind and coded_block_pattern, random levels.
fn random_frame(
    rng: &mut ChaCha8Rng,
    mb_width: usize,
    mb_height: usize,
) -> (Vec<frame::MbInfo>, Vec<i16>) {
    use frame::{MbInfo, MbKind, COEFFS_PER_UNIT, RESIDUAL_UNITS_PER_MB};
    let n = mb_width * mb_height;
    let mbs: Vec<MbInfo> = (0..n)
        .map(|_| MbInfo {
            kind: [MbKind::Intra4x4, MbKind::Intra16x16, MbKind::Pcm][rng.random_range(0..3)],
            cbp: rng.random_range(0..16u8) | rng.random_range(0..3u8) << 4,
            slice: 0,
        })
        .collect();
    let mut coeffs = Vec::new();
    for _ in 0..n * RESIDUAL_UNITS_PER_MB {
        let mut unit = random_block(rng, BlockKind::Luma4x4);
        unit.resize(COEFFS_PER_UNIT, 0);
        coeffs.extend(unit.iter().map(|&v| v.clamp(-2063, 2063)));
    }
    (mbs, coeffs)
}

#[test]
fn macroblock_slots_hold_the_header_then_each_unit() {
    // macroblock_slots is the model of shaders/cavlc/cavlc_encode.comp (one
    // invocation per slot): slot 0 the header as given, slot u the bits of
    // encode_unit(mb, u) alone, whatever the slots held before.
    use frame::{FrameResidual, UNITS_PER_MB, UNIT_HEADER};
    let mut rng = ChaCha8Rng::seed_from_u64(28);
    let mut coded = 0;
    for _ in 0..20 {
        let (mbs, coeffs) = random_frame(&mut rng, 3, 2);
        let f = FrameResidual::new(3, 2, &mbs, &coeffs).unwrap();
        let mut header = WordSlot::default();
        header.put(rng.random_range(0..1 << 20), 20).unwrap();
        // Reused across macroblocks, as a caller's buffer is: a slot left
        // from the previous macroblock must not leak into this one.
        let mut slots = [WordSlot::default(); UNITS_PER_MB];
        for mb in 0..f.mb_count() {
            if let Err(e) = f.macroblock_slots(mb, header, &mut slots) {
                // Only a level beyond the Baseline range may fail.
                assert!(matches!(e, CavlcError::LevelTooLarge(_)), "{e:?}");
                continue;
            }
            assert_eq!(slots[UNIT_HEADER], header);
            for (unit, slot) in slots.iter().enumerate().skip(1) {
                let mut alone = WordSlot::default();
                f.encode_unit(mb, unit, &mut alone).unwrap();
                assert_eq!(*slot, alone, "mb {mb} unit {unit}");
                coded += usize::from(slot.len > 0);
            }
        }
    }
    assert!(coded > 500, "only {coded} coded units");
}
