//! The plane-map encoder: the 2-pass form of `shaders/bpc/encode_planes.glsl`
//! (`bpc_encode64_2pass`), function by function, so that the shader can be
//! read against it. Same codewords as [`encode_sequential`] and
//! [`encode_lanes`] for 2-pass tables (the tests check it); what differs is
//! where a step finds its state.
//!
//! # Maps
//! In 2-pass mode every insignificant coefficient codes its significance in
//! every bitplane's SPP, so the significance state is a function of the
//! magnitudes: before bitplane `j`'s SPP the significant coefficients are
//! those with `|v| >> (j + 1) != 0` (exactly what bitplane `j`'s MRP
//! refines), after it those with `|v| >> j != 0`. Each bitplane therefore
//! starts by building two lane-mask maps ([`PlaneMaps`]): bit `j` of every
//! magnitude, and "significant before bitplane `j`" (the previous
//! bitplane's two ORed). Its SPP and MRP only read those two and the sign
//! map (built once per codeblock) and store nothing: there is no
//! significance, refinement or pending map and no write-back. The SPP
//! walks the rows through a [`window::Window`] of three rows.
//!
//! # Coder
//! As in the shader, a phase's exhausted visiting lanes take slots in lane
//! order (team ballot and prefix popcount, which no subgroup size changes),
//! and a lane stores its codeword when it reserves the next slot or at the
//! codeblock's end, not when its interval runs out: the bytes are the same
//! because an exhausted lane's `low` does not change until then.
//!
//! The shader gives no pass records (the records build is
//! `shaders/bpc/encode.glsl` with `BPC_RECORDS`), so neither does this.
//!
//! [`encode_sequential`]: crate::bpc::encode_sequential
//! [`encode_lanes`]: crate::bpc::encode_lanes

// Lane loops index several per-lane arrays by lane number, as the shader
// does with gl_SubgroupInvocationID; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

mod window;

use window::{lane_value, Window};

use crate::bpc::coder::split;
use crate::bpc::lut::PlaneTables;
use crate::bpc::state::present_mask;
use crate::bpc::{
    most_significant_bitplane, pass_count, Codeblock, CodingParams, EncodeError, Encoded, Mode,
    GROUPS, LANES,
};

/// The plane-map encoder's maps for codeblocks of up to `ROWS` rows
/// (`ROWS <= 256`): `24 * ROWS` bytes (`PlaneMaps<64>` = 1.5 KiB,
/// `PlaneMaps<256>` = 6 KiB), the shader's shared memory. Reusable for any
/// number of codeblocks without a reset.
///
/// For row `y` and column parity `x`, bit `t` of a word is the coefficient
/// at column `2t + x` (the layout of [`Scratch`](crate::bpc::Scratch)).
#[derive(Debug, Clone)]
pub struct PlaneMaps<const ROWS: usize = 64> {
    /// `bpc_above`: significant before the current bitplane `j`,
    /// `|v| >> (j + 1) != 0`.
    above: [[u32; 2]; ROWS],
    /// `bpc_bits`: bit `j` of `|v|`.
    bits: [[u32; 2]; ROWS],
    /// `bpc_negative`: every negative coefficient.
    negative: [[u32; 2]; ROWS],
}

impl<const ROWS: usize> PlaneMaps<ROWS> {
    /// Tallest codeblock these maps can code.
    pub const MAX_ROWS: usize = ROWS;

    /// Empty maps.
    pub const fn new() -> Self {
        PlaneMaps {
            above: [[0; 2]; ROWS],
            bits: [[0; 2]; ROWS],
            negative: [[0; 2]; ROWS],
        }
    }

    /// `bpc_body_clear` and `load_signs`: the sign map of the codeblock.
    /// (`above` and `bits` are rebuilt by every bitplane.)
    fn load_signs(&mut self, block: &Codeblock<'_>) {
        for y in 0..block.height() {
            self.negative[y] = [0; 2];
            for (c, v) in block.row(y).iter().enumerate() {
                self.negative[y][c % 2] |= ((*v < 0) as u32) << (c / 2);
            }
        }
    }

