//! The CAVLC block encoder (clause 9.2 read backwards): coeff_token, trailing
//! ones signs, levels, total_zeros, run_before.

use super::sink::BitSink;
use super::tables::{
    coeff_token_flc, Code, COEFF_TOKEN_CHROMA_DC, COEFF_TOKEN_NC0, COEFF_TOKEN_NC2,
    COEFF_TOKEN_NC4, RUN_BEFORE, TOTAL_ZEROS_4X4, TOTAL_ZEROS_CHROMA_DC,
};
use super::{BlockKind, CavlcError};

/// Longest block a Baseline/Main encoder can produce: a 16-bit coeff_token
/// and 16 levels of 28 bits (no total_zeros or runs are left then).
pub const MAX_BLOCK_BITS: u32 = 16 + 16 * 28;

/// The symbols of one block, highest scan position first.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Symbols {
    /// Number of nonzero coefficients.
    pub total_coeff: u8,
    /// Trailing ±1s (at most 3) at the high-frequency end.
    pub trailing_ones: u8,
    /// Nonzero levels in reverse scan order.
    pub levels: [i16; 16],
    /// Scan positions of `levels`.
    pub positions: [u8; 16],
}

impl Symbols {
    pub(super) fn of(coeffs: &[i16]) -> Symbols {
        let mut s = Symbols::default();
        for (pos, &c) in coeffs.iter().enumerate().rev() {
            if c != 0 {
                let n = s.total_coeff as usize;
                s.levels[n] = c;
                s.positions[n] = pos as u8;
                s.total_coeff += 1;
            }
        }
        while s.trailing_ones < 3
            && s.trailing_ones < s.total_coeff
            && s.levels[s.trailing_ones as usize].unsigned_abs() == 1
        {
            s.trailing_ones += 1;
        }
        s
    }
}

/// The coeff_token code of (TotalCoeff, TrailingOnes) under nC.
pub(super) fn coeff_token_code(
    kind: BlockKind,
    nc: i8,
    total_coeff: u8,
    trailing_ones: u8,
) -> Result<Code, CavlcError> {
    let (tc, t1) = (total_coeff as usize, trailing_ones as usize);
    Ok(match (kind, nc) {
        (BlockKind::ChromaDc, -1) => COEFF_TOKEN_CHROMA_DC[tc][t1],
        (BlockKind::ChromaDc, _) => return Err(CavlcError::BadNc(nc)),
        (_, 0..=1) => COEFF_TOKEN_NC0[tc][t1],
        (_, 2..=3) => COEFF_TOKEN_NC2[tc][t1],
        (_, 4..=7) => COEFF_TOKEN_NC4[tc][t1],
        (_, 8..) => coeff_token_flc(total_coeff, trailing_ones),
        _ => return Err(CavlcError::BadNc(nc)),
    })
}

/// The total_zeros table row for a block with `total_coeff` (>= 1) coefficients.
pub(super) fn total_zeros_row(kind: BlockKind, total_coeff: u8) -> &'static [Code] {
    let i = total_coeff as usize - 1;
    match kind {
        BlockKind::ChromaDc => &TOTAL_ZEROS_CHROMA_DC[i],
        _ => &TOTAL_ZEROS_4X4[i],
    }
}

/// The run_before table row for `zeros_left` (>= 1) zeros left.
pub(super) fn run_before_row(zeros_left: u8) -> &'static [Code; 15] {
    &RUN_BEFORE[zeros_left.min(7) as usize - 1]
}

/// suffixLength after coding a level of magnitude `abs` (clause 9.2.2.1).
pub(super) fn next_suffix_length(suffix_length: u32, abs: u32) -> u32 {
    let sl = suffix_length.max(1);
    if sl < 6 && abs > (3 << (sl - 1)) {
        sl + 1
    } else {
        sl
    }
}

/// True when `level` can be coded under any suffixLength with level_prefix
/// <= 15 (Baseline/Main): |level| <= 2063. Larger levels may fit in some
/// contexts; encoders that clamp to this bound never fail.
pub const fn level_fits(level: i16) -> bool {
    level.unsigned_abs() <= 2063
}

fn put_code<S: BitSink>(sink: &mut S, code: Code) -> Result<(), CavlcError> {
    sink.put(code.bits as u32, code.len as u32)
}

/// Codes one level (clause 9.2.2.1 inverted); `first_after_few_t1s` is the
/// first level after fewer than 3 trailing ones, whose magnitude is known to
/// be above 1 and is coded minus one.
fn put_level<S: BitSink>(
    sink: &mut S,
    level: i16,
    suffix_length: u32,
    first_after_few_t1s: bool,
) -> Result<(), CavlcError> {
    let abs = level.unsigned_abs() as u32;
    let mut code = if level > 0 { 2 * abs - 2 } else { 2 * abs - 1 };
    if first_after_few_t1s {
        // abs >= 2 here, so code >= 2.
        code -= 2;
    }
    let too_large = CavlcError::LevelTooLarge(level);
    if suffix_length == 0 {
        if code < 14 {
            sink.put(1, code + 1)
        } else if code < 30 {
            sink.put(1, 15)?;
            sink.put(code - 14, 4)
        } else if code - 30 < 4096 {
            sink.put(1, 16)?;
            sink.put(code - 30, 12)
        } else {
            Err(too_large)
        }
    } else {
        let escape = 15 << suffix_length;
        if code < escape {
            sink.put(1, (code >> suffix_length) + 1)?;
            sink.put(code & ((1 << suffix_length) - 1), suffix_length)
        } else if code - escape < 4096 {
            sink.put(1, 16)?;
            sink.put(code - escape, 12)
        } else {
            Err(too_large)
        }
    }
}

/// Encodes one residual block and returns its TotalCoeff.
///
/// `coeffs` holds exactly [`BlockKind::max_coeffs`] coefficients in scan
/// order; `nc` is the block's context (-1 for [`BlockKind::ChromaDc`], else
/// the value derived by [`super::nc`]). On error the sink may hold a partial
/// block.
pub fn encode_block<S: BitSink>(
    sink: &mut S,
    kind: BlockKind,
    nc: i8,
    coeffs: &[i16],
) -> Result<u8, CavlcError> {
    let max = kind.max_coeffs();
    if coeffs.len() != max {
        return Err(CavlcError::WrongCoeffCount {
            expected: max as u8,
            got: coeffs.len(),
        });
    }
    let s = Symbols::of(coeffs);
    let (tc, t1) = (s.total_coeff, s.trailing_ones);
    put_code(sink, coeff_token_code(kind, nc, tc, t1)?)?;
    if tc == 0 {
        return Ok(0);
    }
    for &l in &s.levels[..t1 as usize] {
        sink.put((l < 0) as u32, 1)?;
    }
    let mut suffix_length = u32::from(tc > 10 && t1 < 3);
    for (i, &l) in s.levels[..tc as usize].iter().enumerate().skip(t1 as usize) {
        put_level(sink, l, suffix_length, i == t1 as usize && t1 < 3)?;
        suffix_length = next_suffix_length(suffix_length, l.unsigned_abs() as u32);
    }
    if (tc as usize) < max {
        let total_zeros = s.positions[0] + 1 - tc;
        put_code(sink, total_zeros_row(kind, tc)[total_zeros as usize])?;
        let mut zeros_left = total_zeros;
        for i in 0..tc as usize - 1 {
            if zeros_left == 0 {
                break;
            }
            let run = s.positions[i] - s.positions[i + 1] - 1;
            put_code(sink, run_before_row(zeros_left)[run as usize])?;
            zeros_left -= run;
        }
    }
    Ok(tc)
}
