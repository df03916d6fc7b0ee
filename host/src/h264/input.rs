//! Input pictures: PNG, PGM and PPM through the `image` crate, and YUV4MPEG2
//! (y4m) 4:2:0 or mono sequences. Colour and gray images are converted to
//! BT.601 limited-range Y'CbCr (a gray value `v` is the colour `(v, v, v)`:
//! luma `16..=235`, neutral chroma 128), because the stream signals no
//! full-range flag and decoders expand limited-range luma to the display's
//! full range. y4m frames already hold Y'CbCr and are taken as they are.
//! Odd sizes are padded to even by edge replication.

use std::path::Path;

use super::picture::{Picture, Plane};
use super::H264Error;

/// Frames read from a file, all of one even size.
#[derive(Debug, Clone)]
pub struct Input {
    /// The frames.
    pub frames: Vec<Picture>,
    /// True when the source had no colour (chroma is neutral).
    pub gray: bool,
}

/// Reads `path`: `.y4m` as a sequence, anything else as one image.
pub fn read_input(path: &Path) -> Result<Input, H264Error> {
    let is_y4m = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("y4m"));
    if is_y4m {
        parse_y4m(&std::fs::read(path)?)
    } else {
        from_image(&image::open(path)?)
    }
}

/// Converts a decoded image (gray or colour) to one 4:2:0 frame.
pub fn from_image(img: &image::DynamicImage) -> Result<Input, H264Error> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w == 0 || h == 0 {
        return Err(H264Error::NoFrames);
    }
    let gray = !img.color().has_color();
    let pic = if gray {
        let l = img.to_luma8();
        let y = Plane {
            width: w,
            height: h,
            data: l
                .into_raw()
                .into_iter()
                .map(|v| luma_601(v, v, v))
                .collect(),
        };
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        Picture {
            y,
            cb: Plane::filled(cw, ch, 128),
            cr: Plane::filled(cw, ch, 128),
        }
    } else {
        rgb_to_420(&img.to_rgb8().into_raw(), w, h)
    };
    Ok(Input {
        frames: vec![pad_even(pic)],
        gray,
    })
}

/// BT.601 limited-range luma of one pixel (16..=235).
fn luma_601(r: u8, g: u8, b: u8) -> u8 {
    let (r, g, b) = (r as i32, g as i32, b as i32);
    (((66 * r + 129 * g + 25 * b + 128) >> 8) + 16) as u8
}

/// BT.601 limited range: Y from each pixel, Cb/Cr from the mean of each 2x2 quad.
fn rgb_to_420(rgb: &[u8], w: usize, h: usize) -> Picture {
    let px = |x: usize, y: usize| {
        let o = (y.min(h - 1) * w + x.min(w - 1)) * 3;
        (rgb[o] as i32, rgb[o + 1] as i32, rgb[o + 2] as i32)
    };
    let mut y = Plane::filled(w, h, 0);
    for j in 0..h {
        for i in 0..w {
            let (r, g, b) = px(i, j);
            y.data[j * w + i] = luma_601(r as u8, g as u8, b as u8);
        }
    }
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let mut cb = Plane::filled(cw, ch, 0);
    let mut cr = Plane::filled(cw, ch, 0);
    for j in 0..ch {
        for i in 0..cw {
            let (mut r, mut g, mut b) = (0, 0, 0);
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let p = px(2 * i + dx, 2 * j + dy);
                (r, g, b) = (r + p.0, g + p.1, b + p.2);
            }
            let (r, g, b) = ((r + 2) >> 2, (g + 2) >> 2, (b + 2) >> 2);
            cb.data[j * cw + i] = (((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128) as u8;
            cr.data[j * cw + i] = (((112 * r - 94 * g - 18 * b + 128) >> 8) + 128) as u8;
        }
    }
    Picture { y, cb, cr }
}

/// Pads a picture with odd width or height to even by edge replication.
pub fn pad_even(p: Picture) -> Picture {
    let (w, h) = (p.width(), p.height());
    if w % 2 == 0 && h % 2 == 0 {
        return p;
    }
    p.padded(w + w % 2, h + h % 2)
}

/// Parses a YUV4MPEG2 stream with 4:2:0 (any siting) or mono frames.
pub fn parse_y4m(data: &[u8]) -> Result<Input, H264Error> {
    let bad = |m: &str| H264Error::Y4m(m.to_string());
    let nl = data
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad("no header line"))?;
    let header = std::str::from_utf8(&data[..nl]).map_err(|_| bad("header is not text"))?;
    let mut fields = header.split(' ');
    if fields.next() != Some("YUV4MPEG2") {
        return Err(bad("missing YUV4MPEG2 signature"));
    }
    let (mut w, mut h, mut gray) = (0usize, 0usize, false);
    for f in fields {
        let (tag, val) = f.split_at(f.len().min(1));
        match tag {
            "W" => w = val.parse().map_err(|_| bad("bad width"))?,
            "H" => h = val.parse().map_err(|_| bad("bad height"))?,
            "C" => {
                gray = match val {
                    "mono" => true,
                    "420" | "420jpeg" | "420paldv" | "420mpeg2" => false,
                    other => {
                        return Err(H264Error::Y4m(format!(
                            "unsupported colour space C{other} (need 4:2:0 or mono)"
                        )))
                    }
                }
            }
            _ => {}
        }
    }
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(bad("width and height must be 1..=16384"));
    }
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let frame_len = if gray { w * h } else { w * h + 2 * cw * ch };
    let mut pos = nl + 1;
    let mut frames = Vec::new();
    while pos < data.len() {
        let end = data[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| bad("truncated FRAME header"))?;
        if !data[pos..pos + end].starts_with(b"FRAME") {
            return Err(bad("expected FRAME"));
        }
        pos += end + 1;
        let body = data
            .get(pos..pos + frame_len)
            .ok_or_else(|| bad("truncated frame"))?;
        pos += frame_len;
        let plane = |off: usize, pw: usize, ph: usize| Plane {
            width: pw,
            height: ph,
            data: body[off..off + pw * ph].to_vec(),
        };
        let pic = if gray {
            Picture {
                y: plane(0, w, h),
                cb: Plane::filled(cw, ch, 128),
                cr: Plane::filled(cw, ch, 128),
            }
        } else {
            Picture {
                y: plane(0, w, h),
                cb: plane(w * h, cw, ch),
                cr: plane(w * h + cw * ch, cw, ch),
            }
        };
        frames.push(pad_even(pic));
    }
    if frames.is_empty() {
        return Err(H264Error::NoFrames);
    }
    Ok(Input { frames, gray })
}

/// Writes frames as a 4:2:0 y4m stream (used by tests and tools).
pub fn write_y4m(frames: &[Picture]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(f) = frames.first() {
        out.extend_from_slice(
            format!(
                "YUV4MPEG2 W{} H{} F25:1 Ip A1:1 C420jpeg\n",
                f.width(),
                f.height()
            )
            .as_bytes(),
        );
    }
    for f in frames {
        out.extend_from_slice(b"FRAME\n");
        f.write_i420(&mut out);
    }
    out
}
