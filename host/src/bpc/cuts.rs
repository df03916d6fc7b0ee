//! The cuts of a codeblock's stream that PCRD-Opt can choose, found
//! exactly in integers from the coder's cut decreases, so that the rest
//! of the cuts never reach rate control (nor, on the GPU, the host:
//! `shaders/bpc/cut_hull.comp` is this module's twin).
//!
//! # Why the candidates suffice
//!
//! Rate control gives the cut after `m` codewords, inside pass `p` (the
//! first pass whose stream is longer than `m`), the real-valued decrease
//! `real(p-1) + share · (real(p) - real(p-1))`, with `share` the cut's
//! index-domain decrease `c(m)` clamped to the pass's range
//! `[I(p-1), I(p)]` and measured as a fraction of it
//! (`codec::points::cut_points`; `I` is the cumulative decrease of the
//! pass records). Within one pass that is an affine function of the
//! clamped `c(m)`, increasing or decreasing with the sign of the pass's
//! real decrease. An affine map keeps the vertices of the upper and the
//! lower hull of a set of points (which of the two become the image's
//! upper hull depends on the sign), and a point that is not a vertex of
//! the upper hull of its pass's points is not a vertex of the block's
//! upper hull either. So the vertices of both hulls of every pass's
//! points `(m, clamped c(m))` contain every cut that can lie on the
//! block's rate-distortion hull. A pass whose index range is empty
//! (`I(p) <= I(p-1)`) gives all its cuts the same value, of which the
//! first, the one with the fewest codewords, is the only candidate.
//!
//! The hulls are made exactly, with integer cross products; collinear
//! points are dropped (they can never be vertices of the image's hull
//! either). The CPU and GPU drivers both hand rate control these
//! candidates, so both backends make the same decisions and files.

use wavelane_core::bpc::PassRecord;

/// The candidate cuts of one codeblock's stream ([module docs](self)):
/// codeword counts in increasing order, each in `1..n` for a stream of
/// `n` codewords, with the index-domain decrease of the stream cut there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CutCandidates {
    /// Codewords kept by each candidate cut (increasing).
    pub slots: Vec<u32>,
    /// The decrease (index units) a decoder given that many codewords
    /// removes (spec section 8).
    pub decreases: Vec<i128>,
}

impl CutCandidates {
    /// Candidate cuts.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// The candidate cuts of a stream with pass `records` and cut decreases
/// `cuts` (entry `m`: the decrease of the stream cut after `m` codewords,
/// for `m` below the stream's length).
pub fn cut_candidates(records: &[PassRecord], cuts: &[i128]) -> CutCandidates {
    let mut out = CutCandidates::default();
    let n = records
        .last()
        .map_or(0, |r| r.codewords as usize)
        .min(cuts.len());
    let (mut start, mut index0) = (0usize, 0i128);
    let mut stack: Vec<(u32, i128)> = Vec::new();
    let mut kept: Vec<(u32, i128)> = Vec::new();
    for r in records {
        let end = (r.codewords as usize).min(n);
        let index1 = index0 + r.distortion_decrease;
        let lo = start.max(1);
        if lo < end {
            kept.clear();
            if index1 <= index0 {
                kept.push((lo as u32, cuts[lo]));
            } else {
                let clamped = |m: usize| (m as u32, cuts[m].clamp(index0, index1) - index0);
                for upper in [true, false] {
                    stack.clear();
                    for m in lo..end {
                        push_hull(&mut stack, clamped(m), upper);
                    }
                    kept.extend(stack.iter().map(|&(m, _)| (m, cuts[m as usize])));
                }
                kept.sort_unstable_by_key(|&(m, _)| m);
                kept.dedup_by_key(|&mut (m, _)| m);
            }
            for &(m, c) in &kept {
                out.slots.push(m);
                out.decreases.push(c);
            }
        }
        start = start.max(end);
        index0 = index1;
    }
    out
}

/// Adds `p` to the monotone chain `stack` (points in increasing `m`) of
/// the upper (`upper`) or lower hull, dropping the points it makes
/// collinear or concave.
fn push_hull(stack: &mut Vec<(u32, i128)>, p: (u32, i128), upper: bool) {
    while let [.., a, b] = stack[..] {
        // b against the chord a -> p: (y_b - y_a)(m_p - m_a) vs (y_p - y_a)(m_b - m_a).
        let lhs = (b.1 - a.1) * (p.0 - a.0) as i128;
        let rhs = (p.1 - a.1) * (b.0 - a.0) as i128;
        let b_is_vertex = if upper { lhs > rhs } else { lhs < rhs };
        if b_is_vertex {
            break;
        }
        stack.pop();
    }
    stack.push(p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavelane_core::bpc::PassKind;

    fn pass(codewords: u32, decrease: i128) -> PassRecord {
        PassRecord {
            kind: PassKind::Cleanup,
            bitplane: 0,
            codewords,
            distortion_decrease: decrease,
        }
    }

    /// The upper hull of a pass keeps its corners, the lower hull its
    /// dips, both ends stay; collinear and inner points go; a pass with an
    /// empty index range keeps its first cut only; cut 0 is never one.
    #[test]
    fn candidates_are_both_hulls_of_each_pass() {
        // Pass 0: cuts 0..5, range [0, 100]; pass 1: cuts 5..8, range
        // [100, 100] (empty); pass 2: cuts 8..10, range [100, 160].
        let records = [pass(5, 100), pass(8, 0), pass(10, 60)];
        //            m: 0  1   2   3   4   5    6    7    8    9
        let cuts = [0, 10, 20, 90, 95, 100, 100, 100, 100, 200];
        let c = cut_candidates(&records, &cuts);
        // Pass 0 (m 1..5): (1,10) (2,20) (3,90) (4,95): upper 1, 3, 4;
        // lower 1, 2, 4. Pass 1: 5. Pass 2 (m 8, 9): both ends.
        assert_eq!(c.slots, [1, 2, 3, 4, 5, 8, 9]);
        assert_eq!(c.decreases, [10, 20, 90, 95, 100, 100, 200]);
        // Collinear points are dropped.
        let line: Vec<i128> = (0..7).map(|m| 10 * m).collect();
        let c = cut_candidates(&[pass(7, 70)], &line);
        assert_eq!(c.slots, [1, 6]);
        // No records, no candidates.
        assert!(cut_candidates(&[], &[]).is_empty());
    }
}
