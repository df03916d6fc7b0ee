//! The phase decoder: the CPU's fast form of [`decode_sequential`]. Every
//! phase of a step is decoded for all 32 lanes at once, in plain loops over
//! 32-element arrays that the compiler turns into vector code (two 256-bit
//! vectors of 16-bit lane states with AVX2; the host compiles it per CPU
//! level through `fastest!`, `host/src/backend/simd.rs`).
//!
//! Same output, summary and errors as [`decode_sequential`] for every input
//! (`tests_prop.rs` checks every decoder against it). Why a phase at once is
//! the canonical order: within a phase each lane decodes at most one symbol,
//! the contexts come from the state at the start of the step, and lanes
//! that need a codeword take the next slots in lane order; so the lanes
//! that decode before the stream ends are exactly those below the first
//! lane whose slot is missing (spec section 8), which one mask gives.
//!
//! Where the sequential form sets each coefficient as it goes, this one
//! keeps the step's 32 magnitudes side by side ([`LaneMagnitudes`]) so that
//! a phase updates them in vector registers too, and writes the codeblock
//! once at the end, signs applied.
//!
//! [`decode_sequential`]: crate::bpc::decode_sequential

// Lane loops index several per-lane arrays by lane number, as the shader
// does with gl_SubgroupInvocationID; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use super::phase_coders::{Coders, SPARSE_LANES};
use super::{decode_passes, finish, prepare_decode, PassDecoder};
use crate::bpc::block::BlockOut;
use crate::bpc::context::{Neighbours, SignNeighbours};
use crate::bpc::lut::PlaneTables;
use crate::bpc::masks;
use crate::bpc::record::half_step;
use crate::bpc::state::{lanes, present_mask};
use crate::bpc::{
    CodeblockMut, CodeblockRows, CodingParams, DecodeError, DecodeLimits, Decoded, Mode, Scratch,
    LANES,
};

/// Every coefficient's magnitude while a codeblock decodes, lane by lane:
/// `mags[y][x][t]` is the coefficient of column `2t + x` in row `y`, so a
/// step's 32 magnitudes are contiguous. `256 * ROWS` bytes
/// (`LaneMagnitudes<64>` = 16 KiB, `LaneMagnitudes<256>` = 64 KiB); only
/// [`decode_phases`] needs it.
#[derive(Debug, Clone)]
pub struct LaneMagnitudes<const ROWS: usize = 64> {
    mags: [[[u32; LANES]; 2]; ROWS],
}

impl<const ROWS: usize> LaneMagnitudes<ROWS> {
    /// Zero magnitudes.
    pub const fn new() -> Self {
        LaneMagnitudes {
            mags: [[[0; LANES]; 2]; ROWS],
        }
    }
}

#[cfg(test)]
impl<const ROWS: usize> LaneMagnitudes<ROWS> {
    /// Every magnitude `v`: what earlier codeblocks could have left.
    pub(crate) fn fill(&mut self, v: u32) {
        self.mags = [[[v; LANES]; 2]; ROWS];
    }
}

impl<const ROWS: usize> Default for LaneMagnitudes<ROWS> {
    fn default() -> Self {
        Self::new()
    }
}

/// Decodes like [`decode_sequential`](crate::bpc::decode_sequential) (same
/// output, summary and errors for every input), all lanes of a phase at
/// once; `mags` holds the magnitudes meanwhile (it bounds the height like
/// `scratch`: [`DecodeError::HeightExceedsScratch`]).
#[inline(always)]
pub fn decode_phases<const ROWS: usize>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    out: CodeblockMut<'_>,
    scratch: &mut Scratch<ROWS>,
    mags: &mut LaneMagnitudes<ROWS>,
) -> Result<Decoded, DecodeError> {
    decode_into(params, top, codewords, limits, out, scratch, mags)
}

/// [`decode_phases`] into a codeblock given as its rows
/// ([`CodeblockRows`]): the same coefficients, summary and errors.
#[inline(always)]
pub fn decode_phases_rows<const ROWS: usize>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    out: CodeblockRows<'_, '_>,
    scratch: &mut Scratch<ROWS>,
    mags: &mut LaneMagnitudes<ROWS>,
) -> Result<Decoded, DecodeError> {
    decode_into(params, top, codewords, limits, out, scratch, mags)
}

/// The phase decoder into any output. `mags` is not cleared: only the
/// magnitudes of coefficients that became significant are read, and
/// [`Phases::signs`] sets each of those.
#[inline(always)]
fn decode_into<const ROWS: usize, O: BlockOut>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    mut out: O,
    scratch: &mut Scratch<ROWS>,
    mags: &mut LaneMagnitudes<ROWS>,
) -> Result<Decoded, DecodeError> {
    let h = out.height();
    let available = prepare_decode::<ROWS>(params, top, codewords, limits, h)?;
    let mode = params.mode();
    let Some(m) = top else {
        out.clear();
        return finish(mode, None, 0, 0, available);
    };
    let present = present_mask(out.width());
    scratch.reset(h, present, mode == Mode::ThreePass);
    let mut dec = Phases {
        h,
        mags,
        scratch,
        coders: Coders::new(),
        words: &codewords[..available],
        present,
        three_pass: mode == Mode::ThreePass,
    };
    let completed = decode_passes(&mut dec, params, m, limits);
    dec.write(&mut out);
    let used = dec.coders.next as usize;
    finish(mode, top, completed, used, available)
}

