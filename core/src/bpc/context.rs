//! Context formation (spec section 4) over lane masks (see `state.rs`).
//!
//! In step `(y, x)` lane `t` visits column `c = 2t + x`. Its neighbours in
//! rows `y - 1` and `y + 1` of the same parity are bit `t` of that row's
//! parity-`x` mask; its left and right neighbours are in the other parity:
//! for `x = 0` they are columns `2(t-1)+1` (bit `t` of the odd mask shifted
//! left by one) and `2t+1` (bit `t` of the odd mask); for `x = 1` they are
//! `2t` and `2(t+1)` (the even mask, and the even mask shifted right by one).
//! Shifting in zeros makes neighbours outside the codeblock not significant,
//! and absent coefficients never become significant, so no extra masking is
//! needed.

use super::masks;

/// Lane masks of the left neighbours of the coefficients visited with parity `x`.
#[inline]
pub(super) fn left(row: [u32; 2], x: usize) -> u32 {
    if x == 0 {
        row[1] << 1
    } else {
        row[0]
    }
}

/// Lane masks of the right neighbours of the coefficients visited with parity `x`.
#[inline]
pub(super) fn right(row: [u32; 2], x: usize) -> u32 {
    if x == 0 {
        row[1]
    } else {
        row[0] >> 1
    }
}

/// The eight neighbour masks of one state map for step `(y, x)`: bit `t` of
/// each is the state of that neighbour of lane `t`'s coefficient.
#[derive(Debug, Clone, Copy)]
pub(super) struct Neighbours {
    pub up: u32,
    pub down: u32,
    pub left: u32,
    pub right: u32,
    pub up_left: u32,
    pub up_right: u32,
    pub down_left: u32,
    pub down_right: u32,
}

impl Neighbours {
    /// Neighbour masks of `rows` (the first `height` rows of a state map).
    #[inline]
    pub fn of(rows: &[[u32; 2]], height: usize, y: usize, x: usize) -> Self {
        let above = if y > 0 { rows[y - 1] } else { [0; 2] };
        let below = if y + 1 < height { rows[y + 1] } else { [0; 2] };
        Self::around([above, rows[y], below], x)
    }

    /// Neighbour masks of parity `x` from the rows above, at and below the
    /// step (`[0; 2]` outside the codeblock): what [`Self::of`] reads, for
    /// a caller that carries the rows from one step to the next.
    #[inline(always)]
    pub fn around([above, here, below]: [[u32; 2]; 3], x: usize) -> Self {
        Neighbours {
            up: above[x],
            down: below[x],
            left: left(here, x),
            right: right(here, x),
            up_left: left(above, x),
            up_right: right(above, x),
            down_left: left(below, x),
            down_right: right(below, x),
        }
    }

    /// The masks, in a fixed order.
    #[inline]
    fn all(&self) -> [u32; 8] {
        [
            self.up,
            self.down,
            self.left,
            self.right,
            self.up_left,
            self.up_right,
            self.down_left,
            self.down_right,
        ]
    }

    /// Significance context of lane `t`: its number of significant
    /// neighbours (0..=8), when `self` was made from the significance map.
    #[inline]
    pub fn count(&self, t: usize) -> u8 {
        self.all().iter().map(|m| ((m >> t) & 1) as u8).sum()
    }

    /// [`Self::count`] of every lane as four bit planes, summed with
    /// carry-save adders over the eight masks (about 30 word operations per
    /// step instead of 23 per lane); the encoder's hot path.
    #[inline]
    pub fn count_planes(&self) -> CountPlanes {
        // (sum, carry) of three one-bit inputs, lane-wise.
        #[inline]
        fn full(a: u32, b: u32, c: u32) -> (u32, u32) {
            let ab = a ^ b;
            (ab ^ c, (a & b) | (c & ab))
        }
        let (s1, c1) = full(self.up, self.down, self.left);
        let (s2, c2) = full(self.right, self.up_left, self.up_right);
        let (s3, c3) = (
            self.down_left ^ self.down_right,
            self.down_left & self.down_right,
        );
        // Weight 1: three partial sums; weight 2: four carries; weight 4: two.
        let (b0, c4) = full(s1, s2, s3);
        let (t1, d1) = full(c1, c2, c3);
        let (b1, d2) = (t1 ^ c4, t1 & c4);
        CountPlanes([b0, b1, d1 ^ d2, d1 & d2])
    }

