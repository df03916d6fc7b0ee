//! The GPU arms of the image stages, on planes that stay in device buffers
//! ([`DevicePlanes`]) from the upload of the samples to the index array
//! the entropy stage takes, and from the decoded indices to the packed
//! image: level shift and colour transform (`shaders/codec/colour_forward.comp`,
//! `colour_inverse.glsl`), the DWT (`shaders/dwt/`, through [`GpuDwt`]),
//! quantization and dequantization (`shaders/codec/quantize.comp`,
//! `dequantize.comp`), with the exact sums of rate control's real-valued
//! distortions read from the coefficients beside quantization
//! (`distortion.comp`, `codec::distortion`). Each shader mirrors the host function its stage
//! runs on the CPU backend, so the files and images are the same
//! (tests/tests/codec_gpu_stages.rs).
//!
//! [`encodes`] and [`decodes`] say whether a header's planes can take this
//! route; where not (the float 9/7, a device without 64-bit integers,
//! planes beyond one storage binding) the stages run their host
//! implementation on the GPU backend, as they did before.

use std::sync::Arc;

use rayon::prelude::*;
use vulkano::buffer::Subbuffer;
use wavelane_core::dwt::volume::VolumeLayout;
use wavelane_core::dwt::{Cdf53, Fixed97, Wavelet};

use super::samples::{self, sample_bytes};
use crate::backend::gpu::transfer::par_copy;
use crate::backend::gpu::Dispatch;
use crate::backend::{Gpu, GpuError};
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::distortion::{BlockSums, SUMS};
use crate::codec::error::CodecError;
use crate::codec::format::ColourTransform;
use crate::codec::header::Header;
use crate::codec::input::Input;
use crate::codec::interleaved::SampleBuf;
use crate::codec::planes::DevicePlanes;
use crate::codec::quant::UNIT_STEP;
use crate::dwt::gpu::GpuDwt;
use crate::dwt::DwtHostError;
use crate::shaders;

/// Workgroups per dispatch at most; the shaders loop over the rest.
const MAX_GROUPS: u64 = 65_535;

/// A GPU failure as the codec reports it.
pub(crate) fn gpu_err(e: GpuError) -> CodecError {
    CodecError::Dwt(DwtHostError::Gpu(e))
}

/// Whether `comps` planes of `len` samples fit the shaders: one plane in
/// one storage binding, the packed image in another, every index in u32.
fn fits(gpu: &Gpu, len: usize, comps: usize, bit_depth: u8) -> bool {
    let range = gpu.info().max_storage_buffer_range as u64;
    let plane = len as u64 * 4;
    let packed = (len * comps * sample_bytes(bit_depth)) as u64;
    let all = (DevicePlanes::stride_of(len) * comps) as u64;
    gpu.device().enabled_features().shader_int64
        && len > 0
        && plane <= range
        && packed <= range
        && packed < u32::MAX as u64
        && all < u32::MAX as u64
}

/// `comps` planes of `len` samples in one new buffer, contents undefined.
fn alloc_planes(gpu: &Arc<Gpu>, len: usize, comps: usize) -> Result<DevicePlanes, GpuError> {
    Ok(DevicePlanes {
        gpu: gpu.clone(),
        buffer: gpu.uninit::<i32>((DevicePlanes::stride_of(len) * comps) as u64)?,
        len,
        comps,
        gain: None,
    })
}

/// Whether the encoder's front end runs on the device for `header`.
pub(crate) fn encodes(gpu: &Gpu, header: &Header) -> bool {
    let len = header.width as usize * header.height as usize;
    header.wavelet != Wavelet::Cdf97 && fits(gpu, len, header.components as usize, header.bit_depth)
}

/// Whether the decoder's back end runs on the device for `header`, decoded
/// at `width x height`.
pub(crate) fn decodes(gpu: &Gpu, header: &Header, width: usize, height: usize) -> bool {
    header.wavelet != Wavelet::Cdf97
        && fits(
            gpu,
            width * height,
            header.components as usize,
            header.bit_depth,
        )
}

fn groups(items: usize, per_group: usize) -> u32 {
    (items.div_ceil(per_group) as u64).clamp(1, MAX_GROUPS) as u32
}

fn colour_code(c: ColourTransform) -> u32 {
    match c {
        ColourTransform::None => 0,
        ColourTransform::Rct => 1,
        ColourTransform::Ict => 2,
    }
}

