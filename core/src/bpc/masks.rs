//! Lane masks (bit `t` for lane `t`, see [`state`](super::state)) as
//! vectors of per-lane masks and back, for the branch-free 32-lane loops.
//!
//! Why tables: the arithmetic form, `(mask >> t) & 1` in every lane, needs
//! a variable shift of 32-bit lanes (AVX2 has none for 8 or 16 bits), and
//! a loop that contains one runs 8 lanes per vector instruction, however
//! narrow its other values are. Four table rows per mask, loaded as
//! vectors, keep a loop of bytes or 16-bit values at its own width
//! (docs/perf/codec.md, "The CPU decoder's lanes as masks").

use super::LANES;

/// `WORDS[b][i]` is all ones where bit `i` of `b` is set (4 KiB).
const WORDS: [[u16; 8]; 256] = {
    let mut table = [[0u16; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            if b >> i & 1 != 0 {
                table[b][i] = u16::MAX;
            }
            i += 1;
        }
        b += 1;
    }
    table
};

/// `BYTES[b][i]` is all ones where bit `i` of `b` is set (2 KiB).
const BYTES: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            if b >> i & 1 != 0 {
                table[b][i] = u8::MAX;
            }
            i += 1;
        }
        b += 1;
    }
    table
};

/// Lane `t` is all ones where bit `t` of `mask` is set, else 0.
#[inline(always)]
pub(super) fn words(mask: u32) -> [u16; LANES] {
    let mut out = [0u16; LANES];
    for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&WORDS[(mask >> (8 * k)) as u8 as usize]);
    }
    out
}

/// [`words`] in bytes.
#[inline(always)]
pub(super) fn bytes(mask: u32) -> [u8; LANES] {
    let mut out = [0u8; LANES];
    for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&BYTES[(mask >> (8 * k)) as u8 as usize]);
    }
    out
}

/// The lane mask of per-lane masks (each 0 or all ones): the inverse of
/// [`words`]. Lanes `i` and `16 + i` share a 32-bit element (bit `i` and
/// bit `16 + i`), so one OR reduction of eight elements gathers all 32
/// lanes (two reductions of 16-bit halves cost a few more instructions).
#[inline(always)]
pub(super) fn bits(masks: &[u16; LANES]) -> u32 {
    let mut out = 0u32;
    for i in 0..16 {
        out |= (masks[i] & (1 << i)) as u32 | ((masks[16 + i] & (1 << i)) as u32) << 16;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn masks_expand_and_gather_every_lane(mask in proptest::prelude::any::<u32>()) {
            let (w, b) = (words(mask), bytes(mask));
            for t in 0..LANES {
                let set = mask >> t & 1 != 0;
                proptest::prop_assert_eq!(w[t], if set { u16::MAX } else { 0 });
                proptest::prop_assert_eq!(b[t], if set { u8::MAX } else { 0 });
            }
            proptest::prop_assert_eq!(bits(&w), mask);
        }
    }
}