    /// [`Self::count`] for all 32 lanes at once.
    #[inline]
    pub fn counts(&self) -> [u8; 32] {
        let all = self.all();
        let mut out = [0u8; 32];
        for (t, c) in out.iter_mut().enumerate() {
            *c = all.iter().map(|m| ((m >> t) & 1) as u8).sum();
        }
        out
    }
}

/// The significance contexts of all 32 lanes as bit planes: bit `t` of
/// plane `b` is bit `b` of lane `t`'s count (see [`Neighbours::count_planes`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct CountPlanes([u32; 4]);

impl CountPlanes {
    /// Lane `t`'s count (0..=8), equal to [`Neighbours::count`].
    #[inline(always)]
    pub fn get(&self, t: usize) -> u8 {
        let [b0, b1, b2, b3] = self.0.map(|p| ((p >> t) & 1) as u8);
        b0 | b1 << 1 | b2 << 2 | b3 << 3
    }

    /// Lanes whose count is 0 (no significant neighbour).
    #[inline]
    pub fn zero(&self) -> u32 {
        !(self.0[0] | self.0[1] | self.0[2] | self.0[3])
    }

    /// `table[count]` of every lane, branch-free over the 32 lanes so that
    /// it vectorizes. In byte lanes throughout (the planes expanded by
    /// [`masks::bytes`]): the count and the choice of entry then take one
    /// 256-bit instruction per step for all 32 lanes, where the form that
    /// shifted the planes lane by lane ran in 32-bit lanes, four
    /// instructions and a pack per step (docs/perf/codec.md, "The CPU
    /// decoder's lanes as masks").
    #[inline(always)]
    pub fn probabilities(&self, table: &[u8; 9]) -> [u8; 32] {
        let [b0, b1, b2, b3] = self.0.map(masks::bytes);
        let mut probs = [0u8; 32];
        for (t, p) in probs.iter_mut().enumerate() {
            let count = (b0[t] & 1) | (b1[t] & 2) | (b2[t] & 4) | (b3[t] & 8);
            let mut chosen = table[0];
            for (k, &q) in table.iter().enumerate().skip(1) {
                chosen = if count == k as u8 { q } else { chosen };
            }
            *p = chosen;
        }
        probs
    }

    /// The lanes of each count: bit `t` of element `k` is set when lane
    /// `t`'s count is `k` (what a counting observer popcounts).
    #[inline]
    pub fn by_count(&self) -> [u32; 9] {
        let [b0, b1, b2, b3] = self.0;
        // Counts are at most 8, so bit 3 alone means 8.
        let low = !b3;
        core::array::from_fn(|k| {
            if k == 8 {
                b3
            } else {
                let bit = |plane: u32, i: usize| if k >> i & 1 != 0 { plane } else { !plane };
                low & bit(b0, 0) & bit(b1, 1) & bit(b2, 2)
            }
        })
    }
}

/// `(k, predicted_negative)` by `(sign(h) + 1) * 3 + sign(w) + 1` (spec
/// section 4's table read row by row, with rows and columns as -, 0, +).
const SIGN_TABLE: [(u8, bool); 9] = [
    (3, true),  // h < 0, w < 0
    (2, true),  // h < 0, w = 0
    (0, true),  // h < 0, w > 0
    (1, true),  // h = 0, w < 0
    (0, false), // h = 0, w = 0
    (1, false), // h = 0, w > 0
    (0, false), // h > 0, w < 0
    (2, false), // h > 0, w = 0
    (3, false), // h > 0, w > 0
];

/// The sign-coding inputs of one step, per lane: the signs of `h` (sum
/// of the left and right neighbours' signs, 0 if not significant) and `w`
/// (the same for up and down), as lane masks.
///
/// With two terms in `{-1, 0, 1}` the sum is positive exactly when some
/// term is positive and none negative (and the other way round), so the
/// signs follow from two masks per direction without any per-lane
/// arithmetic.
#[derive(Debug, Clone, Copy)]
pub(super) struct SignNeighbours {
    h_positive: u32,
    h_negative: u32,
    w_positive: u32,
    w_negative: u32,
}