    /// `start_bitplane`: bitplane `j`'s maps. "Significant before `j`" is
    /// "before `j + 1`" or bit `j + 1` set (nothing before the top
    /// bitplane); then every row's bit `j`, one ballot per row and parity.
    /// Every load is inside the codeblock: a lane whose column is absent
    /// loads its row's last column, and `present` drops its bit (the shader
    /// does this to load without a branch; it also loads four rows at a
    /// time, which gives the same words).
    fn start_bitplane(&mut self, block: &Codeblock<'_>, present: [u32; 2], j: u8, first: bool) {
        let height = block.height();
        for y in 0..height {
            for x in 0..2 {
                self.above[y][x] = if first {
                    0
                } else {
                    self.above[y][x] | self.bits[y][x]
                };
            }
        }
        let last = block.width() - 1;
        for y in 0..height {
            let row = block.row(y);
            for x in 0..2 {
                let mut ballot = 0u32;
                for lane in 0..LANES {
                    let m = row[(2 * lane + x).min(last)].unsigned_abs();
                    ballot |= ((m >> j) & 1) << lane;
                }
                self.bits[y][x] = ballot & present[x];
            }
        }
    }
}

impl<const ROWS: usize> Default for PlaneMaps<ROWS> {
    fn default() -> Self {
        Self::new()
    }
}

/// Encodes one codeblock with 2-pass tables the way
/// `shaders/bpc/encode_planes.glsl` does, into `out` (codeword `k` at
/// `out[k]`): the same [`Encoded`] and codewords as
/// [`encode_sequential`](crate::bpc::encode_sequential) and
/// [`encode_lanes`](crate::bpc::encode_lanes), without pass records.
///
/// Errors: [`EncodeError::NeedsTwoPasses`] for 3-pass tables, then as
/// [`encode_sequential`](crate::bpc::encode_sequential) (`maps` bounds the
/// height like its scratch).
pub fn encode_plane_maps<const ROWS: usize>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    maps: &mut PlaneMaps<ROWS>,
    out: &mut [u16],
) -> Result<Encoded, EncodeError> {
    if params.mode() != Mode::TwoPass {
        return Err(EncodeError::NeedsTwoPasses);
    }
    if params.group >= GROUPS {
        return Err(EncodeError::BadGroup);
    }
    let height = block.height();
    if height > ROWS {
        return Err(EncodeError::HeightExceedsScratch);
    }
    // bpc_measure's M; an empty codeblock has no codewords.
    let Some(top) = most_significant_bitplane(block)? else {
        return Ok(Encoded {
            top_bitplane: None,
            codewords: 0,
            passes: 0,
        });
    };
    // bpc_body_start, bpc_body_capacity, main's coder set-up.
    let present = present_mask(block.width());
    let mut team = Team::new(out);
    maps.load_signs(block);
    // bpc_body_code: per bitplane its maps, then its SPP and MRP.
    for i in 0..=top {
        let j = top - i;
        maps.start_bitplane(block, present, j, i == 0);
        let plane = params.tables.plane(params.group, j);
        team.code_bitplane(maps, height, present, &plane);
    }
    // main's last emit: every lane's open codeword.
    for lane in 0..LANES {
        team.emit(team.slot[lane], team.low[lane]);
    }
    // bpc_encode_finish: more slots than the output holds is an overflow
    // (emit stored none of them).
    if team.next as usize > team.out.len() {
        return Err(EncodeError::OutputTooSmall {
            capacity: team.out.len(),
        });
    }
    Ok(Encoded {
        top_bitplane: Some(top),
        codewords: team.next as usize,
        passes: pass_count(Mode::TwoPass, Some(top)),
    })
}

/// No slot reserved yet (the shader's `NO_SLOT`): `emit` refuses it.
const NO_SLOT: u32 = u32::MAX;

/// The 32 lanes' coders (`ac_low`, `ac_size`, `ac_slot`) and the team's
/// slot counter (`ac_next`).
struct Team<'o> {
    low: [u32; LANES],
    size: [u32; LANES],
    slot: [u32; LANES],
    next: u32,
    out: &'o mut [u16],
}

