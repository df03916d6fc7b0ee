//! Rate-distortion points of the coded blocks: the ends of their passes,
//! or every codeword where rate control may cut (docs/codec.md, "Rate
//! control").

use rayon::prelude::*;

use super::codeblocks::BlockGeometry;
use super::distortion;
use super::header::Header;
use super::rate::{BlockHull, BlockPasses, Hulls};
use super::stages::entropy;
use super::weights::block_weights;
use crate::bpc::cuts::CutCandidates;

/// Every block's rate-distortion hull, and the distortion totals.
pub(crate) struct RatePoints {
    /// Every block's hull of its points, and the segments' order.
    pub(crate) hulls: Hulls,
    /// Sum of every block's full decrease (real-valued: its energy).
    pub(crate) total: f64,
    /// Distortion left with every pass included (real-valued decreases only).
    pub(crate) noise: f64,
}

/// Every block's candidate truncation points: the ends of its passes, or
/// with real-valued decreases and the coder's cut decreases, every codeword
/// count (see [`cut_points`]); kept as their convex hulls, made block by
/// block on all cores.
pub(crate) fn rate_points(
    header: &Header,
    blocks: &[BlockGeometry],
    coded: &entropy::Coded,
    shifts: &[u8],
    real: Option<&[distortion::BlockDistortion]>,
) -> RatePoints {
    // Records without decreases (a lossless single-layer file's) need no
    // weights, whose first use per subband costs a filter cascade.
    let weighed =
        real.is_some() || (coded.records.iter().flatten()).any(|r| r.distortion_decrease != 0);
    let weights = match weighed {
        true => block_weights(header, blocks),
        false => vec![0.0; blocks.len()],
    };
    // Each block's hull, energy (its share of `total`) and noise.
    let parts: Vec<(BlockHull, f64, f64)> = (blocks.par_iter().enumerate())
        .map(|(i, b)| {
            let weight = weights[i] * (4f64).powi(shifts[i] as i32);
            let (passes, energy, noise) = block_points(b, coded, i, weight, real);
            (BlockHull::new(&passes), energy, noise)
        })
        .collect();
    // Summed in block order, so the totals do not depend on the threads.
    let (mut total, mut noise) = (0.0, 0.0);
    let mut hulls = Vec::with_capacity(parts.len());
    for (hull, energy, left) in parts {
        total += energy;
        noise += left;
        hulls.push(hull);
    }
    RatePoints {
        hulls: Hulls::from_blocks(hulls),
        total,
        noise,
    }
}

/// Block `i`'s points, its full decrease (real-valued: its energy) and
/// the distortion its full coding leaves (real-valued decreases only);
/// `weight` is its [`block_weight`](super::weights::block_weight) scaled
/// by its early-termination shift.
fn block_points(
    b: &BlockGeometry,
    coded: &entropy::Coded,
    i: usize,
    weight: f64,
    real: Option<&[distortion::BlockDistortion]>,
) -> (BlockPasses, f64, f64) {
    let records = &coded.records[i];
    let resolution = b.resolution as usize;
    match real {
        Some(real) => {
            let d = distortion::pass_decreases(records, &real[i], weight);
            let energy = real[i].energy * weight;
            let noise = energy - d.last().copied().unwrap_or(0.0);
            let passes = match coded.cuts.get(i) {
                Some(cuts) => cut_points(records, &d, cuts, resolution),
                None => BlockPasses {
                    codewords: records.iter().map(|r| r.codewords).collect(),
                    decrease: d,
                    resolution,
                },
            };
            (passes, energy, noise)
        }
        None => {
            let mut acc = 0.0;
            let decrease: Vec<f64> = records
                .iter()
                .map(|r| {
                    acc += r.distortion_decrease as f64 * weight;
                    acc
                })
                .collect();
            let passes = BlockPasses {
                codewords: records.iter().map(|r| r.codewords).collect(),
                decrease,
                resolution,
            };
            (passes, acc, 0.0)
        }
    }
}

