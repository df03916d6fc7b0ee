//! The sequential decoder: symbols in canonical order, one lane at a time;
//! the reference model of the other forms and the firmware path.

use super::{decode_passes, finish, prepare_decode, refined, signed, PassDecoder};
use crate::bpc::coder::LaneDecoders;
use crate::bpc::context::{Neighbours, SignNeighbours};
use crate::bpc::lut::PlaneTables;
use crate::bpc::record::half_step;
use crate::bpc::state::{lanes, present_mask};
use crate::bpc::{CodeblockMut, CodingParams, DecodeError, DecodeLimits, Decoded, Mode, Scratch};

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
    let available = prepare_decode::<ROWS>(params, top, codewords, limits, out.height())?;
    out.clear();
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
