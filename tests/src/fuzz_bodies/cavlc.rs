//! CAVLC targets: block decode of arbitrary bits (every decoded block must
//! re-encode to exactly the bits it was read from: the code is canonical),
//! and coefficient → encode → decode round trips through every bit sink.

use wavelane_core::bits::{BitReader, BitWriter};
use wavelane_core::cavlc::{
    decode_block, encode_block, level_fits, BitCounter, BlockKind, CavlcError, WordSlot,
    MAX_BLOCK_BITS,
};

use super::input::{Input, SeedWriter};

/// nC for a kind from one byte: mostly valid values (chroma DC -1, others
/// 0..=16), sometimes an invalid one.
fn nc_for(kind: BlockKind, b: u8) -> i8 {
    match (kind, b % 8) {
        (_, 7) => (b as i8).wrapping_sub(64), // anything, often invalid
        (BlockKind::ChromaDc, _) => -1,
        _ => (b >> 3) as i8 % 17,
    }
}

fn bits_of(buf: &[u8], start: usize, end: usize) -> Vec<bool> {
    let mut r = BitReader::new(buf);
    r.skip_bits(start).expect("inside the buffer");
    (start..end)
        .map(|_| r.read_bit().expect("inside the buffer"))
        .collect()
}

/// Encodes `coeffs` with a writer, a counter and a word slot; checks they
/// agree and returns the bytes and bit count (or the encoder's error).
fn encode_all_sinks(
    kind: BlockKind,
    nc: i8,
    coeffs: &[i16],
) -> Result<(Vec<u8>, usize, u8), CavlcError> {
    let mut buf = [0u8; MAX_BLOCK_BITS as usize / 8 + 8];
    let mut w = BitWriter::new(&mut buf);
    let mut counter = BitCounter::default();
    let mut slot = WordSlot::default();
    let r = encode_block(&mut w, kind, nc, coeffs);
    assert_eq!(
        r,
        encode_block(&mut counter, kind, nc, coeffs),
        "counter sink"
    );
    assert_eq!(
        r,
        encode_block(&mut slot, kind, nc, coeffs),
        "word-slot sink"
    );
    let total = r?;
    let bits = w.bit_position();
    assert!(bits as u32 <= MAX_BLOCK_BITS, "block of {bits} bits");
    assert_eq!((counter.bits as usize, slot.len as usize), (bits, bits));
    let mut packed = [0u8; MAX_BLOCK_BITS as usize / 8 + 8];
    let mut pw = BitWriter::new(&mut packed);
    slot.write_to(&mut pw).expect("slot fits");
    assert_eq!(pw.bit_position(), bits);
    let n = bits.div_ceil(8);
    assert_eq!(&packed[..n], &buf[..n], "word slot holds other bits");
    Ok((buf[..n].to_vec(), bits, total))
}

/// Decode target: a kind byte, an nC byte, then blocks back to back until
/// one fails. Every decoded block must re-encode to the very bits it was
/// read from.
pub fn cavlc_decode(data: &[u8]) {
    let mut inp = Input::new(data);
    let kind = BlockKind::ALL[inp.range(0, 4)];
    let nc = nc_for(kind, inp.u8());
    let stream = inp.rest();
    let mut r = BitReader::new(stream);
    let mut out = vec![0i16; kind.max_coeffs()];
    // Every block takes at least one bit, so this bounds the loop.
    for _ in 0..=stream.len() * 8 {
        let start = r.bit_position();
        match decode_block(&mut r, kind, nc, &mut out) {
            Ok(total) => {
                let end = r.bit_position();
                assert!(end > start, "a block consumed no bits");
                assert_eq!(total as usize, out.iter().filter(|&&c| c != 0).count());
                let (bytes, bits, re_total) =
                    encode_all_sinks(kind, nc, &out).expect("decoded coefficients re-encode");
                assert_eq!(re_total, total);
                assert_eq!(bits, end - start, "re-encoding changed the length");
                assert_eq!(
                    bits_of(&bytes, 0, bits),
                    bits_of(stream, start, end),
                    "re-encoding changed the bits"
                );
            }
            Err(_) => return,
        }
    }
    panic!("more blocks than bits");
}

