//! PCRD-Opt rate control (Taubman, "High performance scalable image
//! compression with EBCOT", IEEE Trans. Image Processing, 2000).
//!
//! Each codeblock's coding passes give candidate truncation points with a
//! cumulative rate (bytes of codewords) and a cumulative distortion
//! decrease (squared error in the image, i.e. weighted by the subband's
//! synthesis energy, the colour transform and the squared quantization
//! step). Per block only the points on the upper convex hull of
//! (rate, decrease) can be optimal; their slopes decrease strictly. For a
//! threshold λ every block keeps its last hull point of slope > λ, which is
//! the same as taking all hull segments of all blocks in order of
//! decreasing slope. So rather than bisecting λ numerically, the hulls
//! and their segments' order are made once per coding ([`Hulls`]) and
//! [`allocate`] walks them, with the exact file size (data,
//! index bits, segment CRCs) updated incrementally, until the layer's
//! target is reached; the walk for the next layer continues where the last
//! one stopped, so layers are nested by construction.
//!
//! A byte target is then filled to within one codeword: BPC-PaCo streams
//! can be cut after any codeword (the decoder stops at the first symbol
//! whose codeword is missing), so the segment that no longer fits is
//! included partially.

mod hull;

pub use hull::{convex_hull, BlockHull, BlockPasses, HullPoint, Hulls};

use super::index::ue_bits;

/// What a layer must reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LayerTarget {
    /// The whole file (through this layer) at most this many bytes.
    Bytes(u64),
    /// Stop once the remaining distortion estimate is at most this.
    Distortion(f64),
    /// Everything, every pass (lossless).
    All,
}

/// The parts of the file size that do not depend on the truncation.
#[derive(Debug, Clone, Copy)]
pub struct SizeModel {
    /// Bytes of the header besides the index and the segment CRC table.
    pub fixed_bytes: u64,
    /// Index bits besides the layer counts (top bitplanes and shifts).
    pub fixed_index_bits: u64,
    /// Quality layers.
    pub layers: usize,
    /// Resolutions.
    pub resolutions: usize,
}

/// Per-block, per-layer codeword counts (the index's `counts`), and the
/// estimated remaining distortion after each layer.
#[derive(Debug, Clone)]
pub struct Allocation {
    /// Codewords block `i` adds in layer `l`, at `i * layers + l`.
    pub counts: Vec<u32>,
    /// Exact file size after each layer (all of the header, data through
    /// the layer).
    pub bytes: Vec<u64>,
    /// Estimated remaining distortion after each layer (`total` minus what
    /// was included, not counting quantization noise).
    pub remaining: Vec<f64>,
}

struct Walk<'a> {
    blocks: &'a [BlockHull],
    model: SizeModel,
    /// Codewords of each block included so far (all layers).
    cum: Vec<u32>,
    /// Codewords included by earlier layers.
    base: Vec<u32>,
    /// Index bits of the layer counts for layers > current (1 bit each).
    index_bits: u64,
    data_bytes: u64,
    segment_bytes: Vec<u64>,
    nonempty: u64,
    layer: usize,
    included: f64,
}

impl Walk<'_> {
    fn size(&self) -> u64 {
        self.model.fixed_bytes + self.index_bits.div_ceil(8) + 4 * self.nonempty + self.data_bytes
    }

    /// Size if block `b` went to `cw` codewords in total.
    fn size_with(&self, b: usize, cw: u32) -> u64 {
        let add = (cw - self.cum[b]) as u64;
        let old_layer = self.cum[b] - self.base[b];
        let bits = self.index_bits + ue_bits(cw - self.base[b]) - ue_bits(old_layer);
        let seg = self.blocks[b].resolution * self.model.layers + self.layer;
        let new_seg = (self.segment_bytes[seg] == 0 && add > 0) as u64;
        self.model.fixed_bytes
            + bits.div_ceil(8)
            + 4 * (self.nonempty + new_seg)
            + self.data_bytes
            + 2 * add
    }

    /// Takes block `b` to the most codewords up to `max` that keep the
    /// file within `budget` (none when not even one fits).
    fn fill_prefix(&mut self, b: usize, max: u32, budget: u64) {
        let room = budget.saturating_sub(self.size()) / 2;
        let mut cw = (self.cum[b] as u64 + room).min(max as u64) as u32;
        while cw > self.cum[b] && self.size_with(b, cw) > budget {
            cw -= 1;
        }
        if cw > self.cum[b] {
            self.set(b, cw);
        }
    }

    fn set(&mut self, b: usize, cw: u32) {
        let add = (cw - self.cum[b]) as u64;
        self.index_bits =
            self.index_bits + ue_bits(cw - self.base[b]) - ue_bits(self.cum[b] - self.base[b]);
        let seg = self.blocks[b].resolution * self.model.layers + self.layer;
        if self.segment_bytes[seg] == 0 && add > 0 {
            self.nonempty += 1;
        }
        self.segment_bytes[seg] += 2 * add;
        self.data_bytes += 2 * add;
        self.cum[b] = cw;
    }
}

