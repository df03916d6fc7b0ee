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

/// Lane masks of the left neighbours of the coefficients visited with parity `x`.
#[inline]
fn left(row: [u32; 2], x: usize) -> u32 {
    if x == 0 {
        row[1] << 1
    } else {
        row[0]
    }
}

/// Lane masks of the right neighbours of the coefficients visited with parity `x`.
#[inline]
fn right(row: [u32; 2], x: usize) -> u32 {
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
        let here = rows[y];
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

/// The sign-coding inputs of one step: positive and negative significant
/// neighbours up, down, left and right.
#[derive(Debug, Clone, Copy)]
pub(super) struct SignNeighbours {
    sig: Neighbours,
    neg: Neighbours,
}

impl SignNeighbours {
    /// From the significance and sign maps.
    #[inline]
    pub fn of(sig: &[[u32; 2]], negative: &[[u32; 2]], height: usize, y: usize, x: usize) -> Self {
        SignNeighbours {
            sig: Neighbours::of(sig, height, y, x),
            neg: Neighbours::of(negative, height, y, x),
        }
    }

    /// `(k, predicted_negative)` of lane `t`.
    #[inline]
    pub fn context(&self, t: usize) -> (u8, bool) {
        let s = |sig: u32, neg: u32| -> i32 {
            let sig = (sig >> t) & 1;
            let neg = (neg >> t) & 1;
            (sig as i32) * (1 - 2 * neg as i32)
        };
        let (g, n) = (&self.sig, &self.neg);
        let h = s(g.left, n.left) + s(g.right, n.right);
        let w = s(g.up, n.up) + s(g.down, n.down);
        SIGN_TABLE[((h.signum() + 1) * 3 + w.signum() + 1) as usize]
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
