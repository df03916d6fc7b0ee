//! Stage: dead-zone quantization of the transform coefficients into the
//! codeblocks' index array, and the decoder's dequantization back
//! ([`crate::codec::quant`] has the arithmetic, docs/codec.md
//! "Encoder"). Planes in device buffers are quantized and dequantized
//! there ([`super::device`]).

use rayon::prelude::*;
use wavelane_core::bpc::{Decoded as BlockDecoded, PassSchedule};
use wavelane_core::dwt::Wavelet;

use crate::backend::Backend;
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::distortion::{self, Real};
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::planes::{Coefficients, Planes, Resident};
use crate::codec::quant::{self, UNIT_STEP};
use crate::codec::weights::block_weights;

/// The quantization stage's result.
pub(crate) struct Quantized {
    /// Every coefficient's index, `components x width x height` (component
    /// planes back to back, Mallat layout), where the coefficients were.
    pub indices: Resident<Vec<i32>>,
    /// The squared error of a full-rate reconstruction, weighted like rate
    /// control's distortion.
    pub noise: f64,
    /// What the real-valued distortions need, where they were asked for.
    pub real: Option<Real>,
}

/// Quantizes `coefficients` with the header's steps, where they are. With
/// `real` (rate decisions on real values: `--bpp`, `--psnr`), also what
/// the real-valued distortions need ([`distortion`]): integer
/// coefficients' exact sums, made where the coefficients are (on the
/// device beside quantization, so that nothing plane-sized comes down;
/// docs/codec.md "Backends"), or the float 9/7's coefficients.
pub(crate) fn quantize(
    backend: &Backend,
    header: &Header,
    coefficients: Resident<Coefficients>,
    blocks: &[BlockGeometry],
    real: bool,
) -> Result<Quantized, CodecError> {
    let _ = backend; // the planes' residence decides
    match coefficients {
        Resident::Host(c) => {
            let sums = match (&c, real) {
                (Coefficients::Int(p), true) => Some(distortion::block_sums(header, p, blocks)),
                _ => None,
            };
            let keep = real && sums.is_none();
            let (indices, noise, kept) = host_quantize(header, c, blocks, keep);
            let real = match (sums, kept) {
                (Some(s), _) => Some(Real::Sums(s)),
                (None, Some(Coefficients::Float(p))) => Some(Real::Float(p)),
                _ => None,
            };
            Ok(Quantized {
                indices: Resident::Host(indices),
                noise,
                real,
            })
        }
        #[cfg(feature = "gpu")]
        Resident::Device(planes) => {
            use super::device;
            let on_device = real && device::sums_fit(&planes.gpu, blocks.len());
            let host_sums = if real && !on_device {
                log::debug!(
                    "the distortion sums of {} codeblocks exceed one storage binding: \
                     the coefficients come down for them",
                    blocks.len()
                );
                let data = device::download(&planes).map_err(device::gpu_err)?;
                Some(distortion::block_sums(
                    header,
                    &Planes::new(data, planes.len),
                    blocks,
                ))
            } else {
                None
            };
            let (errors, sums) =
                device::quantize(&planes, header, blocks, on_device).map_err(device::gpu_err)?;
            Ok(Quantized {
                indices: Resident::Device(planes),
                noise: block_noise(header, blocks, &errors, &block_weights(header, blocks)),
                real: sums.or(host_sums).map(Real::Sums),
            })
        }
    }
}

/// The full-rate noise of integer coefficients from each block's exact
/// squared error (saturating u64, the same on both backends), weighted and
/// added in block order: one formula, so both backends get the same
/// `f64`.
/// `weights` are the blocks' `block_weight`s.
fn block_noise(header: &Header, blocks: &[BlockGeometry], errors: &[u64], weights: &[f64]) -> f64 {
    blocks
        .iter()
        .zip(errors)
        .zip(weights)
        .map(|((b, &e), &weight)| {
            let step = header.step(b.component as usize, b.band as usize).value();
            e as f64 * weight / (step * step)
        })
        .sum()
}

/// What the decoder knows of the blocks it decoded: their geometry, the
/// bitplane shift each carries, their top bitplanes and how far the
/// entropy decoder got in each.
#[derive(Clone, Copy)]
pub(crate) struct Decodable<'a> {
    /// The blocks decoded, in file order.
    pub blocks: &'a [BlockGeometry],
    /// Each block's bitplane shift.
    pub shifts: &'a [u8],
    /// Each block's top bitplane.
    pub tops: &'a [Option<u8>],
    /// Each block's decode summary.
    pub summaries: &'a [BlockDecoded],
}

