//! The block-based form of one 2-D level that the GPU shaders implement
//! (the register-based DWT: each subgroup lifts a block held in registers).
//!
//! The level's output is cut into tiles of `out_pairs_x x out_pair_rows`
//! sample pairs (2x2 quads). Each tile is computed independently from a
//! block of `pairs_x x pair_rows` quads: the tile plus a halo of
//! [`Wavelet::halo_pairs`] quads on every side, loaded with whole-sample
//! symmetric index remapping at the image borders ([`super::mirror`]). The
//! block is lifted vertically then horizontally as if it were a small image
//! (its own edges are wrong, but the halo absorbs them), and only the tile is
//! stored, straight into its Mallat positions. On the GPU a subgroup owns a
//! block: lane `j` holds pairs `2j` and `2j + 1` of every row in registers
//! (so `pairs_x = 2 * subgroup size`), vertical lifting needs no
//! communication and horizontal lifting exchanges one value per step with
//! the neighbouring lane by subgroup shuffle.
//!
//! Because blocks read from a source and write elsewhere, a level goes from
//! a source region to the detail subbands in `out` plus an LL destination
//! (the next level's source), exactly the buffers the GPU driver uses. The
//! result equals [`super::forward_level_2d`] / [`super::inverse_level_2d`]
//! for every geometry with room for output; tests check that.
//!
//! The shaders use two shapes of block. The **inverse** holds a whole block
//! of [`SHADER_PAIR_ROWS`] pair rows in registers
//! ([`BlockGeometry::for_subgroup`]). The **forward** block is a tall strip
//! ([`BlockGeometry::forward_strip_rows`]): the subgroup streams it from top to
//! bottom through a sliding window of rows, so only the strip's two ends
//! carry a vertical halo. In the stream, lifting step `s` of strip row `r`
//! runs as soon as rows `r - 1` and `r + 1` have been through step `s - 1`,
//! and a row is stored as soon as it has been through every step; that is a
//! reordering of the block's vertical lifting, with the block's top edge
//! mirrored the same way. The stream stops at the strip's last output row,
//! so it never finishes the bottom halo rows, which are not stored anyway
//! (and are the only rows the block's bottom mirror reaches). Stored values
//! are therefore those of [`forward_level_blocked`] on the strip geometry.
//! A strip that lies wholly inside the image (the shaders' lean
//! `stream_inside`, for every wavelet) runs the same order with its state
//! in named registers and one difference: at the strip's first row it
//! lifts with zero where the block mirrors. After
//! lifting step `s` (0-based) that difference has reached strip rows up to
//! `s - 1` only (each step reads one row above and one below), so after the
//! last step rows up to `NSTEPS - 2`, all inside the top halo of
//! `2 * halo = NSTEPS` rows, which is never stored: the stored values are
//! again the block's. Inside strips of odd strip rows run that order from
//! the bottom up (so that vertically adjacent strips read their shared halo
//! rows at about the same time): they start at the last row they load (the
//! strip's last odd row, which no step reads, is left out, so that row is
//! even), the steps are symmetric in their two neighbours and the mirrored
//! order keeps even rows even, so they compute the same values, and the
//! zero start reaches only the `NSTEPS - 1` bottom-halo rows they load. The
//! GPU tests compare them with this module on images whose inner strips
//! take both paths.
//! Both shapes round their horizontal halo up to an even number of quads
//! ([`BlockGeometry::halo_x`]): then every block starts 4 columns before a
//! multiple of 4, so each lane's 4 columns are one 16-byte aligned vector
//! in memory (and its 2 L and 2 H coefficients 8-byte aligned ones), and a
//! lane holds either two halo quads or none.

use super::lines::mirror;
use super::two_d::mallat_index;
use super::{DwtError, Lifting, Wavelet};

/// Pairs per lane in the shaders (each lane holds 4 columns).
pub const PAIRS_PER_LANE: usize = 2;
/// Pair rows per block in the inverse shaders (16 rows), fixed in
/// `shaders/dwt/block.glsl`. Why 8 and not 16 is a device matter (register
/// spills): see `wavelane::dwt::gpu`.
pub const SHADER_PAIR_ROWS: usize = 8;
/// Output pair rows of a forward strip, at most: beyond this the halo
/// (2 pair rows of 66 for 5/3) costs nothing more worth saving.
pub const STRIP_MAX_OUT_PAIR_ROWS: usize = 64;

/// Size of a block and of its halo, in quads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BlockGeometry {
    /// Quads per block row (2 samples each).
    pub pairs_x: usize,
    /// Quad rows per block (2 rows each).
    pub pair_rows: usize,
    /// Halo quad rows above and below.
    pub halo: usize,
    /// Halo quads left and right (at least `halo`).
    pub halo_x: usize,
}

impl BlockGeometry {
    /// A geometry with room for at least one output quad each way.
    pub fn new(wavelet: Wavelet, pairs_x: usize, pair_rows: usize) -> Result<Self, DwtError> {
        let halo = wavelet.halo_pairs();
        if pairs_x <= 2 * halo || pair_rows <= 2 * halo {
            return Err(DwtError::BadBlockGeometry);
        }
        Ok(BlockGeometry {
            pairs_x,
            pair_rows,
            halo,
            halo_x: halo,
        })
    }

