//! The per-lane fixed-length-codeword arithmetic coder (spec section 6,
//! W = 16, 7-bit probabilities) and codeword slot reservation (section 7).
//!
//! Each lane codes into its own 16-bit codeword. A lane whose interval is
//! exhausted (`S = 0`) reserves the next slot of the codeblock's stream when
//! it next has a symbol to code; lanes reserving in the same phase of a step
//! take consecutive slots in increasing lane order.

// Lane loops index several per-lane arrays by lane number, as the shader
// does with gl_SubgroupInvocationID; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use super::{EncodeError, LANES};

/// Largest interval size, `2^W - 1`.
const FULL: u32 = (1 << super::CODEWORD_BITS) - 1;

/// `(S * P) >> 7`: the size of the lower (symbol 0) subinterval minus one.
#[inline]
pub(super) fn split(size: u32, p: u8) -> u32 {
    (size * p as u32) >> super::PROBABILITY_BITS
}

/// Slots taken by the lanes of one phase (see [`reserve_slots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SlotReservation {
    /// `next` plus the number of requesting lanes below lane `t`, for every
    /// lane: the slot of a requesting lane, and for any lane the slot count
    /// that precedes it (the decoder's truncation test uses both).
    pub slot: [u32; LANES],
    /// The slot counter after the phase.
    pub next: u32,
}

/// Reserves slots for the lanes in `need` (bit `t` = lane `t`), the first
/// of them taking slot `next`, the way a GPU team of `32 / subgroup_size`
/// subgroups does it: each subgroup counts its requests with a ballot, a lane
/// adds the requests of lower lanes in its subgroup (prefix popcount) to the
/// requests of all lower subgroups (exchanged through shared memory when the
/// subgroup has fewer than 32 lanes). The result is the same for every
/// subgroup size: lane order. `subgroup_size` must be a power of two in 1..=32.
///
/// ```
/// use wavelane_core::bpc::reserve_slots;
/// let r = reserve_slots(0b1010_0101, 7, 4).unwrap();
/// assert_eq!([r.slot[0], r.slot[2], r.slot[5], r.slot[7]], [7, 8, 9, 10]);
/// assert_eq!(r.next, 11);
/// ```
pub fn reserve_slots(need: u32, next: u32, subgroup_size: u32) -> Option<SlotReservation> {
    if !subgroup_size.is_power_of_two() || subgroup_size > LANES as u32 {
        return None;
    }
    let s = subgroup_size as usize;
    let sub_mask = if s == 32 { u32::MAX } else { (1u32 << s) - 1 };
    // Per subgroup: its ballot of requests and their count.
    let mut before = next;
    let mut slot = [0u32; LANES];
    for sub in 0..LANES / s {
        let ballot = (need >> (sub * s)) & sub_mask;
        for i in 0..s {
            let below = ballot & ((1u32 << i) - 1);
            slot[sub * s + i] = before + below.count_ones();
        }
        before += ballot.count_ones();
    }
    Some(SlotReservation { slot, next: before })
}

/// The 32 lane encoders of a codeblock plus its slot counter.
///
/// Intervals are kept as `u16`: `L + S` never exceeds `2^W - 1 = 65535`
/// (opening sets `L = 0, S = 65535`; symbol 1 moves `L` up by what it takes
/// off `S`, symbol 0 only shrinks `S`), so 32 lanes fill two 256-bit
/// vectors and `(S * P) >> 7` is one 16-bit multiply-high by `P << 9`.
#[derive(Debug, Clone)]
pub(super) struct LaneEncoders {
    low: [u16; LANES],
    size: [u16; LANES],
    slot: [u32; LANES],
    /// Lanes whose interval is exhausted (`S = 0`, all of them at first):
    /// they reserve a slot for their next symbol. Kept up to date by every
    /// coding step so that a phase does not test 32 sizes.
    exhausted: u32,
    /// Lanes that ever reserved a slot (they flush a codeword at the end).
    opened: u32,
    /// Slots reserved so far (`n`).
    pub next: u32,
}

/// `(S * P) >> 7` as the multiply-high `(S * (P << 9)) >> 16` (equal for
/// `S < 2^16`, `P < 2^7`), the form 16-bit vector lanes compute in one
/// instruction.
#[inline(always)]
fn split16(size: u16, p: u8) -> u16 {
    ((size as u32).wrapping_mul((p as u32) << (16 - super::PROBABILITY_BITS)) >> 16) as u16
}

