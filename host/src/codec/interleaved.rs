//! An image whose samples lie pixel by pixel at their own width: what
//! image files, numpy arrays and display buffers hold, and what the GPU
//! decoder downloads ([`crate::codec::decode_interleaved`]).
//!
//! The codec's working form is [`Image`], one `i32` plane per component;
//! an 8K RGB image is 398 MB there but 99.5 MB here. A decoder that ends
//! in this form writes each sample once at its width instead of four
//! bytes into planes that a file writer then reads back and interleaves
//! (docs/perf/codec.md, "The decoded image at its own width").

use rayon::prelude::*;

use super::colour;
use super::error::CodecError;
use super::image::{sample_range_of, Image, Shape};

/// Samples at their own width, in one of four storage types chosen by
/// the bit depth and signedness ([`SampleBuf::zeroed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SampleBuf {
    /// Unsigned, 1 to 8 bits.
    U8(Vec<u8>),
    /// Unsigned, 9 to 16 bits.
    U16(Vec<u16>),
    /// Signed, 1 to 8 bits.
    I8(Vec<i8>),
    /// Signed, 9 to 16 bits.
    I16(Vec<i16>),
}

impl SampleBuf {
    /// `n` zero samples in the storage for `bit_depth` and `signed`.
    pub fn zeroed(bit_depth: u8, signed: bool, n: usize) -> Self {
        // Decoders fill it at once: large ones get 2 MiB pages (crate::memory).
        use crate::memory::zeroed_vec;
        match (bit_depth <= 8, signed) {
            (true, false) => SampleBuf::U8(zeroed_vec(n)),
            (false, false) => SampleBuf::U16(zeroed_vec(n)),
            (true, true) => SampleBuf::I8(zeroed_vec(n)),
            (false, true) => SampleBuf::I16(zeroed_vec(n)),
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        match self {
            SampleBuf::U8(v) => v.len(),
            SampleBuf::U16(v) => v.len(),
            SampleBuf::I8(v) => v.len(),
            SampleBuf::I16(v) => v.len(),
        }
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The storage type's name (`u8`, `u16`, `i8`, `i16`).
    pub fn type_name(&self) -> &'static str {
        match self {
            SampleBuf::U8(_) => "u8",
            SampleBuf::U16(_) => "u16",
            SampleBuf::I8(_) => "i8",
            SampleBuf::I16(_) => "i16",
        }
    }

    /// Sample `i` widened to `i32`.
    pub fn get(&self, i: usize) -> Option<i32> {
        match self {
            SampleBuf::U8(v) => v.get(i).map(|&s| s as i32),
            SampleBuf::U16(v) => v.get(i).map(|&s| s as i32),
            SampleBuf::I8(v) => v.get(i).map(|&s| s as i32),
            SampleBuf::I16(v) => v.get(i).map(|&s| s as i32),
        }
    }

    /// The samples' bytes in the host's byte order.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            SampleBuf::U8(v) => v,
            SampleBuf::U16(v) => bytemuck::cast_slice(v),
            SampleBuf::I8(v) => bytemuck::cast_slice(v),
            SampleBuf::I16(v) => bytemuck::cast_slice(v),
        }
    }

    /// The samples' bytes, writable, in the host's byte order.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        match self {
            SampleBuf::U8(v) => v,
            SampleBuf::U16(v) => bytemuck::cast_slice_mut(v),
            SampleBuf::I8(v) => bytemuck::cast_slice_mut(v),
            SampleBuf::I16(v) => bytemuck::cast_slice_mut(v),
        }
    }

    /// Two-byte samples written little-endian (as the GPU writes them)
    /// put into the host's order; nothing to do on a little-endian host.
    #[cfg(feature = "gpu")]
    pub(crate) fn little_endian_to_host(&mut self) {
        if cfg!(target_endian = "big") {
            match self {
                SampleBuf::U16(v) => v.iter_mut().for_each(|s| *s = u16::from_le(*s)),
                SampleBuf::I16(v) => v.iter_mut().for_each(|s| *s = i16::from_le(*s)),
                SampleBuf::U8(_) | SampleBuf::I8(_) => {}
            }
        }
    }
}

/// An image of 1..=4 components, its samples interleaved pixel by pixel
/// (`samples[(y * width + x) * components + c]`) at their own width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interleaved {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Samples per pixel, 1..=4.
    pub components: usize,
    /// Bits per sample, 1..=16.
    pub bit_depth: u8,
    /// Samples are signed (`-2^(b-1)..2^(b-1)`) rather than `0..2^b`.
    pub signed: bool,
    /// `width * height * components` samples.
    pub samples: SampleBuf,
}