    /// A shader block of `pair_rows` for a subgroup of `subgroup_size`
    /// lanes: 2 quads per lane, the horizontal halo rounded up to even.
    fn for_shader(
        wavelet: Wavelet,
        subgroup_size: usize,
        pair_rows: usize,
    ) -> Result<Self, DwtError> {
        let halo_x = wavelet.halo_pairs().next_multiple_of(2);
        let pairs_x = PAIRS_PER_LANE * subgroup_size;
        if pairs_x <= 2 * halo_x {
            return Err(DwtError::BadBlockGeometry);
        }
        Ok(BlockGeometry {
            halo_x,
            ..Self::new(wavelet, pairs_x, pair_rows)?
        })
    }

    /// The geometry of the inverse shaders for a subgroup of `subgroup_size`
    /// lanes.
    pub fn for_subgroup(wavelet: Wavelet, subgroup_size: usize) -> Result<Self, DwtError> {
        Self::for_shader(wavelet, subgroup_size, SHADER_PAIR_ROWS)
    }

    /// The forward shaders' strip of `out_rows` output pair rows (clamped
    /// to 1..=[`STRIP_MAX_OUT_PAIR_ROWS`]), as wide as the inverse block.
    /// The shader takes the strip height from the host, so any height gives
    /// the same result; which height runs fastest is device tuning and lives
    /// with the GPU driver (`wavelane::dwt::gpu::forward_strip`).
    pub fn forward_strip_rows(
        wavelet: Wavelet,
        subgroup_size: usize,
        out_rows: usize,
    ) -> Result<Self, DwtError> {
        let out_rows = out_rows.clamp(1, STRIP_MAX_OUT_PAIR_ROWS);
        Self::for_shader(wavelet, subgroup_size, out_rows + 2 * wavelet.halo_pairs())
    }

    /// Output quads per block row.
    pub const fn out_pairs_x(&self) -> usize {
        self.pairs_x - 2 * self.halo_x
    }

    /// Output quad rows per block.
    pub const fn out_pair_rows(&self) -> usize {
        self.pair_rows - 2 * self.halo
    }

    /// Samples of block storage ([`forward_level_blocked`]'s `block`).
    pub const fn block_len(&self) -> usize {
        4 * self.pairs_x * self.pair_rows
    }

    /// Blocks `(across, down)` covering a `width x height` level.
    pub fn grid(&self, width: usize, height: usize) -> (usize, usize) {
        (
            width.div_ceil(2).div_ceil(self.out_pairs_x()),
            height.div_ceil(2).div_ceil(self.out_pair_rows()),
        )
    }
}

/// A level's region and which axes it transforms (an axis of length 1, or
/// one whose level count is exhausted in 3-D, is not transformed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LevelShape {
    /// Region width.
    pub width: usize,
    /// Region height.
    pub height: usize,
    /// Transform along X.
    pub do_x: bool,
    /// Transform along Y.
    pub do_y: bool,
}

impl LevelShape {
    /// A 2-D level: each axis transformed when longer than 1.
    pub const fn level_2d(width: usize, height: usize) -> Self {
        LevelShape {
            width,
            height,
            do_x: width > 1,
            do_y: height > 1,
        }
    }

    /// Size of the low-low part: the next level's source.
    pub fn ll_size(&self) -> (usize, usize) {
        (
            if self.do_x {
                self.width.div_ceil(2)
            } else {
                self.width
            },
            if self.do_y {
                self.height.div_ceil(2)
            } else {
                self.height
            },
        )
    }

    /// Position of interleaved `(x, y)` in the output, and whether it is in
    /// the low-low part (the part that becomes the next level's source).
    fn place(&self, x: usize, y: usize) -> (usize, usize, bool) {
        let low_x = !self.do_x || x.is_multiple_of(2);
        let low_y = !self.do_y || y.is_multiple_of(2);
        let col = if self.do_x {
            mallat_index(x, self.width)
        } else {
            x
        };
        let row = if self.do_y {
            mallat_index(y, self.height)
        } else {
            y
        };
        (col, row, low_x && low_y)
    }
}

/// A buffer plus its row stride.
pub type Plane<'a, T> = (&'a [T], usize);
/// A mutable buffer plus its row stride.
pub type PlaneMut<'a, T> = (&'a mut [T], usize);

fn check_plane(len: usize, stride: usize, w: usize, h: usize) -> Result<(), DwtError> {
    super::ImageLayout::with_stride(w, h, stride).validate(len)
}

