//! The decoder: [`decode`] is the list of stages (docs/codec.md,
//! "Decoder"), for whole files, truncated prefixes, reduced resolutions
//! and fewer layers. Each stage is a call into a module of
//! [`super::stages`], which runs it on the CPU or the GPU.

use super::error::CodecError;
use super::file::Container;
use super::format::FormatError;
use super::header::Header;
use super::image::Image;
use super::interleaved::Interleaved;
use super::options::DecodeOptions;
use super::planes::Resident;
use super::progressive::{self, Selection};
use super::report::{DecodeReport, Decoded, StageClock};
use super::stages::{self, entropy, quantize::Decodable};
use crate::backend::Backend;

/// Decodes a `.wl` file or any prefix of one that holds its main header.
pub fn decode(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
) -> Result<Decoded, CodecError> {
    decode_inner(bytes, options, backend, false, planar).map(|(d, _)| d)
}

/// [`decode`] into samples interleaved at their own width, as image files
/// and arrays hold them: the GPU backend downloads them straight into the
/// result, and neither backend makes the `i32` planes of an [`Image`] for
/// the caller to convert.
pub fn decode_interleaved(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
) -> Result<Decoded<Interleaved>, CodecError> {
    decode_inner(bytes, options, backend, false, |planes, header, size| {
        stages::colour::inverse_interleaved(planes, header, size)
    })
    .map(|(d, _)| d)
}

/// The last stage of [`decode`]: the image's planes.
fn planar(
    planes: Resident<Vec<Vec<i32>>>,
    header: &Header,
    (width, height): (usize, usize),
) -> Result<Image, CodecError> {
    Ok(Image {
        width,
        height,
        bit_depth: header.bit_depth,
        signed: header.signed,
        planes: stages::colour::inverse(planes, header)?,
    })
}

/// Like [`decode`], but a data segment whose CRC fails is left out instead
/// of failing the decode: its resolution is decoded through the layers
/// before it (a layer continues the codewords of the one below, so the
/// later layers of that resolution go too). Returns the indices (into
/// [`Container::segments`]) of the segments left out; `wavelane decode
/// --partial` reports them.
pub fn decode_skipping_damaged(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
) -> Result<(Decoded, Vec<usize>), CodecError> {
    decode_inner(bytes, options, backend, true, planar)
}

/// The decoder's stages; `last` is the inverse colour stage, which gives
/// the image in the caller's form.
fn decode_inner<I>(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
    skip_damaged: bool,
    last: impl FnOnce(Resident<Vec<Vec<i32>>>, &Header, (usize, usize)) -> Result<I, CodecError>,
) -> Result<(Decoded<I>, Vec<usize>), CodecError> {
    let mut clock = StageClock::new(backend);
    let start = clock.start();
    let t = clock.start();
    let c = Container::parse(bytes, options.read)?;
    let sel = progressive::select(&c, options.reduce, options.layers)?;
    let mut damaged = Vec::new();
    // Layers decoded per resolution: fewer where a segment is damaged.
    let mut layers_of = vec![sel.layers; sel.resolutions];
    if options.read.check_crc {
        check_selected(&c, &sel, skip_damaged, &mut damaged, &mut layers_of)?;
    }
    clock.stop(t, "parse");
    let hd = &c.header;
    let (w, h) = (sel.width, sel.height);
    let blocks = &c.blocks[..sel.blocks];
    let t = clock.start();
    let encoded = stages::pack::unpack(backend, &c, &sel, &layers_of);
    clock.stop(t, "unpack");
    let t = clock.start();
    let shifts = &c.index.shifts[..sel.blocks];
    let (indices, summaries) = entropy::decode(hd, blocks, (w, h), &encoded, shifts, backend)?;
    clock.stop(t, "entropy");
    let decodable = Decodable {
        blocks,
        shifts,
        tops: &encoded.tops,
        summaries: &summaries,
    };
    let t = clock.start();
    let coefficients = stages::quantize::dequantize(backend, hd, &decodable, indices, w, h)?;
    clock.stop(t, "dequantize");
    let t = clock.start();
    let planes = stages::dwt::inverse_reduced(backend, coefficients, w, h, hd, options.reduce)?;
    clock.stop(t, "dwt");
    let t = clock.start();
    let image = last(planes, hd, (w, h))?;
    clock.stop(t, "colour");
    let seconds = start.seconds();
    let (stages, transfers) = clock.finish();
    let report = DecodeReport {
        backend: backend.describe(),
        width: w,
        height: h,
        truncated: !c.is_complete(),
        resolutions: sel.resolutions,
        layers: sel.layers,
        bytes_used: progressive::bytes_used(&c, &sel),
        seconds,
        stages,
        transfers,
    };
    Ok((Decoded { image, report }, damaged))
}

/// Checks the CRC of every segment the selection decodes. With
/// `skip_damaged`, a segment whose CRC fails is recorded in `damaged` and
/// its resolution is decoded only through the layers before it
/// (`layers_of`), instead of failing the decode.
fn check_selected(
    c: &Container<'_>,
    sel: &Selection,
    skip_damaged: bool,
    damaged: &mut Vec<usize>,
    layers_of: &mut [usize],
) -> Result<(), CodecError> {
    for (k, s) in c.segments.iter().enumerate() {
        if s.len > 0 && s.resolution < sel.resolutions && s.layer < sel.layers {
            match c.check_segment(k) {
                Err(FormatError::SegmentCrc { .. }) if skip_damaged => {
                    damaged.push(k);
                    let l = &mut layers_of[s.resolution];
                    *l = (*l).min(s.layer);
                }
                other => {
                    other?;
                }
            }
        }
    }
    Ok(())
}
