//! All residual blocks of a picture in one flat layout: the form the GPU
//! encoder reads (one invocation per block) and the CPU encoder walks.
//!
//! Every macroblock (raster order) has [`UNITS_PER_MB`] *units* in bitstream
//! order: unit 0 is the macroblock header (written by the caller), then the
//! Intra16x16 DC block, the 16 luma blocks in `luma4x4BlkIdx` order, the Cb
//! and Cr DC blocks and the 4 Cb then 4 Cr AC blocks. Each residual unit owns
//! [`COEFFS_PER_UNIT`] `i16` coefficients in scan order (AC blocks use scan
//! positions 1..=15, chroma DC positions 0..=3; unused entries are ignored).
//! A unit is coded according to the macroblock type and coded_block_pattern;
//! uncoded units produce no bits and count 0 for their neighbours' nC.

use super::nc::{luma_block_xy, nc_from_neighbours, Neighbour};
use super::{encode_block, BitSink, BlockKind, CavlcError, WordSlot};

/// Units per macroblock: header + 27 residual blocks.
pub const UNITS_PER_MB: usize = 28;
/// Residual units per macroblock (all units but the header).
pub const RESIDUAL_UNITS_PER_MB: usize = UNITS_PER_MB - 1;
/// Coefficients stored per residual unit.
pub const COEFFS_PER_UNIT: usize = 16;
/// Unit index of the macroblock header.
pub const UNIT_HEADER: usize = 0;
/// Unit index of the Intra16x16 DC block.
pub const UNIT_LUMA_DC: usize = 1;
/// Unit index of luma block `luma4x4BlkIdx` 0 (blocks 0..16 follow).
pub const UNIT_LUMA: usize = 2;
/// Unit index of the Cb DC block (Cr DC follows).
pub const UNIT_CHROMA_DC: usize = 18;
/// Unit index of Cb AC block 0 (Cb 0..4 then Cr 0..4 follow).
pub const UNIT_CHROMA_AC: usize = 20;

/// Macroblock types as far as residual coding and nC are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum MbKind {
    /// Intra4x4: 16 luma 4x4 blocks of 16 coefficients.
    Intra4x4 = 0,
    /// Intra16x16: a luma DC block and 16 AC blocks.
    Intra16x16 = 1,
    /// I_PCM: raw samples, no residual blocks; neighbours count 16.
    Pcm = 2,
}

/// What the residual layer needs to know of one macroblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MbInfo {
    /// Macroblock type.
    pub kind: MbKind,
    /// coded_block_pattern: bits 0..4 the luma 8x8 quadrants, bits 4..6 the
    /// chroma pattern (0 none, 1 DC only, 2 DC and AC).
    pub cbp: u8,
    /// Slice the macroblock belongs to; neighbours in other slices are unavailable.
    pub slice: u16,
}

impl MbInfo {
    /// The 32-bit form the GPU reads: `kind | cbp << 8 | slice << 16`.
    pub const fn pack(self) -> u32 {
        self.kind as u32 | (self.cbp as u32) << 8 | (self.slice as u32) << 16
    }
}

/// Errors building a [`FrameResidual`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum FrameError {
    /// `mbs.len()` is not `mb_width * mb_height`.
    MbCount,
    /// `coeffs.len()` is not `mbs.len() * RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT`.
    CoeffCount,
}

impl core::fmt::Display for FrameError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            FrameError::MbCount => "macroblock count does not match the frame size",
            FrameError::CoeffCount => "coefficient count does not match the macroblock count",
        })
    }
}

impl core::error::Error for FrameError {}

/// The residual blocks of one picture (see the module docs for the layout).
#[derive(Debug, Clone, Copy)]
pub struct FrameResidual<'a> {
    mb_width: usize,
    mbs: &'a [MbInfo],
    coeffs: &'a [i16],
}

