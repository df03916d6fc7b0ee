//! The plane-map encoder's row window and its contexts as team words: the
//! Rust of `bpc_window_start` / `bpc_window_next` in
//! `shaders/bpc/encode_planes.glsl` and of `bpc_sig_context_sliced` /
//! `bpc_sign_words` in `shaders/bpc/bpc.glsl`.
//!
//! The contexts are formed once for all 32 lanes as word logic over the
//! window (bit-sliced neighbour counts, spec section 4's sign table as
//! masks), and each lane then extracts its bits. They are the same contexts
//! as `Neighbours::count` and
//! `SignNeighbours::context` in `context.rs`, grouped the way the shader
//! groups them; the tests below check them against those.

use super::PlaneMaps;
use crate::bpc::context::{left, right};

/// Rows `y - 1` (suffix `a`), `y` (`c`) and `y + 1` (`b`) of the
/// significance and sign maps during bitplane `j`'s SPP, plus bit `j` of
/// row `y`. Row `y - 1` is coded (its significance is `above | bits`), rows
/// `y` and `y + 1` are not yet (`above`); only row `y` changes during its
/// steps, and nothing is written back: the next bitplane rebuilds the maps.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    pub sig_a: [u32; 2],
    pub sig_c: [u32; 2],
    pub sig_b: [u32; 2],
    pub neg_a: [u32; 2],
    pub neg_c: [u32; 2],
    pub neg_b: [u32; 2],
    pub bits_c: [u32; 2],
}

/// Row `y` of a map: zero below the codeblock. The shader's maps have two
/// zero rows below the codeblock instead, so that its loads need no bound;
/// here the slice is the codeblock's rows and the bound is explicit.
#[inline]
fn row(map: &[[u32; 2]], y: usize) -> [u32; 2] {
    map.get(y).copied().unwrap_or([0; 2])
}

impl Window {
    /// The window at row 0, at the start of an SPP (`bpc_window_start`).
    pub fn start<const ROWS: usize>(maps: &PlaneMaps<ROWS>, height: usize) -> Self {
        let (above, negative) = (&maps.above[..height], &maps.negative[..height]);
        Window {
            sig_a: [0; 2],
            neg_a: [0; 2],
            sig_c: row(above, 0),
            neg_c: row(negative, 0),
            bits_c: row(&maps.bits[..height], 0),
            sig_b: row(above, 1),
            neg_b: row(negative, 1),
        }
    }

    /// Moves the window from row `y` to row `y + 1` (`bpc_window_next`).
    pub fn next<const ROWS: usize>(&mut self, maps: &PlaneMaps<ROWS>, height: usize, y: usize) {
        self.sig_a = self.sig_c;
        self.neg_a = self.neg_c;
        self.sig_c = self.sig_b;
        self.neg_c = self.neg_b;
        self.bits_c = row(&maps.bits[..height], y + 1);
        self.sig_b = row(&maps.above[..height], y + 2);
        self.neg_b = row(&maps.negative[..height], y + 2);
    }

    /// `bpc_sig_context_sliced`: the significance context (significant
    /// neighbours, 0..=8) of every lane in step `(y, x)` as four bit
    /// planes; lane `t`'s count is bit `t` of plane 0, 1, 2, 3 read as a
    /// binary number. Per lane position the other parity's three rows are
    /// summed (`s + 2k`), then the same at the neighbouring position (lane
    /// `t`'s other-parity neighbours are lanes `t - 1` and `t` when
    /// `x = 0`, `t` and `t + 1` when `x = 1`), then the two vertical
    /// neighbours (`e + 2f`).
    pub fn sig_context_sliced(&self, x: usize) -> [u32; 4] {
        let o = 1 - x;
        let (p0, p1, p2) = (self.sig_a[o], self.sig_c[o], self.sig_b[o]);
        let s = p0 ^ p1 ^ p2;
        let k = (p0 & p1) | (p0 & p2) | (p1 & p2);
        let (s1, k1) = if x == 0 {
            (s << 1, k << 1)
        } else {
            (s >> 1, k >> 1)
        };
        let u0 = s ^ s1;
        let c0 = s & s1;
        let u1 = k ^ k1 ^ c0;
        let u2 = (k & k1) | (k & c0) | (k1 & c0);
        let (va, vb) = (self.sig_a[x], self.sig_b[x]);
        let (e, f) = (va ^ vb, va & vb);
        let r0 = u0 ^ e;
        let d0 = u0 & e;
        let r1 = u1 ^ f ^ d0;
        let d1 = (u1 & f) | (u1 & d0) | (f & d0);
        [r0, r1, u2 ^ d1, u2 & d1]
    }

