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

use super::{decode_passes, finish, prepare_decode, PassDecoder};
use crate::bpc::context::{Neighbours, SignNeighbours};
use crate::bpc::lut::PlaneTables;
use crate::bpc::record::half_step;
use crate::bpc::state::lanes;
use crate::bpc::state::present_mask;
use crate::bpc::{
    CodeblockMut, CodingParams, DecodeError, DecodeLimits, Decoded, Mode, Scratch, LANES,
};

/// Largest interval size, `2^W - 1`.
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

impl<const ROWS: usize> Default for LaneMagnitudes<ROWS> {
    fn default() -> Self {
        Self::new()
    }
}

/// `(S * P) >> 7` as the multiply-high `(S * (P << 9)) >> 16` (equal for
/// `S < 2^16`, `P < 2^7`, which the tables guarantee): one 16-bit vector
/// instruction per 16 lanes.
#[inline(always)]
fn split16(size: u16, p: u8) -> u16 {
    let p = (p as u16) << (16 - crate::bpc::PROBABILITY_BITS);
    ((size as u32 * p as u32) >> 16) as u16
}

/// The 32 lane decoders as 16-bit vectors. A lane keeps its codeword as
/// `offset = word - L` (never negative: `L` only moves up to a bound the
/// word reached) and its interval size `S`; `L + S <= 2^16 - 1` always, so
/// both fit 16 bits and the comparison `word >= L + f` is `offset >= f`.
struct Coders {
    offset: [u16; LANES],
    size: [u16; LANES],
    /// Lanes whose interval is exhausted (`S = 0`, all at first): they take
    /// a slot for their next symbol.
    exhausted: u32,
    /// Slots taken so far.
    next: u32,
}

/// The outcome of one phase: the lanes that decoded, their symbols, and
/// whether the stream ended in it.
struct Phase {
    decoded: u32,
    symbols: u32,
    stopped: bool,
}

impl Coders {
    fn new() -> Self {
        Coders {
            offset: [0; LANES],
            size: [0; LANES],
            exhausted: u32::MAX,
            next: 0,
        }
    }

    /// The lanes in `visit` decode one symbol each, lane `t` with
    /// probability `probs[t]`; the exhausted ones first take the next
    /// codewords of `words` in lane order. Lanes from the first one whose
    /// codeword is not in `words` on decode nothing (`stopped`).
    #[inline(always)]
    fn phase(&mut self, visit: u32, probs: &[u8; LANES], words: &[u16]) -> Phase {
        let mut need = visit & self.exhausted;
        let mut decoded = visit;
        let mut fresh = [0u16; LANES];
        if need != 0 {
            let left = words.len() - self.next as usize;
            if need.count_ones() as usize > left {
                // Keep the lanes below the first requester without a
                // codeword: drop the `left` lowest requesters, the lowest
                // one remaining is that lane.
                let mut beyond = need;
                for _ in 0..left {
                    beyond &= beyond - 1;
                }
                let below = (1u32 << beyond.trailing_zeros()) - 1;
                decoded &= below;
                need &= below;
            }
            let mut slot = self.next as usize;
            for t in lanes(need) {
                fresh[t] = words[slot];
                slot += 1;
            }
            self.next = slot as u32;
        }
        let symbols = self.decode(decoded, need, &fresh, probs);
        Phase {
            decoded,
            symbols,
            stopped: decoded != visit,
        }
    }

