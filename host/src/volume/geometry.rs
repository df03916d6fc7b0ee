//! Volume codeblocks: every subband of the 3-D decomposition
//! ([`wavelane_core::dwt::volume::volume_subbands`]) is cut into its
//! slices, and each slice into 2-D codeblocks of 64 columns by the
//! codeblock height, as the 2-D codec tiles a subband
//! ([`crate::codec::codeblocks`]). BPC-PaCo codes 2-D blocks, so a 3-D
//! subband is coded slice by slice; docs/volumes.md says why 3-D
//! codeblocks were not taken.
//!
//! **File order**: resolution 0 (the final low band) first, then
//! resolution `r` holding the detail subbands of level `total - r`
//! (`total = max(lx, ly, lz)`); inside a resolution, subbands in
//! `volume_subbands` order (increasing mask), inside a subband slices in
//! increasing z, inside a slice codeblocks in raster order.
//!
//! **Table groups**: a subband whose mask has X or Y high takes the 2-D
//! group of the same XY orientation (mask 1 HL, 2 LH, 3 HH, the Z bit
//! ignored) at its level; the Z-only detail band (mask 4) takes HH's.

use wavelane_core::dwt::volume::{axes_at, region_at, total_levels, volume_subbands};
use wavelane_core::dwt::{DwtError, Orientation, Rect};

use crate::bpc::BlockDesc;
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::format::CODEBLOCK_WIDTH;

/// One codeblock of a volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VolumeBlock {
    /// Its 2-D geometry: `rect` in the slice (x, y of the 3-D Mallat
    /// layout), `band` the subband's index in `volume_subbands` order,
    /// `orientation` the table-group orientation (module docs).
    pub geometry: BlockGeometry,
    /// The slice (z of the 3-D Mallat layout).
    pub z: usize,
    /// The subband's high-pass axes (bit 0 X, 1 Y, 2 Z; 0 the low band).
    pub mask: u8,
}

impl VolumeBlock {
    /// The BPC-PaCo descriptor of this block in a volume of `width x
    /// height` slices stored back to back.
    pub fn desc(&self, width: usize, height: usize) -> BlockDesc {
        let r = self.geometry.rect;
        BlockDesc {
            offset: (self.z * height + r.y) * width + r.x,
            stride: width,
            width: r.width,
            height: r.height,
            group: self.geometry.group(),
        }
    }
}

/// The table-group orientation of a subband mask (module docs).
pub fn orientation_of_mask(mask: u8) -> Orientation {
    match mask & 3 {
        0 if mask == 0 => Orientation::LL,
        1 => Orientation::HL,
        2 => Orientation::LH,
        _ => Orientation::HH,
    }
}

/// Number of codeblocks of a volume, without building them (for checking a
/// header against the bytes of its index before allocating).
pub fn block_count(
    dims: [usize; 3],
    levels: [u32; 3],
    codeblock_height: usize,
) -> Result<u64, DwtError> {
    let cbh = codeblock_height.max(1);
    Ok(volume_subbands(dims, levels)?
        .filter(|b| !b.size.contains(&0))
        .map(|b| {
            (b.size[0].div_ceil(CODEBLOCK_WIDTH) * b.size[1].div_ceil(cbh)) as u64
                * b.size[2] as u64
        })
        .sum())
}

