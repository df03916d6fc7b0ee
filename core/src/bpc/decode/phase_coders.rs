//! The 32 lane decoders of [`super::phases`]: a whole phase at once in
//! vector code ([`Coders::phase`]), or the few lanes of a sparse phase one
//! by one ([`Coders::sparse`]). Both take the same slots and leave the
//! same state, so a phase may go either way (`tests_prop.rs` runs both
//! against `decode_sequential`).

// Lane loops index several per-lane arrays by lane number, as the shader
// does with gl_SubgroupInvocationID; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use crate::bpc::masks;
use crate::bpc::state::lanes;
use crate::bpc::LANES;

/// Phases with at most this many decoding lanes go lane by lane
/// ([`Coders::sparse`]); denser ones all 32 lanes at once
/// ([`Coders::phase`]), which costs about the same whatever the number of
/// lanes. The encoder makes the same split (`encode/sequential.rs`,
/// `SPARSE_LANES`); the threshold here is measured in docs/perf/codec.md
/// ("The CPU decoder's sparse phases", and again after the 32-lane phase
/// got cheaper: "The CPU decoder's lanes as masks").
pub(super) const SPARSE_LANES: u32 = 4;

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
pub(super) struct Coders {
    offset: [u16; LANES],
    size: [u16; LANES],
    /// Lanes whose interval is exhausted (`S = 0`, all at first): they take
    /// a slot for their next symbol.
    exhausted: u32,
    /// Slots taken so far.
    pub next: u32,
}

/// The outcome of one phase: the lanes that decoded, their symbols, and
/// whether the stream ended in it.
pub(super) struct Phase {
    pub decoded: u32,
    pub symbols: u32,
    pub stopped: bool,
}

impl Coders {
    pub fn new() -> Self {
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
    pub fn phase(&mut self, visit: u32, probs: &[u8; LANES], words: &[u16]) -> Phase {
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

    /// [`Self::phase`] lane by lane, for a phase with few lanes in
    /// `visit`: lane `t` decodes with probability `prob(t)`, in lane
    /// order, the exhausted ones taking the next codeword first; the first
    /// lane whose codeword is not in `words` stops the phase. The same
    /// slots, symbols and state as [`Self::phase`], without its fixed cost
    /// of 32 lanes.
    #[inline(always)]
    pub fn sparse(&mut self, visit: u32, prob: impl Fn(usize) -> u8, words: &[u16]) -> Phase {
        let mut phase = Phase {
            decoded: 0,
            symbols: 0,
            stopped: false,
        };
        for t in lanes(visit) {
            let Some(one) = self.lane(t, prob(t), words) else {
                phase.stopped = true;
                break;
            };
            phase.decoded |= 1 << t;
            phase.symbols |= (one as u32) << t;
        }
        phase
    }

    /// Decode steps 1-3 for lane `t` alone (the arithmetic of
    /// [`Self::decode`] for one lane); `None` when it needs a codeword
    /// that `words` does not have.
    #[inline(always)]
    fn lane(&mut self, t: usize, p: u8, words: &[u16]) -> Option<bool> {
        let bit = 1u32 << t;
        let (offset, size) = if self.exhausted & bit != 0 {
            let word = *words.get(self.next as usize)?;
            self.next += 1;
            (word, u16::MAX)
        } else {
            (self.offset[t], self.size[t])
        };
        let f = split16(size, p).wrapping_add(1);
        let one = offset >= f;
        let (offset, size) = if one {
            (offset.wrapping_sub(f), size.wrapping_sub(f))
        } else {
            (offset, f.wrapping_sub(1))
        };
        self.offset[t] = offset;
        self.size[t] = size;
        if size == 0 {
            self.exhausted |= bit;
        } else {
            self.exhausted &= !bit;
        }
        Some(one)
    }

    /// Decode steps 1-3 for the lanes in `active`, those in `opening` (a
    /// subset) loading `fresh[t]` first; returns the symbols as a lane
    /// mask. Branch-free over the 32 lanes so that it vectorizes: lanes not
    /// active compute garbage (wrapping) and keep their state.
    ///
    /// Every value of the loop is 16 bits wide, the masks too: the lane
    /// masks come in as 16-bit lanes ([`masks::words`]) and the results
    /// leave through [`masks::bits`], so no 32-bit lane (a variable shift of a
    /// `u32` mask, `p as u32`) sets the loop's vector width to 8 lanes
    /// (docs/perf/codec.md, "The CPU decoder's lanes as masks").
    #[inline(always)]
    fn decode(
        &mut self,
        active: u32,
        opening: u32,
        fresh: &[u16; LANES],
        probs: &[u8; LANES],
    ) -> u32 {
        let (on, open) = (masks::words(active), masks::words(opening));
        // The probabilities as the multiplier of `split16`, in a loop of
        // their own so that the multiply below stays 16 bits wide. A plain
        // loop, not `array::from_fn`: LLVM kept that call out of line,
        // compiled without the caller's `fastest!` features
        // (docs/perf/codec.md, "The CPU decoder's count planes and sign
        // contexts").
        let mut scaled = [0u16; LANES];
        for t in 0..LANES {
            scaled[t] = (probs[t] as u16) << (16 - crate::bpc::PROBABILITY_BITS);
        }
        let mut symbols = [0u16; LANES];
        let mut emptied = [0u16; LANES];
        // Selections as masks on values, not `if`s: LLVM turns a choice
        // between two loads into a choice of addresses, which it then
        // gathers lane by lane (or leaves the loop scalar).
        for t in 0..LANES {
            let (on, open) = (on[t], open[t]);
            let offset = (fresh[t] & open) | (self.offset[t] & !open);
            let size = self.size[t] | open; // FULL when opening
                                            // Symbol 1 takes the upper subinterval: `word >= L + f`
                                            // (`split16` with the probability already scaled).
            let f = ((size as u32 * scaled[t] as u32) >> 16) as u16;
            let f = f.wrapping_add(1);
            let one = 0u16.wrapping_sub((offset >= f) as u16);
            let new_offset = offset.wrapping_sub(f & one);
            let new_size = (size.wrapping_sub(f) & one) | (f.wrapping_sub(1) & !one);
            self.offset[t] = (new_offset & on) | (offset & !on);
            self.size[t] = (new_size & on) | (size & !on);
            symbols[t] = on & one;
            emptied[t] = on & 0u16.wrapping_sub((new_size == 0) as u16);
        }
        self.exhausted = (self.exhausted & !active) | masks::bits(&emptied);
        masks::bits(&symbols)
    }
}