    /// `bpc_sign_words`: for every lane in step `(y, x)`, bit 0 of its
    /// sign context `k`, bit 1 of `k`, and its sign symbol (its sign
    /// differs from the predicted one; the encoder's sign map holds every
    /// negative coefficient, significant or not). With two neighbours per
    /// direction `h > 0` exactly when one is positive and none negative
    /// (`h < 0` and `w` alike), which turns spec section 4's table into
    /// word logic.
    pub fn sign_words(&self, x: usize) -> [u32; 3] {
        let (sc, nc) = (self.sig_c, self.neg_c);
        let (ls, rs) = (left(sc, x), right(sc, x));
        let (ln, rn) = (left(nc, x), right(nc, x));
        let (us, un, ds, dn) = (self.sig_a[x], self.neg_a[x], self.sig_b[x], self.neg_b[x]);
        let (hpos, hneg) = ((ls & !ln) | (rs & !rn), (ls & ln) | (rs & rn));
        let (wpos, wneg) = ((us & !un) | (ds & !dn), (us & un) | (ds & dn));
        let (hp, hn) = (hpos & !hneg, hneg & !hpos);
        let (wp, wn) = (wpos & !wneg, wneg & !wpos);
        let predicted_negative = hn | (wn & !hp);
        let k1 = (hp | hn) & !((hp & wn) | (hn & wp));
        let k0 = ((wp | wn) & !(hp | hn)) | (hp & wp) | (hn & wn);
        [k0, k1, predicted_negative ^ nc[x]]
    }
}

/// Lane `t`'s value of a word-sliced number (bit `i` in `planes[i]`).
#[inline]
pub(super) fn lane_value(planes: &[u32], t: usize) -> usize {
    planes
        .iter()
        .enumerate()
        .map(|(i, p)| ((p >> t & 1) as usize) << i)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpc::context::{sign_symbol, Neighbours, SignNeighbours};
    use proptest::prelude::*;

    fn window(sig: [[u32; 2]; 3], neg: [[u32; 2]; 3]) -> Window {
        Window {
            sig_a: sig[0],
            sig_c: sig[1],
            sig_b: sig[2],
            neg_a: neg[0],
            neg_c: neg[1],
            neg_b: neg[2],
            bits_c: [0; 2],
        }
    }

    proptest! {
        /// The word forms give every lane the contexts (and the encoder's
        /// sign symbol) of the spec's forms in `context.rs`.
        #[test]
        fn sliced_contexts_equal_the_lane_contexts(
            sig in any::<[[u32; 2]; 3]>(),
            neg in any::<[[u32; 2]; 3]>(),
            x in 0usize..2,
        ) {
            let w = window(sig, neg);
            let counts = w.sig_context_sliced(x);
            let words = w.sign_words(x);
            let around = SignNeighbours::of(&sig, &neg, 3, 1, x);
            for t in 0..32 {
                prop_assert_eq!(lane_value(&counts, t), Neighbours::of(&sig, 3, 1, x).count(t) as usize);
                let (k, predicted) = around.context(t);
                prop_assert_eq!(lane_value(&words[..2], t), k as usize, "lane {}", t);
                let symbol = sign_symbol(neg[1][x] >> t & 1 != 0, predicted);
                prop_assert_eq!(words[2] >> t & 1 != 0, symbol, "lane {}", t);
            }
        }
    }
}