/// Binds the planes of a colour dispatch: four bindings, a one-element
/// buffer where an image has fewer components (never read or written: the
/// shaders bound every access by the component count).
fn bind_planes(
    gpu: &Gpu,
    mut d: Dispatch,
    planes: &[Subbuffer<[i32]>],
) -> Result<Dispatch, GpuError> {
    let unused = gpu.uninit::<i32>(1)?;
    for c in 0..4 {
        d = d.buffer(planes.get(c).unwrap_or(&unused));
    }
    Ok(d)
}

/// The encoder's first stage: the image's samples packed at their own
/// width (planes packed plane after plane; interleaved samples copied as
/// they are), uploaded, level-shifted and colour-transformed on the
/// device.
pub(crate) fn colour_forward(
    gpu: &Arc<Gpu>,
    image: &Input<'_>,
    header: &Header,
) -> Result<DevicePlanes, GpuError> {
    let shape = image.shape();
    let len = shape.width * shape.height;
    let bytes = sample_bytes(header.bit_depth);
    let words = (len * shape.components * bytes).div_ceil(4) as u64;
    let src = gpu.uninit::<u32>(words.max(1))?;
    gpu.write_bytes(&src.clone().into_bytes(), |offset, chunk| match image {
        Input::Planes(image) => samples::pack(&image.planes, len, bytes, offset, chunk),
        Input::Interleaved(image) => {
            samples::copy_little_endian(image.samples.as_bytes(), bytes, offset, chunk)
        }
    })?;
    let out = alloc_planes(gpu, len, shape.components)?;
    let d = Dispatch::new(&shaders::COLOUR_FORWARD, [groups(len, 256), 1, 1]).buffer(&src);
    let d = bind_planes(gpu, d, &out.planes())?.push(&[
        len as u32,
        out.comps as u32,
        colour_code(header.colour),
        bytes as u32,
        header.bit_depth as u32,
        header.signed as u32,
        header.fraction_bits as u32,
        words as u32,
        matches!(image, Input::Interleaved(_)) as u32,
    ]);
    gpu.run(&[d])?;
    Ok(out)
}

/// The 2-D DWT of every plane, `levels` levels, forward or inverse, into
/// new buffers (the shaders read one buffer and write another); all planes'
/// levels in one submission, sharing one scratch.
pub(crate) fn dwt(
    planes: DevicePlanes,
    wavelet: Wavelet,
    width: usize,
    height: usize,
    levels: u32,
    inverse: bool,
) -> Result<DevicePlanes, DwtHostError> {
    if levels == 0 {
        return Ok(planes);
    }
    let gpu = planes.gpu.clone();
    let layout = VolumeLayout {
        width,
        height,
        depth: 1,
        row_stride: width,
        slice_stride: width * height,
    };
    let plan = GpuDwt::new(gpu.clone(), layout, [levels, levels, 0])?;
    let scratch = plan.scratch::<i32>()?;
    let out = DevicePlanes {
        gain: planes.gain,
        ..alloc_planes(&gpu, planes.len, planes.comps)?
    };
    let mut dispatches = Vec::new();
    for (src, dst) in planes.planes().iter().zip(&out.planes()) {
        dispatches.extend(match (wavelet, inverse) {
            (Wavelet::Cdf53, false) => plan.forward_dispatches::<Cdf53>(src, dst, &scratch)?,
            (Wavelet::Cdf53, true) => plan.inverse_dispatches::<Cdf53>(src, dst, &scratch)?,
            (_, false) => plan.forward_dispatches::<Fixed97>(src, dst, &scratch)?,
            (_, true) => plan.inverse_dispatches::<Fixed97>(src, dst, &scratch)?,
        });
    }
    gpu.run(&dispatches)?;
    Ok(out)
}

/// Every plane, back to back in one host array (the index array's layout).
pub(crate) fn download(planes: &DevicePlanes) -> Result<Vec<i32>, GpuError> {
    let mut out = vec![0i32; planes.len * planes.comps];
    for (dst, src) in out.chunks_exact_mut(planes.len).zip(planes.planes()) {
        planes.gpu.download_into(&src, dst)?;
    }
    Ok(out)
}

/// Component planes of `len` samples from one host array, back to back
/// (each plane written straight into its place, padding left undefined).
pub(crate) fn upload(
    gpu: &Arc<Gpu>,
    data: &[i32],
    len: usize,
    comps: usize,
) -> Result<DevicePlanes, GpuError> {
    let planes = alloc_planes(gpu, len, comps)?;
    for (c, src) in data.chunks_exact(len).take(comps).enumerate() {
        let bytes: &[u8] = bytemuck::cast_slice(src);
        gpu.write_bytes(&planes.plane(c).into_bytes(), |offset, chunk| {
            let at = offset as usize;
            chunk.copy_from_slice(&bytes[at..at + chunk.len()]);
        })?;
    }
    Ok(planes)
}

