//! The encoder: [`encode_image`] is the list of stages (docs/codec.md,
//! "Encoder"). Each stage is a call into a module of [`super::stages`],
//! which runs it on the CPU or the GPU; the models rate control decides
//! by ([`super::distortion`], [`super::points`], [`super::early`]) and
//! the table fit ([`super::table_fit`]) sit between them.

use std::borrow::Cow;
use std::time::Instant;

use super::codeblocks::{codeblocks, BlockGeometry};
use super::distortion::{self, BlockDistortion, Real};
use super::early;
use super::error::CodecError;
use super::format::wavelet_name;
use super::header::Header;
use super::image::Image;
use super::index::BlockIndex;
use super::input::Input;
use super::interleaved::Interleaved;
use super::options::{EncodeOptions, RateTarget, TableChoice};
use super::plan::{self, plan, Plan};
use super::points::{rate_points, RatePoints};
use super::psnr_search;
use super::rate::{Allocation, LayerTarget};
use super::report::{EncodeReport, Encoded, StageClock, StageTimes};
use super::stages::codeblocks::Formed;
use super::stages::entropy::{self, Coded, Records};
use super::stages::rate::RateControl;
use super::stages::{self, quantize::Quantized};
use super::table_fit;
use super::weights::{size_model, warm_energies};
use crate::backend::Backend;
use crate::bpc::CodeblockBatch;
use wavelane_core::dwt::Wavelet;

/// Encodes `image`.
pub fn encode(
    image: &Image,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    encode_image(Input::Planes(Cow::Borrowed(image)), options, backend)
}

/// [`encode`] of samples interleaved at their own width, as image files
/// and arrays hold them: the GPU backend uploads them as they are (no
/// `i32` planes to make first), the CPU backend splits them into its
/// planes in the level shift's pass. The same file as [`encode`] of
/// [`Interleaved::to_image`].
pub fn encode_interleaved(
    image: &Interleaved,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    encode_image(Input::Interleaved(image), options, backend)
}

/// [`encode`] of an image the caller has no further use for: its planes
/// become the transform's input instead of being copied (the same file).
pub fn encode_owned(
    image: Image,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    encode_image(Input::Planes(Cow::Owned(image)), options, backend)
}

/// Finer steps tried when a PSNR target is out of reach at the planned one.
const PSNR_STEP_HALVINGS: usize = 3;

/// [`encode_at_step`], and for a PSNR target the planned step cannot reach
/// even with every pass kept (the dead-zone quantizer's noise on small
/// coefficients can exceed the plan's estimate several-fold), again with
/// the step halved, up to [`PSNR_STEP_HALVINGS`] times. A step the caller
/// chose is kept.
fn encode_image(
    image: Input<'_>,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    #[cfg(all(feature = "gpu", feature = "internals"))]
    crate::backend::gpu::fault::encode_started(image.shape().width, image.shape().height);
    let RateTarget::Psnr(target) = options.target else {
        return encode_at_step(image, options, backend);
    };
    let start = Instant::now();
    let adjustable = options.base_step.is_none() && plan::wavelet_of(options) != Wavelet::Cdf53;
    let short = |e: &Encoded| e.report.measured_psnr.is_some_and(|m| m < target);
    let mut encoded = encode_at_step(image.borrowed(), options, backend)?;
    let mut step = plan::lossy_base_step(image.shape().bit_depth, options);
    for _ in 0..PSNR_STEP_HALVINGS {
        if !adjustable || !short(&encoded) {
            break;
        }
        step /= 2.0;
        let finer = EncodeOptions {
            base_step: Some(step),
            ..options.clone()
        };
        encoded = encode_at_step(image.borrowed(), &finer, backend)?;
    }
    encoded.report.seconds.total = start.elapsed().as_secs_f64();
    Ok(encoded)
}