    /// Decode steps 1-3 for the lanes in `active`, those in `opening` (a
    /// subset) loading `fresh[t]` first; returns the symbols as a lane
    /// mask. Branch-free over the 32 lanes so that it vectorizes: lanes not
    /// active compute garbage (wrapping) and keep their state.
    #[inline(always)]
    fn decode(
        &mut self,
        active: u32,
        opening: u32,
        fresh: &[u16; LANES],
        probs: &[u8; LANES],
    ) -> u32 {
        let mut symbols = 0u32;
        let mut emptied = 0u32;
        // Selections as masks on values, not `if`s: LLVM turns a choice
        // between two loads into a choice of addresses, which it then
        // gathers lane by lane (or leaves the loop scalar).
        for t in 0..LANES {
            let lane = |mask: u32| 0u16.wrapping_sub((mask & (1 << t) != 0) as u16);
            let (on, open) = (lane(active), lane(opening));
            let offset = (fresh[t] & open) | (self.offset[t] & !open);
            let size = self.size[t] | open; // FULL when opening
                                            // Symbol 1 takes the upper subinterval: `word >= L + f`.
            let f = split16(size, probs[t]).wrapping_add(1);
            let one = 0u16.wrapping_sub((offset >= f) as u16);
            let new_offset = offset.wrapping_sub(f & one);
            let new_size = (size.wrapping_sub(f) & one) | (f.wrapping_sub(1) & !one);
            self.offset[t] = (new_offset & on) | (offset & !on);
            self.size[t] = (new_size & on) | (size & !on);
            symbols |= ((on & one) as u32 & 1) << t;
            emptied |= ((on != 0 && new_size == 0) as u32) << t;
        }
        self.exhausted = (self.exhausted & !active) | emptied;
        symbols
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
    mut out: CodeblockMut<'_>,
    scratch: &mut Scratch<ROWS>,
    mags: &mut LaneMagnitudes<ROWS>,
) -> Result<Decoded, DecodeError> {
    let available = prepare_decode::<ROWS>(params, top, codewords, limits, &mut out)?;
    let mode = params.mode();
    let Some(m) = top else {
        return finish(mode, None, 0, 0, available);
    };
    let h = out.height();
    let present = present_mask(out.width());
    scratch.reset(h, present, mode == Mode::ThreePass);
    for row in &mut mags.mags[..h] {
        *row = [[0; LANES]; 2];
    }
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

impl<const ROWS: usize> PassDecoder for Phases<'_, ROWS> {
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        Self::significance_pass(self, j, plane, cleanup)
    }

    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        Self::refinement_pass(self, j, plane)
    }
}

impl<const ROWS: usize> Phases<'_, ROWS> {
    /// SPP (`cleanup = false`) or CP. Returns false where the stream ends.
    #[inline(always)]
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        let h = self.h;
        let (sig_table, sign_table) = if cleanup {
            (&plane.cp_sig, &plane.cp_sign)
        } else {
            (&plane.sig, &plane.sign)
        };
        let mag = (1u32 << j) | half_step(j);
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
                // The significance map does not change within the phase
                // (lanes of a step are not neighbours).
                let around = Neighbours::of(&self.scratch.sig[..h], h, y, x).count_planes();
                let visit = if !cleanup && self.three_pass {
                    let isolated = candidates & around.zero();
                    self.scratch.pending[y][x] |= isolated;
                    candidates & !isolated
                } else {
                    candidates
                };
                if visit == 0 {
                    continue;
                }
                let a = self
                    .coders
                    .phase(visit, &around.probabilities(sig_table), self.words);
                if a.stopped {
                    return false;
                }
                let newly = a.symbols;
                if newly == 0 {
                    continue;
                }
                self.scratch.sig[y][x] |= newly;
                if cleanup {
                    self.scratch.refine[y][x] |= newly;
                }
                let s = &self.scratch;
                let around = SignNeighbours::of(&s.sig[..h], &s.negative[..h], h, y, x);
                let (by_context, predicted) = around.context_masks();
                let probs = SignNeighbours::probabilities(&by_context, sign_table);
                let b = self.coders.phase(newly, &probs, self.words);
                self.scratch.negative[y][x] |= (b.symbols ^ predicted) & b.decoded;
                // A coefficient whose sign was not decoded stays 0.
                let row = &mut self.mags.mags[y][x];
                for t in 0..LANES {
                    row[t] = if b.decoded & (1 << t) != 0 {
                        mag
                    } else {
                        row[t]
                    };
                }
                if b.stopped {
                    return false;
                }
            }
        }
        true
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
                    let r = self.coders.phase(visit, &probs, self.words);
                    let row = &mut self.mags.mags[y][x];
                    for t in 0..LANES {
                        let low = if r.symbols & (1 << t) != 0 { one } else { zero };
                        let refined = (row[t] & keep) | low;
                        row[t] = if r.decoded & (1 << t) != 0 {
                            refined
                        } else {
                            row[t]
                        };
                    }
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
    /// decoded sign.
    #[inline(always)]
    fn write(&self, out: &mut CodeblockMut<'_>) {
        let w = out.width();
        for y in 0..self.h {
            let [even, odd] = &self.mags.mags[y];
            let [neg_even, neg_odd] = self.scratch.negative[y];
            let row = out.row_mut(y);
            // `-m` where the lane's bit is set, as a mask (vectorizes).
            let signed = |m: u32, negative: u32, t: usize| {
                let n = 0i32.wrapping_sub((negative & (1 << t) != 0) as i32);
                ((m as i32) ^ n).wrapping_sub(n)
            };
            let mut pairs = row.chunks_exact_mut(2);
            for (t, pair) in (&mut pairs).enumerate() {
                pair[0] = signed(even[t], neg_even, t);
                pair[1] = signed(odd[t], neg_odd, t);
            }
            if let [last] = pairs.into_remainder() {
                *last = signed(even[w / 2], neg_even, w / 2);
            }
        }
    }
}
