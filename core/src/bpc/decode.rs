//! The sequential decoder (spec sections 6-8): symbols in canonical order;
//! decoding stops for the whole codeblock at the first symbol whose lane
//! needs a codeword beyond the ones available.
//!
//! Reconstruction: a coefficient found significant at bitplane `j` gets
//! magnitude `2^j + 2^(j-1)` and its decoded sign; refinement at `j` sets
//! bit `j` and puts the half step below it. A coefficient whose sign symbol
//! lies beyond the truncation point stays 0: its significance was decoded,
//! but a value without a sign would be a guess.

use super::coder::LaneDecoders;
use super::context::{Neighbours, SignNeighbours};
use super::lut::PlaneTables;
use super::record::half_step;
use super::sequential::lanes;
use super::state::present_mask;
use super::{
    pass_count, CodeblockMut, CodingParams, DecodeError, DecodeLimits, Decoded, Mode, PassKind,
    PassSchedule, Scratch, GROUPS, MAX_BITPLANE,
};

/// Checks the decoder inputs and clears the output; returns the number of
/// codewords available.
pub(super) fn prepare_decode<const ROWS: usize>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    out: &mut CodeblockMut<'_>,
) -> Result<usize, DecodeError> {
    if params.group >= GROUPS {
        return Err(DecodeError::BadGroup);
    }
    if out.height() > ROWS {
        return Err(DecodeError::HeightExceedsScratch);
    }
    if let Some(m) = top.filter(|&m| m > MAX_BITPLANE) {
        return Err(DecodeError::BadTopBitplane(m));
    }
    out.clear();
    Ok(codewords.len().min(limits.max_codewords))
}

/// A decoder form as the pass loop sees it: the sequential, the lane and
/// the phase forms differ in how they run a pass, not in which passes run
/// or when they stop.
pub(super) trait PassDecoder {
    /// Decodes a significance pass (a cleanup pass with `cleanup`); false
    /// when the codewords ran out inside it.
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool;
    /// Decodes a refinement pass; false when the codewords ran out inside it.
    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool;
}

/// Runs the passes of a block with top bitplane `m` in schedule order,
/// up to `limits.max_passes` or until the codewords run out; returns the
/// passes completed. The one pass loop of every decoder form.
pub(super) fn decode_passes(
    dec: &mut impl PassDecoder,
    params: &CodingParams<'_>,
    m: u8,
    limits: DecodeLimits,
) -> usize {
    let mut completed = 0;
    for (kind, j) in PassSchedule::new(params.mode(), Some(m)) {
        if completed >= limits.max_passes {
            break;
        }
        let plane = params.tables.plane(params.group, j);
        let done = match kind {
            PassKind::Significance => dec.significance_pass(j, &plane, false),
            PassKind::Refinement => dec.refinement_pass(j, &plane),
            PassKind::Cleanup => dec.significance_pass(j, &plane, true),
        };
        if !done {
            break;
        }
        completed += 1;
    }
    completed
}

/// The result once the passes ran: checks that a complete decode used every
/// codeword it was given.
pub(super) fn finish(
    mode: Mode,
    top: Option<u8>,
    completed: usize,
    used: usize,
    available: usize,
) -> Result<Decoded, DecodeError> {
    let complete = completed == pass_count(mode, top);
    if complete && used < available {
        return Err(DecodeError::TrailingCodewords {
            used,
            given: available,
        });
    }
    Ok(Decoded {
        codewords_used: used,
        passes_completed: completed,
        complete,
    })
}

/// Signed value of magnitude `mag`.
#[inline]
pub(super) fn signed(mag: u32, negative: bool) -> i32 {
    if negative {
        -(mag as i32)
    } else {
        mag as i32
    }
}

/// The value after refining `value` with bit `bit` at bitplane `j`.
#[inline]
pub(super) fn refined(value: i32, bit: bool, j: u8) -> i32 {
    let mag = value.unsigned_abs();
    let mag = ((mag >> (j + 1)) << (j + 1)) | ((bit as u32) << j) | half_step(j);
    signed(mag, value < 0)
}