impl LaneEncoders {
    pub fn new() -> Self {
        LaneEncoders {
            low: [0; LANES],
            size: [0; LANES],
            slot: [0; LANES],
            exhausted: u32::MAX,
            opened: 0,
            next: 0,
        }
    }

    /// Bit `t` set when lane `t` would reserve a slot for its next symbol.
    #[inline(always)]
    pub fn exhausted(&self) -> u32 {
        self.exhausted
    }

    /// Whether lane `t` reserves a slot for its next symbol.
    #[inline]
    pub fn needs_slot(&self, t: usize) -> bool {
        self.exhausted >> t & 1 != 0
    }

    /// Encodes `symbol` with probability `p` on lane `t`, reserving the next
    /// slot itself when needed (the sequential form: lanes call this in
    /// canonical order, which is the reservation order).
    #[inline]
    pub fn encode(
        &mut self,
        t: usize,
        symbol: bool,
        p: u8,
        out: &mut [u16],
    ) -> Result<(), EncodeError> {
        if self.exhausted >> t & 1 != 0 {
            let slot = self.next;
            self.next += 1;
            self.open(t, slot, out.len())?;
        }
        self.code(t, symbol, p, out);
        Ok(())
    }

    /// Starts a new codeword for lane `t` in `slot` (spec section 6 step 1).
    #[inline]
    pub fn open(&mut self, t: usize, slot: u32, capacity: usize) -> Result<(), EncodeError> {
        if slot as usize >= capacity {
            return Err(EncodeError::OutputTooSmall { capacity });
        }
        self.slot[t] = slot;
        self.low[t] = 0;
        self.size[t] = FULL as u16;
        self.opened |= 1 << t;
        self.exhausted &= !(1 << t);
        Ok(())
    }

    /// Steps 2-4 for a lane whose codeword is open.
    #[inline]
    pub fn code(&mut self, t: usize, symbol: bool, p: u8, out: &mut [u16]) {
        let size = self.size[t];
        let f = split16(size, p);
        // Symbol 1 takes the upper subinterval `[L + f + 1, L + S]`, symbol 0
        // the lower `[L, L + f]`. Written without a branch on the symbol:
        // significance and sign symbols are close to random, and a
        // mispredicted branch per symbol costs more than the arithmetic.
        // (`f < S`, so `S - f - 1` never wraps; `L + S <= 65535`.)
        let one = (symbol as u16).wrapping_neg();
        self.low[t] += (f + 1) & one;
        let size = ((size - f - 1) & one) | (f & !one);
        self.size[t] = size;
        if size == 0 {
            self.exhausted |= 1 << t;
            // The slot was checked against the output length when opened.
            out[self.slot[t] as usize] = self.low[t];
        }
    }

    /// One phase of the lane-parallel form: the lanes in `visit` code bit `t`
    /// of `symbols` with probability `probs[t]`. The caller has opened a
    /// codeword for every visiting lane that was exhausted.
    #[inline(always)]
    pub fn code_lanes(&mut self, visit: u32, symbols: u32, probs: &[u8; LANES], out: &mut [u16]) {
        self.code_lanes_opening(visit, 0, symbols, probs, out);
    }

    /// [`Self::code_lanes`] where the lanes in `opening` (a subset of
    /// `visit`) start a fresh codeword first (`L = 0`, `S = 2^W - 1`; their
    /// slots are already set). Opening inside the vector loop rather than
    /// lane by lane beforehand keeps the phase's interval state in vector
    /// registers: scalar 16-bit stores followed by the loop's vector loads
    /// of the same arrays cannot be store-forwarded, and stall.
    #[inline(always)]
    fn code_lanes_opening(
        &mut self,
        visit: u32,
        opening: u32,
        symbols: u32,
        probs: &[u8; LANES],
        out: &mut [u16],
    ) {
        let mut emitted = 0u32;
        // Branch-free over the 32 lanes so that the compiler can vectorize
        // it; lanes not visiting compute garbage (wrapping) and keep their
        // state. The choices are masks on loaded values, not `if`s: LLVM
        // turned the `if` form into a branch per lane in most of the
        // encoder's inlined copies and left them scalar (docs/perf/codec.md,
        // "The CPU encoder on the AVX2 development machine").
        for t in 0..LANES {
            let lane = |m: u32| ((m >> t) as u16 & 1).wrapping_neg();
            let (active, one, open) = (lane(visit), lane(symbols), lane(opening));
            let low = self.low[t] & !open;
            let size = (self.size[t] & !open) | (FULL as u16 & open);
            let f = split16(size, probs[t]);
            let new_low = low.wrapping_add(f.wrapping_add(1) & one);
            let new_size = (size.wrapping_sub(f).wrapping_sub(1) & one) | (f & !one);
            self.low[t] = (new_low & active) | (low & !active);
            self.size[t] = (new_size & active) | (size & !active);
            emitted |= (((new_size == 0) as u32) & (visit >> t & 1)) << t;
        }
        self.exhausted = (self.exhausted & !visit) | emitted;
        for t in crate::bpc::state::lanes(emitted) {
            out[self.slot[t] as usize] = self.low[t];
        }
    }