/// Chooses every block's truncation point for every layer from the
/// blocks' `hulls`. `total` is the sum of all blocks' full decreases (for
/// distortion targets).
pub fn allocate(
    hulls: &Hulls,
    targets: &[LayerTarget],
    model: SizeModel,
    total: f64,
) -> Allocation {
    let layers = model.layers;
    let Hulls { blocks, order } = hulls;
    let order = order.as_slice();

    let mut walk = Walk {
        blocks,
        model,
        cum: vec![0; blocks.len()],
        base: vec![0; blocks.len()],
        // Every non-empty block codes one count per layer: 1 bit while 0.
        index_bits: model.fixed_index_bits
            + (blocks.iter().filter(|b| b.coded).count() * layers) as u64,
        data_bytes: 0,
        segment_bytes: vec![0; model.resolutions * layers],
        nonempty: 0,
        layer: 0,
        included: 0.0,
    };
    let mut counts = vec![0u32; blocks.len() * layers];
    let mut bytes = Vec::with_capacity(layers);
    let mut remaining = Vec::with_capacity(layers);
    let mut next = 0;
    for (l, target) in targets.iter().enumerate().take(layers) {
        walk.layer = l;
        walk.base.clone_from(&walk.cum);
        match *target {
            LayerTarget::All => {
                for (b, hull) in blocks.iter().enumerate() {
                    if hull.coded {
                        walk.set(b, hull.full.max(walk.cum[b]));
                    }
                }
                next = order.len();
            }
            LayerTarget::Bytes(budget) => {
                while next < order.len() {
                    let (_, b, k) = order[next];
                    let (b, p) = (b as usize, blocks[b as usize].points[k as usize]);
                    if p.codewords <= walk.cum[b] {
                        next += 1;
                        continue;
                    }
                    if walk.size_with(b, p.codewords) <= budget {
                        walk.set(b, p.codewords);
                        walk.included += gain(&blocks[b].points, k as usize);
                        next += 1;
                        continue;
                    }
                    // Fill what is left with a prefix of this segment, then
                    // with whatever later segments still fit (a prefix here
                    // may not: it can need a new segment's CRC or index bits).
                    walk.fill_prefix(b, p.codewords - 1, budget);
                    top_up(&mut walk, &order[next + 1..], budget);
                    break;
                }
            }
            LayerTarget::Distortion(limit) => {
                while next < order.len() && total - walk.included > limit {
                    let (_, b, k) = order[next];
                    let (b, p) = (b as usize, blocks[b as usize].points[k as usize]);
                    if p.codewords > walk.cum[b] {
                        walk.set(b, p.codewords);
                    }
                    walk.included += gain(&blocks[b].points, k as usize);
                    next += 1;
                }
            }
        }
        for b in 0..blocks.len() {
            counts[b * layers + l] = walk.cum[b] - walk.base[b];
        }
        bytes.push(walk.size());
        remaining.push(total - walk.included);
    }
    Allocation {
        counts,
        bytes,
        remaining,
    }
}

