//! The `.wls` sequence header (docs/format.md "Sequence files"): the frame
//! format, the Y4M stream parameters and the coding target, with a CRC-32.

use super::frame::{ChromaLayout, FrameFormat};
use super::y4m::{parse_colour_tag, VideoParams};
use super::SequenceError;
use crate::codec::{EncodeOptions, RateTarget};

/// The first 8 bytes of a `.wls` file (the image magic's pattern: a
/// non-ASCII byte, the name, CR LF).
pub const SEQUENCE_MAGIC: [u8; 8] = *b"\x89WLSEQ\r\n";
/// The container version this crate writes and reads.
pub const SEQUENCE_VERSION: u16 = 1;
/// Bytes of the header with an empty tag and no extensions.
pub const MIN_HEADER_BYTES: usize = 58;
/// Longest colour space tag and extension text.
const MAX_TAG: usize = 32;
const MAX_EXTRA: usize = 1024;

/// What a `.wls` file says about all its frames.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SequenceHeader {
    /// Size, layout and depth of every frame.
    pub format: FrameFormat,
    /// Frame rate, aspect, interlacing, colour tag and extensions of the
    /// source stream (written back by a Y4M decode).
    pub params: VideoParams,
    /// The coding target the encoder was given (informative: every
    /// codestream describes itself).
    pub target: RateTarget,
}

fn target_code(t: RateTarget) -> (u8, f64) {
    match t {
        RateTarget::Lossless => (0, 0.0),
        RateTarget::Bpp(b) => (1, b),
        RateTarget::Psnr(p) => (2, p),
        RateTarget::AllPasses => (3, 0.0),
    }
}

impl SequenceHeader {
    /// A header for frames of `format` coded with `options`.
    pub fn new(format: FrameFormat, params: VideoParams, options: &EncodeOptions) -> Self {
        SequenceHeader {
            format,
            params,
            target: options.target,
        }
    }

    /// Checks every field against the limits; the colour tag, where there
    /// is one, must name the header's layout and depth.
    pub fn validate(&self) -> Result<(), SequenceError> {
        self.format.validate()?;
        if let Some(tag) = &self.params.colour_tag {
            let ok = tag.len() <= MAX_TAG
                && parse_colour_tag(tag) == Some((self.format.layout, self.format.bit_depth));
            if !ok {
                return Err(SequenceError::BadField {
                    field: "colour tag",
                    value: tag.len() as u64,
                    rule: "a Y4M colour space tag of the frame layout and depth",
                });
            }
        }
        let extra = self.params.extra.join(" ");
        let printable = extra
            .bytes()
            .all(|b| (0x21..0x7f).contains(&b) || b == b' ');
        let tokens_ok = self
            .params
            .extra
            .iter()
            .all(|x| x.starts_with('X') && !x.contains(' '));
        if extra.len() > MAX_EXTRA || !printable || !tokens_ok {
            return Err(SequenceError::BadField {
                field: "extensions",
                value: extra.len() as u64,
                rule: "at most 1024 bytes of printable ASCII X... tokens",
            });
        }
        if let Some(i) = self.params.interlace {
            if !b"ptbm?".contains(&i) {
                return Err(SequenceError::BadField {
                    field: "interlacing",
                    value: i as u64,
                    rule: "0 or one of p t b m ?",
                });
            }
        }
        Ok(())
    }

