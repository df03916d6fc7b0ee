//! Every block's convex hull of rate-distortion points, and the order in
//! which PCRD-Opt takes the hull segments ([`super::allocate`]).
//!
//! The hulls depend only on the coded blocks, not on the targets, so they
//! are made once per coding ([`Hulls::new`], block by block on all cores)
//! and serve every allocation of it: the table fit's first allocation, the
//! file's, every layer's, and every candidate of a PSNR search. The
//! segment order is a total order (slope, then block, then point), so a
//! parallel sort gives the same order as a sequential one, and the same
//! file.

use rayon::prelude::*;

/// One block's passes as rate control sees them.
#[derive(Debug, Clone, Default)]
pub struct BlockPasses {
    /// Codewords needed through each pass (non-decreasing).
    pub codewords: Vec<u32>,
    /// Cumulative weighted distortion decrease through each pass.
    pub decrease: Vec<f64>,
    /// Segment (resolution) this block's data goes to.
    pub resolution: usize,
}

/// A point of a block's convex hull.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HullPoint {
    /// Codewords through this point.
    pub codewords: u32,
    /// Cumulative decrease through this point.
    pub decrease: f64,
    /// Slope from the previous hull point (decrease per byte).
    pub slope: f64,
}

/// The upper convex hull of `(2 * codewords, decrease)` from the origin:
/// slopes strictly decreasing, every point a feasible truncation point.
pub fn convex_hull(passes: &BlockPasses) -> Vec<HullPoint> {
    let mut hull: Vec<HullPoint> = Vec::new();
    for (&cw, &d) in passes.codewords.iter().zip(&passes.decrease) {
        let (mut last_cw, mut last_d) = hull.last().map_or((0, 0.0), |p| (p.codewords, p.decrease));
        if d <= last_d {
            continue; // no gain over the last point: never worth its bytes
        }
        loop {
            if cw <= last_cw {
                hull.pop(); // same bytes, more gain: the last point is dominated
            } else {
                let slope = (d - last_d) / (2.0 * (cw - last_cw) as f64);
                match hull.last() {
                    Some(p) if slope >= p.slope => {
                        hull.pop();
                    }
                    _ => {
                        hull.push(HullPoint {
                            codewords: cw,
                            decrease: d,
                            slope,
                        });
                        break;
                    }
                }
            }
            (last_cw, last_d) = hull.last().map_or((0, 0.0), |p| (p.codewords, p.decrease));
        }
    }
    hull
}

/// What rate control keeps of one block's points.
#[derive(Debug, Clone, Default)]
pub struct BlockHull {
    /// The upper convex hull of the points ([`convex_hull`]).
    pub points: Vec<HullPoint>,
    /// Codewords through the last pass (what keeping everything takes,
    /// which can be past the hull's last point); 0 for a block with none.
    pub full: u32,
    /// Whether the block has any points (it then codes one count per
    /// layer in the index, even a zero one).
    pub coded: bool,
    /// Segment (resolution) this block's data goes to.
    pub resolution: usize,
}

impl BlockHull {
    /// The hull of `passes`.
    pub fn new(passes: &BlockPasses) -> Self {
        BlockHull {
            points: convex_hull(passes),
            full: passes.codewords.last().copied().unwrap_or(0),
            coded: !passes.codewords.is_empty(),
            resolution: passes.resolution,
        }
    }
}

/// Every block's hull, and the hull segments of all blocks in the order
/// PCRD-Opt takes them.
#[derive(Debug, Clone, Default)]
pub struct Hulls {
    /// Block `i`'s hull.
    pub(super) blocks: Vec<BlockHull>,
    /// `(slope, block, point)` by decreasing slope, ties by block, then by
    /// point: every segment of every hull once.
    pub(super) order: Vec<(f64, u32, u32)>,
}

impl Hulls {
    /// The hulls of every block's points.
    pub fn new(passes: &[BlockPasses]) -> Self {
        Self::from_blocks(passes.par_iter().map(BlockHull::new).collect())
    }

    /// The segment order of hulls made elsewhere.
    pub fn from_blocks(blocks: Vec<BlockHull>) -> Self {
        let mut order: Vec<(f64, u32, u32)> =
            Vec::with_capacity(blocks.iter().map(|b| b.points.len()).sum());
        for (b, hull) in blocks.iter().enumerate() {
            order.extend(
                (hull.points.iter())
                    .enumerate()
                    .map(|(k, p)| (p.slope, b as u32, k as u32)),
            );
        }
        order.par_sort_unstable_by(|x, y| {
            y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2))
        });
        Hulls { blocks, order }
    }

    /// Blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there are no blocks.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}