impl SignNeighbours {
    /// From the significance and sign maps.
    #[inline(always)]
    pub fn of(sig: &[[u32; 2]], negative: &[[u32; 2]], height: usize, y: usize, x: usize) -> Self {
        let g = Neighbours::of(sig, height, y, x);
        let n = Neighbours::of(negative, height, y, x);
        // Significant neighbours that are positive / negative.
        let pos = |sig: u32, neg: u32| sig & !neg;
        let neg = |sig: u32, neg: u32| sig & neg;
        let h_pos = pos(g.left, n.left) | pos(g.right, n.right);
        let h_neg = neg(g.left, n.left) | neg(g.right, n.right);
        let w_pos = pos(g.up, n.up) | pos(g.down, n.down);
        let w_neg = neg(g.up, n.up) | neg(g.down, n.down);
        SignNeighbours {
            h_positive: h_pos & !h_neg,
            h_negative: h_neg & !h_pos,
            w_positive: w_pos & !w_neg,
            w_negative: w_neg & !w_pos,
        }
    }

    /// [`Self::context`] of every lane as masks: bit `t` of element `k` is
    /// set when lane `t`'s context is `k`, and bit `t` of the second value
    /// when its predicted sign is negative (spec section 4's table written
    /// as lane-wise boolean expressions).
    #[inline]
    pub fn context_masks(&self) -> ([u32; 4], u32) {
        let (hp, hn, wp, wn) = (
            self.h_positive,
            self.h_negative,
            self.w_positive,
            self.w_negative,
        );
        let h_zero = !(hp | hn);
        let w_zero = !(wp | wn);
        let by_context = [
            (hn & wp) | (h_zero & w_zero) | (hp & wn),
            h_zero & !w_zero,
            !h_zero & w_zero,
            (hn & wn) | (hp & wp),
        ];
        (by_context, hn | (h_zero & wn))
    }

    /// `table[k]` of every lane, `k` being its context (`by_context` from
    /// [`Self::context_masks`]), branch-free over the 32 lanes so that the
    /// array is built in vector registers: filling it lane by lane with
    /// byte stores and then loading it as a vector (the phase coder) stalls
    /// on the failed store-to-load forwarding. In byte lanes, as
    /// [`CountPlanes::probabilities`] and for the same reason.
    #[inline(always)]
    pub fn probabilities(by_context: &[u32; 4], table: &[u8; 4]) -> [u8; 32] {
        let chosen = [1, 2, 3].map(|k| masks::bytes(by_context[k]));
        let mut probs = [0u8; 32];
        for (t, p) in probs.iter_mut().enumerate() {
            let mut q = table[0];
            for (k, lanes) in chosen.iter().enumerate() {
                q = (table[k + 1] & lanes[t]) | (q & !lanes[t]);
            }
            *p = q;
        }
        probs
    }

    /// `(k, predicted_negative)` of lane `t`.
    #[inline]
    pub fn context(&self, t: usize) -> (u8, bool) {
        let sign = |pos: u32, neg: u32| ((pos >> t) & 1) as usize + 1 - ((neg >> t) & 1) as usize;
        let h = sign(self.h_positive, self.h_negative);
        let w = sign(self.w_positive, self.w_negative);
        SIGN_TABLE[h * 3 + w]
    }
}

