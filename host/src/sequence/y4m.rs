//! YUV4MPEG2 (`.y4m`) streams, read and written one frame at a time:
//! the stream header (size, frame rate, interlacing, pixel aspect, colour
//! space tag, `X` extensions), then `FRAME` lines each followed by the
//! frame's planes. Every colour space tag of 4:4:4, 4:2:2, 4:2:0 (all
//! three sitings) and gray is read, 8-bit and the high-depth forms
//! (`C420p10`, `Cmono12`, ...: two little-endian bytes per sample).

use std::io::{BufRead, Read, Write};

use super::frame::{ChromaLayout, Frame, FrameFormat};
use super::SequenceError;

/// Longest stream header line accepted (real ones are under 100 bytes).
const MAX_HEADER_LINE: usize = 4096;
/// Longest `FRAME` line accepted (frame parameters are rare and short).
const MAX_FRAME_LINE: usize = 1024;

/// The stream parameters besides the frame format, kept so that decoding
/// writes the same stream header back.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct VideoParams {
    /// `F`: frames per second as a fraction (`None`: not given).
    pub frame_rate: Option<(u32, u32)>,
    /// `A`: pixel aspect ratio (`None`: not given).
    pub aspect: Option<(u32, u32)>,
    /// `I`: interlacing (`p`, `t`, `b`, `m`; `None`: not given).
    pub interlace: Option<u8>,
    /// `C`: the colour space tag as written (`420jpeg`, `422p10`, ...;
    /// `None`: not given, which Y4M reads as 8-bit `420jpeg`).
    pub colour_tag: Option<String>,
    /// The other parameters (`X...` extensions), in order.
    pub extra: Vec<String>,
}

impl VideoParams {
    /// Frames per second, where the stream says.
    pub fn fps(&self) -> Option<f64> {
        match self.frame_rate {
            Some((n, d)) if n > 0 && d > 0 => Some(n as f64 / d as f64),
            _ => None,
        }
    }

    /// Whether an `XCOLORRANGE=FULL` extension marks full-range samples
    /// (Y4M's default, and ffmpeg's, is limited range).
    pub fn full_range(&self) -> bool {
        self.extra
            .iter()
            .any(|x| x.eq_ignore_ascii_case("XCOLORRANGE=FULL"))
    }
}

/// Layout and bit depth of a colour space tag (the text after `C`).
pub fn parse_colour_tag(tag: &str) -> Option<(ChromaLayout, u8)> {
    let bases = [
        ("mono", ChromaLayout::Mono),
        ("420jpeg", ChromaLayout::C420),
        ("420paldv", ChromaLayout::C420),
        ("420mpeg2", ChromaLayout::C420),
        ("420", ChromaLayout::C420),
        ("422", ChromaLayout::C422),
        ("444", ChromaLayout::C444),
    ];
    let (base, layout) = bases.iter().find(|(b, _)| tag.starts_with(b))?;
    let rest = &tag[base.len()..];
    if rest.is_empty() {
        return Some((*layout, 8));
    }
    // Gray depths are `mono10`; colour ones `420p10` (ffmpeg's names).
    let digits = match layout {
        ChromaLayout::Mono => rest,
        _ => rest.strip_prefix('p')?,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 2 {
        return None;
    }
    let depth: u8 = digits.parse().ok()?;
    (9..=16).contains(&depth).then_some((*layout, depth))
}

/// The usual tag of a format (`420jpeg`, `422p10`, `mono12`, ...).
pub fn canonical_tag(layout: ChromaLayout, bit_depth: u8) -> String {
    let base = match layout {
        ChromaLayout::Mono => "mono",
        ChromaLayout::C420 => "420jpeg",
        ChromaLayout::C422 => "422",
        ChromaLayout::C444 => "444",
    };
    match (layout, bit_depth) {
        (_, 8) => base.to_string(),
        (ChromaLayout::Mono, d) => format!("mono{d}"),
        (ChromaLayout::C420, d) => format!("420p{d}"),
        (_, d) => format!("{base}p{d}"),
    }
}

/// Reads one `\n`-ended line of at most `max` bytes; `None` at a clean end
/// of the stream. A line cut by the end is an error naming `what`.
fn read_line(
    r: &mut impl BufRead,
    max: usize,
    what: &str,
) -> Result<Option<Vec<u8>>, SequenceError> {
    let mut line = Vec::new();
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            if line.is_empty() {
                return Ok(None);
            }
            return Err(SequenceError::Y4m(format!(
                "{what} cut by the end of the file"
            )));
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max + 1 {
            return Err(SequenceError::Y4m(format!(
                "{what} longer than {max} bytes"
            )));
        }
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if done {
            line.pop();
            return Ok(Some(line));
        }
    }
}