    /// One phase of the sequential form coded all lanes at once: the lanes
    /// in `visit` code bit `t` of `symbols` with probability `probs[t]`.
    /// Within a phase every lane codes at most one symbol and the canonical
    /// order is lane order, so the exhausted visiting lanes reserve their
    /// slots in lane order first (what [`Self::encode`] lane by lane
    /// would do), then [`Self::code_lanes_opening`] opens their codewords and
    /// codes all 32 lanes branch-free.
    /// Fails like [`Self::encode`] when a slot would not fit in `out`.
    #[inline(always)]
    pub fn code_phase(
        &mut self,
        visit: u32,
        symbols: u32,
        probs: &[u8; LANES],
        out: &mut [u16],
    ) -> Result<(), EncodeError> {
        let need = visit & self.exhausted();
        if need != 0 {
            if self.next as usize + need.count_ones() as usize > out.len() {
                return Err(EncodeError::OutputTooSmall {
                    capacity: out.len(),
                });
            }
            for t in crate::bpc::state::lanes(need) {
                self.slot[t] = self.next;
                self.next += 1;
            }
            self.opened |= need;
        }
        self.code_lanes_opening(visit, need, symbols, probs, out);
        Ok(())
    }

    /// Writes every open codeword (end of the codeblock).
    pub fn flush(&self, out: &mut [u16]) {
        for t in 0..LANES {
            if self.opened & (1 << t) != 0 {
                out[self.slot[t] as usize] = self.low[t];
            }
        }
    }
}

/// The 32 lane decoders of a codeblock plus its slot counter.
#[derive(Debug, Clone)]
pub(super) struct LaneDecoders {
    low: [u32; LANES],
    size: [u32; LANES],
    word: [u32; LANES],
    /// Slots reserved so far.
    pub next: u32,
}

impl LaneDecoders {
    pub fn new() -> Self {
        LaneDecoders {
            low: [0; LANES],
            size: [0; LANES],
            word: [0; LANES],
            next: 0,
        }
    }

    /// Bit `t` set when lane `t` needs a new codeword for its next symbol.
    #[inline]
    pub fn exhausted(&self) -> u32 {
        let mut mask = 0u32;
        for t in 0..LANES {
            mask |= ((self.size[t] == 0) as u32) << t;
        }
        mask
    }

    /// Decodes one symbol of lane `t` with probability `p`, reserving and
    /// reading the next codeword when needed. `None` when that codeword is
    /// not among the first `available` ones (the stream ends here).
    #[inline]
    pub fn decode(&mut self, t: usize, p: u8, words: &[u16], available: usize) -> Option<bool> {
        if self.size[t] == 0 {
            let slot = self.next as usize;
            if slot >= available {
                return None;
            }
            self.next += 1;
            self.open(t, words[slot]);
        }
        Some(self.code(t, p))
    }

    /// Loads codeword `word` into lane `t` (spec section 6, decode step 1).
    #[inline]
    pub fn open(&mut self, t: usize, word: u16) {
        self.word[t] = word as u32;
        self.low[t] = 0;
        self.size[t] = FULL;
    }

    /// Decode steps 2-3 for a lane whose codeword is loaded. The interval
    /// arithmetic stays in range whatever the codeword holds.
    #[inline]
    pub fn code(&mut self, t: usize, p: u8) -> bool {
        let f = split(self.size[t], p) + 1;
        let g = self.low[t] + f;
        if self.word[t] >= g {
            self.size[t] -= f;
            self.low[t] = g;
            true
        } else {
            self.size[t] = f - 1;
            false
        }
    }
}