    /// The header bytes, through its CRC.
    pub fn to_bytes(&self) -> Result<Vec<u8>, SequenceError> {
        self.validate()?;
        let tag = self.params.colour_tag.as_deref().unwrap_or("");
        let extra = self.params.extra.join(" ");
        let len = MIN_HEADER_BYTES + tag.len() + extra.len();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&SEQUENCE_MAGIC);
        out.extend_from_slice(&SEQUENCE_VERSION.to_le_bytes());
        out.extend_from_slice(&(len as u32).to_le_bytes());
        let f = &self.format;
        out.extend_from_slice(&f.width.to_le_bytes());
        out.extend_from_slice(&f.height.to_le_bytes());
        out.push(f.layout.code());
        out.push(f.bit_depth);
        let flags =
            self.params.frame_rate.is_some() as u8 | (self.params.aspect.is_some() as u8) << 1;
        out.push(flags);
        for r in [self.params.frame_rate, self.params.aspect] {
            let (n, d) = r.unwrap_or((0, 0));
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.push(self.params.interlace.unwrap_or(0));
        let (kind, value) = target_code(self.target);
        out.push(kind);
        out.extend_from_slice(&value.to_le_bytes());
        out.push(tag.len() as u8);
        out.extend_from_slice(tag.as_bytes());
        out.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        out.extend_from_slice(extra.as_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(out.len(), len);
        Ok(out)
    }

    /// The header length a file's first 14 bytes announce (`None` when
    /// they are not a sequence header's).
    pub fn announced_len(first: &[u8]) -> Option<usize> {
        if first.len() < 14 || first[..8] != SEQUENCE_MAGIC {
            return None;
        }
        Some(u32::from_le_bytes(first[10..14].try_into().ok()?) as usize)
    }

    /// Parses and validates a whole header (`bytes` holds exactly it).
    pub fn parse(bytes: &[u8]) -> Result<Self, SequenceError> {
        if bytes.len() < 8 || bytes[..8] != SEQUENCE_MAGIC {
            return Err(SequenceError::BadMagic);
        }
        if bytes.len() < MIN_HEADER_BYTES {
            return Err(SequenceError::Truncated {
                what: "sequence header",
                needed: MIN_HEADER_BYTES as u64,
                available: bytes.len() as u64,
            });
        }
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != SEQUENCE_VERSION {
            return Err(SequenceError::BadField {
                field: "version",
                value: version as u64,
                rule: "1",
            });
        }
        let n = bytes.len();
        let stored = u32::from_le_bytes(bytes[n - 4..].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&bytes[..n - 4]);
        if stored != computed {
            return Err(SequenceError::HeaderCrc { stored, computed });
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let layout = ChromaLayout::from_code(bytes[22]).ok_or(SequenceError::BadField {
            field: "layout",
            value: bytes[22] as u64,
            rule: "0 (gray), 1 (4:2:0), 2 (4:2:2) or 3 (4:4:4)",
        })?;
        let format = FrameFormat {
            width: u32_at(14),
            height: u32_at(18),
            layout,
            bit_depth: bytes[23],
        };
        let flags = bytes[24];
        if flags > 3 {
            return Err(SequenceError::BadField {
                field: "flags",
                value: flags as u64,
                rule: "bit 0 frame rate, bit 1 aspect; no others",
            });
        }
        let ratio = |i: usize, bit: u8| -> Result<_, SequenceError> {
            let r = (u32_at(i), u32_at(i + 4));
            match flags >> bit & 1 {
                1 => Ok(Some(r)),
                _ if r == (0, 0) => Ok(None),
                _ => Err(SequenceError::BadField {
                    field: "frame rate or aspect",
                    value: r.0 as u64,
                    rule: "0:0 where the flags say absent",
                }),
            }
        };
        let interlace = match bytes[41] {
            0 => None,
            b => Some(b),
        };
        let value = f64::from_le_bytes(bytes[43..51].try_into().expect("8 bytes"));
        let finite = |v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(SequenceError::BadField {
                    field: "target value",
                    value: v.to_bits(),
                    rule: "a positive finite number for --bpp and --psnr",
                })
            }
        };
        let no_value = |t: RateTarget| match value.to_bits() {
            0 => Ok(t),
            b => Err(SequenceError::BadField {
                field: "target value",
                value: b,
                rule: "0 for lossless and all-passes targets",
            }),
        };
        let target = match bytes[42] {
            0 => no_value(RateTarget::Lossless)?,
            1 => RateTarget::Bpp(finite(value)?),
            2 => RateTarget::Psnr(finite(value)?),
            3 => no_value(RateTarget::AllPasses)?,
            k => {
                return Err(SequenceError::BadField {
                    field: "target",
                    value: k as u64,
                    rule: "0..=3",
                })
            }
        };
        let tag_len = bytes[51] as usize;
        let bad_len = SequenceError::BadField {
            field: "header length",
            value: n as u64,
            rule: "must end right after the extensions and the header CRC",
        };
        let extra_at = 52 + tag_len;
        if extra_at + 2 + 4 > n {
            return Err(bad_len);
        }
        let extra_len = u16::from_le_bytes([bytes[extra_at], bytes[extra_at + 1]]) as usize;
        if extra_at + 2 + extra_len + 4 != n {
            return Err(bad_len);
        }
        let text = |b: &[u8], field| {
            String::from_utf8(b.to_vec()).map_err(|_| SequenceError::BadField {
                field,
                value: b.len() as u64,
                rule: "ASCII text",
            })
        };
        let colour_tag = match tag_len {
            0 => None,
            _ => Some(text(&bytes[52..extra_at], "colour tag")?),
        };
        let extra_text = text(&bytes[extra_at + 2..n - 4], "extensions")?;
        let extra = match extra_text.is_empty() {
            true => Vec::new(),
            false => extra_text.split(' ').map(str::to_string).collect(),
        };
        let header = SequenceHeader {
            format,
            params: VideoParams {
                frame_rate: ratio(25, 0)?,
                aspect: ratio(33, 1)?,
                interlace,
                colour_tag,
                extra,
            },
            target,
        };
        header.validate()?;
        Ok(header)
    }
}