/// Parses `N:D` with both parts decimal u32.
fn ratio(v: &str) -> Option<(u32, u32)> {
    let (n, d) = v.split_once(':')?;
    Some((n.parse().ok()?, d.parse().ok()?))
}

/// Parses a stream header line (without its newline).
pub fn parse_header(line: &[u8]) -> Result<(FrameFormat, VideoParams), SequenceError> {
    let bad = |m: String| SequenceError::Y4m(m);
    let text = std::str::from_utf8(line).map_err(|_| bad("header is not text".into()))?;
    let mut fields = text.split(' ').filter(|f| !f.is_empty());
    if fields.next() != Some("YUV4MPEG2") {
        return Err(bad("missing YUV4MPEG2 signature".into()));
    }
    let (mut w, mut h) = (None, None);
    let mut params = VideoParams::default();
    for f in fields {
        let (tag, val) = f.split_at(1);
        let num = |v: &str| -> Result<u32, SequenceError> {
            v.parse().map_err(|_| bad(format!("bad {tag}{v}")))
        };
        match tag {
            "W" => w = Some(num(val)?),
            "H" => h = Some(num(val)?),
            "F" => {
                let r = ratio(val).ok_or_else(|| bad(format!("bad frame rate F{val}")))?;
                params.frame_rate = Some(r);
            }
            "A" => {
                let r = ratio(val).ok_or_else(|| bad(format!("bad aspect A{val}")))?;
                params.aspect = Some(r);
            }
            "I" => {
                let &[b] = val.as_bytes() else {
                    return Err(bad(format!("bad interlacing I{val}")));
                };
                if !b"ptbm?".contains(&b) {
                    return Err(bad(format!("bad interlacing I{val}")));
                }
                params.interlace = Some(b);
            }
            "C" => params.colour_tag = Some(val.to_string()),
            "X" => params.extra.push(f.to_string()),
            _ => return Err(bad(format!("unknown header parameter {f}"))),
        }
    }
    let (Some(width), Some(height)) = (w, h) else {
        return Err(bad("header lacks W or H".into()));
    };
    let (layout, bit_depth) = match &params.colour_tag {
        None => (ChromaLayout::C420, 8),
        Some(t) => parse_colour_tag(t).ok_or_else(|| {
            bad(format!(
                "unsupported colour space C{t} (4:4:4, 4:2:2, 4:2:0 or mono, 8 to 16 bit)"
            ))
        })?,
    };
    let format = FrameFormat {
        width,
        height,
        layout,
        bit_depth,
    };
    format.validate()?;
    Ok((format, params))
}

/// The stream header line (with its newline) for a format and parameters.
pub fn header_line(format: &FrameFormat, params: &VideoParams) -> String {
    let mut s = format!("YUV4MPEG2 W{} H{}", format.width, format.height);
    if let Some((n, d)) = params.frame_rate {
        s += &format!(" F{n}:{d}");
    }
    if let Some(i) = params.interlace {
        s += &format!(" I{}", i as char);
    }
    if let Some((n, d)) = params.aspect {
        s += &format!(" A{n}:{d}");
    }
    let tag = params
        .colour_tag
        .clone()
        .unwrap_or_else(|| canonical_tag(format.layout, format.bit_depth));
    s += &format!(" C{tag}");
    for x in &params.extra {
        s += " ";
        s += x;
    }
    s.push('\n');
    s
}