struct Phases<'a, const ROWS: usize> {
    h: usize,
    mags: &'a mut LaneMagnitudes<ROWS>,
    scratch: &'a mut Scratch<ROWS>,
    coders: Coders,
    words: &'a [u16],
    present: [u32; 2],
    three_pass: bool,
}

// Inlined into `decode_passes` and so into the caller's `fastest!` copy.
impl<const ROWS: usize> PassDecoder for Phases<'_, ROWS> {
    #[inline(always)]
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        Self::significance_pass(self, j, plane, cleanup)
    }

    #[inline(always)]
    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        Self::refinement_pass(self, j, plane)
    }
}

/// `m` of every lane where `sig` has it, negated where `negative` has it,
/// else 0. A function, not a closure in [`Phases::write`]: LLVM kept that
/// closure out of line, compiled without the caller's `fastest!` features.
#[inline(always)]
fn signed(m: &[u32; LANES], sig: u32, negative: u32) -> [i32; LANES] {
    let (sig, negative) = (masks::words(sig), masks::words(negative));
    let mut v = [0i32; LANES];
    for t in 0..LANES {
        let (s, n) = (sig[t] as i16 as i32, negative[t] as i16 as i32);
        v[t] = ((m[t] as i32 & s) ^ n).wrapping_sub(n);
    }
    v
}

