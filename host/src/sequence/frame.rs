//! Frame formats: the size, chroma layout and bit depth of a video frame,
//! and the size of each of its components (subsampled chroma keeps its
//! own size: nothing is upsampled to code it).

use super::SequenceError;

/// How the chroma components are sampled against luma.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChromaLayout {
    /// Luma only.
    Mono,
    /// Chroma halved in both directions.
    C420,
    /// Chroma halved horizontally.
    C422,
    /// Chroma at full size.
    C444,
}

impl ChromaLayout {
    /// The code stored in `.wls` headers.
    pub fn code(self) -> u8 {
        match self {
            ChromaLayout::Mono => 0,
            ChromaLayout::C420 => 1,
            ChromaLayout::C422 => 2,
            ChromaLayout::C444 => 3,
        }
    }

    /// The layout of a stored code.
    pub fn from_code(c: u8) -> Option<Self> {
        [
            ChromaLayout::Mono,
            ChromaLayout::C420,
            ChromaLayout::C422,
            ChromaLayout::C444,
        ]
        .get(c as usize)
        .copied()
    }

    /// Components per frame.
    pub fn components(self) -> usize {
        match self {
            ChromaLayout::Mono => 1,
            _ => 3,
        }
    }

    /// Horizontal and vertical chroma subsampling shifts.
    pub fn shifts(self) -> (u32, u32) {
        match self {
            ChromaLayout::Mono | ChromaLayout::C444 => (0, 0),
            ChromaLayout::C422 => (1, 0),
            ChromaLayout::C420 => (1, 1),
        }
    }

    /// The name used in messages and `info` (`4:2:0`, `gray`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ChromaLayout::Mono => "gray",
            ChromaLayout::C420 => "4:2:0",
            ChromaLayout::C422 => "4:2:2",
            ChromaLayout::C444 => "4:4:4",
        }
    }
}

/// Largest frame width or height: the image codec's limit.
pub const MAX_FRAME_DIMENSION: u32 = 65_535;

/// The shape of every frame of a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FrameFormat {
    /// Luma columns.
    pub width: u32,
    /// Luma rows.
    pub height: u32,
    /// Chroma layout.
    pub layout: ChromaLayout,
    /// Bits per sample, 1..=16 (stored in one byte up to 8, else two
    /// little-endian bytes, as Y4M and raw `...le` formats do).
    pub bit_depth: u8,
}

impl FrameFormat {
    /// Checks the size against the layout (subsampled directions need an
    /// even size, as Y4M and ffmpeg's planar formats have no rule for the
    /// last odd column) and the depth.
    pub fn validate(&self) -> Result<(), SequenceError> {
        let (w, h) = (self.width, self.height);
        if !(1..=MAX_FRAME_DIMENSION).contains(&w) || !(1..=MAX_FRAME_DIMENSION).contains(&h) {
            return Err(SequenceError::Format(format!(
                "frame size {w}x{h} outside 1..=65535"
            )));
        }
        let (sx, sy) = self.layout.shifts();
        if (sx == 1 && w % 2 == 1) || (sy == 1 && h % 2 == 1) {
            return Err(SequenceError::Format(format!(
                "frame size {w}x{h} is odd where {} halves the chroma",
                self.layout.name()
            )));
        }
        if !(1..=16).contains(&self.bit_depth) {
            return Err(SequenceError::Format(format!(
                "bit depth {} outside 1..=16",
                self.bit_depth
            )));
        }
        Ok(())
    }

    /// Bytes per sample in Y4M and raw files.
    pub fn sample_bytes(&self) -> usize {
        if self.bit_depth > 8 {
            2
        } else {
            1
        }
    }

    /// `(width, height)` of component `c` (0 = luma).
    pub fn plane_size(&self, c: usize) -> (usize, usize) {
        let (w, h) = (self.width as usize, self.height as usize);
        if c == 0 {
            return (w, h);
        }
        let (sx, sy) = self.layout.shifts();
        (w >> sx, h >> sy)
    }

    /// Components per frame.
    pub fn components(&self) -> usize {
        self.layout.components()
    }

    /// Samples per frame over every component.
    pub fn samples(&self) -> u64 {
        (0..self.components())
            .map(|c| {
                let (w, h) = self.plane_size(c);
                w as u64 * h as u64
            })
            .sum()
    }

    /// Bytes of one frame's samples in Y4M and raw files.
    pub fn frame_bytes(&self) -> u64 {
        self.samples() * self.sample_bytes() as u64
    }
}

/// One frame: a row-major plane per component at its own size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The planes, luma first; `FrameFormat::plane_size` gives each size.
    pub planes: Vec<Vec<i32>>,
}

impl Frame {
    /// A frame whose sample of component `c` at `(x, y)` is `f(x, y, c)`.
    pub fn from_fn(format: &FrameFormat, f: impl Fn(usize, usize, usize) -> i32) -> Frame {
        let planes = (0..format.components())
            .map(|c| {
                let (w, h) = format.plane_size(c);
                (0..w * h).map(|i| f(i % w, i / w, c)).collect()
            })
            .collect();
        Frame { planes }
    }

    /// Reads a frame from its file layout (planes in order, one or two
    /// little-endian bytes per sample); `bytes` holds exactly
    /// [`FrameFormat::frame_bytes`]. Samples above the bit depth are an
    /// error, not silently clipped.
    pub fn from_bytes(format: &FrameFormat, bytes: &[u8]) -> Result<Frame, SequenceError> {
        debug_assert_eq!(bytes.len() as u64, format.frame_bytes());
        let sb = format.sample_bytes();
        let max = (1u32 << format.bit_depth) - 1;
        let mut planes = Vec::with_capacity(format.components());
        let mut at = 0;
        for c in 0..format.components() {
            let (w, h) = format.plane_size(c);
            let raw = &bytes[at..at + w * h * sb];
            at += w * h * sb;
            let plane: Vec<i32> = match sb {
                1 => raw.iter().map(|&b| b as i32).collect(),
                _ => raw
                    .chunks_exact(2)
                    .map(|p| u16::from_le_bytes([p[0], p[1]]) as i32)
                    .collect(),
            };
            if let Some(v) = plane.iter().find(|&&v| v as u32 > max) {
                return Err(SequenceError::Format(format!(
                    "sample {v} of component {c} exceeds {}-bit",
                    format.bit_depth
                )));
            }
            planes.push(plane);
        }
        Ok(Frame { planes })
    }

    /// Appends the frame in its file layout.
    pub fn write_bytes(&self, format: &FrameFormat, out: &mut Vec<u8>) {
        for p in &self.planes {
            match format.sample_bytes() {
                1 => out.extend(p.iter().map(|&v| v as u8)),
                _ => {
                    for &v in p {
                        out.extend_from_slice(&(v as u16).to_le_bytes());
                    }
                }
            }
        }
    }
}
