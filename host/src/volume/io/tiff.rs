//! Multi-page TIFF stacks: one grayscale page per slice, all of one size
//! and sample type (8 or 16 bits, unsigned or signed), through the `tiff`
//! crate (already in the tree through `image`).

use std::io::{Read, Seek, Write};

use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::encoder::{colortype, TiffEncoder};
use tiff::ColorType;

use crate::volume::types::{SampleType, Volume, VolumeError};

fn bad(msg: impl Into<String>) -> VolumeError {
    VolumeError::Tiff(msg.into())
}

/// Reads every page of a TIFF file as the slices of a volume, with at most
/// `max_voxels` voxels (checked page by page before each is decoded).
pub fn read(reader: impl Read + Seek, max_voxels: u64) -> Result<Volume, VolumeError> {
    let mut limits = Limits::default();
    limits.decoding_buffer_size = (max_voxels.saturating_mul(2)).min(usize::MAX as u64) as usize;
    let mut dec = Decoder::new(reader)
        .map_err(|e| bad(e.to_string()))?
        .with_limits(limits);
    let mut samples: Vec<i32> = Vec::new();
    let mut first: Option<(u32, u32, SampleType)> = None;
    let mut depth = 0usize;
    loop {
        let (w, h) = dec.dimensions().map_err(|e| bad(e.to_string()))?;
        let colour = dec.colortype().map_err(|e| bad(e.to_string()))?;
        if !matches!(colour, ColorType::Gray(8) | ColorType::Gray(16)) {
            return Err(bad(format!(
                "page {depth}: {colour:?}; a volume's pages must be 8- or 16-bit grayscale"
            )));
        }
        let total = (w as u64) * (h as u64) * (depth as u64 + 1);
        if total > max_voxels {
            return Err(bad(format!(
                "{depth} pages of {w}x{h} and more exceed the memory budget of {max_voxels} voxels"
            )));
        }
        let (t, page): (SampleType, Vec<i32>) =
            match dec.read_image().map_err(|e| bad(e.to_string()))? {
                DecodingResult::U8(v) => (SampleType::U8, v.iter().map(|&s| s as i32).collect()),
                DecodingResult::I8(v) => (SampleType::I8, v.iter().map(|&s| s as i32).collect()),
                DecodingResult::U16(v) => (SampleType::U16, v.iter().map(|&s| s as i32).collect()),
                DecodingResult::I16(v) => (SampleType::I16, v.iter().map(|&s| s as i32).collect()),
                _ => return Err(bad(format!("page {depth}: not an integer sample type"))),
            };
        if page.len() as u64 != w as u64 * h as u64 {
            return Err(bad(format!(
                "page {depth}: {} samples for {w}x{h}",
                page.len()
            )));
        }
        match first {
            None => first = Some((w, h, t)),
            Some(f) if f != (w, h, t) => {
                return Err(bad(format!(
                    "page {depth} is {w}x{h} {}, page 0 {}x{} {}: every slice must match",
                    t.name(),
                    f.0,
                    f.1,
                    f.2.name()
                )))
            }
            Some(_) => {}
        }
        samples.extend_from_slice(&page);
        depth += 1;
        if !dec.more_images() {
            break;
        }
        dec.next_image().map_err(|e| bad(e.to_string()))?;
    }
    let (w, h, t) = first.expect("at least one page was read");
    Ok(Volume {
        width: w as usize,
        height: h as usize,
        depth,
        sample: t,
        samples,
        nifti_header: None,
    })
}

/// The number of pages of a TIFF file (a volume when more than one).
pub fn pages(reader: impl Read + Seek) -> Result<usize, VolumeError> {
    let mut dec = Decoder::new(reader).map_err(|e| bad(e.to_string()))?;
    let mut n = 1;
    while dec.more_images() {
        dec.next_image().map_err(|e| bad(e.to_string()))?;
        n += 1;
    }
    Ok(n)
}

/// Writes `v` as a multi-page TIFF, one page per slice.
pub fn write(v: &Volume, out: impl Write + Seek) -> Result<(), VolumeError> {
    v.validate()?;
    let mut enc = TiffEncoder::new(out).map_err(|e| bad(e.to_string()))?;
    let (w, h) = (
        u32::try_from(v.width).map_err(|_| bad("width over 2^32"))?,
        u32::try_from(v.height).map_err(|_| bad("height over 2^32"))?,
    );
    for z in 0..v.depth {
        let s = v.slice(z);
        let r = match v.sample {
            SampleType::U8 => {
                let d: Vec<u8> = s.iter().map(|&x| x as u8).collect();
                enc.write_image::<colortype::Gray8>(w, h, &d)
            }
            SampleType::I8 => {
                let d: Vec<i8> = s.iter().map(|&x| x as i8).collect();
                enc.write_image::<colortype::GrayI8>(w, h, &d)
            }
            SampleType::U16 => {
                let d: Vec<u16> = s.iter().map(|&x| x as u16).collect();
                enc.write_image::<colortype::Gray16>(w, h, &d)
            }
            SampleType::I16 => {
                let d: Vec<i16> = s.iter().map(|&x| x as i16).collect();
                enc.write_image::<colortype::GrayI16>(w, h, &d)
            }
        };
        r.map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn stacks_round_trip_every_sample_type() {
        for t in [
            SampleType::U8,
            SampleType::I8,
            SampleType::U16,
            SampleType::I16,
        ] {
            let (lo, hi) = t.range();
            let v = Volume::from_fn(7, 5, 4, t, |x, y, z| {
                [lo, hi, 0, -1, 1][(x * 3 + y + z) % 5] + (x as i32) * 2
            });
            let mut bytes = Cursor::new(Vec::new());
            write(&v, &mut bytes).unwrap();
            let bytes = bytes.into_inner();
            assert_eq!(pages(Cursor::new(&bytes)).unwrap(), 4);
            assert_eq!(read(Cursor::new(&bytes), 1 << 20).unwrap(), v, "{t:?}");
            assert!(read(Cursor::new(&bytes), 100).is_err());
        }
    }
}