/// A block's rate-distortion points at its candidate cuts and at its
/// end: a decoder given `m` codewords decodes everything before the
/// symbol that opens slot `m` (spec section 8), which is more than the
/// passes completed by then; `cuts` holds that decrease in index units
/// for the counts `m` that can be on the block's hull
/// ([`crate::bpc::cuts`], which derives them from this rule).
/// Real-valued decreases are known per pass (`pass_real`, cumulative), so
/// the pass a cut falls in gets the share of its real decrease that the
/// cut's index-domain decrease has of the pass's.
pub(crate) fn cut_points(
    records: &[wavelane_core::bpc::PassRecord],
    pass_real: &[f64],
    cuts: &CutCandidates,
    resolution: usize,
) -> BlockPasses {
    let n = records.last().map_or(0, |r| r.codewords as usize);
    let mut codewords = Vec::with_capacity(cuts.len() + 1);
    let mut decrease = Vec::with_capacity(cuts.len() + 1);
    let mut pass_index = Vec::with_capacity(records.len());
    let mut acc = 0.0;
    for r in records {
        acc += r.distortion_decrease as f64;
        pass_index.push(acc);
    }
    let mut p = 0;
    for (&m, &cut) in cuts.slots.iter().zip(&cuts.decreases) {
        let m = m as usize;
        if m == 0 || m >= n {
            continue;
        }
        // The pass that opens slot m: the first that ends with more slots.
        while p + 1 < records.len() && records[p].codewords as usize <= m {
            p += 1;
        }
        let (real0, index0) = match p {
            0 => (0.0, 0.0),
            _ => (pass_real[p - 1], pass_index[p - 1]),
        };
        let index_span = pass_index[p] - index0;
        let share = if index_span > 0.0 {
            ((cut as f64 - index0) / index_span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        codewords.push(m as u32);
        decrease.push(real0 + share * (pass_real[p] - real0));
    }
    if n > 0 {
        codewords.push(n as u32);
        decrease.push(pass_real.last().copied().unwrap_or(0.0));
    }
    BlockPasses {
        codewords,
        decrease,
        resolution,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavelane_core::bpc::{PassKind, PassRecord};

    fn record(kind: PassKind, bitplane: u8, codewords: u32, decrease: i128) -> PassRecord {
        PassRecord {
            kind,
            bitplane,
            codewords,
            distortion_decrease: decrease,
        }
    }

    /// Cut points: one per codeword count, the pass ends' real values where
    /// a cut decodes exactly a pass, shares of a pass in between, the whole
    /// block at the end.
    #[test]
    fn cut_points_interpolate_real_decreases_within_passes() {
        // Pass 0 opens slots 0..2 (index decrease 100), pass 1 slot 2 (0:
        // nothing to share), pass 2 slots 3..6 (decrease 60).
        let records = [
            record(PassKind::Cleanup, 2, 2, 100),
            record(PassKind::Significance, 1, 3, 0),
            record(PassKind::Refinement, 1, 6, 60),
        ];
        let real = [200.0, 200.0, 230.0];
        // Before slot m opens: slot 1 inside pass 0 (40 of 100 decoded),
        // slot 2 after pass 0 (100), slots 3, 4, 5 inside pass 2.
        let cuts = CutCandidates {
            slots: vec![1, 2, 3, 4, 5],
            decreases: vec![40, 100, 100, 130, 145],
        };
        let p = cut_points(&records, &real, &cuts, 3);
        assert_eq!(p.codewords, [1, 2, 3, 4, 5, 6]);
        assert_eq!(p.resolution, 3);
        let want = [80.0, 200.0, 200.0, 215.0, 222.5, 230.0];
        for (got, want) in p.decrease.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{:?}", p.decrease);
        }
        // An empty block has no points.
        let empty = cut_points(&[], &[], &CutCandidates::default(), 0);
        assert!(empty.codewords.is_empty() && empty.decrease.is_empty());
    }

    /// The hull of the candidate cuts is the hull of all cuts: on random
    /// streams (passes of every sign of real and index decrease, cut
    /// decreases wandering outside their pass's range), no cut lies above
    /// the candidates' hull (beyond rounding), and the candidates' hull is
    /// made of cuts.
    #[test]
    fn candidate_cuts_keep_the_hull_of_all_cuts() {
        use crate::bpc::cuts::cut_candidates;
        use crate::codec::rate::convex_hull;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for _ in 0..400 {
            let passes = 1 + next(12) as usize;
            let (mut records, mut real) = (Vec::new(), Vec::new());
            let (mut cw, mut acc) = (0u32, 0.0);
            for _ in 0..passes {
                cw += next(40) as u32;
                let decrease = next(1000) as i128 - 150;
                records.push(record(PassKind::Cleanup, 0, cw, decrease));
                acc += next(5000) as f64 - 800.0;
                real.push(acc);
            }
            let n = cw as usize;
            let mut cut = 0i128;
            let cuts: Vec<i128> = (0..n.max(1))
                .map(|_| {
                    cut += next(200) as i128 - 60;
                    cut
                })
                .collect();
            let all = CutCandidates {
                slots: (1..n as u32).collect(),
                decreases: cuts.get(1..n).unwrap_or(&[]).to_vec(),
            };
            let full = cut_points(&records, &real, &all, 0);
            let some = cut_points(&records, &real, &cut_candidates(&records, &cuts), 0);
            let hull = convex_hull(&some);
            for p in &hull {
                let k = full.codewords.iter().position(|&c| c == p.codewords);
                assert_eq!(
                    full.decrease[k.unwrap()],
                    p.decrease,
                    "a hull point is a cut"
                );
            }
            // The candidates' hull as a concave function of the codewords.
            let above = |m: u32, d: f64| {
                let (mut c0, mut d0) = (0u32, 0.0);
                for p in &hull {
                    if m <= p.codewords {
                        let t = (m - c0) as f64 / (p.codewords - c0) as f64;
                        return d > d0 + t * (p.decrease - d0) + 1e-6 * d.abs().max(1.0);
                    }
                    (c0, d0) = (p.codewords, p.decrease);
                }
                d > d0 + 1e-6 * d.abs().max(1.0)
            };
            for (&m, &d) in full.codewords.iter().zip(&full.decrease) {
                assert!(!above(m, d), "cut {m} ({d}) above the candidates' hull");
            }
        }
    }
}