impl<const ROWS: usize> Phases<'_, ROWS> {
    /// SPP (`cleanup = false`) or CP. Returns false where the stream ends.
    ///
    /// The rows of the significance map around a step are carried from one
    /// step to the next (only the row of the steps changes within it), and
    /// each parity is a step of its own ([`Self::significance_step`]), so
    /// that the neighbour masks cost neither reloads nor bounds tests nor a
    /// test of the parity (docs/perf/codec.md, "The CPU decoder's count
    /// planes and sign contexts").
    #[inline(always)]
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        let h = self.h;
        let Some(&first) = self.scratch.sig[..h].first() else {
            return true;
        };
        let mut rows = [[0; 2], first, [0; 2]];
        for y in 0..h {
            rows[2] = match self.scratch.sig[..h].get(y + 1) {
                Some(&below) => below,
                None => [0; 2],
            };
            if !self.significance_step::<0>(y, &mut rows, j, plane, cleanup)
                || !self.significance_step::<1>(y, &mut rows, j, plane, cleanup)
            {
                return false;
            }
            rows = [rows[1], rows[2], [0; 2]];
        }
        true
    }

    /// Step `(y, X)` of [`Self::significance_pass`]: `rows` holds the
    /// significance rows `y - 1`, `y` and `y + 1` (zero outside the
    /// codeblock) and gets this step's new significant coefficients.
    #[inline(always)]
    fn significance_step<const X: usize>(
        &mut self,
        y: usize,
        rows: &mut [[u32; 2]; 3],
        j: u8,
        plane: &PlaneTables,
        cleanup: bool,
    ) -> bool {
        let x = X;
        let (sig_table, sign_table) = if cleanup {
            (&plane.cp_sig, &plane.cp_sign)
        } else {
            (&plane.sig, &plane.sign)
        };
        let mag = (1u32 << j) | half_step(j);
        let candidates = if cleanup {
            core::mem::take(&mut self.scratch.pending[y][x])
        } else {
            self.present[x] & !rows[1][x]
        };
        if candidates == 0 {
            return true;
        }
        // The significance map does not change within the phase (lanes of
        // a step are not neighbours).
        let around = Neighbours::around(*rows, x).count_planes();
        let visit = if !cleanup && self.three_pass {
            let isolated = candidates & around.zero();
            self.scratch.pending[y][x] |= isolated;
            candidates & !isolated
        } else {
            candidates
        };
        if visit == 0 {
            return true;
        }
        let a = if visit.count_ones() <= SPARSE_LANES {
            let prob = |t| sig_table[around.get(t) as usize];
            self.coders.sparse(visit, prob, self.words)
        } else if visit & !around.zero() == 0 {
            // Every visiting lane is isolated (count 0): one probability
            // for all, no per-lane lookup.
            self.coders.phase(visit, &[sig_table[0]; LANES], self.words)
        } else {
            self.coders
                .phase(visit, &around.probabilities(sig_table), self.words)
        };
        if a.stopped {
            return false;
        }
        let newly = a.symbols;
        if newly == 0 {
            return true;
        }
        self.scratch.sig[y][x] |= newly;
        rows[1][x] |= newly;
        if cleanup {
            self.scratch.refine[y][x] |= newly;
        }
        self.signs(y, x, newly, mag, sign_table)
    }

    /// Phase B of step `(y, x)`: the signs of the lanes in `newly`, which
    /// get magnitude `mag` where their sign decodes. Returns false where
    /// the stream ends.
    #[inline(always)]
    fn signs(&mut self, y: usize, x: usize, newly: u32, mag: u32, table: &[u8; 4]) -> bool {
        let h = self.h;
        let s = &self.scratch;
        let around = SignNeighbours::of(&s.sig[..h], &s.negative[..h], h, y, x);
        let (by_context, predicted) = around.context_masks();
        let b = if newly.count_ones() <= SPARSE_LANES {
            let prob = |t| table[around.context(t).0 as usize];
            self.coders.sparse(newly, prob, self.words)
        } else if newly & !by_context[0] == 0 {
            // Every lane in context 0 (most often: no significant
            // neighbour at all): one probability for all.
            self.coders.phase(newly, &[table[0]; LANES], self.words)
        } else {
            let probs = SignNeighbours::probabilities(&by_context, table);
            self.coders.phase(newly, &probs, self.words)
        };
        self.scratch.negative[y][x] |= (b.symbols ^ predicted) & b.decoded;
        let row = &mut self.mags.mags[y][x];
        // A coefficient whose sign was not decoded stays 0 (the stream
        // ended: no pass follows that could read it).
        for t in lanes(newly & !b.decoded) {
            row[t] = 0;
        }
        if b.decoded.count_ones() <= SPARSE_LANES {
            for t in lanes(b.decoded) {
                row[t] = mag;
            }
        } else {
            // Lane masks from the table (`masks`), widened: a mask shifted
            // lane by lane costs a variable shift, an AND and a compare
            // per 8 lanes.
            let decoded = masks::words(b.decoded);
            for t in 0..LANES {
                let on = decoded[t] as i16 as i32 as u32;
                row[t] = (mag & on) | (row[t] & !on);
            }
        }
        !b.stopped
    }

    #[inline(always)]
    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        let probs = [plane.refine; LANES];
        // Refining at `j` keeps the bits above `j`, sets bit `j` to the
        // symbol and puts the half step below it (`decode::refined`).
        let keep = !((2u32 << j) - 1);
        let (zero, one) = (half_step(j), (1u32 << j) | half_step(j));
        for y in 0..self.h {
            for x in 0..2 {
                let visit = self.scratch.refine[y][x];
                if visit != 0 {
                    let row = &mut self.mags.mags[y][x];
                    let r = if visit.count_ones() <= SPARSE_LANES {
                        let r = self.coders.sparse(visit, |_| plane.refine, self.words);
                        for t in lanes(r.decoded) {
                            let low = if r.symbols & (1 << t) != 0 { one } else { zero };
                            row[t] = (row[t] & keep) | low;
                        }
                        r
                    } else {
                        let r = self.coders.phase(visit, &probs, self.words);
                        // As in `signs`: the lane masks from the table.
                        let (ones, decoded) = (masks::words(r.symbols), masks::words(r.decoded));
                        for t in 0..LANES {
                            let is_one = ones[t] as i16 as i32 as u32;
                            let on = decoded[t] as i16 as i32 as u32;
                            let low = (one & is_one) | (zero & !is_one);
                            let refined = (row[t] & keep) | low;
                            row[t] = (refined & on) | (row[t] & !on);
                        }
                        r
                    };
                    if r.stopped {
                        return false;
                    }
                }
                self.scratch.refine[y][x] |= self.scratch.sig[y][x];
            }
        }
        true
    }

    /// Writes every coefficient of the codeblock: its magnitude with the
    /// decoded sign where it is significant, 0 elsewhere (`mags` holds
    /// what earlier codeblocks left there).
    ///
    /// Each row's two parities are signed in vector loops (the lane masks
    /// from the table, as in [`Self::signs`]) and then interleaved; a full
    /// row (64 columns) interleaves at its fixed width, which vectorizes,
    /// where the loop over pairs of a row of any width ran a coefficient
    /// pair at a time (docs/perf/codec.md, "The CPU decoder's count planes
    /// and sign contexts").
    #[inline(always)]
    fn write(&self, out: &mut impl BlockOut) {
        let w = out.width();
        for y in 0..self.h {
            let [even, odd] = &self.mags.mags[y];
            let [sig_even, sig_odd] = self.scratch.sig[y];
            let [neg_even, neg_odd] = self.scratch.negative[y];
            let (even, odd) = (
                signed(even, sig_even, neg_even),
                signed(odd, sig_odd, neg_odd),
            );
            let row = out.row_mut(y);
            if let Ok(row) = <&mut [i32; 2 * LANES]>::try_from(&mut *row) {
                for t in 0..LANES {
                    row[2 * t] = even[t];
                    row[2 * t + 1] = odd[t];
                }
                continue;
            }
            let mut pairs = row.chunks_exact_mut(2);
            for (t, pair) in (&mut pairs).enumerate() {
                pair[0] = even[t];
                pair[1] = odd[t];
            }
            if let [last] = pairs.into_remainder() {
                *last = even[w / 2];
            }
        }
    }
}
