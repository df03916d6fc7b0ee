//! The CAVLC block decoder (clause 9.2). Every code is checked against the
//! tables and every count against the block size; reads are bounded by the
//! [`BitReader`], so hostile input gives a [`CavlcError`], never a panic.

use super::encode::{next_suffix_length, run_before_row, total_zeros_row};
use super::tables::{
    Code, COEFF_TOKEN_CHROMA_DC, COEFF_TOKEN_NC0, COEFF_TOKEN_NC2, COEFF_TOKEN_NC4,
};
use super::{BlockKind, CavlcError};
use crate::bits::BitReader;

/// Finds the code of `row` that starts the input; returns its index.
fn match_code(r: &mut BitReader<'_>, row: &[Code]) -> Option<usize> {
    let peek = r.peek_bits_padded(16).ok()?;
    let (i, code) = row
        .iter()
        .enumerate()
        .find(|(_, c)| c.len > 0 && (peek >> (16 - c.len as u32)) as u16 == c.bits)?;
    // The match may have used padding past the end: skipping checks that.
    r.skip_bits(code.len as usize).ok()?;
    Some(i)
}

/// Reads coeff_token; returns (TotalCoeff, TrailingOnes).
fn read_coeff_token(
    r: &mut BitReader<'_>,
    kind: BlockKind,
    nc: i8,
) -> Result<(u8, u8), CavlcError> {
    let table: &[[Code; 4]] = match (kind, nc) {
        (BlockKind::ChromaDc, -1) => &COEFF_TOKEN_CHROMA_DC,
        (BlockKind::ChromaDc, _) => return Err(CavlcError::BadNc(nc)),
        (_, 0..=1) => &COEFF_TOKEN_NC0,
        (_, 2..=3) => &COEFF_TOKEN_NC2,
        (_, 4..=7) => &COEFF_TOKEN_NC4,
        (_, 8..) => {
            let v = r.read_bits(6)?;
            if v == 0b11 {
                return Ok((0, 0));
            }
            let (tc, t1) = ((v >> 2) as u8 + 1, (v & 3) as u8);
            if t1 > tc {
                return Err(CavlcError::InvalidCoeffToken);
            }
            return Ok((tc, t1));
        }
        _ => return Err(CavlcError::BadNc(nc)),
    };
    // Rows are short (<= 4 entries); scan them all for the one matching code.
    let before = r.clone();
    for (tc, row) in table.iter().enumerate() {
        if let Some(t1) = match_code(r, row) {
            return Ok((tc as u8, t1 as u8));
        }
        *r = before.clone();
    }
    Err(CavlcError::InvalidCoeffToken)
}

/// Reads one level given suffixLength (clause 9.2.2.1), returning levelCode.
fn read_level_code(r: &mut BitReader<'_>, suffix_length: u32) -> Result<u32, CavlcError> {
    let mut prefix = 0u32;
    while !r.read_bit()? {
        prefix += 1;
        if prefix > 15 {
            return Err(CavlcError::LevelPrefixTooLarge);
        }
    }
    let suffix_size = match (prefix, suffix_length) {
        (14, 0) => 4,
        (15, _) => 12,
        _ => suffix_length,
    };
    let suffix = r.read_bits(suffix_size)?;
    let mut code = (prefix.min(15) << suffix_length) + suffix;
    if prefix == 15 && suffix_length == 0 {
        code += 15;
    }
    Ok(code)
}

/// Decodes one residual block into `out` (scan order, exactly
/// [`BlockKind::max_coeffs`] values, overwritten) and returns its TotalCoeff.
pub fn decode_block(
    r: &mut BitReader<'_>,
    kind: BlockKind,
    nc: i8,
    out: &mut [i16],
) -> Result<u8, CavlcError> {
    let max = kind.max_coeffs();
    if out.len() != max {
        return Err(CavlcError::WrongCoeffCount {
            expected: max as u8,
            got: out.len(),
        });
    }
    out.fill(0);
    let (tc, t1) = read_coeff_token(r, kind, nc)?;
    if tc as usize > max {
        return Err(CavlcError::TooManyCoeffs(tc));
    }
    if tc == 0 {
        return Ok(0);
    }
    let mut levels = [0i16; 16];
    for l in levels.iter_mut().take(t1 as usize) {
        *l = if r.read_bit()? { -1 } else { 1 };
    }
    let mut suffix_length = u32::from(tc > 10 && t1 < 3);
    for (i, slot) in levels
        .iter_mut()
        .enumerate()
        .take(tc as usize)
        .skip(t1 as usize)
    {
        let mut code = read_level_code(r, suffix_length)?;
        if i == t1 as usize && t1 < 3 {
            code += 2;
        }
        // code <= (15 << 6) + 4095 + 2, so the level fits in i16.
        let level = if code % 2 == 0 {
            (code as i32 + 2) >> 1
        } else {
            (-(code as i32) - 1) >> 1
        };
        *slot = level as i16;
        suffix_length = next_suffix_length(suffix_length, level.unsigned_abs());
    }
    let total_zeros = if (tc as usize) < max {
        let tz = match_code(r, total_zeros_row(kind, tc)).ok_or(CavlcError::InvalidTotalZeros)?;
        if tz + tc as usize > max {
            return Err(CavlcError::InvalidTotalZeros);
        }
        tz as u8
    } else {
        0
    };
    // Place levels from the highest scan position down.
    let mut zeros_left = total_zeros;
    let mut pos = (total_zeros + tc) as usize; // one past the highest position
    for (i, &level) in levels[..tc as usize].iter().enumerate() {
        let run = if zeros_left > 0 && i + 1 < tc as usize {
            let run = match_code(r, run_before_row(zeros_left))
                .ok_or(CavlcError::InvalidRunBefore)? as u8;
            if run > zeros_left {
                return Err(CavlcError::InvalidRunBefore);
            }
            run
        } else if i + 1 == tc as usize {
            zeros_left // the lowest coefficient takes the zeros left
        } else {
            0
        };
        zeros_left -= run;
        pos -= 1;
        out[pos] = level;
        pos -= run as usize;
    }
    Ok(tc)
}