/// One codeblock as the quantization shaders read it
/// (`shaders/codec/quant.glsl`, `struct Block`).
fn block_words(b: &BlockGeometry, stride: usize, q16: u64, shift: u32, slot: u32) -> [u32; 8] {
    [
        (b.rect.y * stride + b.rect.x) as u32,
        b.rect.width as u32,
        b.rect.height as u32,
        stride as u32,
        q16 as u32,
        (q16 >> 32) as u32,
        shift,
        slot,
    ]
}

/// Runs `shader` on every plane over its blocks: `words` holds the blocks
/// of plane 0, then plane 1, ... (`starts[c]..starts[c + 1]`).
fn per_block(
    planes: &DevicePlanes,
    shader: &'static crate::shaders::Shader,
    words: &[u32],
    starts: &[usize],
) -> Result<(), GpuError> {
    if words.is_empty() {
        return Ok(());
    }
    // Eight words a block: the shaders' `Block` (std430, 32 bytes).
    let blocks = planes.gpu.upload(words)?;
    let dispatches = block_dispatches(planes, shader, &blocks, starts, None);
    planes.gpu.run(&dispatches).map(|_| ())
}

/// The dispatches of [`per_block`] over blocks already uploaded, one per
/// plane with blocks; `out = (buffer, words)`, where given, is bound after
/// the blocks, with its length in elements of `words` u32 words (the
/// shader's `uvec2` or `uvec4`) as the last push constant.
fn block_dispatches(
    planes: &DevicePlanes,
    shader: &'static crate::shaders::Shader,
    blocks: &Subbuffer<[u32]>,
    starts: &[usize],
    out: Option<(&Subbuffer<[u32]>, u64)>,
) -> Vec<Dispatch> {
    let mut dispatches = Vec::new();
    for (c, plane) in planes.planes().iter().enumerate() {
        let (first, count) = (starts[c], starts[c + 1] - starts[c]);
        if count == 0 {
            continue;
        }
        let mut d = Dispatch::new(shader, [groups(count, 1), 1, 1])
            .buffer(plane)
            .buffer(blocks);
        let mut push = vec![first as u32, count as u32, planes.len as u32];
        if let Some((e, words)) = out {
            d = d.buffer(e);
            push.push((e.len() / words) as u32);
        }
        dispatches.push(d.push(&push));
    }
    dispatches
}

/// Block words sorted by component and each component's first block.
fn by_component(
    planes: &DevicePlanes,
    blocks: &[BlockGeometry],
    words_of: impl Fn(usize, &BlockGeometry) -> [u32; 8],
) -> (Vec<u32>, Vec<usize>) {
    let comps = planes.comps;
    let mut words = Vec::with_capacity(blocks.len() * 8);
    let mut starts = vec![0];
    for c in 0..comps {
        for (i, b) in blocks.iter().enumerate() {
            if b.component as usize == c {
                words.extend(words_of(i, b));
            }
        }
        starts.push(words.len() / 8);
    }
    (words, starts)
}

/// Whether the distortion sums of `blocks` blocks fit one storage
/// binding (the shader writes them into one buffer).
pub(crate) fn sums_fit(gpu: &Gpu, blocks: usize) -> bool {
    let bytes = blocks as u64 * SUMS as u64 * 16;
    bytes <= gpu.info().max_storage_buffer_range as u64 && bytes / 4 < u32::MAX as u64
}