impl LaneDecoders {
    /// One phase of the lane-parallel form: the lanes in `visit` decode one
    /// symbol each with probability `probs[t]`; returns the symbols as a lane
    /// mask. The caller has loaded a codeword into every exhausted visiting lane.
    #[inline]
    pub fn code_lanes(&mut self, visit: u32, probs: &[u8; LANES]) -> u32 {
        let mut symbols = 0u32;
        for t in 0..LANES {
            let active = (visit >> t) & 1 != 0;
            let f = split(self.size[t], probs[t]) + 1;
            let g = self.low[t] + f;
            let one = self.word[t] >= g;
            let (low, size) = if one {
                (g, self.size[t].wrapping_sub(f))
            } else {
                (self.low[t], f - 1)
            };
            self.low[t] = if active { low } else { self.low[t] };
            self.size[t] = if active { size } else { self.size[t] };
            symbols |= ((active && one) as u32) << t;
        }
        symbols
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_subgroup_sizes_are_refused() {
        assert!(reserve_slots(1, 0, 0).is_none());
        assert!(reserve_slots(1, 0, 3).is_none());
        assert!(reserve_slots(1, 0, 64).is_none());
    }

    #[test]
    fn a_fresh_coder_splits_the_full_interval() {
        // S = 65535, P = 64: f = 32767; symbol 1 keeps [32768, 65535].
        let mut enc = LaneEncoders::new();
        let mut out = [0u16; 1];
        enc.encode(3, true, 64, &mut out).unwrap();
        assert_eq!((enc.low[3], enc.size[3], enc.next), (32768, 32767, 1));
        // P = 0 and symbol 0 exhausts the interval at once and emits L.
        enc.encode(3, false, 0, &mut out).unwrap();
        assert_eq!((enc.size[3], out[0]), (0, 32768));
        // The next symbol needs slot 1, which does not fit.
        assert_eq!(
            enc.encode(3, false, 64, &mut out),
            Err(EncodeError::OutputTooSmall { capacity: 1 })
        );
    }

    proptest! {
        #[test]
        fn reservation_is_lane_order_for_every_subgroup_size(need in any::<u32>(), next in 0u32..1000) {
            for s in [1u32, 2, 4, 8, 16, 32] {
                let r = reserve_slots(need, next, s).unwrap();
                let mut n = next;
                for t in 0..32 {
                    if need & (1 << t) != 0 {
                        prop_assert_eq!(r.slot[t], n);
                        n += 1;
                    }
                }
                prop_assert_eq!(r.next, n);
            }
        }

        #[test]
        fn a_phase_at_once_equals_its_lanes_one_by_one(
            phases in proptest::collection::vec((any::<u32>(), any::<u32>(), any::<[u8; 32]>()), 1..40),
            capacity in 0usize..200,
        ) {
            let mut one_by_one = LaneEncoders::new();
            let mut at_once = LaneEncoders::new();
            let (mut a, mut b) = (std::vec![0u16; capacity], std::vec![0u16; capacity]);
            for (visit, symbols, probs) in phases {
                let probs = probs.map(|p| p % 128);
                let mut lane_result = Ok(());
                for t in crate::bpc::state::lanes(visit) {
                    lane_result = one_by_one.encode(t, symbols >> t & 1 != 0, probs[t], &mut a);
                    if lane_result.is_err() {
                        break;
                    }
                }
                let phase_result = at_once.code_phase(visit, symbols, &probs, &mut b);
                prop_assert_eq!(phase_result, lane_result);
                if phase_result.is_err() {
                    return Ok(());
                }
                prop_assert_eq!((at_once.low, at_once.size, at_once.slot), (one_by_one.low, one_by_one.size, one_by_one.slot));
                prop_assert_eq!((at_once.next, at_once.opened), (one_by_one.next, one_by_one.opened));
            }
            one_by_one.flush(&mut a);
            at_once.flush(&mut b);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn one_lane_round_trips(symbols in proptest::collection::vec((any::<bool>(), 0u8..128), 0..300)) {
            let mut out = [0u16; 300];
            let mut enc = LaneEncoders::new();
            for &(s, p) in &symbols {
                enc.encode(0, s, p, &mut out).unwrap();
            }
            enc.flush(&mut out);
            let n = enc.next as usize;
            let mut dec = LaneDecoders::new();
            for &(s, p) in &symbols {
                prop_assert_eq!(dec.decode(0, p, &out[..n], n), Some(s));
            }
            prop_assert_eq!(dec.next as usize, n);
        }
    }
}