impl<'o> Team<'o> {
    fn new(out: &'o mut [u16]) -> Self {
        Team {
            low: [0; LANES],
            size: [0; LANES],
            slot: [NO_SLOT; LANES],
            next: 0,
            out,
        }
    }

    /// `emit`: stores a codeword if its slot is inside the output (the
    /// shader's `emit_limit`; `NO_SLOT` never is).
    fn emit(&mut self, slot: u32, value: u32) {
        if slot != NO_SLOT {
            if let Some(w) = self.out.get_mut(slot as usize) {
                *w = value as u16;
            }
        }
    }

    /// `encode_phase`: the exhausted visiting lanes (`need`, the team
    /// ballot) store their previous codeword and take slots in lane order
    /// (the counter plus the requests of the lanes below), then every
    /// visiting lane codes bit `t` of `symbols` with probability
    /// `probs[t]`.
    fn phase(&mut self, visit: u32, symbols: u32, probs: &[u8; LANES]) {
        let mut need_mask = 0u32;
        for lane in 0..LANES {
            need_mask |= ((self.size[lane] == 0) as u32) << lane;
        }
        need_mask &= visit;
        for lane in 0..LANES {
            if need_mask >> lane & 1 != 0 {
                self.emit(self.slot[lane], self.low[lane]);
                let lanes_below = (1u32 << lane) - 1;
                self.slot[lane] = self.next + (need_mask & lanes_below).count_ones();
                self.low[lane] = 0;
                self.size[lane] = 0xFFFF;
            }
        }
        self.next += need_mask.count_ones();
        for lane in 0..LANES {
            if visit >> lane & 1 != 0 {
                let f = split(self.size[lane], probs[lane]);
                if symbols >> lane & 1 != 0 {
                    self.low[lane] += f + 1;
                    self.size[lane] -= f + 1;
                } else {
                    self.size[lane] = f;
                }
            }
        }
    }

    /// `significance_step`: step `(y, x)` of the SPP on the window.
    fn significance_step(&mut self, w: &mut Window, x: usize, present: u32, plane: &PlaneTables) {
        let cand = present & !w.sig_c[x];
        if cand == 0 {
            return;
        }
        // Phase A.
        let counts = w.sig_context_sliced(x);
        let probs: [u8; LANES] = core::array::from_fn(|t| plane.sig[lane_value(&counts, t)]);
        let bits = w.bits_c[x];
        self.phase(cand, bits, &probs);
        let newly = cand & bits;
        // Phase B: signs of the lanes that became significant (their
        // contexts see the row before this step's update, like core's).
        if newly != 0 {
            let [k0, k1, symbols] = w.sign_words(x);
            let probs: [u8; LANES] = core::array::from_fn(|t| plane.sign[lane_value(&[k0, k1], t)]);
            self.phase(newly, symbols, &probs);
        }
        w.sig_c[x] |= newly;
    }

    /// `refinement_step`.
    fn refinement_step(&mut self, visit: u32, bits: u32, p: u8) {
        if visit != 0 {
            self.phase(visit, bits, &[p; LANES]);
        }
    }

    /// `code_bitplane`: bitplane `j`'s SPP, then its MRP, reading only the
    /// maps of bitplane `j`.
    fn code_bitplane<const ROWS: usize>(
        &mut self,
        maps: &PlaneMaps<ROWS>,
        height: usize,
        present: [u32; 2],
        plane: &PlaneTables,
    ) {
        let mut w = Window::start(maps, height);
        for y in 0..height {
            self.significance_step(&mut w, 0, present[0], plane);
            self.significance_step(&mut w, 1, present[1], plane);
            w.next(maps, height, y);
        }
        for y in 0..height {
            let (visit, bits) = (maps.above[y], maps.bits[y]);
            self.refinement_step(visit[0], bits[0], plane.refine);
            self.refinement_step(visit[1], bits[1], plane.refine);
        }
    }
}