/// A Y4M stream read frame by frame: only one frame is in memory.
#[derive(Debug)]
pub struct Y4mReader<R> {
    reader: R,
    /// The frame format.
    pub format: FrameFormat,
    /// The stream parameters.
    pub params: VideoParams,
    /// Bytes of the header line (with its newline).
    pub header_bytes: u64,
    frames_read: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Y4mReader<R> {
    /// Reads and checks the stream header.
    pub fn new(mut reader: R) -> Result<Self, SequenceError> {
        let line = read_line(&mut reader, MAX_HEADER_LINE, "stream header")?
            .ok_or_else(|| SequenceError::Y4m("empty file".into()))?;
        let (format, params) = parse_header(&line)?;
        check_input_size(&format)?;
        Ok(Y4mReader {
            reader,
            format,
            params,
            header_bytes: line.len() as u64 + 1,
            frames_read: 0,
            buf: Vec::new(),
        })
    }

    /// The next frame, `None` at the end of the stream. A stream that ends
    /// inside a frame is [`SequenceError::TruncatedFrame`].
    pub fn next_frame(&mut self) -> Result<Option<Frame>, SequenceError> {
        let Some(line) = read_line(&mut self.reader, MAX_FRAME_LINE, "FRAME line")? else {
            return Ok(None);
        };
        if line != b"FRAME" && !line.starts_with(b"FRAME ") {
            return Err(SequenceError::Y4m(format!(
                "frame {}: expected a FRAME line",
                self.frames_read
            )));
        }
        let need = self.format.frame_bytes() as usize;
        let have = read_up_to(&mut self.reader, need, &mut self.buf)?;
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

    /// Bytes one frame takes in the stream with a bare `FRAME` line, to
    /// estimate a frame count from a file size.
    pub fn frame_stride(&self) -> u64 {
        self.format.frame_bytes() + 6
    }
}

/// Reads up to `need` bytes into `buf` (cleared first); the bytes read.
/// The buffer grows with the bytes that arrive, so a header that promises
/// a huge frame costs memory only for the bytes a file really holds.
pub(crate) fn read_up_to(
    r: &mut impl Read,
    need: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    buf.clear();
    r.take(need as u64).read_to_end(buf)
}

/// Refuses frames larger than the image codec's memory budget
/// ([`crate::codec::format::DEFAULT_MAX_SAMPLES`]), before any is read.
pub(crate) fn check_input_size(format: &FrameFormat) -> Result<(), SequenceError> {
    let limit = crate::codec::format::DEFAULT_MAX_SAMPLES;
    match format.samples() {
        s if s > limit => Err(SequenceError::TooLarge {
            what: "frame samples",
            value: s,
            limit,
        }),
        _ => Ok(()),
    }
}

/// Writes a Y4M stream frame by frame.
#[derive(Debug)]
pub struct Y4mWriter<W> {
    writer: W,
    format: FrameFormat,
    buf: Vec<u8>,
}

impl<W: Write> Y4mWriter<W> {
    /// Writes the stream header.
    pub fn new(mut writer: W, format: FrameFormat, params: &VideoParams) -> std::io::Result<Self> {
        writer.write_all(header_line(&format, params).as_bytes())?;
        Ok(Y4mWriter {
            writer,
            format,
            buf: Vec::new(),
        })
    }

    /// Writes one frame.
    pub fn write_frame(&mut self, frame: &Frame) -> std::io::Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(b"FRAME\n");
        frame.write_bytes(&self.format, &mut self.buf);
        self.writer.write_all(&self.buf)
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.writer
    }
}