impl<'a> FrameResidual<'a> {
    /// Wraps the macroblock infos and coefficients of a `mb_width` x
    /// `mb_height` picture after checking their lengths.
    pub fn new(
        mb_width: usize,
        mb_height: usize,
        mbs: &'a [MbInfo],
        coeffs: &'a [i16],
    ) -> Result<Self, FrameError> {
        if mb_width.checked_mul(mb_height) != Some(mbs.len()) {
            return Err(FrameError::MbCount);
        }
        if mbs
            .len()
            .checked_mul(RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT)
            != Some(coeffs.len())
        {
            return Err(FrameError::CoeffCount);
        }
        Ok(FrameResidual {
            mb_width,
            mbs,
            coeffs,
        })
    }

    /// Number of macroblocks.
    pub fn mb_count(&self) -> usize {
        self.mbs.len()
    }

    /// The block kind of `unit` in macroblock `mb`, or `None` when the unit
    /// is the header or is not coded (macroblock type, coded_block_pattern).
    pub fn unit_kind(&self, mb: usize, unit: usize) -> Option<BlockKind> {
        let info = self.mbs[mb];
        let (luma, chroma) = (info.cbp & 15, info.cbp >> 4);
        match (info.kind, unit) {
            (MbKind::Pcm, _) | (_, UNIT_HEADER) => None,
            (MbKind::Intra16x16, UNIT_LUMA_DC) => Some(BlockKind::Intra16x16Dc),
            (MbKind::Intra4x4, UNIT_LUMA_DC) => None,
            (kind, u) if u < UNIT_CHROMA_DC => {
                let quadrant = (u - UNIT_LUMA) / 4;
                (luma >> quadrant & 1 == 1).then_some(match kind {
                    MbKind::Intra16x16 => BlockKind::Intra16x16Ac,
                    _ => BlockKind::Luma4x4,
                })
            }
            (_, u) if u < UNIT_CHROMA_AC => (chroma >= 1).then_some(BlockKind::ChromaDc),
            (_, u) if u < UNITS_PER_MB => (chroma == 2).then_some(BlockKind::ChromaAc),
            _ => None,
        }
    }