/// Quantizes the coefficient planes in place into the index array
/// (`stages::quantize` on the host); returns each block's squared error at
/// full rate, in coefficient units (saturating at `u64::MAX`), and with
/// `sums` (where [`sums_fit`]) every block's distortion sums
/// (`shaders/codec/distortion.comp`), read from the coefficients before
/// they become indices: one submission, the sums' dispatches first.
pub(crate) fn quantize(
    planes: &DevicePlanes,
    header: &Header,
    blocks: &[BlockGeometry],
    sums: bool,
) -> Result<(Vec<u64>, Option<Vec<BlockSums>>), GpuError> {
    let gpu = &planes.gpu;
    let stride = header.width as usize;
    let (words, starts) = by_component(planes, blocks, |i, b| {
        let q16 = header.step(b.component as usize, b.band as usize).q16();
        block_words(b, stride, q16, 0, i as u32)
    });
    if words.is_empty() {
        return Ok((Vec::new(), sums.then(Vec::new)));
    }
    // Eight words a block: the shaders' `Block` (std430, 32 bytes).
    let block_buf = gpu.upload(&words)?;
    // Two words (lo, hi) a block: the shader's `uvec2`.
    let errors = gpu.uninit::<u32>(2 * blocks.len() as u64)?;
    let sums_buf = match sums {
        true => Some(gpu.uninit::<u32>(4 * (SUMS * blocks.len()) as u64)?),
        false => None,
    };
    let mut dispatches = Vec::new();
    if let Some(s) = &sums_buf {
        dispatches.extend(block_dispatches(
            planes,
            &shaders::DISTORTION,
            &block_buf,
            &starts,
            Some((s, 4)),
        ));
    }
    dispatches.extend(block_dispatches(
        planes,
        &shaders::QUANTIZE,
        &block_buf,
        &starts,
        Some((&errors, 2)),
    ));
    let trim = match &sums_buf {
        Some(s) => Some(trim_sums(gpu, s, blocks.len(), &mut dispatches)?),
        None => None,
    };
    gpu.run(&dispatches)?;
    let errors = gpu.download(&errors)?;
    let errors = errors
        .chunks_exact(2)
        .take(blocks.len())
        .map(|e| ((e[1] as u64) << 32) | e[0] as u64)
        .collect();
    let sums = match trim {
        Some(t) => Some(t.download(gpu, blocks.len())?),
        None => None,
    };
    Ok((errors, sums))
}

/// The distortion sums trimmed on the device to each block's bitplanes
/// (`shaders/codec/distortion_trim.comp`): each block's start among the
/// kept entries, their total, and the entries.
struct TrimmedSums {
    starts: Subbuffer<[u32]>,
    scan: crate::backend::gpu::ScanScratch,
    trimmed: Subbuffer<[u32]>,
}

/// Adds to `dispatches` the trimming of `blocks` blocks' sums in `sums`.
fn trim_sums(
    gpu: &Gpu,
    sums: &Subbuffer<[u32]>,
    blocks: usize,
    dispatches: &mut Vec<Dispatch>,
) -> Result<TrimmedSums, GpuError> {
    // Not zeroed: the counting pass writes every block's count.
    let starts = gpu.uninit::<u32>(blocks as u64)?;
    let scan = gpu.scan_scratch(blocks as u32)?;
    let trimmed = gpu.uninit::<u32>(sums.len())?;
    let pass = |mode: u32| {
        Dispatch::new(&shaders::DISTORTION_TRIM, [groups(blocks, 1), 1, 1])
            .buffer(sums)
            .buffer(&starts)
            .buffer(&trimmed)
            .push(&[blocks as u32, mode])
    };
    dispatches.push(pass(0));
    dispatches.extend(gpu.scan_dispatches(&starts, blocks as u32, &scan)?);
    dispatches.push(pass(1));
    Ok(TrimmedSums {
        starts,
        scan,
        trimmed,
    })
}

impl TrimmedSums {
    /// Every block's sums, the trimmed bitplanes zero again.
    fn download(&self, gpu: &Gpu, blocks: usize) -> Result<Vec<BlockSums>, GpuError> {
        let total = gpu.download(&self.scan.result)?[0] as usize;
        let starts = gpu.download(&self.starts)?;
        let words = match total {
            0 => Vec::new(),
            _ => gpu.download(&self.trimmed.clone().slice(0..4 * total as u64))?,
        };
        let range = |b: usize| {
            let start = starts.get(b).map_or(total, |&s| s as usize);
            let end = starts.get(b + 1).map_or(total, |&s| s as usize);
            (start, end)
        };
        if let Some(b) = (0..blocks).find(|&b| {
            let (start, end) = range(b);
            start > end || end > total || end - start > SUMS
        }) {
            return Err(GpuError::Command(format!(
                "block {b}'s trimmed distortion sums lie outside their list"
            )));
        }
        // Block by block on all cores, straight into one vector allocated
        // once (1.8 KB of sums a block: 12 MB for an 8K image's 6,800
        // blocks; a vector grown by doubling, or collected in pieces,
        // faulted in fresh pages for two to three times that).
        let mut out = Vec::with_capacity(blocks);
        (0..blocks)
            .into_par_iter()
            .map(|b| {
                let (start, end) = range(b);
                BlockSums::from_words(&words[4 * start..4 * end])
            })
            .collect_into_vec(&mut out);
        Ok(out)
    }
}