/// The sign symbol: 0 when the sign is the predicted one.
#[inline]
pub(super) fn sign_symbol(negative: bool, predicted_negative: bool) -> bool {
    negative != predicted_negative
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds state rows from a picture of 0/1 per column (64 wide at most).
    fn rows(picture: &[&str]) -> [[u32; 2]; 8] {
        let mut out = [[0u32; 2]; 8];
        for (y, line) in picture.iter().enumerate() {
            for (c, ch) in line.bytes().enumerate() {
                if ch == b'1' {
                    out[y][c % 2] |= 1 << (c / 2);
                }
            }
        }
        out
    }

    #[test]
    fn significance_context_counts_the_eight_neighbours() {
        let sig = rows(&["111", "101", "111"]);
        // Column 1 is lane 0 at parity 1.
        assert_eq!(Neighbours::of(&sig, 3, 1, 1).count(0), 8);
        // Column 0 of row 1: up, down, up-right, right, down-right.
        assert_eq!(Neighbours::of(&sig, 3, 1, 0).count(0), 4);
        // Row 0, column 2 (lane 1, parity 0): left and down; column 3 is absent.
        assert_eq!(Neighbours::of(&sig, 3, 0, 0).count(1), 2);
        // Outside the codeblock counts as not significant.
        assert_eq!(Neighbours::of(&sig, 1, 0, 1).count(0), 2);
    }

    #[test]
    fn neighbours_cross_lane_boundaries() {
        // Column 3 (lane 1, parity 1) significant; column 4 is lane 2 parity 0.
        let sig = rows(&["0001"]);
        assert_eq!(Neighbours::of(&sig, 1, 0, 0).count(2), 1);
        assert_eq!(Neighbours::of(&sig, 1, 0, 0).count(1), 1);
        assert_eq!(Neighbours::of(&sig, 1, 0, 0).counts()[..3], [0, 1, 1]);
    }

    proptest::proptest! {
        #[test]
        fn count_planes_equal_the_lane_counts(rows in proptest::array::uniform3(proptest::array::uniform2(proptest::prelude::any::<u32>())), x in 0usize..2) {
            let n = Neighbours::of(&rows, 3, 1, x);
            let planes = n.count_planes();
            let by_count = planes.by_count();
            for t in 0..32 {
                proptest::prop_assert_eq!(planes.get(t), n.count(t));
                proptest::prop_assert_eq!((planes.zero() >> t) & 1 != 0, n.count(t) == 0);
                for (k, m) in by_count.iter().enumerate() {
                    proptest::prop_assert_eq!(m >> t & 1 != 0, n.count(t) as usize == k);
                }
                let table: [u8; 9] = core::array::from_fn(|k| 10 * k as u8 + 3);
                proptest::prop_assert_eq!(planes.probabilities(&table)[t], table[n.count(t) as usize]);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn sign_context_is_the_signum_of_the_sums(sig in proptest::array::uniform3(proptest::array::uniform2(proptest::prelude::any::<u32>())), neg in proptest::array::uniform3(proptest::array::uniform2(proptest::prelude::any::<u32>())), x in 0usize..2) {
            // Spec section 4 read literally: h and w as sums of +-1 / 0.
            let (g, n) = (Neighbours::of(&sig, 3, 1, x), Neighbours::of(&neg, 3, 1, x));
            let around = SignNeighbours::of(&sig, &neg, 3, 1, x);
            for t in 0..32 {
                let s = |g: u32, n: u32| ((g >> t) & 1) as i32 * (1 - 2 * ((n >> t) & 1) as i32);
                let h = s(g.left, n.left) + s(g.right, n.right);
                let w = s(g.up, n.up) + s(g.down, n.down);
                let want = SIGN_TABLE[((h.signum() + 1) * 3 + w.signum() + 1) as usize];
                proptest::prop_assert_eq!(around.context(t), want);
                let (by_context, predicted) = around.context_masks();
                for (k, m) in by_context.iter().enumerate() {
                    proptest::prop_assert_eq!(m >> t & 1 != 0, want.0 as usize == k);
                }
                let table = [3, 50, 77, 120];
                proptest::prop_assert_eq!(SignNeighbours::probabilities(&by_context, &table)[t], table[want.0 as usize]);
                proptest::prop_assert_eq!(predicted >> t & 1 != 0, want.1);
            }
        }
    }

    #[test]
    fn sign_context_follows_the_spec_table() {
        // Centre column 1 of row 1 (lane 0, parity 1); n = negative.
        type Case<'a> = (&'a [&'a str], &'a [&'a str], (u8, bool));
        let cases: [Case; 7] = [
            (&["000", "000", "000"], &["000", "000", "000"], (0, false)),
            (&["010", "000", "000"], &["000", "000", "000"], (1, false)),
            (&["010", "000", "000"], &["010", "000", "000"], (1, true)),
            (&["000", "100", "000"], &["000", "000", "000"], (2, false)),
            (&["010", "101", "000"], &["010", "000", "000"], (0, false)),
            (&["010", "100", "010"], &["010", "100", "000"], (2, true)),
            (&["010", "100", "000"], &["000", "100", "000"], (0, true)),
        ];
        for (sig, neg, want) in cases {
            let (s, n) = (rows(sig), rows(neg));
            assert_eq!(
                SignNeighbours::of(&s, &n, 3, 1, 1).context(0),
                want,
                "{sig:?} {neg:?}"
            );
        }
        let (s, n) = (rows(&["010", "101", "010"]), rows(&["010", "101", "010"]));
        assert_eq!(SignNeighbours::of(&s, &n, 3, 1, 1).context(0), (3, true));
        let (s, n) = (rows(&["010", "101", "000"]), rows(&["000", "101", "000"]));
        assert_eq!(SignNeighbours::of(&s, &n, 3, 1, 1).context(0), (0, true));
    }
}