    /// The stored 16 coefficients of a residual unit (scan order).
    pub fn unit_slot(&self, mb: usize, unit: usize) -> &'a [i16] {
        let start = (mb * RESIDUAL_UNITS_PER_MB + unit - 1) * COEFFS_PER_UNIT;
        &self.coeffs[start..start + COEFFS_PER_UNIT]
    }

    /// The coefficients a unit of `kind` codes: its slot, trimmed to the kind.
    pub fn unit_coeffs(&self, mb: usize, unit: usize, kind: BlockKind) -> &'a [i16] {
        let slot = self.unit_slot(mb, unit);
        match kind {
            BlockKind::Intra16x16Ac | BlockKind::ChromaAc => &slot[1..],
            BlockKind::ChromaDc => &slot[..4],
            BlockKind::Luma4x4 | BlockKind::Intra16x16Dc => slot,
        }
    }

    /// How a unit counts as the neighbour of another block.
    pub fn neighbour(&self, mb: usize, unit: usize) -> Neighbour {
        if self.mbs[mb].kind == MbKind::Pcm {
            return Neighbour::Pcm;
        }
        match self.unit_kind(mb, unit) {
            None => Neighbour::NotCoded,
            Some(kind) => Neighbour::Coded(
                self.unit_coeffs(mb, unit, kind)
                    .iter()
                    .filter(|&&c| c != 0)
                    .count() as u8,
            ),
        }
    }

    /// The macroblock next to `mb` by (dx, dy) in {(-1, 0), (0, -1)}, when it
    /// exists and is in the same slice.
    fn neighbour_mb(&self, mb: usize, dx: bool, dy: bool) -> Option<usize> {
        let (x, y) = (mb % self.mb_width, mb / self.mb_width);
        let other = match (dx, dy) {
            (true, _) if x > 0 => mb - 1,
            (_, true) if y > 0 => mb - self.mb_width,
            _ => return None,
        };
        (self.mbs[other].slice == self.mbs[mb].slice).then_some(other)
    }

    /// nC of the block at (x, y) of a plane that is `grid` blocks wide in a
    /// macroblock (4 for luma, 2 for chroma); `unit_at` maps (x, y) to a unit.
    fn nc_in_grid(
        &self,
        mb: usize,
        x: u8,
        y: u8,
        unit_at: impl Fn(u8, u8) -> usize,
        grid: u8,
    ) -> i8 {
        let left = if x > 0 {
            self.neighbour(mb, unit_at(x - 1, y))
        } else {
            match self.neighbour_mb(mb, true, false) {
                Some(m) => self.neighbour(m, unit_at(grid - 1, y)),
                None => Neighbour::Unavailable,
            }
        };
        let up = if y > 0 {
            self.neighbour(mb, unit_at(x, y - 1))
        } else {
            match self.neighbour_mb(mb, false, true) {
                Some(m) => self.neighbour(m, unit_at(x, grid - 1)),
                None => Neighbour::Unavailable,
            }
        };
        nc_from_neighbours(left, up)
    }

    /// nC of residual unit `unit` of macroblock `mb` (clause 9.2.1).
    pub fn nc(&self, mb: usize, unit: usize) -> i8 {
        match unit {
            UNIT_HEADER => 0,
            UNIT_LUMA_DC..UNIT_CHROMA_DC => {
                // The Intra16x16 DC block takes the context of luma block 0.
                let blk = unit.saturating_sub(UNIT_LUMA) as u8;
                let (x, y) = luma_block_xy(blk);
                let unit_at = |x, y| UNIT_LUMA + super::nc::luma_block_index(x, y) as usize;
                self.nc_in_grid(mb, x, y, unit_at, 4)
            }
            UNIT_CHROMA_DC..UNIT_CHROMA_AC => -1,
            _ => {
                let first = UNIT_CHROMA_AC + (unit - UNIT_CHROMA_AC) / 4 * 4;
                let i = (unit - first) as u8;
                let unit_at = |x: u8, y: u8| first + (x + 2 * y) as usize;
                self.nc_in_grid(mb, i & 1, i >> 1, unit_at, 2)
            }
        }
    }

    /// Encodes residual unit `unit` of macroblock `mb` with its derived nC;
    /// writes nothing for the header and for uncoded units. Returns TotalCoeff.
    pub fn encode_unit<S: BitSink>(
        &self,
        mb: usize,
        unit: usize,
        sink: &mut S,
    ) -> Result<u8, CavlcError> {
        match self.unit_kind(mb, unit) {
            None => Ok(0),
            Some(kind) => encode_block(
                sink,
                kind,
                self.nc(mb, unit),
                self.unit_coeffs(mb, unit, kind),
            ),
        }
    }

    /// The [`UNITS_PER_MB`] slots of macroblock `mb` in bitstream order:
    /// `header` (the macroblock header, written by the caller) in slot
    /// [`UNIT_HEADER`], then each residual unit's CAVLC
    /// ([`Self::encode_unit`]; an uncoded unit's slot stays empty). A
    /// picture's slice data is every macroblock's slots concatenated. The
    /// unit and slot logic of the encoders: the host runs it per macroblock
    /// in parallel (`wavelane::h264::encode::unit_slots`), and
    /// `shaders/cavlc/cavlc_encode.comp` runs one invocation per slot.
    pub fn macroblock_slots(
        &self,
        mb: usize,
        header: WordSlot,
        out: &mut [WordSlot; UNITS_PER_MB],
    ) -> Result<(), CavlcError> {
        out[UNIT_HEADER] = header;
        for (unit, slot) in out.iter_mut().enumerate().skip(1) {
            *slot = WordSlot::default();
            self.encode_unit(mb, unit, slot)?;
        }
        Ok(())
    }
}