/// Pixels converted per parallel task: large enough that the split costs
/// nothing next to the copy, small enough for every core to get some.
const PIXELS_PER_TASK: usize = 1 << 14;

impl Interleaved {
    /// Samples over all components.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the image has no samples.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Its size and sample type.
    pub(crate) fn shape(&self) -> Shape {
        Shape {
            width: self.width,
            height: self.height,
            components: self.components,
            bit_depth: self.bit_depth,
            signed: self.signed,
        }
    }

    /// Checks sizes, bit depth, that the storage fits the bit depth and
    /// signedness ([`SampleBuf::zeroed`]'s choice) and holds every sample,
    /// and that every sample is in range.
    pub fn validate(&self) -> Result<(), CodecError> {
        let shape = self.shape();
        shape.validate()?;
        let want = SampleBuf::zeroed(self.bit_depth, self.signed, 0);
        if std::mem::discriminant(&want) != std::mem::discriminant(&self.samples) {
            return Err(CodecError::Image(format!(
                "{}-bit {} samples stored as {}",
                self.bit_depth,
                if self.signed { "signed" } else { "unsigned" },
                self.samples.type_name()
            )));
        }
        if self.samples.len() != shape.samples() {
            return Err(CodecError::Image(format!(
                "{} samples for {}x{} pixels of {} components",
                self.samples.len(),
                self.width,
                self.height,
                self.components
            )));
        }
        let (lo, hi) = colour::sample_range(self.bit_depth, self.signed);
        // Storage whose every value is in range needs no pass over the
        // samples: 8-bit samples in bytes and 16-bit ones in `u16`, as
        // image files hold them (the pass costs a few milliseconds on an
        // 8K frame, more than the GPU's colour stage).
        let storage = match &self.samples {
            SampleBuf::U8(_) => (u8::MIN as i32, u8::MAX as i32),
            SampleBuf::U16(_) => (u16::MIN as i32, u16::MAX as i32),
            SampleBuf::I8(_) => (i8::MIN as i32, i8::MAX as i32),
            SampleBuf::I16(_) => (i16::MIN as i32, i16::MAX as i32),
        };
        if storage.0 >= lo && storage.1 <= hi {
            return Ok(());
        }
        let (min, max) = match &self.samples {
            SampleBuf::U8(v) => sample_range_of(v),
            SampleBuf::U16(v) => sample_range_of(v),
            SampleBuf::I8(v) => sample_range_of(v),
            SampleBuf::I16(v) => sample_range_of(v),
        };
        if min < lo || max > hi {
            let v = if min < lo { min } else { max };
            return Err(CodecError::Image(format!(
                "sample {v} outside {lo}..={hi} ({}-bit)",
                self.bit_depth
            )));
        }
        Ok(())
    }

    /// The same samples declared `bit_depth` bits deep (a 16-bit file
    /// holding 12-bit data, say), moved to the storage that depth takes
    /// where it differs; an error names a sample that does not fit.
    pub fn with_bit_depth(mut self, bit_depth: u8) -> Result<Interleaved, CodecError> {
        let want = SampleBuf::zeroed(bit_depth, self.signed, 0);
        if std::mem::discriminant(&want) != std::mem::discriminant(&self.samples) {
            let too_wide = |v: i32| {
                CodecError::Image(format!(
                    "sample {v} does not fit {bit_depth}-bit {} samples",
                    if self.signed { "signed" } else { "unsigned" }
                ))
            };
            self.samples = match &self.samples {
                SampleBuf::U8(v) => SampleBuf::U16(v.iter().map(|&s| s as u16).collect()),
                SampleBuf::I8(v) => SampleBuf::I16(v.iter().map(|&s| s as i16).collect()),
                SampleBuf::U16(v) => SampleBuf::U8(
                    (v.iter()
                        .map(|&s| u8::try_from(s).map_err(|_| too_wide(s as i32))))
                    .collect::<Result<_, _>>()?,
                ),
                SampleBuf::I16(v) => SampleBuf::I8(
                    (v.iter()
                        .map(|&s| i8::try_from(s).map_err(|_| too_wide(s as i32))))
                    .collect::<Result<_, _>>()?,
                ),
            };
        }
        self.bit_depth = bit_depth;
        Ok(self)
    }

    /// `image` interleaved. Samples are stored as they are; the planes'
    /// values must lie in the range of `image.bit_depth` and `image.signed`
    /// ([`Image::validate`] checks it, and decoders only produce such).
    pub fn from_image(image: &Image) -> Self {
        let comps = image.components();
        let mut samples = SampleBuf::zeroed(image.bit_depth, image.signed, image.samples());
        match &mut samples {
            SampleBuf::U8(v) => interleave_into(&image.planes, comps, v, |s| s as u8),
            SampleBuf::U16(v) => interleave_into(&image.planes, comps, v, |s| s as u16),
            SampleBuf::I8(v) => interleave_into(&image.planes, comps, v, |s| s as i8),
            SampleBuf::I16(v) => interleave_into(&image.planes, comps, v, |s| s as i16),
        }
        Interleaved {
            width: image.width,
            height: image.height,
            components: comps,
            bit_depth: image.bit_depth,
            signed: image.signed,
            samples,
        }
    }

