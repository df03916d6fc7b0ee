//! Stage: level shift and colour transform ([`crate::codec::colour`]).
//! The encoder's first stage turns the image into one array of shifted,
//! colour-transformed planes; the decoder's last undoes both. On the GPU
//! backend both run on the device where [`super::device`] can (the
//! samples go up at their own width, the image comes down at it).

use std::borrow::Cow;

use crate::backend::Backend;
use crate::codec::colour;
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::image::Image;
use crate::codec::input::Input;
use crate::codec::interleaved::{Interleaved, SampleBuf};
use crate::codec::planes::{Planes, Resident};

/// The samples of `image` level-shifted, with the header's fractional
/// bits, and colour-transformed: the DWT's input, in device buffers on
/// the GPU backend where the front end runs there.
pub(crate) fn forward(
    backend: &Backend,
    image: Input<'_>,
    header: &Header,
) -> Result<Resident<Planes<i32>>, CodecError> {
    match backend {
        #[cfg(feature = "gpu")]
        Backend::Gpu(gpu) if super::device::encodes(gpu, header) => {
            super::device::colour_forward(gpu, &image, header)
                .map(Resident::Device)
                .map_err(super::device::gpu_err)
        }
        _ => Ok(Resident::Host(host_forward(image, header))),
    }
}

/// The decoder's inverse colour transform, level shift and clamp: the
/// decoded image's planes.
pub(crate) fn inverse(
    planes: Resident<Vec<Vec<i32>>>,
    header: &Header,
) -> Result<Vec<Vec<i32>>, CodecError> {
    match planes {
        Resident::Host(mut planes) => {
            host_inverse(&mut planes, header);
            Ok(planes)
        }
        #[cfg(feature = "gpu")]
        Resident::Device(planes) => {
            super::device::colour_inverse(&planes, header).map_err(super::device::gpu_err)
        }
    }
}

/// The decoder's inverse colour transform, level shift and clamp, the
/// samples interleaved at their own width: on the device they come down
/// that way; on the host each chunk of pixels is interleaved in the
/// stage's own pass.
pub(crate) fn inverse_interleaved(
    planes: Resident<Vec<Vec<i32>>>,
    header: &Header,
    (width, height): (usize, usize),
) -> Result<Interleaved, CodecError> {
    let samples = match planes {
        Resident::Host(mut planes) => {
            let n = planes.first().map_or(0, Vec::len) * planes.len();
            let mut samples = SampleBuf::zeroed(header.bit_depth, header.signed, n);
            let (t, p) = (header.colour, &mut planes);
            let how = (header.bit_depth, header.signed, header.fraction_bits);
            // The samples are clamped to the bit depth's range, which the
            // storage holds: the narrowing casts keep every value.
            match &mut samples {
                SampleBuf::U8(v) => {
                    colour::inverse_shift_out_interleaved(t, p, how, v, |s| s as u8)
                }
                SampleBuf::U16(v) => {
                    colour::inverse_shift_out_interleaved(t, p, how, v, |s| s as u16)
                }
                SampleBuf::I8(v) => {
                    colour::inverse_shift_out_interleaved(t, p, how, v, |s| s as i8)
                }
                SampleBuf::I16(v) => {
                    colour::inverse_shift_out_interleaved(t, p, how, v, |s| s as i16)
                }
            }
            samples
        }
        #[cfg(feature = "gpu")]
        Resident::Device(planes) => super::device::colour_inverse_interleaved(&planes, header)
            .map_err(super::device::gpu_err)?,
    };
    Ok(Interleaved {
        width,
        height,
        components: header.components as usize,
        bit_depth: header.bit_depth,
        signed: header.signed,
        samples,
    })
}

fn host_forward(image: Input<'_>, header: &Header) -> Planes<i32> {
    let mut samples = shifted_samples(image, header);
    colour::forward(header.colour, &mut samples.planes_mut().collect::<Vec<_>>());
    samples
}

fn host_inverse(planes: &mut [Vec<i32>], header: &Header) {
    let (depth, signed, fraction) = (header.bit_depth, header.signed, header.fraction_bits);
    colour::inverse_shift_out(header.colour, planes, depth, signed, fraction);
}

/// The level-shifted samples of every plane in one allocation, laid out as
/// the index array. An owned image gives its first plane's allocation,
/// shifted in place and grown by the others, instead of a fresh copy of
/// every plane: the fresh pages of that copy were a third of a small
/// image's page faults (docs/history/codec.md).
fn shifted_samples(image: Input<'_>, header: &Header) -> Planes<i32> {
    let shape = image.shape();
    let (len, comps) = (shape.width * shape.height, shape.components);
    let (depth, signed, fraction) = (header.bit_depth, header.signed, header.fraction_bits);
    let image = match image {
        Input::Planes(image) => image,
        Input::Interleaved(image) => {
            let mut samples = Planes::new(vec![0i32; len * comps], len);
            let dst: Vec<&mut [i32]> = samples.planes_mut().collect();
            match &image.samples {
                SampleBuf::U8(v) => colour::shifted_from(v, dst, depth, signed, fraction),
                SampleBuf::U16(v) => colour::shifted_from(v, dst, depth, signed, fraction),
                SampleBuf::I8(v) => colour::shifted_from(v, dst, depth, signed, fraction),
                SampleBuf::I16(v) => colour::shifted_from(v, dst, depth, signed, fraction),
            }
            return samples;
        }
    };
    match image {
        Cow::Owned(Image { planes, .. }) => {
            let mut planes = planes.into_iter();
            let mut data = planes.next().unwrap_or_default();
            colour::shift_in(&mut data, depth, signed, fraction);
            data.reserve_exact(len * (comps - 1));
            for plane in planes {
                colour::extend_shifted(&mut data, &plane, depth, signed, fraction);
            }
            Planes::new(data, len)
        }
        Cow::Borrowed(image) => {
            let mut samples = Planes::new(vec![0i32; len * comps], len);
            for (dst, src) in samples.planes_mut().zip(&image.planes) {
                colour::shifted_into(src, dst, depth, signed, fraction);
            }
            samples
        }
    }
}