/// Every codeblock of a volume in file order.
pub fn volume_blocks(
    dims: [usize; 3],
    levels: [u32; 3],
    codeblock_height: usize,
) -> Result<Vec<VolumeBlock>, DwtError> {
    let total = total_levels(levels);
    let cbh = codeblock_height.max(1);
    let mut out = Vec::new();
    for (band, s) in volume_subbands(dims, levels)?.enumerate() {
        if s.size.contains(&0) {
            continue;
        }
        let resolution = (total - s.level as u32) as u8;
        let orientation = orientation_of_mask(s.mask);
        for z in s.origin[2]..s.origin[2] + s.size[2] {
            for y0 in (0..s.size[1]).step_by(cbh) {
                for x0 in (0..s.size[0]).step_by(CODEBLOCK_WIDTH) {
                    out.push(VolumeBlock {
                        geometry: BlockGeometry {
                            component: 0,
                            band: band as u8,
                            resolution,
                            level: s.level,
                            orientation,
                            rect: Rect {
                                x: s.origin[0] + x0,
                                y: s.origin[1] + y0,
                                width: CODEBLOCK_WIDTH.min(s.size[0] - x0),
                                height: cbh.min(s.size[1] - y0),
                            },
                        },
                        z,
                        mask: s.mask,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Coefficients around a needed position that a synthesis step reads:
/// the 9/7 synthesis filters reach 2 (low band) and 3 (high band)
/// coefficients of each band away from `n / 2`; one more for rounding of
/// the integer lifting keeps every reconstruction exact.
const MARGIN: usize = 4;

/// The slices `[first, last]` (inclusive, Mallat-layout z) of every
/// subband (in `volume_subbands` order) that a reconstruction of output
/// slices `a..=b` reads; `None` for subbands it does not read. Decoding
/// only the codeblocks of these slices and running the whole inverse
/// transform gives slices `a..=b` exactly as a full decode does
/// (`tests`: checked on every slice range of small volumes).
pub fn needed_slices(
    dims: [usize; 3],
    levels: [u32; 3],
    a: usize,
    b: usize,
) -> Result<Vec<Option<(usize, usize)>>, DwtError> {
    let lz = levels[2];
    // The needed range of the low region entering each z level, and of the
    // high band that level makes.
    let mut low = vec![(a, b.min(dims[2] - 1))];
    let mut high = Vec::new();
    for l in 0..lz {
        let n = region_at(dims, levels, l)[2];
        let lo_len = n.div_ceil(2);
        let hi_len = n - lo_len;
        let (s, e) = low[l as usize];
        let first = (s / 2).saturating_sub(MARGIN);
        low.push((first.min(lo_len - 1), (e / 2 + MARGIN).min(lo_len - 1)));
        high.push((hi_len > 0).then(|| (first.min(hi_len - 1), (e / 2 + MARGIN).min(hi_len - 1))));
    }
    let total = total_levels(levels);
    Ok(volume_subbands(dims, levels)?
        .map(|s| {
            let l = s.level as u32;
            let range = if l == total || l >= lz {
                Some(low[lz as usize])
            } else if s.mask & 4 != 0 {
                high[l as usize]
            } else {
                debug_assert!(axes_at(levels, l)[2]);
                Some(low[l as usize + 1])
            };
            range.map(|(f, e)| (s.origin[2] + f, s.origin[2] + e))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_every_voxel_once_in_file_order() {
        for (dims, levels, cbh) in [
            ([1, 1, 1], [0, 0, 0], 64),
            ([70, 9, 13], [2, 1, 3], 4),
            ([130, 67, 5], [3, 3, 0], 32),
            ([8, 8, 40], [1, 1, 4], 256),
        ] {
            let blocks = volume_blocks(dims, levels, cbh).unwrap();
            assert_eq!(blocks.len() as u64, block_count(dims, levels, cbh).unwrap());
            let mut covered = vec![0u8; dims[0] * dims[1] * dims[2]];
            for b in &blocks {
                let d = b.desc(dims[0], dims[1]);
                assert!(d.width <= 64 && d.height <= cbh && d.group < wavelane_core::bpc::GROUPS);
                for y in 0..d.height {
                    for x in 0..d.width {
                        covered[d.offset + y * d.stride + x] += 1;
                    }
                }
            }
            assert!(covered.iter().all(|&n| n == 1), "{dims:?} {levels:?}");
            assert!(blocks
                .windows(2)
                .all(|p| p[0].geometry.resolution <= p[1].geometry.resolution));
        }
    }
}
