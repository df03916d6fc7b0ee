//! Raw planar video: frames back to back with no header, planes in order
//! (Y, then Cb and Cr at their subsampled size), one byte per sample up
//! to 8 bits, else two little-endian bytes (ffmpeg's `rawvideo` with
//! `yuv420p`, `yuv422p10le`, `gray12le`, ...).

use std::io::{Read, Write};

use super::frame::{ChromaLayout, Frame, FrameFormat};
use super::y4m::{check_input_size, read_up_to};
use super::SequenceError;

/// The layout and bit depth of an ffmpeg pixel format name: `gray`,
/// `grayNle`, `yuv420p`, `yuv422p`, `yuv444p` and their `pNle` forms
/// (`N` 9, 10, 12, 14 or 16).
pub fn parse_pix_fmt(name: &str) -> Option<(ChromaLayout, u8)> {
    let (layout, rest) = if let Some(r) = name.strip_prefix("gray") {
        (ChromaLayout::Mono, r)
    } else if let Some(r) = name.strip_prefix("yuv420p") {
        (ChromaLayout::C420, r)
    } else if let Some(r) = name.strip_prefix("yuv422p") {
        (ChromaLayout::C422, r)
    } else if let Some(r) = name.strip_prefix("yuv444p") {
        (ChromaLayout::C444, r)
    } else {
        return None;
    };
    if rest.is_empty() {
        return Some((layout, 8));
    }
    let depth: u8 = rest.strip_suffix("le")?.parse().ok()?;
    [9, 10, 12, 14, 16]
        .contains(&depth)
        .then_some((layout, depth))
}

/// The ffmpeg pixel format name of a layout and depth.
pub fn pix_fmt_name(layout: ChromaLayout, bit_depth: u8) -> String {
    let base = match layout {
        ChromaLayout::Mono => "gray",
        ChromaLayout::C420 => "yuv420p",
        ChromaLayout::C422 => "yuv422p",
        ChromaLayout::C444 => "yuv444p",
    };
    match bit_depth {
        8 => base.to_string(),
        d => format!("{base}{d}le"),
    }
}

/// Parses `WxH`.
pub fn parse_video_size(s: &str) -> Option<(u32, u32)> {
    let (w, h) = s.split_once(['x', 'X'])?;
    Some((w.parse().ok()?, h.parse().ok()?))
}

/// A raw planar stream read frame by frame.
#[derive(Debug)]
pub struct RawReader<R> {
    reader: R,
    /// The frame format.
    pub format: FrameFormat,
    frames_read: u64,
    buf: Vec<u8>,
}

impl<R: Read> RawReader<R> {
    /// A reader of frames of `format` (validated here).
    pub fn new(reader: R, format: FrameFormat) -> Result<Self, SequenceError> {
        format.validate()?;
        check_input_size(&format)?;
        Ok(RawReader {
            reader,
            format,
            frames_read: 0,
            buf: Vec::new(),
        })
    }

    /// The next frame, `None` at the end; a partial last frame is
    /// [`SequenceError::TruncatedFrame`].
    pub fn next_frame(&mut self) -> Result<Option<Frame>, SequenceError> {
        let need = self.format.frame_bytes() as usize;
        let have = read_up_to(&mut self.reader, need, &mut self.buf)?;
        if have == 0 {
            return Ok(None);
        }
        if have < need {
            return Err(SequenceError::TruncatedFrame {
                frame: self.frames_read,
                have: have as u64,
                need: need as u64,
            });
        }
        self.frames_read += 1;
        Frame::from_bytes(&self.format, &self.buf).map(Some)
    }
}

/// Writes one frame in the raw layout.
pub fn write_raw_frame(
    w: &mut impl Write,
    format: &FrameFormat,
    frame: &Frame,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(format.frame_bytes() as usize);
    frame.write_bytes(format, &mut buf);
    w.write_all(&buf)
}
