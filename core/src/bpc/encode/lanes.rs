//! The lane-parallel encoder: the 32 lanes of a codeblock advance in
//! lock-step, one phase of one step at a time, as one GPU team does.
//!
//! Per phase every lane computes, from the state at the start of the step,
//! whether it codes a symbol, the symbol and its probability (plain loops
//! over 32-element arrays). Lanes with an exhausted codeword then take slots
//! through [`reserve_slots`] (ballot + prefix popcount per subgroup, shared
//! counts across subgroups), and all visiting lanes code their symbol.
//! `shaders/bpc/encode.glsl` is this file written in GLSL.

// Lane loops index several per-lane arrays by lane number, as the shader
// does with gl_SubgroupInvocationID; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use super::prepare;
use crate::bpc::coder::{reserve_slots, LaneEncoders};
use crate::bpc::context::{Neighbours, SignNeighbours};
use crate::bpc::lut::PlaneTables;
use crate::bpc::record::{refinement_decrease, significance_decrease};
use crate::bpc::state::lanes;
use crate::bpc::{
    Codeblock, CodingParams, EncodeError, Encoded, Mode, PassKind, PassRecord, PassSchedule,
    Scratch, LANES,
};

/// Equal to [`encode_sequential`](crate::bpc::encode_sequential) for every input
/// (same output, records and errors), computed the way the GPU team does
/// with subgroups of `subgroup_size` lanes (a power of two in 1..=32).
pub fn encode_lanes<const ROWS: usize>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    out: &mut [u16],
    mut records: Option<&mut [PassRecord]>,
    subgroup_size: u32,
) -> Result<Encoded, EncodeError> {
    if reserve_slots(0, 0, subgroup_size).is_none() {
        return Err(EncodeError::BadSubgroupSize);
    }
    let prepared = prepare(block, params, scratch, records.as_deref())?;
    let Some(top) = prepared.top else {
        return Ok(Encoded {
            top_bitplane: None,
            codewords: 0,
            passes: 0,
        });
    };
    let mut team = Team {
        block,
        scratch,
        coders: LaneEncoders::new(),
        out,
        present: prepared.present,
        three_pass: params.mode() == Mode::ThreePass,
        subgroup_size,
    };
    let schedule = PassSchedule::new(params.mode(), Some(top));
    let passes = schedule.len();
    for (i, (kind, j)) in schedule.enumerate() {
        let plane = params.tables.plane(params.group, j);
        let decrease = match kind {
            PassKind::Significance => team.significance_pass(j, &plane, false)?,
            PassKind::Refinement => team.refinement_pass(j, &plane)?,
            PassKind::Cleanup => team.significance_pass(j, &plane, true)?,
        };
        if let Some(r) = records.as_deref_mut() {
            r[i] = PassRecord {
                kind,
                bitplane: j,
                codewords: team.coders.next,
                distortion_decrease: decrease,
            };
        }
    }
    team.coders.flush(team.out);
    Ok(Encoded {
        top_bitplane: Some(top),
        codewords: team.coders.next as usize,
        passes,
    })
}

struct Team<'a, 'b, const ROWS: usize> {
    block: &'a Codeblock<'b>,
    scratch: &'a mut Scratch<ROWS>,
    coders: LaneEncoders,
    out: &'a mut [u16],
    present: [u32; 2],
    three_pass: bool,
    subgroup_size: u32,
}

impl<const ROWS: usize> Team<'_, '_, ROWS> {
    /// Every lane's magnitude in step `(y, x)` (0 for absent lanes).
    #[inline]
    fn magnitudes(&self, y: usize, x: usize) -> [u32; LANES] {
        let row = self.block.row(y);
        let mut mags = [0u32; LANES];
        for (t, m) in mags.iter_mut().enumerate() {
            if let Some(v) = row.get(2 * t + x) {
                *m = v.unsigned_abs();
            }
        }
        mags
    }

    /// One phase: reserve slots for the exhausted visiting lanes, then code.
    fn phase(&mut self, visit: u32, symbols: u32, probs: &[u8; LANES]) -> Result<(), EncodeError> {
        let need = visit & self.coders.exhausted();
        if need != 0 {
            // Validated at entry: the size is a power of two in 1..=32.
            let r = reserve_slots(need, self.coders.next, self.subgroup_size)
                .ok_or(EncodeError::BadSubgroupSize)?;
            for t in lanes(need) {
                self.coders.open(t, r.slot[t], self.out.len())?;
            }
            self.coders.next = r.next;
        }
        self.coders.code_lanes(visit, symbols, probs, self.out);
        Ok(())
    }

    /// SPP (`cleanup = false`) or CP.
    fn significance_pass(
        &mut self,
        j: u8,
        plane: &PlaneTables,
        cleanup: bool,
    ) -> Result<i128, EncodeError> {
        let h = self.block.height();
        let (sig_table, sign_table) = if cleanup {
            (&plane.cp_sig, &plane.cp_sign)
        } else {
            (&plane.sig, &plane.sign)
        };
        let mut decrease = 0i128;
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
                // Phase A, every lane at once.
                let ctx = Neighbours::of(&self.scratch.sig[..h], h, y, x).counts();
                let mags = self.magnitudes(y, x);
                let mut zero_ctx = 0u32;
                let mut bits = 0u32;
                let mut probs = [0u8; LANES];
                for t in 0..LANES {
                    zero_ctx |= ((ctx[t] == 0) as u32) << t;
                    bits |= ((mags[t] >> j) & 1) << t;
                    probs[t] = sig_table[ctx[t] as usize];
                }
                let visit = if !cleanup && self.three_pass {
                    self.scratch.pending[y][x] |= candidates & zero_ctx;
                    candidates & !zero_ctx
                } else {
                    candidates
                };
                self.phase(visit, bits, &probs)?;
                let newly = visit & bits;
                if newly == 0 {
                    continue;
                }
                for t in lanes(newly) {
                    decrease += significance_decrease(mags[t], j) as i128;
                }
                self.scratch.sig[y][x] |= newly;
                if cleanup {
                    self.scratch.refine[y][x] |= newly;
                }
                // Phase B: signs of the lanes that became significant.
                let s = &self.scratch;
                let around = SignNeighbours::of(&s.sig[..h], &s.negative[..h], h, y, x);
                let mut symbols = 0u32;
                for t in 0..LANES {
                    let (k, predicted) = around.context(t);
                    let negative = (s.negative[y][x] >> t) & 1 != 0;
                    symbols |= ((negative != predicted) as u32) << t;
                    probs[t] = sign_table[k as usize];
                }
                self.phase(newly, symbols, &probs)?;
            }
        }
        Ok(decrease)
    }

    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> Result<i128, EncodeError> {
        let mut decrease = 0i128;
        let probs = [plane.refine; LANES];
        for y in 0..self.block.height() {
            for x in 0..2 {
                let visit = self.scratch.refine[y][x];
                if visit != 0 {
                    let mags = self.magnitudes(y, x);
                    let mut bits = 0u32;
                    for (t, m) in mags.iter().enumerate() {
                        bits |= ((m >> j) & 1) << t;
                    }
                    self.phase(visit, bits, &probs)?;
                    for t in lanes(visit) {
                        decrease += refinement_decrease(mags[t], j) as i128;
                    }
                }
                self.scratch.refine[y][x] |= self.scratch.sig[y][x];
            }
        }
        Ok(decrease)
    }
}
