//! PGM/PPM (Netpbm P2, P3, P5, P6) with the exact maxval kept as the bit
//! depth: maxval `m` gives `ceil(log2(m + 1))` bits and samples unscaled.

use rayon::prelude::*;

use crate::codec::Image;

/// Samples of one plane per parallel work item (decode and range check).
const CHUNK_SAMPLES: usize = 1 << 14;

/// True when `bytes` start like a PGM/PPM file.
pub(super) fn looks_like_pnm(bytes: &[u8]) -> bool {
    matches!(bytes, [b'P', b'2' | b'3' | b'5' | b'6', ..])
}

struct Tokens<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Tokens<'_> {
    /// Next whitespace-separated number, skipping `#` comments.
    fn number(&mut self) -> Result<u32, String> {
        loop {
            match self.bytes.get(self.pos) {
                Some(b'#') => {
                    while self.bytes.get(self.pos).is_some_and(|&c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                Some(c) if c.is_ascii_whitespace() => self.pos += 1,
                Some(_) => break,
                None => return Err("file ends inside the header".into()),
            }
        }
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("");
        text.parse()
            .map_err(|_| format!("expected a number at byte {start}"))
    }
}

/// A PGM/PPM header: channels, whether binary, size, maxval, and where
/// the header's tokens end.
struct Header {
    channels: usize,
    binary: bool,
    width: usize,
    height: usize,
    maxval: u32,
    end: usize,
}

fn header(bytes: &[u8]) -> Result<Header, String> {
    let (channels, binary) = match bytes.get(..2) {
        Some(b"P2") => (1, false),
        Some(b"P3") => (3, false),
        Some(b"P5") => (1, true),
        Some(b"P6") => (3, true),
        _ => return Err("unknown magic number".into()),
    };
    let mut t = Tokens { bytes, pos: 2 };
    let width = t.number()? as usize;
    let height = t.number()? as usize;
    let maxval = t.number()?;
    if width == 0 || height == 0 || width > 65535 || height > 65535 {
        return Err(format!("size {width}x{height} outside 1..=65535"));
    }
    if !(1..=65535).contains(&maxval) {
        return Err(format!("maxval {maxval} outside 1..=65535"));
    }
    Ok(Header {
        channels,
        binary,
        width,
        height,
        maxval,
        end: t.pos,
    })
}

/// A binary PGM/PPM's header and its pixel data (exactly the samples'
/// bytes).
pub(super) struct BinaryHeader<'a> {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub maxval: u32,
    pub data: &'a [u8],
}

/// The header and data of a binary (P5/P6) file; `None` for a plain one.
pub(super) fn binary_header(bytes: &[u8]) -> Option<Result<BinaryHeader<'_>, String>> {
    let h = match header(bytes) {
        Ok(h) if !h.binary => return None,
        Ok(h) => h,
        Err(e) => return Some(Err(e)),
    };
    let size = if h.maxval > 255 { 2 } else { 1 };
    let n = h.width * h.height * h.channels * size;
    // Exactly one whitespace byte separates the header from the data.
    let start = h.end + 1;
    Some(match bytes.get(start..start + n) {
        Some(data) => Ok(BinaryHeader {
            width: h.width,
            height: h.height,
            channels: h.channels,
            maxval: h.maxval,
            data,
        }),
        None => Err("pixel data truncated".into()),
    })
}