/// Turns decoded indices (component planes of `w x h`) into coefficients:
/// on the GPU backend in device buffers, where [`super::device::decodes`]
/// allows, for the rest of the decoder to run there (indices the entropy
/// stage left on the device are dequantized in place).
pub(crate) fn dequantize(
    backend: &Backend,
    header: &Header,
    blocks: &Decodable<'_>,
    indices: Resident<Vec<i32>>,
    w: usize,
    h: usize,
) -> Result<Resident<Coefficients>, CodecError> {
    #[cfg(feature = "gpu")]
    let on_device = |planes: &crate::codec::planes::DevicePlanes| {
        use super::device;
        let rules: Vec<device::Rule> = rules(header, blocks)
            .into_iter()
            .map(|r| device::Rule {
                shift: r.shift,
                q16: r.q16,
                half: r.half,
            })
            .collect();
        device::dequantize(planes, blocks.blocks, &rules, w).map_err(device::gpu_err)
    };
    match (backend, indices) {
        #[cfg(feature = "gpu")]
        (_, Resident::Device(planes)) => {
            on_device(&planes)?;
            Ok(Resident::Device(planes))
        }
        #[cfg(feature = "gpu")]
        (Backend::Gpu(gpu), Resident::Host(indices))
            if super::device::decodes(gpu, header, w, h) =>
        {
            use super::device;
            let comps = header.components as usize;
            let planes = device::upload(gpu, &indices, w * h, comps).map_err(device::gpu_err)?;
            drop(indices);
            on_device(&planes)?;
            Ok(Resident::Device(planes))
        }
        (_, Resident::Host(indices)) => Ok(Resident::Host(host_dequantize(
            header, blocks, indices, w, h,
        ))),
    }
}

/// Quantizes every coefficient into one array of `components x width x
/// height` indices (component planes back to back, Mallat layout); returns
/// it with the squared error of a full-rate reconstruction, weighted like
/// rate control's distortion, and the coefficients if `keep`.
fn host_quantize(
    header: &Header,
    coefficients: Coefficients,
    blocks: &[BlockGeometry],
    keep: bool,
) -> (Vec<i32>, f64, Option<Coefficients>) {
    let unit_steps = header.steps.iter().flatten().all(|s| s.q16() == UNIT_STEP);
    if let Coefficients::Int(p) = &coefficients {
        // Unit steps on integers: every index is its coefficient (the
        // planes are laid out as the index array, and the blocks tile
        // them), and reconstructs exactly unless it is i32::MIN (see
        // below). Moving the array instead of copying it saves a third of
        // a lossless encode's fresh pages.
        if unit_steps && !keep && !p.data.par_iter().any(|&v| v == i32::MIN) {
            let Coefficients::Int(p) = coefficients else {
                unreachable!()
            };
            return (p.data, 0.0, None);
        }
    }
    let (w, h) = (header.width as usize, header.height as usize);
    let plane = w * h;
    let mut out = vec![0i32; plane * header.components as usize];
    // Blocks tile the planes: quantizing the blocks that cover each row
    // covers every coefficient once.
    let mut by_row: Vec<Vec<u32>> = vec![Vec::new(); h * header.components as usize];
    for (i, b) in blocks.iter().enumerate() {
        for y in b.rect.y..b.rect.y + b.rect.height {
            by_row[b.component as usize * h + y].push(i as u32);
        }
    }
    // Each block's weight once, not once per row it covers: the weight
    // reads the memoized subband energy through a global mutex, and an 8K
    // RGB image has 1.5 million (row, block) pairs, which on 16 threads
    // serialized on that lock (docs/perf/codec.md, "The quantize stage").
    let weights = block_weights(header, blocks);
    // Integer coefficients: each (row, block)'s exact squared error, added
    // into each block's below (`block_noise`). f32 ones: the weighted
    // noise of each row in f64.
    let rows: Vec<(f64, Vec<u64>)> = out
        .par_chunks_mut(w)
        .enumerate()
        .map(|(row, dst)| {
            let (c, y) = (row / h, row % h);
            let mut noise = 0.0;
            let mut errors = Vec::new();
            for &i in &by_row[row] {
                let b = &blocks[i as usize];
                let q16 = header.step(c, b.band as usize).q16();
                let half = quant::half_bin(q16, 0);
                let span = b.rect.x..b.rect.x + b.rect.width;
                match &coefficients {
                    Coefficients::Int(p) if q16 == UNIT_STEP => {
                        // Lossless steps: the index is the coefficient and
                        // reconstructs exactly, except i32::MIN (one off
                        // after saturation); skipping the u128 arithmetic
                        // of the general path is most of this stage's time.
                        let src = &p.plane(c)[y * w..(y + 1) * w];
                        dst[span.clone()].copy_from_slice(&src[span.clone()]);
                        errors.push(src[span].iter().filter(|&&v| v == i32::MIN).count() as u64);
                    }
                    Coefficients::Int(p) => {
                        let src = &p.plane(c)[y * w..(y + 1) * w];
                        let mut err = 0u64;
                        for x in span {
                            let q = quant::quantize_i32(src[x], q16);
                            let e = src[x] as i64 - quant::dequantize_i32(q, 0, q16, half) as i64;
                            err = err
                                .saturating_add(e.unsigned_abs().saturating_mul(e.unsigned_abs()));
                            dst[x] = q;
                        }
                        errors.push(err);
                    }
                    Coefficients::Float(p) => {
                        let src = &p.plane(c)[y * w..(y + 1) * w];
                        let mut err = 0.0;
                        for x in span {
                            let q = quant::quantize_f32(src[x], q16);
                            let e = (src[x] - quant::dequantize_f32(q, 0, q16, half)) as f64;
                            err += e * e;
                            dst[x] = q;
                        }
                        let weight = weights[i as usize];
                        noise += err * weight / (header.step(c, b.band as usize).value().powi(2));
                    }
                }
            }
            (noise, errors)
        })
        .collect();
    let noise = match &coefficients {
        Coefficients::Int(_) => {
            let mut errors = vec![0u64; blocks.len()];
            for (row, (_, row_errors)) in rows.iter().enumerate() {
                for (&i, &e) in by_row[row].iter().zip(row_errors) {
                    errors[i as usize] = errors[i as usize].saturating_add(e);
                }
            }
            block_noise(header, blocks, &errors, &weights)
        }
        Coefficients::Float(_) => rows.iter().map(|(n, _)| n).sum(),
    };
    (out, noise, keep.then_some(coefficients))
}