    /// The image as planes, one per component.
    pub fn to_image(&self) -> Image {
        let n = self.width * self.height;
        let comps = self.components.max(1);
        let mut planes: Vec<Vec<i32>> = (0..self.components).map(|_| vec![0i32; n]).collect();
        match &self.samples {
            SampleBuf::U8(v) => deinterleave_into(v, comps, &mut planes),
            SampleBuf::U16(v) => deinterleave_into(v, comps, &mut planes),
            SampleBuf::I8(v) => deinterleave_into(v, comps, &mut planes),
            SampleBuf::I16(v) => deinterleave_into(v, comps, &mut planes),
        }
        Image {
            width: self.width,
            height: self.height,
            bit_depth: self.bit_depth,
            signed: self.signed,
            planes,
        }
    }
}

fn interleave_into<T: Copy + Send>(
    planes: &[Vec<i32>],
    comps: usize,
    out: &mut [T],
    narrow: impl Fn(i32) -> T + Sync,
) {
    if comps == 0 {
        return;
    }
    out.par_chunks_mut(PIXELS_PER_TASK * comps)
        .enumerate()
        .for_each(|(k, chunk)| {
            let first = k * PIXELS_PER_TASK;
            for (c, plane) in planes.iter().enumerate() {
                let src = &plane[first..first + chunk.len() / comps];
                for (px, &s) in chunk.chunks_exact_mut(comps).zip(src) {
                    px[c] = narrow(s);
                }
            }
        });
}

fn deinterleave_into<T: Copy + Into<i32> + Sync>(
    samples: &[T],
    comps: usize,
    planes: &mut [Vec<i32>],
) {
    for (c, plane) in planes.iter_mut().enumerate() {
        plane
            .par_chunks_mut(PIXELS_PER_TASK)
            .zip(samples.par_chunks(PIXELS_PER_TASK * comps))
            .for_each(|(dst, src)| {
                for (d, px) in dst.iter_mut().zip(src.chunks_exact(comps)) {
                    *d = px[c].into();
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A declared bit depth moves samples to its storage where they fit,
    /// and names one that does not.
    #[test]
    fn bit_depth_changes_move_the_storage() {
        let image = Image::from_fn(5, 3, 2, 16, |x, y, c| (x * 50 + y + c) as i32);
        let wide = Interleaved::from_image(&image);
        let narrow = wide.clone().with_bit_depth(8).unwrap();
        assert_eq!(narrow.samples.type_name(), "u8");
        assert_eq!(narrow.to_image().planes, image.planes);
        let back = narrow.with_bit_depth(12).unwrap();
        assert_eq!((back.samples.type_name(), back.bit_depth), ("u16", 12));
        assert_eq!(back.to_image().planes, image.planes);
        let mut big = wide;
        big.samples = SampleBuf::U16(vec![300; 30]);
        let err = big.with_bit_depth(8).unwrap_err().to_string();
        assert!(err.contains("sample 300"), "{err}");
    }

    /// Planes to interleaved and back is the identity for every storage
    /// type, with images larger than one task so that the split shows.
    #[test]
    fn interleaving_round_trips_in_every_storage() {
        for (depth, signed, comps) in [(8u8, false, 3), (12, false, 1), (5, true, 4), (16, true, 2)]
        {
            let (w, h) = (PIXELS_PER_TASK / 64 + 3, 70);
            let (lo, span) = match signed {
                true => (-(1i32 << (depth - 1)), 1i32 << depth),
                false => (0, 1i32 << depth),
            };
            let mut image = Image::from_fn(w, h, comps, depth, |x, y, c| {
                lo + ((x * 31 + y * 17 + c * 7) as i32 % span)
            });
            image.signed = signed;
            image.validate().unwrap();
            let inter = Interleaved::from_image(&image);
            let want_storage = SampleBuf::zeroed(depth, signed, 0);
            assert_eq!(
                std::mem::discriminant(&inter.samples),
                std::mem::discriminant(&want_storage)
            );
            let (x, y, c) = (w - 2, h - 1, comps - 1);
            assert_eq!(
                inter.samples.get((y * w + x) * comps + c),
                Some(image.planes[c][y * w + x])
            );
            assert_eq!(inter.to_image(), image, "depth {depth} signed {signed}");
        }
    }
}