/// One forward level, block by block: reads the `shape` region of `src`,
/// writes the detail coefficients into `out` at their Mallat positions and
/// the LL coefficients into `ll` (compact, its own stride) or, when `ll` is
/// `None`, into `out`. `block` needs [`BlockGeometry::block_len`] samples.
pub fn forward_level_blocked<W: Lifting>(
    src: Plane<'_, W::Sample>,
    shape: LevelShape,
    out: PlaneMut<'_, W::Sample>,
    mut ll: Option<PlaneMut<'_, W::Sample>>,
    geometry: BlockGeometry,
    block: &mut [W::Sample],
) -> Result<(), DwtError> {
    let (w, h) = (shape.width, shape.height);
    check_plane(src.0.len(), src.1, w, h)?;
    check_plane(out.0.len(), out.1, w, h)?;
    if let Some((buf, stride)) = &ll {
        let (lw, lh) = shape.ll_size();
        check_plane(buf.len(), *stride, lw, lh)?;
    }
    let g = geometry;
    let (rows, cols) = (2 * g.pair_rows, 2 * g.pairs_x);
    let block = block
        .get_mut(..rows * cols)
        .ok_or(DwtError::ScratchTooSmall)?;
    let (nbx, nby) = g.grid(w, h);
    for by in 0..nby {
        for bx in 0..nbx {
            let x0 = 2 * (bx * g.out_pairs_x()) as i64 - 2 * g.halo_x as i64;
            let y0 = 2 * (by * g.out_pair_rows()) as i64 - 2 * g.halo as i64;
            for r in 0..rows {
                let y = mirror(y0 + r as i64, h);
                for c in 0..cols {
                    block[r * cols + c] = src.0[y * src.1 + mirror(x0 + c as i64, w)];
                }
            }
            if shape.do_y {
                W::forward_lines(block, rows, cols)?;
            }
            if shape.do_x {
                for row in block.chunks_exact_mut(cols) {
                    W::forward_lines(row, cols, 1)?;
                }
            }
            for r in 2 * g.halo..rows - 2 * g.halo {
                let y = y0 + r as i64;
                if y < 0 || y as usize >= h {
                    continue;
                }
                for c in 2 * g.halo_x..cols - 2 * g.halo_x {
                    let x = x0 + c as i64;
                    if x < 0 || x as usize >= w {
                        continue;
                    }
                    let (col, row, is_ll) = shape.place(x as usize, y as usize);
                    let v = block[r * cols + c];
                    match (&mut ll, is_ll) {
                        (Some((buf, stride)), true) => buf[row * *stride + col] = v,
                        _ => out.0[row * out.1 + col] = v,
                    }
                }
            }
        }
    }
    Ok(())
}

/// One inverse level, block by block: reads the detail coefficients of the
/// `shape` region from `coeffs` (Mallat positions) and the LL coefficients
/// from `ll` (compact) or, when `None`, from `coeffs`; writes the
/// reconstructed region into `dst`.
pub fn inverse_level_blocked<W: Lifting>(
    coeffs: Plane<'_, W::Sample>,
    ll: Option<Plane<'_, W::Sample>>,
    shape: LevelShape,
    dst: PlaneMut<'_, W::Sample>,
    geometry: BlockGeometry,
    block: &mut [W::Sample],
) -> Result<(), DwtError> {
    let (w, h) = (shape.width, shape.height);
    check_plane(coeffs.0.len(), coeffs.1, w, h)?;
    check_plane(dst.0.len(), dst.1, w, h)?;
    if let Some((buf, stride)) = ll {
        let (lw, lh) = shape.ll_size();
        check_plane(buf.len(), stride, lw, lh)?;
    }
    let g = geometry;
    let (rows, cols) = (2 * g.pair_rows, 2 * g.pairs_x);
    let block = block
        .get_mut(..rows * cols)
        .ok_or(DwtError::ScratchTooSmall)?;
    let (nbx, nby) = g.grid(w, h);
    for by in 0..nby {
        for bx in 0..nbx {
            let x0 = 2 * (bx * g.out_pairs_x()) as i64 - 2 * g.halo_x as i64;
            let y0 = 2 * (by * g.out_pair_rows()) as i64 - 2 * g.halo as i64;
            for r in 0..rows {
                let y = mirror(y0 + r as i64, h);
                for c in 0..cols {
                    let x = mirror(x0 + c as i64, w);
                    let (col, row, is_ll) = shape.place(x, y);
                    block[r * cols + c] = match (ll, is_ll) {
                        (Some((buf, stride)), true) => buf[row * stride + col],
                        _ => coeffs.0[row * coeffs.1 + col],
                    };
                }
            }
            if shape.do_x {
                for row in block.chunks_exact_mut(cols) {
                    W::inverse_lines(row, cols, 1)?;
                }
            }
            if shape.do_y {
                W::inverse_lines(block, rows, cols)?;
            }
            for r in 2 * g.halo..rows - 2 * g.halo {
                let y = y0 + r as i64;
                if y < 0 || y as usize >= h {
                    continue;
                }
                for c in 2 * g.halo_x..cols - 2 * g.halo_x {
                    let x = x0 + c as i64;
                    if x >= 0 && (x as usize) < w {
                        dst.0[y as usize * dst.1 + x as usize] = block[r * cols + c];
                    }
                }
            }
        }
    }
    Ok(())
}
