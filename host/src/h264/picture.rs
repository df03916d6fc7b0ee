//! 8-bit 4:2:0 pictures: the encoder's source and reconstruction.

/// One plane of 8-bit samples, `width` x `height`, row-major with no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plane {
    /// Width in samples.
    pub width: usize,
    /// Height in samples.
    pub height: usize,
    /// `width * height` samples.
    pub data: Vec<u8>,
}

impl Plane {
    /// A plane filled with `value`.
    pub fn filled(width: usize, height: usize, value: u8) -> Plane {
        Plane {
            width,
            height,
            data: vec![value; width * height],
        }
    }

    /// Sample at (x, y).
    #[inline]
    pub fn at(&self, x: usize, y: usize) -> u8 {
        self.data[y * self.width + x]
    }

    /// Copies `w` x `h` samples at (x, y) into `out` (row-major, `w` wide).
    pub fn read_block(&self, x: usize, y: usize, w: usize, h: usize, out: &mut [u8]) {
        for r in 0..h {
            let s = (y + r) * self.width + x;
            out[r * w..r * w + w].copy_from_slice(&self.data[s..s + w]);
        }
    }

    /// Writes a `w` x `h` block at (x, y).
    pub fn write_block(&mut self, x: usize, y: usize, w: usize, h: usize, src: &[u8]) {
        for r in 0..h {
            let d = (y + r) * self.width + x;
            self.data[d..d + w].copy_from_slice(&src[r * w..r * w + w]);
        }
    }

    /// A copy grown to `width` x `height` by repeating the last column and row.
    pub fn padded(&self, width: usize, height: usize) -> Plane {
        let mut out = Plane::filled(width, height, 0);
        for y in 0..height {
            let sy = y.min(self.height - 1);
            for x in 0..width {
                out.data[y * width + x] = self.at(x.min(self.width - 1), sy);
            }
        }
        out
    }

    /// The top-left `width` x `height` part.
    pub fn cropped(&self, width: usize, height: usize) -> Plane {
        let mut out = Plane::filled(width, height, 0);
        self.read_block(0, 0, width, height, &mut out.data);
        out
    }
}

/// A 4:2:0 picture: luma and two chroma planes of half size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// Luma.
    pub y: Plane,
    /// Cb, `(width + 1) / 2` x `(height + 1) / 2`.
    pub cb: Plane,
    /// Cr, same size as Cb.
    pub cr: Plane,
}

impl Picture {
    /// Luma width.
    pub fn width(&self) -> usize {
        self.y.width
    }

    /// Luma height.
    pub fn height(&self) -> usize {
        self.y.height
    }

    /// The picture grown by edge replication to `width` x `height` (both even).
    pub fn padded(&self, width: usize, height: usize) -> Picture {
        Picture {
            y: self.y.padded(width, height),
            cb: self.cb.padded(width / 2, height / 2),
            cr: self.cr.padded(width / 2, height / 2),
        }
    }

    /// The top-left `width` x `height` part (both even).
    pub fn cropped(&self, width: usize, height: usize) -> Picture {
        Picture {
            y: self.y.cropped(width, height),
            cb: self.cb.cropped(width / 2, height / 2),
            cr: self.cr.cropped(width / 2, height / 2),
        }
    }

    /// Appends the picture as raw I420 (Y, then Cb, then Cr).
    pub fn write_i420(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.y.data);
        out.extend_from_slice(&self.cb.data);
        out.extend_from_slice(&self.cr.data);
    }
}