/// Whether a block's decode got into bitplane 0.
fn reached_plane0(header: &Header, top: Option<u8>, d: &BlockDecoded) -> bool {
    match top {
        Some(m) if d.passes_completed > 0 => {
            PassSchedule::pass(header.mode(), m, d.passes_completed - 1).1 == 0
        }
        _ => false,
    }
}

/// How a decoded block's indices are reconstructed.
struct Rule {
    /// Bitplanes dropped by early termination.
    shift: u8,
    /// The step in Q16.
    q16: u64,
    /// Mid-bin reconstruction (the decode reached bitplane 0).
    half: bool,
}

/// Every decoded block's [`Rule`].
fn rules(header: &Header, blocks: &Decodable<'_>) -> Vec<Rule> {
    let Decodable {
        blocks,
        shifts,
        tops,
        summaries,
    } = *blocks;
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let q16 = header.step(b.component as usize, b.band as usize).q16();
            let shift = shifts[i];
            let half =
                quant::half_bin(q16, shift) && reached_plane0(header, tops[i], &summaries[i]);
            Rule { shift, q16, half }
        })
        .collect()
}

/// Turns decoded indices (component planes of `w x h`) into coefficients.
fn host_dequantize(
    header: &Header,
    blocks: &Decodable<'_>,
    mut indices: Vec<i32>,
    w: usize,
    h: usize,
) -> Coefficients {
    let rules = rules(header, blocks);
    let blocks = blocks.blocks;
    let mut by_row: Vec<Vec<u32>> = vec![Vec::new(); h * header.components as usize];
    for (i, b) in blocks.iter().enumerate() {
        for y in b.rect.y..b.rect.y + b.rect.height {
            by_row[b.component as usize * h + y].push(i as u32);
        }
    }
    let plane = w * h;
    let components = header.components as usize;
    if header.wavelet == Wavelet::Cdf97 {
        let mut out = vec![0f32; plane * components];
        out.par_chunks_mut(w)
            .zip(indices.par_chunks(w))
            .enumerate()
            .for_each(|(row, (dst, src))| {
                for &i in &by_row[row] {
                    let (b, r) = (&blocks[i as usize], &rules[i as usize]);
                    for x in b.rect.x..b.rect.x + b.rect.width {
                        dst[x] = quant::dequantize_f32(src[x], r.shift, r.q16, r.half);
                    }
                }
            });
        Coefficients::Float(Planes::new(out, plane))
    } else {
        indices
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(row, line)| {
                for &i in &by_row[row] {
                    let (b, r) = (&blocks[i as usize], &rules[i as usize]);
                    if r.q16 == UNIT_STEP && r.shift == 0 {
                        continue; // lossless: the index is the coefficient
                    }
                    for v in &mut line[b.rect.x..b.rect.x + b.rect.width] {
                        *v = quant::dequantize_i32(*v, r.shift, r.q16, r.half);
                    }
                }
            });
        Coefficients::Int(Planes::new(indices, plane))
    }
}