/// Round-trip target: a kind, an nC, a value-range byte and coefficients.
/// Encoding succeeds exactly when every level fits; what encodes decodes
/// back to the same coefficients and bit count.
pub fn cavlc_roundtrip(data: &[u8]) {
    let mut inp = Input::new(data);
    let kind = BlockKind::ALL[inp.range(0, 4)];
    let nc = nc_for(kind, inp.u8());
    let range = inp.u8();
    let coeffs: Vec<i16> = (0..kind.max_coeffs())
        .map(|_| match range % 4 {
            0 => (inp.u8() as i8 % 3) as i16, // -2..=2: trailing ones, runs
            1 => inp.u8() as i8 as i16,       // small levels
            2 => (inp.u16() as i16) % 2100,   // around the level limit
            _ => inp.u16() as i16,            // anything
        })
        .collect();
    let valid_nc = match kind {
        BlockKind::ChromaDc => nc == -1,
        _ => nc >= 0,
    };
    match encode_all_sinks(kind, nc, &coeffs) {
        Ok((bytes, bits, total)) => {
            assert!(valid_nc);
            assert_eq!(total as usize, coeffs.iter().filter(|&&c| c != 0).count());
            let mut r = BitReader::new(&bytes);
            let mut back = vec![0i16; kind.max_coeffs()];
            let t = decode_block(&mut r, kind, nc, &mut back).expect("own block decodes");
            assert_eq!((t, r.bit_position()), (total, bits));
            assert_eq!(back, coeffs, "round trip changed the coefficients");
        }
        Err(CavlcError::BadNc(n)) => assert!(!valid_nc && n == nc),
        Err(CavlcError::LevelTooLarge(l)) => {
            assert!(!level_fits(l), "level {l} fits but was refused");
            assert!(coeffs.contains(&l));
        }
        Err(e) => panic!("unexpected encoder error {e:?}"),
    }
}

/// Sample blocks: runs, trailing ones and large levels.
fn sample_blocks(kind: BlockKind) -> Vec<Vec<i16>> {
    let n = kind.max_coeffs();
    let patterns: [&[i16]; 5] = [
        &[5, 1, 0, -1, 1, 0, 1],
        &[0, 0, 3, 0, 0, 0, -1, 0, 1],
        &[-40, 17, 9, -3, 2, 1, 1, -1, 0, 0, 1],
        &[2063, -2063, 700, -15, 1],
        &[],
    ];
    patterns
        .iter()
        .map(|p| (0..n).map(|i| p.get(i).copied().unwrap_or(0)).collect())
        .collect()
}

/// Seeds for [`cavlc_decode`]: blocks our encoder wrote, back to back.
pub fn seeds_decode() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (k, kind) in BlockKind::ALL.into_iter().enumerate() {
        for nc_byte in [0u8, 2 << 3, 5 << 3, 9 << 3] {
            let nc = nc_for(kind, nc_byte);
            let mut buf = vec![0u8; 4096];
            let mut w = BitWriter::new(&mut buf);
            for block in sample_blocks(kind) {
                encode_block(&mut w, kind, nc, &block).expect("samples encode");
            }
            let n = w.byte_len();
            seeds.push(
                SeedWriter::new()
                    .u8(k as u8)
                    .u8(nc_byte)
                    .bytes(&buf[..n])
                    .finish(),
            );
        }
    }
    seeds
}

/// Seeds for [`cavlc_roundtrip`]: the sample blocks in the "anything" range.
pub fn seeds_roundtrip() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (k, kind) in BlockKind::ALL.into_iter().enumerate() {
        for block in sample_blocks(kind) {
            let mut w = SeedWriter::new().u8(k as u8).u8(3 << 3).u8(3);
            for c in block {
                w = w.u16(c as u16);
            }
            seeds.push(w.finish());
        }
    }
    seeds
}