/// Decodes a PGM/PPM file.
pub(super) fn decode(bytes: &[u8]) -> Result<Image, String> {
    let Header {
        channels,
        binary,
        width,
        height,
        maxval,
        end,
    } = header(bytes)?;
    let mut t = Tokens { bytes, pos: end };
    let bit_depth = (32 - maxval.leading_zeros()) as u8;
    let n = width * height * channels;
    let planes = if binary {
        // Exactly one whitespace byte separates the header from the data.
        let start = t.pos + 1;
        let size = if maxval > 255 { 2 } else { 1 };
        let data = bytes
            .get(start..start + n * size)
            .ok_or("pixel data truncated")?;
        // Straight from the bytes into the planes: no interleaved i32 copy
        // (for a large image, that copy's fresh pages cost more than
        // reading it), on all cores: this runs before any other stage, and
        // most of its time is the planes' first touch of fresh pages.
        let pixel = channels * size;
        (0..channels)
            .map(|c| {
                let at = c * size;
                let mut plane = vec![0i32; width * height];
                plane
                    .par_chunks_mut(CHUNK_SAMPLES)
                    .zip(data.par_chunks(CHUNK_SAMPLES * pixel))
                    .for_each(|(dst, src)| {
                        let src = src.chunks_exact(pixel);
                        if size == 1 {
                            for (d, p) in dst.iter_mut().zip(src) {
                                *d = p[at] as i32;
                            }
                        } else {
                            for (d, p) in dst.iter_mut().zip(src) {
                                *d = u16::from_be_bytes([p[at], p[at + 1]]) as i32;
                            }
                        }
                    });
                plane
            })
            .collect::<Vec<Vec<i32>>>()
    } else {
        // Every sample takes at least two bytes (a digit and a separator):
        // a header cannot make this reserve more than the file backs.
        let mut samples = Vec::with_capacity(n.min(bytes.len().saturating_sub(t.pos) / 2 + 1));
        for _ in 0..n {
            samples.push(t.number()? as i32);
        }
        super::deinterleave(&samples, channels)
    };
    // A branch-free pass (it vectorizes) first; the search only to report.
    for plane in &planes {
        let largest = plane
            .par_chunks(CHUNK_SAMPLES)
            .map(|c| c.iter().fold(0u32, |m, &v| m.max(v as u32)))
            .max()
            .unwrap_or(0);
        if largest > maxval {
            let v = plane.iter().find(|&&v| v as u32 > maxval).unwrap_or(&0);
            return Err(format!("sample {v} above maxval {maxval}"));
        }
    }
    Ok(Image {
        width,
        height,
        bit_depth,
        signed: false,
        planes,
    })
}

/// Encodes a gray (P5) or RGB (P6) image with maxval `2^bit_depth - 1`.
pub(super) fn encode(image: &Image) -> Result<Vec<u8>, String> {
    let magic = match image.planes.len() {
        1 => "P5",
        3 => "P6",
        n => {
            return Err(format!(
                "PGM/PPM hold 1 or 3 components, not {n} (use .png or .tif)"
            ))
        }
    };
    if image.signed {
        return Err("signed samples cannot be written to an image file".into());
    }
    let maxval = (1u32 << image.bit_depth) - 1;
    let mut out = format!("{magic}\n{} {}\n{maxval}\n", image.width, image.height).into_bytes();
    let n = image.width * image.height;
    let bytes = if maxval > 255 { 2 } else { 1 };
    let start = out.len();
    // Sized once and written in place, pixel by pixel (a push per byte
    // was a tenth of a lossless decode's instructions).
    out.resize(start + n * image.planes.len() * bytes, 0);
    let body = &mut out[start..];
    let clamp = |v: i32| v.clamp(0, maxval as i32) as u16;
    match (&image.planes[..], bytes) {
        ([r, g, b], 1) => {
            for (((px, &r), &g), &b) in body.chunks_exact_mut(3).zip(r).zip(g).zip(b) {
                px.copy_from_slice(&[clamp(r) as u8, clamp(g) as u8, clamp(b) as u8]);
            }
        }
        ([gray], 1) => {
            for (px, &v) in body.iter_mut().zip(gray) {
                *px = clamp(v) as u8;
            }
        }
        (planes, _) => {
            let pixel = planes.len() * bytes;
            for (i, px) in body.chunks_exact_mut(pixel).enumerate() {
                for (sample, p) in px.chunks_exact_mut(bytes).zip(planes) {
                    let v = clamp(p[i]).to_be_bytes();
                    sample.copy_from_slice(&v[2 - bytes..]);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_pnm_round_trips_at_8_and_16_bits_and_checks_maxval() {
        for bit_depth in [8u8, 12, 16] {
            for channels in [1usize, 3] {
                let (width, height) = (5, 3);
                let planes: Vec<Vec<i32>> = (0..channels)
                    .map(|c| {
                        (0..width * height)
                            .map(|i| ((i * 977 + c * 31) % (1 << bit_depth)) as i32)
                            .collect()
                    })
                    .collect();
                let image = Image {
                    width,
                    height,
                    bit_depth,
                    signed: false,
                    planes,
                };
                let bytes = encode(&image).unwrap();
                let back = decode(&bytes).unwrap();
                assert_eq!(
                    back.planes, image.planes,
                    "{bit_depth} bits, {channels} channels"
                );
                assert_eq!((back.width, back.height), (width, height));
            }
        }
        // A sample above maxval (200 > 100) is an error, not a panic.
        let mut bytes = b"P6\n2 1\n100\n".to_vec();
        bytes.extend_from_slice(&[1, 2, 3, 4, 200, 6]);
        assert!(decode(&bytes).unwrap_err().contains("200 above maxval 100"));
        assert!(decode(b"P6\n2 1\n100\n\x01\x02").is_err(), "truncated");
    }
}
