//! PGM/PPM (Netpbm P2, P3, P5, P6) with the exact maxval kept as the bit
//! depth: maxval `m` gives `ceil(log2(m + 1))` bits and samples unscaled.

use crate::codec::Image;

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

/// Decodes a PGM/PPM file.
pub(super) fn decode(bytes: &[u8]) -> Result<Image, String> {
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
    let bit_depth = (32 - maxval.leading_zeros()) as u8;
    let n = width * height * channels;
    let mut samples = Vec::with_capacity(n);
    if binary {
        // Exactly one whitespace byte separates the header from the data.
        let start = t.pos + 1;
        let size = if maxval > 255 { 2 } else { 1 };
        let data = bytes
            .get(start..start + n * size)
            .ok_or("pixel data truncated")?;
        if size == 1 {
            samples.extend(data.iter().map(|&v| v as i32));
        } else {
            samples.extend(
                data.chunks_exact(2)
                    .map(|p| u16::from_be_bytes([p[0], p[1]]) as i32),
            );
        }
    } else {
        for _ in 0..n {
            samples.push(t.number()? as i32);
        }
    }
    // A branch-free pass (it vectorizes) first; the search only to report.
    let largest = samples.iter().fold(0u32, |m, &v| m.max(v as u32));
    if largest > maxval {
        let v = samples.iter().find(|&&v| v as u32 > maxval).unwrap_or(&0);
        return Err(format!("sample {v} above maxval {maxval}"));
    }
    Ok(Image {
        width,
        height,
        bit_depth,
        signed: false,
        planes: super::deinterleave(&samples, channels),
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
    for i in 0..n {
        for p in &image.planes {
            let v = p[i].clamp(0, maxval as i32) as u16;
            if maxval > 255 {
                out.extend_from_slice(&v.to_be_bytes());
            } else {
                out.push(v as u8);
            }
        }
    }
    Ok(out)
}
