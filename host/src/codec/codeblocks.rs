//! Tiling subbands into codeblocks, and the order they appear in a file.
//!
//! Every subband of every component is cut into codeblocks of 64 columns
//! (the 32 BPC-PaCo lanes of two columns) by `codeblock_height` rows,
//! anchored at the subband's top-left corner; blocks at the right and bottom
//! edges are narrower or shorter. A codeblock's BPC-PaCo table group is the
//! one of its subband (`3 * level + orientation`, LL last).
//!
//! **File order** (the order of the index and of the data inside each
//! segment): resolution 0 (the LL band) first, then resolution `r` holding
//! the detail bands of level `levels - r`; inside a resolution, component by
//! component; inside a component, the subbands HL, LH, HH; inside a subband,
//! codeblocks in raster order. Reading a prefix of the resolutions is
//! therefore reading a prefix of the blocks.

use wavelane_core::bpc;
use wavelane_core::dwt::{self, Orientation, Rect};

use super::format::CODEBLOCK_WIDTH;

/// One codeblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockGeometry {
    /// Component index.
    pub component: u8,
    /// Index of its subband in [`dwt::subbands`] order (0 = LL).
    pub band: u8,
    /// Resolution (0 = LL, `levels` = finest details).
    pub resolution: u8,
    /// Decomposition level of the subband (LL: `levels`).
    pub level: u8,
    /// Orientation of the subband.
    pub orientation: Orientation,
    /// Where the block lies in the component's Mallat-layout coefficient
    /// image (width = the image width).
    pub rect: Rect,
}

impl BlockGeometry {
    /// The BPC-PaCo probability-table group.
    pub fn group(&self) -> usize {
        let o = match self.orientation {
            Orientation::HL => bpc::Orientation::HL,
            Orientation::LH => bpc::Orientation::LH,
            Orientation::HH => bpc::Orientation::HH,
            Orientation::LL => bpc::Orientation::LL,
        };
        bpc::group_index(self.level, o)
    }

    /// Worst-case codewords of this block for top bitplane `top`.
    pub fn max_codewords(&self, top: Option<u8>) -> usize {
        bpc::max_codewords(self.rect.width, self.rect.height, top)
    }
}

/// The resolution a subband (in [`dwt::subbands`] order) belongs to.
pub fn resolution_of_band(band: usize) -> usize {
    if band == 0 {
        0
    } else {
        1 + (band - 1) / 3
    }
}

/// All codeblocks of an image in file order.
///
/// `levels` must be valid for the size (checked by the header); an invalid
/// combination gives an empty list.
pub fn codeblocks(
    width: usize,
    height: usize,
    components: usize,
    levels: u32,
    codeblock_height: usize,
) -> Vec<BlockGeometry> {
    let Ok(bands) = dwt::subbands(width, height, levels) else {
        return Vec::new();
    };
    let bands: Vec<_> = bands.collect();
    let cb_h = codeblock_height.max(1);
    let mut out = Vec::new();
    for r in 0..=levels as usize {
        for c in 0..components {
            for (i, band) in bands.iter().enumerate() {
                if resolution_of_band(i) != r || band.rect.is_empty() {
                    continue;
                }
                let rect = band.rect;
                for y0 in (0..rect.height).step_by(cb_h) {
                    for x0 in (0..rect.width).step_by(CODEBLOCK_WIDTH) {
                        out.push(BlockGeometry {
                            component: c as u8,
                            band: i as u8,
                            resolution: r as u8,
                            level: band.level,
                            orientation: band.orientation,
                            rect: Rect {
                                x: rect.x + x0,
                                y: rect.y + y0,
                                width: CODEBLOCK_WIDTH.min(rect.width - x0),
                                height: cb_h.min(rect.height - y0),
                            },
                        });
                    }
                }
            }
        }
    }
    out
}

/// Number of codeblocks [`codeblocks`] returns, without building the list
/// (for checking a header against a memory budget).
pub fn codeblock_count(
    width: usize,
    height: usize,
    components: usize,
    levels: u32,
    codeblock_height: usize,
) -> u64 {
    let Ok(bands) = dwt::subbands(width, height, levels) else {
        return 0;
    };
    let per_component: u64 = bands
        .filter(|b| !b.rect.is_empty())
        .map(|b| {
            (b.rect.width.div_ceil(CODEBLOCK_WIDTH)
                * b.rect.height.div_ceil(codeblock_height.max(1))) as u64
        })
        .sum();
    per_component * components as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_every_subband_exactly_once() {
        for (w, h, levels, cbh) in [
            (1, 1, 0, 64),
            (1, 7, 3, 4),
            (130, 67, 3, 32),
            (64, 64, 6, 64),
            (300, 5, 2, 1),
        ] {
            let blocks = codeblocks(w, h, 2, levels, cbh);
            assert_eq!(blocks.len() as u64, codeblock_count(w, h, 2, levels, cbh));
            for c in 0..2u8 {
                let mut covered = vec![0u8; w * h];
                for b in blocks.iter().filter(|b| b.component == c) {
                    assert!(b.rect.width <= 64 && b.rect.height <= cbh);
                    for y in b.rect.y..b.rect.y + b.rect.height {
                        for x in b.rect.x..b.rect.x + b.rect.width {
                            covered[y * w + x] += 1;
                        }
                    }
                }
                assert!(covered.iter().all(|&n| n == 1), "{w}x{h} levels {levels}");
            }
            // File order: resolutions never decrease.
            assert!(blocks
                .windows(2)
                .all(|p| p[0].resolution <= p[1].resolution));
        }
    }
}