/// One decoded block's reconstruction rule (`stages::quantize`'s `Rule`).
pub(crate) struct Rule {
    /// Bitplanes dropped by early termination.
    pub shift: u8,
    /// The step in Q16.
    pub q16: u64,
    /// Mid-bin reconstruction.
    pub half: bool,
}

/// Dequantizes decoded index planes of stride `width` in place.
pub(crate) fn dequantize(
    planes: &DevicePlanes,
    blocks: &[BlockGeometry],
    rules: &[Rule],
    width: usize,
) -> Result<(), GpuError> {
    let (words, starts) = by_component(planes, blocks, |i, b| {
        let r = &rules[i];
        let skip = r.q16 == UNIT_STEP && r.shift == 0;
        let flags = r.shift as u32 | ((r.half as u32) << 8) | ((skip as u32) << 9);
        block_words(b, width, r.q16, flags, i as u32)
    });
    per_block(planes, &shaders::DEQUANTIZE, &words, &starts)
}

/// The decoder's last stage on the device (`colour_inverse.glsl`): the
/// image's samples at their width, plane after plane, unpacked into the
/// `Image`'s planes.
pub(crate) fn colour_inverse(
    planes: &DevicePlanes,
    header: &Header,
) -> Result<Vec<Vec<i32>>, GpuError> {
    let (len, comps) = (planes.len, planes.comps);
    let dst = colour_inverse_packed(planes, header, false)?;
    // Each plane its own zeroed allocation (a clone would copy one).
    let mut out: Vec<Vec<i32>> = (0..comps).map(|_| vec![0i32; len]).collect();
    planes.gpu.read_bytes(&dst, |offset, chunk| {
        samples::unpack(
            &mut out,
            len,
            header.bit_depth,
            header.signed,
            offset,
            chunk,
        )
    })?;
    Ok(out)
}

/// The decoder's last stage on the device, pixel by pixel: the download
/// lands in the samples' own storage with nothing to convert.
pub(crate) fn colour_inverse_interleaved(
    planes: &DevicePlanes,
    header: &Header,
) -> Result<SampleBuf, GpuError> {
    let dst = colour_inverse_packed(planes, header, true)?;
    let n = planes.len * planes.comps;
    let mut out = SampleBuf::zeroed(header.bit_depth, header.signed, n);
    let bytes = out.as_bytes_mut();
    planes.gpu.read_bytes(&dst, |offset, chunk| {
        // The buffer is whole words: its last chunk can run past the
        // samples.
        let at = (offset as usize).min(bytes.len());
        let n = chunk.len().min(bytes.len() - at);
        par_copy(&mut bytes[at..at + n], &chunk[..n]);
    })?;
    out.little_endian_to_host();
    Ok(out)
}

/// Runs `colour_inverse` into a fresh buffer of the packed samples, in
/// either layout.
fn colour_inverse_packed(
    planes: &DevicePlanes,
    header: &Header,
    interleaved: bool,
) -> Result<Subbuffer<[u8]>, GpuError> {
    let gpu = &planes.gpu;
    let (len, comps) = (planes.len, planes.comps);
    let bytes = sample_bytes(header.bit_depth);
    let words = (len * comps * bytes).div_ceil(4);
    let dst = gpu.uninit::<u32>(words as u64)?;
    let (shader, scale) = match planes.gain {
        Some(s) => (&shaders::COLOUR_INVERSE_GAIN, s.to_bits()),
        None => (&shaders::COLOUR_INVERSE, 0),
    };
    let d = bind_planes(
        gpu,
        Dispatch::new(shader, [groups(words, 256), 1, 1]),
        &planes.planes(),
    )?
    .buffer(&dst)
    .push(&[
        len as u32,
        comps as u32,
        colour_code(header.colour),
        bytes as u32,
        header.bit_depth as u32,
        header.signed as u32,
        header.fraction_bits as u32,
        words as u32,
        planes.gain.is_some() as u32,
        scale as u32,
        (scale >> 32) as u32,
        interleaved as u32,
    ]);
    gpu.run(&[d])?;
    Ok(dst.into_bytes())
}

/// Whether the device can run the f64 gain step of `colour_inverse_gain`.
pub(crate) fn has_float64(gpu: &Gpu) -> bool {
    gpu.device().enabled_features().shader_float64
}

#[cfg(test)]
#[path = "device_tests.rs"]
mod tests;