/// Decodes a codeblock of top bitplane `top` (`None`: empty) from
/// `codewords` into `out`, in canonical order.
///
/// At most `limits.max_codewords` codewords and `limits.max_passes` passes
/// are used; decoding a truncated stream stops at the first symbol that
/// needs a codeword beyond them (spec section 8). The decoder never reads
/// past `codewords`, and every loop is bounded by the codeblock geometry.
///
/// Errors: [`DecodeError::BadTopBitplane`] (`M > 27`),
/// [`DecodeError::TrailingCodewords`] when all passes decoded without using
/// every available codeword, [`DecodeError::BadGroup`],
/// [`DecodeError::HeightExceedsScratch`].
pub fn decode_sequential<const ROWS: usize>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    mut out: CodeblockMut<'_>,
    scratch: &mut Scratch<ROWS>,
) -> Result<Decoded, DecodeError> {
    let available = prepare_decode::<ROWS>(params, top, codewords, limits, &mut out)?;
    let mode = params.mode();
    let Some(m) = top else {
        return finish(mode, None, 0, 0, available);
    };
    let present = present_mask(out.width());
    scratch.reset(out.height(), present, mode == Mode::ThreePass);
    let mut dec = Sequential {
        out,
        scratch,
        coders: LaneDecoders::new(),
        words: &codewords[..available],
        present,
        three_pass: mode == Mode::ThreePass,
    };
    let completed = decode_passes(&mut dec, params, m, limits);
    finish(mode, top, completed, dec.coders.next as usize, available)
}

struct Sequential<'a, 'b, const ROWS: usize> {
    out: CodeblockMut<'b>,
    scratch: &'a mut Scratch<ROWS>,
    coders: LaneDecoders,
    words: &'a [u16],
    present: [u32; 2],
    three_pass: bool,
}

impl<const ROWS: usize> PassDecoder for Sequential<'_, '_, ROWS> {
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        Self::significance_pass(self, j, plane, cleanup)
    }

    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        Self::refinement_pass(self, j, plane)
    }
}

impl<const ROWS: usize> Sequential<'_, '_, ROWS> {
    #[inline]
    fn decode(&mut self, t: usize, p: u8) -> Option<bool> {
        self.coders.decode(t, p, self.words, self.words.len())
    }

    /// SPP (`cleanup = false`) or CP. Returns false where the stream ends.
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        let h = self.out.height();
        let (sig_table, sign_table) = if cleanup {
            (&plane.cp_sig, &plane.cp_sign)
        } else {
            (&plane.sig, &plane.sign)
        };
        for y in 0..h {
            for x in 0..2 {
                let candidates = if cleanup {
                    core::mem::take(&mut self.scratch.pending[y][x])
                } else {
                    self.present[x] & !self.scratch.sig[y][x]
                };
                if candidates == 0 {
                    continue;
                }
                let around = Neighbours::of(&self.scratch.sig[..h], h, y, x);
                let mut newly = 0u32;
                for t in lanes(candidates) {
                    let ctx = around.count(t);
                    if !cleanup && self.three_pass && ctx == 0 {
                        self.scratch.pending[y][x] |= 1 << t;
                        continue;
                    }
                    let Some(bit) = self.decode(t, sig_table[ctx as usize]) else {
                        return false;
                    };
                    newly |= (bit as u32) << t;
                }
                if newly == 0 {
                    continue;
                }
                self.scratch.sig[y][x] |= newly;
                if cleanup {
                    self.scratch.refine[y][x] |= newly;
                }
                let s = &self.scratch;
                let signs = SignNeighbours::of(&s.sig[..h], &s.negative[..h], h, y, x);
                let mag = (1u32 << j) | half_step(j);
                for t in lanes(newly) {
                    let (k, predicted) = signs.context(t);
                    let Some(symbol) = self.decode(t, sign_table[k as usize]) else {
                        return false;
                    };
                    let negative = symbol != predicted;
                    self.scratch.negative[y][x] |= (negative as u32) << t;
                    self.out.set(y, 2 * t + x, signed(mag, negative));
                }
            }
        }
        true
    }

    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        for y in 0..self.out.height() {
            for x in 0..2 {
                for t in lanes(self.scratch.refine[y][x]) {
                    let Some(bit) = self.decode(t, plane.refine) else {
                        return false;
                    };
                    let c = 2 * t + x;
                    let v = self.out.get(y, c);
                    self.out.set(y, c, refined(v, bit, j));
                }
                self.scratch.refine[y][x] |= self.scratch.sig[y][x];
            }
        }
        true
    }
}
