//! Subband geometry of the 2-D Mallat layout.

use super::DwtError;

/// Subband orientation. The numbers are the BPC-PaCo table-group numbering:
/// detail subband of level `l` uses group `3 * l + orientation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Orientation {
    /// Horizontally high-pass, vertically low-pass.
    HL = 0,
    /// Horizontally low-pass, vertically high-pass.
    LH = 1,
    /// High-pass in both directions.
    HH = 2,
    /// Low-pass in both directions (the coarsest approximation).
    LL = 3,
}

impl Orientation {
    /// The three detail orientations in layout order.
    pub const DETAILS: [Orientation; 3] = [Orientation::HL, Orientation::LH, Orientation::HH];

    /// `(horizontal is high-pass, vertical is high-pass)`.
    pub const fn highpass(self) -> (bool, bool) {
        match self {
            Orientation::HL => (true, false),
            Orientation::LH => (false, true),
            Orientation::HH => (true, true),
            Orientation::LL => (false, false),
        }
    }

    /// Two-letter name (`"HL"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Orientation::HL => "HL",
            Orientation::LH => "LH",
            Orientation::HH => "HH",
            Orientation::LL => "LL",
        }
    }
}

/// A rectangle of samples in the coefficient image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Rect {
    /// First column.
    pub x: usize,
    /// First row.
    pub y: usize,
    /// Columns (may be 0: see [`max_levels`]).
    pub width: usize,
    /// Rows (may be 0).
    pub height: usize,
}

impl Rect {
    /// Number of samples.
    pub const fn area(&self) -> usize {
        self.width * self.height
    }

    /// True when the rectangle holds no sample.
    pub const fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }
}

/// One subband: where it lies, its level and orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Subband {
    /// Decomposition level, 0 = finest. For the LL band it is the number of
    /// levels (LL sits above the coarsest detail level).
    pub level: u8,
    /// Orientation.
    pub orientation: Orientation,
    /// Position in the Mallat-layout coefficient image.
    pub rect: Rect,
}

/// Size of the region that level `level` transforms (level 0: the image;
/// each level halves, rounding up). With `level == levels` this is the LL
/// band's size.
pub fn level_size(width: usize, height: usize, level: u32) -> (usize, usize) {
    let mut w = width;
    let mut h = height;
    for _ in 0..level {
        w = w.div_ceil(2);
        h = h.div_ceil(2);
    }
    (w, h)
}

/// The most levels that still change something: the number of halvings
/// (rounding up) until both dimensions are 1, i.e. `ceil(log2(max(w, h)))`.
/// Levels after a dimension reaches 1 leave that axis alone and give empty
/// subbands along it.
pub fn max_levels(width: usize, height: usize) -> u32 {
    let n = width.max(height);
    if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

/// The rectangle of one subband. `level` is ignored for `LL` (which is the
/// band left after `levels` levels); detail levels must be below `levels`.
pub fn subband_rect(
    width: usize,
    height: usize,
    levels: u32,
    level: u32,
    orientation: Orientation,
) -> Result<Rect, DwtError> {
    if width == 0 || height == 0 {
        return Err(DwtError::EmptyDimension);
    }
    if levels > max_levels(width, height) {
        return Err(DwtError::TooManyLevels);
    }
    if orientation == Orientation::LL {
        let (w, h) = level_size(width, height, levels);
        return Ok(Rect {
            x: 0,
            y: 0,
            width: w,
            height: h,
        });
    }
    if level >= levels {
        return Err(DwtError::TooManyLevels);
    }
    let (w, h) = level_size(width, height, level);
    let (wl, hl) = (w.div_ceil(2), h.div_ceil(2));
    let (xh, yh) = orientation.highpass();
    Ok(Rect {
        x: if xh { wl } else { 0 },
        y: if yh { hl } else { 0 },
        width: if xh { w - wl } else { wl },
        height: if yh { h - hl } else { hl },
    })
}

/// Every subband of a `levels`-level decomposition, LL first, then each level
/// from the coarsest to the finest as HL, LH, HH (`1 + 3 * levels` items,
/// empty ones included so that positions are predictable).
pub fn subbands(width: usize, height: usize, levels: u32) -> Result<Subbands, DwtError> {
    // Validates once; the iterator cannot fail afterwards.
    subband_rect(width, height, levels, 0, Orientation::LL)?;
    Ok(Subbands {
        width,
        height,
        levels,
        next: 0,
    })
}

/// Iterator returned by [`subbands`].
#[derive(Debug, Clone)]
pub struct Subbands {
    width: usize,
    height: usize,
    levels: u32,
    next: u32,
}

impl Iterator for Subbands {
    type Item = Subband;

    fn next(&mut self) -> Option<Subband> {
        let total = 1 + 3 * self.levels;
        if self.next >= total {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let (level, orientation) = if i == 0 {
            (self.levels, Orientation::LL)
        } else {
            let j = i - 1;
            (
                self.levels - 1 - j / 3,
                Orientation::DETAILS[(j % 3) as usize],
            )
        };
        let rect = subband_rect(self.width, self.height, self.levels, level, orientation).ok()?;
        Some(Subband {
            level: level as u8,
            orientation,
            rect,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (1 + 3 * self.levels - self.next) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Subbands {}