fn encode_at_step(
    image: Input<'_>,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    let mut clock = StageClock::new(backend);
    let start = clock.start();
    let mut seconds = StageTimes::default();
    let samples = image.shape().samples() as f64;
    // A PSNR target compares decoded candidates with the image, so it
    // outlives the front end; other targets let it have the image.
    let (front, image) = match options.target {
        RateTarget::Psnr(_) => (
            front(image.borrowed(), options, backend, &mut seconds, &mut clock)?,
            Some(image),
        ),
        _ => (
            front(image, options, backend, &mut seconds, &mut clock)?,
            None,
        ),
    };
    let Front {
        header,
        lossless,
        blocks,
        mut formed,
        real,
        noise,
    } = front;
    let t = clock.start();
    let shifts = early_termination(
        &header,
        &blocks,
        &mut formed,
        options.target,
        noise,
        backend,
    )?;
    // Rate decisions need the real-valued decreases (see `distortion`);
    // lossless and full-rate files include everything anyway.
    let real = match real {
        Some(Real::Sums(sums)) => Some(distortion::from_sums(&header, &sums, &blocks, &shifts)),
        Some(Real::Float(c)) => Some(distortion::float_distortions(
            &header,
            &c,
            &blocks,
            formed.host()?,
            &shifts,
        )),
        None => None,
    };
    seconds.quantize += clock.stop(t, "distortion");

    let coding = code(
        header,
        &blocks,
        formed,
        &shifts,
        real.as_deref(),
        options,
        backend,
        &mut clock,
    )?;
    seconds.entropy = coding.seconds;

    let t = clock.start();
    let noise = if real.is_some() {
        coding.points.noise
    } else {
        noise
    };
    let image = image.as_ref().map(|i| i.planes());
    let image = image.as_deref();
    let rated = rate_and_pack(
        &coding,
        shifts,
        real.is_some(),
        noise,
        image,
        options.target,
        backend,
    )?;
    seconds.rate = clock.stop(t, "rate");
    seconds.total = start.seconds();
    Ok(report(
        &coding, &blocks, rated, lossless, noise, samples, seconds, clock, backend,
    ))
}

/// The encoder's front half: checked parameters, codeblocks, their
/// quantization indices where they lie, what the real-valued distortions
/// need and the full-rate quantization noise estimate.
struct Front {
    header: Header,
    lossless: bool,
    blocks: Vec<BlockGeometry>,
    formed: Formed,
    /// What the real-valued distortions need, where rate control needs
    /// them (`--bpp`, `--psnr`).
    real: Option<Real>,
    noise: f64,
}

/// Options and planning, colour, DWT, quantization, codeblock formation,
/// and the tables fitted to the codeblocks where the options ask for it.
fn front(
    image: Input<'_>,
    options: &EncodeOptions,
    backend: &Backend,
    seconds: &mut StageTimes,
    clock: &mut StageClock<'_>,
) -> Result<Front, CodecError> {
    image.validate()?;
    let shape = image.shape();
    let Plan {
        mut header,
        lossless,
    } = plan(&shape, options)?;
    let (w, h, comps) = (shape.width, shape.height, shape.components);
    let levels = header.levels as u32;
    let t = clock.start();
    let samples = stages::colour::forward(backend, image, &header)?;
    seconds.transform = clock.stop(t, "colour");
    let t = clock.start();
    let coefficients = stages::dwt::forward(samples, header.wavelet, w, h, levels, backend)?;
    seconds.transform += clock.stop(t, "dwt");
    let t = clock.start();
    let blocks = codeblocks(w, h, comps, levels, header.codeblock_height as usize);
    // Rate decisions need the real-valued decreases (see `distortion`).
    let wants_real = matches!(options.target, RateTarget::Bpp(_) | RateTarget::Psnr(_));
    let Quantized {
        indices,
        noise,
        real,
    } = stages::quantize::quantize(backend, &header, coefficients, &blocks, wants_real)?;
    let mut formed = stages::codeblocks::form(backend, &header, &blocks, indices)?;
    let sample = match options.tables {
        TableChoice::Trained => Some(1),
        TableChoice::Default if lossless => Some(table_fit::lossless_fit_sample(w * h * comps)),
        _ => None,
    };
    if let Some(every) = sample {
        header.tables =
            table_fit::fit_sampled(&header, &mut formed, every, options.table_row_offset)?;
    }
    seconds.quantize = clock.stop(t, "quantize");
    Ok(Front {
        header,
        lossless,
        blocks,
        formed,
        real,
        noise,
    })
}

/// The quantization indices of every codeblock of `image` as `options`
/// would code them (for training probability tables).
pub(crate) fn codeblock_batch(
    image: &Image,
    options: &EncodeOptions,
) -> Result<CodeblockBatch, CodecError> {
    // The tables do not change the indices; a preset skips fitting them.
    let options = EncodeOptions {
        tables: TableChoice::Preset(super::presets::PRESET_REFERENCE),
        table_row_offset: None,
        ..options.clone()
    };
    front(
        Input::Planes(Cow::Borrowed(image)),
        &options,
        &Backend::Cpu,
        &mut StageTimes::default(),
        &mut StageClock::new(&Backend::Cpu),
    )?
    .formed
    .into_host()
}