/// After the slope walk stopped at a segment that does not fit: adds, in
/// slope order, every later segment (or the longest prefix of it) that
/// still fits `budget`, skipping blocks whose earlier hull segment is not
/// in yet (a block's codewords are a prefix of its stream). Rate control
/// then fills a byte budget to within a codeword more often; the next
/// layer's walk skips what was added here.
fn top_up(walk: &mut Walk<'_>, order: &[(f64, u32, u32)], budget: u64) {
    for &(_, b, k) in order {
        if walk.size() + 2 > budget {
            return;
        }
        let (b, k) = (b as usize, k as usize);
        let blocks = walk.blocks;
        let hull = &blocks[b].points;
        let p = hull[k];
        let earlier_in = k == 0 || hull[k - 1].codewords <= walk.cum[b];
        if p.codewords <= walk.cum[b] || !earlier_in {
            continue;
        }
        if walk.size_with(b, p.codewords) <= budget {
            walk.set(b, p.codewords);
            walk.included += gain(hull, k);
        } else {
            walk.fill_prefix(b, p.codewords - 1, budget);
        }
    }
}

/// Decrease gained by hull point `k` over point `k - 1`.
fn gain(hull: &[HullPoint], k: usize) -> f64 {
    hull[k].decrease - if k == 0 { 0.0 } else { hull[k - 1].decrease }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(points: &[(u32, f64)]) -> BlockPasses {
        BlockPasses {
            codewords: points.iter().map(|p| p.0).collect(),
            decrease: points.iter().map(|p| p.1).collect(),
            resolution: 0,
        }
    }

    #[test]
    fn hull_drops_non_convex_and_useless_points() {
        // (10, 100): slope 5; (20, 120): slope 1; (25, 200): slope 8 > 1, so
        // (20, 120) is not on the hull and (25, 200) has slope 100/30.
        let hull = convex_hull(&block(&[
            (10, 100.0),
            (20, 120.0),
            (25, 200.0),
            (30, 190.0),
            (30, 210.0),
        ]));
        let cws: Vec<u32> = hull.iter().map(|p| p.codewords).collect();
        assert_eq!(cws, [10, 25, 30]);
        assert!(hull.windows(2).all(|w| w[0].slope > w[1].slope));
    }

    #[test]
    fn byte_targets_are_met_within_a_codeword() {
        let blocks: Vec<BlockPasses> = (0..20)
            .map(|i| {
                let pts: Vec<(u32, f64)> = (1..=12)
                    .map(|p| {
                        (
                            p * (30 + i),
                            1e6 * (1.0 - 0.6f64.powi(p as i32)) / (1 + i % 3) as f64,
                        )
                    })
                    .collect();
                block(&pts)
            })
            .collect();
        let model = SizeModel {
            fixed_bytes: 100,
            fixed_index_bits: 40,
            layers: 3,
            resolutions: 1,
        };
        let targets = [
            LayerTarget::Bytes(2_000),
            LayerTarget::Bytes(5_000),
            LayerTarget::Bytes(9_001),
        ];
        let a = allocate(&Hulls::new(&blocks), &targets, model, 0.0);
        for (got, want) in a.bytes.iter().zip([2_000u64, 5_000, 9_001]) {
            assert!(*got <= want && *got + 3 >= want, "{got} vs {want}");
        }
    }

    /// The steepest block left out sits alone in a resolution whose segment
    /// is still empty: even one codeword of it needs a 4-byte CRC that the
    /// budget cannot pay, so a later segment of a block in an open segment
    /// fills the rest.
    #[test]
    fn budgets_are_filled_past_a_segment_that_needs_a_new_crc() {
        let mut lone = block(&[(10, 5000.0)]);
        lone.resolution = 1;
        let blocks = vec![block(&[(20, 1e6), (40, 1e6 + 2000.0)]), lone];
        let model = SizeModel {
            fixed_bytes: 100,
            fixed_index_bits: 0,
            layers: 1,
            resolutions: 2,
        };
        // 100 + 2 index bytes + 4 CRC + 40 data = 146 after the first
        // segment; one codeword of the lone block would make it 152.
        let budget = 151;
        let a = allocate(
            &Hulls::new(&blocks),
            &[LayerTarget::Bytes(budget)],
            model,
            0.0,
        );
        assert_eq!(a.counts[1], 0, "the lone block does not fit");
        assert!(
            a.counts[0] > 20,
            "the first block's second segment fills in"
        );
        assert!(
            a.bytes[0] <= budget && a.bytes[0] + 2 > budget,
            "{}",
            a.bytes[0]
        );
    }
}
