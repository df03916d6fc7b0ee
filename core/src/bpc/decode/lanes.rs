//! The lane-parallel decoder, mirrored by `shaders/bpc/decode.glsl`.
//!
//! Truncation without a sequential scan: after the slot reservation of a
//! phase, lane `t` may decode iff the slots reserved by lanes `0..=t` in
//! this phase all exist, i.e. `slot[t] + need(t) <= available` with
//! `slot[t]` the exclusive prefix count (see [`reserve_slots`]). Because
//! slots grow with the lane index this keeps exactly the lanes before the
//! first one whose codeword is missing: the canonical stop of spec section 8.

// Lane loops index several per-lane arrays by lane number, as the shader
// does with gl_SubgroupInvocationID; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use super::{decode_passes, finish, prepare_decode, refined, signed, PassDecoder};
use crate::bpc::coder::{reserve_slots, LaneDecoders};
use crate::bpc::context::{Neighbours, SignNeighbours};
use crate::bpc::lut::PlaneTables;
use crate::bpc::record::half_step;
use crate::bpc::state::lanes;
use crate::bpc::state::present_mask;
use crate::bpc::{
    CodeblockMut, CodingParams, DecodeError, DecodeLimits, Decoded, Mode, Scratch, LANES,
};

/// Equal to [`decode_sequential`](crate::bpc::decode_sequential) for every input
/// (same output, summary and errors), computed the way the GPU team does
/// with subgroups of `subgroup_size` lanes (a power of two in 1..=32).
pub fn decode_lanes<const ROWS: usize>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    mut out: CodeblockMut<'_>,
    scratch: &mut Scratch<ROWS>,
    subgroup_size: u32,
) -> Result<Decoded, DecodeError> {
    if reserve_slots(0, 0, subgroup_size).is_none() {
        return Err(DecodeError::BadSubgroupSize);
    }
    let available = prepare_decode::<ROWS>(params, top, codewords, limits, out.height())?;
    out.clear();
    let mode = params.mode();
    let Some(m) = top else {
        return finish(mode, None, 0, 0, available);
    };
    let present = present_mask(out.width());
    scratch.reset(out.height(), present, mode == Mode::ThreePass);
    let mut team = Team {
        out,
        scratch,
        coders: LaneDecoders::new(),
        words: &codewords[..available],
        present,
        three_pass: mode == Mode::ThreePass,
        subgroup_size,
    };
    let completed = decode_passes(&mut team, params, m, limits);
    finish(mode, top, completed, team.coders.next as usize, available)
}

struct Team<'a, 'b, const ROWS: usize> {
    out: CodeblockMut<'b>,
    scratch: &'a mut Scratch<ROWS>,
    coders: LaneDecoders,
    words: &'a [u16],
    present: [u32; 2],
    three_pass: bool,
    subgroup_size: u32,
}

/// The outcome of one phase: the lanes that decoded, their symbols, and
/// whether the stream ended in it.
struct Phase {
    decoded: u32,
    symbols: u32,
    stopped: bool,
}

impl<const ROWS: usize> PassDecoder for Team<'_, '_, ROWS> {
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool {
        Self::significance_pass(self, j, plane, cleanup)
    }

    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        Self::refinement_pass(self, j, plane)
    }
}

impl<const ROWS: usize> Team<'_, '_, ROWS> {
    /// One phase: reserve slots, keep the lanes whose codewords exist, load
    /// new codewords, decode.
    fn phase(&mut self, visit: u32, probs: &[u8; LANES]) -> Phase {
        let need = visit & self.coders.exhausted();
        let mut decoded = visit;
        if need != 0 {
            let available = self.words.len() as u32;
            // Validated at entry: the size is a power of two in 1..=32.
            let Some(r) = reserve_slots(need, self.coders.next, self.subgroup_size) else {
                return Phase {
                    decoded: 0,
                    symbols: 0,
                    stopped: true,
                };
            };
            let mut allowed = 0u32;
            for t in 0..LANES {
                let asks = (need >> t) & 1;
                allowed |= ((r.slot[t] + asks <= available) as u32) << t;
            }
            decoded &= allowed;
            for t in lanes(need & allowed) {
                self.coders.open(t, self.words[r.slot[t] as usize]);
            }
            self.coders.next = r.next.min(available);
        }
        let symbols = self.coders.code_lanes(decoded, probs);
        Phase {
            decoded,
            symbols,
            stopped: decoded != visit,
        }
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
                let ctx = Neighbours::of(&self.scratch.sig[..h], h, y, x).counts();
                let mut zero_ctx = 0u32;
                let mut probs = [0u8; LANES];
                for t in 0..LANES {
                    zero_ctx |= ((ctx[t] == 0) as u32) << t;
                    probs[t] = sig_table[ctx[t] as usize];
                }
                let visit = if !cleanup && self.three_pass {
                    self.scratch.pending[y][x] |= candidates & zero_ctx;
                    candidates & !zero_ctx
                } else {
                    candidates
                };
                let a = self.phase(visit, &probs);
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
                let mut predicted = 0u32;
                for t in 0..LANES {
                    let (k, p) = around.context(t);
                    predicted |= (p as u32) << t;
                    probs[t] = sign_table[k as usize];
                }
                let b = self.phase(newly, &probs);
                let negative = (b.symbols ^ predicted) & b.decoded;
                self.scratch.negative[y][x] |= negative;
                let mag = (1u32 << j) | half_step(j);
                for t in lanes(b.decoded) {
                    self.out
                        .set(y, 2 * t + x, signed(mag, (negative >> t) & 1 != 0));
                }
                if b.stopped {
                    return false;
                }
            }
        }
        true
    }

    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool {
        let probs = [plane.refine; LANES];
        for y in 0..self.out.height() {
            for x in 0..2 {
                let visit = self.scratch.refine[y][x];
                if visit != 0 {
                    let r = self.phase(visit, &probs);
                    for t in lanes(r.decoded) {
                        let c = 2 * t + x;
                        let v = self.out.get(y, c);
                        self.out.set(y, c, refined(v, (r.symbols >> t) & 1 != 0, j));
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
}