/// Early termination ([`early`]): each block's bitplane shift, applied to
/// its indices in `batch`; all zero unless the header carries shifts.
fn early_termination(
    header: &Header,
    blocks: &[BlockGeometry],
    formed: &mut Formed,
    target: RateTarget,
    noise: f64,
    backend: &Backend,
) -> Result<Vec<u8>, CodecError> {
    if !header.block_shifts {
        return Ok(vec![0; blocks.len()]);
    }
    let (w, h) = (header.width as usize, header.height as usize);
    let peak = ((1u64 << header.bit_depth) - 1) as f64;
    let target = match target {
        RateTarget::Bpp(bpp) => LayerTarget::Bytes((bpp * (w * h) as f64 / 8.0) as u64),
        RateTarget::Psnr(p) => {
            let wanted = peak * peak * header.samples() as f64 / 10f64.powf(p / 10.0);
            LayerTarget::Distortion((wanted - noise).max(0.0))
        }
        RateTarget::Lossless | RateTarget::AllPasses => LayerTarget::All,
    };
    let shifts = early::choose_shifts(header, blocks, formed.host()?, target, backend)?;
    if shifts.iter().any(|&s| s > 0) {
        // The shifts moved the host's indices; the device's are stale.
        formed.drop_device();
    }
    Ok(shifts)
}

/// The entropy stage's result with the header it coded under.
struct Coding {
    header: Header,
    coded: Coded,
    points: RatePoints,
    needs: Records,
    /// Seconds of the stages it took: the coding, the rate points and,
    /// with the lossy table fit, the fit, the recoding and its points.
    seconds: f64,
}

/// Entropy coding, and for `--bpp` and `--psnr` targets with the default
/// tables the truncation-aware table fit ([`table_fit`]): recoded with the
/// fitted tables, kept if rate control predicts a better file. Each step
/// is a stage of `clock`'s report.
#[allow(clippy::too_many_arguments)]
fn code(
    header: Header,
    blocks: &[BlockGeometry],
    mut formed: Formed,
    shifts: &[u8],
    real: Option<&[BlockDistortion]>,
    options: &EncodeOptions,
    backend: &Backend,
    clock: &mut StageClock<'_>,
) -> Result<Coding, CodecError> {
    // Rate control that truncates may cut a block after any codeword; a
    // lossless single-layer file keeps every pass, so its allocation needs
    // no distortion (docs/history/codec.md).
    let needs = if real.is_some() {
        Records::Cuts
    } else if options.target == RateTarget::Lossless && header.layers == 1 {
        Records::Totals
    } else {
        Records::Passes
    };
    // Rate control asks for every subband's synthesis energy, tens of
    // microseconds each the first time (memoized): computed by the other
    // thread beside the entropy stage rather than serially after it. Pass
    // ends without decreases need no weights (`rate_points`), and the
    // entropy stage gets both threads.
    let weighed = !matches!(needs, Records::PassEnds | Records::Totals);
    let t = clock.start();
    let (coded, ()) = rayon::join(
        || entropy::encode(&header, &mut formed, shifts, needs, backend),
        || {
            if weighed {
                warm_energies(&header, blocks)
            }
        },
    );
    let coded = coded?;
    let mut seconds = clock.stop(t, "entropy");
    let t = clock.start();
    let points = rate_points(&header, blocks, &coded, shifts, real);
    seconds += clock.stop(t, "rate points");
    let mut coding = Coding {
        header,
        coded,
        points,
        needs,
        seconds,
    };
    let fit_lossy = options.tables == TableChoice::Default
        && !coding.header.block_shifts
        && matches!(options.target, RateTarget::Bpp(_) | RateTarget::Psnr(_));
    if fit_lossy {
        let Coding {
            header,
            coded,
            points,
            ..
        } = &coding;
        let t = clock.start();
        let first = table_fit::first_allocation(header, coded, points, options.target)?;
        let fit = table_fit::truncation_fit(
            header,
            &mut formed,
            &coded.records,
            &first,
            options.table_row_offset,
        )?;
        let mut seconds = clock.stop(t, "table fit");
        if let Some(tables) = fit {
            let fitted = Header {
                tables,
                ..header.clone()
            };
            let t = clock.start();
            let recoded = entropy::encode(&fitted, &mut formed, shifts, needs, backend)?;
            seconds += clock.stop(t, "recode");
            let t = clock.start();
            let recoded_points = rate_points(&fitted, blocks, &recoded, shifts, real);
            let second =
                table_fit::first_allocation(&fitted, &recoded, &recoded_points, options.target)?;
            seconds += clock.stop(t, "recode points");
            if table_fit::improves(&first, &second, options.target) {
                coding.header = fitted;
                coding.coded = recoded;
                coding.points = recoded_points;
            }
        }
        coding.seconds += seconds;
    }
    Ok(coding)
}

/// A file and the allocation it was written with.
struct Rated {
    bytes: Vec<u8>,
    alloc: Allocation,
    measured_psnr: Option<f64>,
    bitplanes_skipped: u64,
}

/// Rate control and packing: the allocation for the target (for `--psnr`,
/// the best of the search's candidates) and the file it gives. `noise` is
/// the distortion left with every pass, exact where the decreases are
/// `real`-valued; `image` is kept for `--psnr`.
fn rate_and_pack(
    coding: &Coding,
    shifts: Vec<u8>,
    real: bool,
    noise: f64,
    image: Option<&Image>,
    target: RateTarget,
    backend: &Backend,
) -> Result<Rated, CodecError> {
    let Coding {
        header,
        coded,
        points,
        ..
    } = coding;
    let blocks = coded.encoded.tops.len();
    let mut index = BlockIndex::new(blocks, header.layers as usize);
    index.tops.clone_from(&coded.encoded.tops);
    index.shifts = shifts;
    let bitplanes_skipped = index.shifts.iter().map(|&s| s as u64).sum();
    // With real-valued decreases the distortion left after every pass is
    // known exactly (`noise`), and the total is what truncation can remove.
    let total = if real {
        points.total - noise
    } else {
        points.total
    };
    let control = RateControl {
        hulls: &points.hulls,
        model: size_model(header, &index)?,
        total,
    };
    let mut pack =
        |alloc: &Allocation| stages::pack::pack(backend, header, &mut index, alloc, coded);
    let last = match target {
        RateTarget::Lossless | RateTarget::AllPasses => LayerTarget::All,
        RateTarget::Bpp(bpp) => {
            let pixels = header.width as usize * header.height as usize;
            LayerTarget::Bytes((bpp * pixels as f64 / 8.0).floor() as u64)
        }
        RateTarget::Psnr(p) => {
            let image = image.expect("a PSNR target keeps the image");
            let (bytes, alloc, measured) =
                psnr_search::search(image, p, noise, backend, |limit| {
                    let alloc = control.allocate(backend, LayerTarget::Distortion(limit));
                    Ok((pack(&alloc)?, alloc))
                })?;
            return Ok(Rated {
                bytes,
                alloc,
                measured_psnr: Some(measured),
                bitplanes_skipped,
            });
        }
    };
    let alloc = control.allocate(backend, last);
    Ok(Rated {
        bytes: pack(&alloc)?,
        alloc,
        measured_psnr: None,
        bitplanes_skipped,
    })
}

/// The encoder's report.
#[allow(clippy::too_many_arguments)]
fn report(
    coding: &Coding,
    blocks: &[BlockGeometry],
    rated: Rated,
    lossless: bool,
    noise: f64,
    samples: f64,
    seconds: StageTimes,
    clock: StageClock<'_>,
    backend: &Backend,
) -> Encoded {
    let Coding {
        header,
        coded,
        needs,
        ..
    } = coding;
    let Rated {
        bytes,
        alloc,
        measured_psnr,
        bitplanes_skipped,
    } = rated;
    let (stages, transfers) = clock.finish();
    let pixels = header.width as f64 * header.height as f64;
    let peak = ((1u64 << header.bit_depth) - 1) as f64;
    let to_psnr = |d: f64| 10.0 * (peak * peak * samples / d.max(f64::MIN_POSITIVE)).log10();
    let estimated_psnr = (!lossless)
        .then(|| to_psnr(alloc.remaining.last().copied().unwrap_or(0.0).max(0.0) + noise));
    let report = EncodeReport {
        backend: backend.describe(),
        bytes: bytes.len(),
        bpp: bytes.len() as f64 * 8.0 / pixels,
        layer_bytes: alloc.bytes.clone(),
        estimated_psnr,
        measured_psnr,
        wavelet: wavelet_name(header.wavelet),
        levels: header.levels,
        codeblocks: blocks.len(),
        // Totals stand for every pass of the schedule (a lossless file
        // codes them all); the other records list the passes coded.
        passes_coded: match needs {
            Records::Totals => (coded.encoded.tops.iter())
                .map(|&top| wavelane_core::bpc::pass_count(header.mode(), top) as u64)
                .sum(),
            _ => coded.records.iter().map(|r| r.len() as u64).sum(),
        },
        bitplanes_skipped,
        seconds,
        stages,
        transfers,
    };
    Encoded { bytes, report }
}
