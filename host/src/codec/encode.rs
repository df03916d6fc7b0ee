//! The encoder pipeline (docs/codec.md, "Encoder").

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use wavelane_core::bpc::{Mode, ProbabilityTables};
use wavelane_core::dwt::{gains, max_levels, Orientation, Wavelet};

use super::codeblocks::{codeblocks, BlockGeometry};
use super::colour;
use super::distortion;
use super::early;
use super::entropy;
use super::file::write_file;
use super::format::{ColourTransform, MAX_FRACTION_BITS};
use super::header::{Header, QuantStep, Tables};
use super::index::{se_bits, ue_bits, BlockIndex};
use super::points::{first_allocation, improves, rate_points, truncation_fit, RatePoints};
use super::quant::{self, UNIT_STEP};
use super::rate::{allocate, Allocation, LayerTarget, SizeModel};
use super::tables;
use super::transform::{self, Coefficients, Planes};
use super::{decode, CodecError, DecodeOptions, Image};
use crate::backend::Backend;
use crate::bpc::CodeblockBatch;

/// What the encoder aims for.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateTarget {
    /// Bit-exact reconstruction (5/3, RCT, every pass).
    Lossless,
    /// At most this many bits per pixel for the whole file.
    Bpp(f64),
    /// The smallest file whose PSNR reaches this (dB).
    Psnr(f64),
    /// Every pass of the lossy quantization (quality set by the step).
    AllPasses,
}

/// Which probability tables to code with.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TableChoice {
    /// The built-in natural-image preset of the wavelet's path
    /// ([`tables::default_preset`]), rows moved to the image's scale; for
    /// lossless targets fitted like [`TableChoice::Trained`], on large
    /// images on a sample of the codeblocks ([`tables::lossless_fit_sample`]);
    /// for `--bpp` and `--psnr` targets (without early termination) fitted to
    /// the symbols of the passes a first allocation keeps, and kept when rate
    /// control predicts a better file (a fit on every symbol did not pay
    /// there: docs/history/codec.md).
    #[default]
    Default,
    /// The built-in natural-image preset of the wavelet's path, rows moved to
    /// the image's scale, never fitted ([`TableChoice::Default`] without the
    /// lossless fit).
    Natural,
    /// A built-in preset by id ([`super::tables`]), rows moved to the
    /// image's scale ([`tables::row_offset`]), not fitted.
    Preset(u8),
    /// These tables, embedded in the file.
    Custom(Box<ProbabilityTables>),
    /// The default preset fitted to the symbols of every codeblock: the row
    /// offset within one of the default that codes them in the fewest bits,
    /// and the cells worth changing stored as a change list in the header
    /// ([`super::adapt`]) when that saves more than it costs. Counting the
    /// symbols is one more coding pass.
    Trained,
}

/// Default codeblock height of lossless files.
pub const LOSSLESS_CODEBLOCK_HEIGHT: u16 = 64;

/// Default codeblock height of lossy files: the tallest. Every codeblock
/// that a file codes in part pays for its 32 lanes' unfinished codewords
/// where rate control cuts it (about a byte per lane), so fewer, taller
/// blocks waste less of a small budget: +0.2 dB at 1 bpp over 64 rows
/// (docs/history/codec.md, 2026-11-24).
pub const LOSSY_CODEBLOCK_HEIGHT: u16 = 256;

/// Encoder settings; `None` fields take the documented defaults.
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Rate or quality target.
    pub target: RateTarget,
    /// Wavelet (default: 5/3 lossless, fixed-point 9/7 lossy).
    pub wavelet: Option<Wavelet>,
    /// Decomposition levels (default `min(5, max for the size)`).
    pub levels: Option<u8>,
    /// BPC-PaCo passes per bitplane, 2 or 3 (default 3: 0.3 dB and 1% of
    /// lossless size better than 2 on photographs, docs/history/codec.md).
    pub passes: u8,
    /// Quality layers, 1..=32.
    pub layers: u8,
    /// Codeblock height, 1..=256 (default: [`LOSSLESS_CODEBLOCK_HEIGHT`]
    /// lossless, [`LOSSY_CODEBLOCK_HEIGHT`] for other targets).
    pub codeblock_height: Option<u16>,
    /// Colour transform (default: RCT lossless, ICT lossy, with >= 3 components).
    pub colour: Option<ColourTransform>,
    /// Probability tables.
    pub tables: TableChoice,
    /// Bitplanes a preset's rows are moved up (down when negative); `None`
    /// picks [`tables::row_offset`] from the bit depth and step. Presets
    /// only, -14..=14.
    pub table_row_offset: Option<i8>,
    /// Predict which low bitplanes rate control will drop and do not code
    /// them (lossy targets only; see docs/codec.md).
    pub early_termination: bool,
    /// Base quantization step in sample units (default `2^(bit_depth-8)`).
    pub base_step: Option<f64>,
    /// Fractional bits through the transform (default: 0 lossless, else up
    /// to 4 as the sample range allows).
    pub fraction_bits: Option<u8>,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            target: RateTarget::Lossless,
            wavelet: None,
            levels: None,
            passes: 3,
            layers: 1,
            codeblock_height: None,
            colour: None,
            tables: TableChoice::Default,
            table_row_offset: None,
            early_termination: false,
            base_step: None,
            fraction_bits: None,
        }
    }
}

impl EncodeOptions {
    /// Lossless with every default.
    pub fn lossless() -> Self {
        EncodeOptions::default()
    }

    /// `bpp` bits per pixel with every default.
    pub fn bpp(bpp: f64) -> Self {
        EncodeOptions {
            target: RateTarget::Bpp(bpp),
            ..EncodeOptions::default()
        }
    }
}

/// Seconds spent per stage.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct StageTimes {
    /// Level shift, colour transform and DWT.
    pub transform: f64,
    /// Quantization and codeblock set-up (and early-termination analysis).
    pub quantize: f64,
    /// BPC-PaCo coding of every codeblock.
    pub entropy: f64,
    /// PCRD-Opt and file assembly (and PSNR refinement decodes).
    pub rate: f64,
    /// Everything.
    pub total: f64,
}

/// What the encoder did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EncodeReport {
    /// Where it ran.
    pub backend: String,
    /// File size.
    pub bytes: usize,
    /// Bits per pixel of the file.
    pub bpp: f64,
    /// File size through each layer.
    pub layer_bytes: Vec<u64>,
    /// PSNR the rate-control model predicts (lossy), dB.
    pub estimated_psnr: Option<f64>,
    /// PSNR measured by decoding (only `--psnr` targets decode), dB.
    pub measured_psnr: Option<f64>,
    /// Wavelet name.
    pub wavelet: &'static str,
    /// Decomposition levels.
    pub levels: u8,
    /// Codeblocks.
    pub codeblocks: usize,
    /// Coding passes run over all codeblocks.
    pub passes_coded: u64,
    /// Bitplanes early termination skipped, over all codeblocks.
    pub bitplanes_skipped: u64,
    /// Seconds per stage.
    pub seconds: StageTimes,
}

/// An encoded file and its report.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The `.wl` bytes.
    pub bytes: Vec<u8>,
    /// What happened.
    pub report: EncodeReport,
}

/// Resolved coding parameters (the header without its steps' origin).
struct Plan {
    header: Header,
    lossless: bool,
}

fn plan(image: &Image, o: &EncodeOptions) -> Result<Plan, CodecError> {
    let opt = |m: String| Err(CodecError::Options(m));
    let lossless = o.target == RateTarget::Lossless;
    match o.target {
        RateTarget::Bpp(b) if !(b > 0.0 && b.is_finite()) => {
            return opt(format!("--bpp {b} must be > 0"))
        }
        RateTarget::Psnr(p) if !(p > 0.0 && p.is_finite()) => {
            return opt(format!("--psnr {p} must be > 0"))
        }
        _ => {}
    }
    let wavelet = o.wavelet.unwrap_or(if lossless {
        Wavelet::Cdf53
    } else {
        Wavelet::Fixed97
    });
    if lossless && wavelet != Wavelet::Cdf53 {
        return opt("lossless coding needs the 5/3 wavelet".into());
    }
    let max = max_levels(image.width, image.height).min(super::format::MAX_LEVELS as u32) as u8;
    let levels = o
        .levels
        .unwrap_or(5)
        .min(if o.levels.is_some() { u8::MAX } else { max });
    if levels > max {
        return opt(format!(
            "{levels} levels: a {}x{} image allows at most {max}",
            image.width, image.height
        ));
    }
    let three = image.components() >= 3;
    let colour = o.colour.unwrap_or(match (three, lossless) {
        (false, _) => ColourTransform::None,
        (true, true) => ColourTransform::Rct,
        (true, false) => ColourTransform::Ict,
    });
    if colour != ColourTransform::None && !three {
        return opt("a colour transform needs at least 3 components".into());
    }
    if lossless && colour == ColourTransform::Ict {
        return opt("the ICT is irreversible; lossless coding uses the RCT or none".into());
    }
    let integer_exact = wavelet == Wavelet::Cdf53;
    let fraction_bits = match o.fraction_bits {
        Some(f) if integer_exact && f > 0 => {
            return opt("the 5/3 path carries no fractional bits".into())
        }
        Some(f) if f > MAX_FRACTION_BITS => return opt(format!("{f} fractional bits (at most 8)")),
        Some(f) => f,
        None if integer_exact => 0,
        // Keep 16-bit samples, the colour transform and the transform's gain
        // well below the coder's 2^28 limit.
        None => (24i32 - image.bit_depth as i32 - (levels as i32 * 3 + 4) / 5).clamp(0, 4) as u8,
    };
    let mode = Mode::from_passes(o.passes).ok_or(CodecError::Options(format!(
        "--passes {} (2 or 3)",
        o.passes
    )))?;
    // The 5/3 codes at step 1 (its row offset ignores the base step).
    let mut base = 1.0;
    let steps = if integer_exact {
        vec![QuantStep::ONE; 1 + 3 * levels as usize]
    } else {
        base = o.base_step.unwrap_or((image.bit_depth as f64 - 8.0).exp2());
        if let RateTarget::Psnr(p) = o.target {
            // Full-rate quantization noise a quarter of the target's.
            let peak = ((1u32 << image.bit_depth) - 1) as f64;
            let mse = peak * peak / 10f64.powf(p / 10.0);
            base = base.min((12.0 * mse).sqrt() / 2.0);
        }
        if !(base > 0.0 && base.is_finite()) {
            return opt(format!("quantization step {base} must be > 0"));
        }
        let scale = base * (fraction_bits as f64).exp2();
        wavelane_core::dwt::subbands(image.width, image.height, levels as u32)
            .map_err(|e| CodecError::Options(e.to_string()))?
            .map(|b| {
                QuantStep::from_value(
                    scale / gains::subband_norm(wavelet, b.level as u32, b.orientation),
                )
            })
            .collect()
    };
    if !(1..=super::format::MAX_LAYERS).contains(&o.layers) {
        return opt(format!("{} layers (1..=32)", o.layers));
    }
    let row_offset = match (o.table_row_offset, &o.tables) {
        (None, _) => tables::row_offset(image.bit_depth, wavelet, base),
        (Some(_), TableChoice::Custom(_)) => {
            return opt("a table row offset applies to built-in presets only".into())
        }
        (Some(k), _) if k.unsigned_abs() > tables::MAX_ROW_OFFSET as u8 => {
            return opt(format!("table row offset {k} (-14..=14)"))
        }
        (Some(k), _) => k,
    };
    let preset = |id: u8| Tables::preset(id, mode, row_offset);
    let tables = match &o.tables {
        // Trained tables replace these once the codeblocks exist.
        TableChoice::Default | TableChoice::Natural | TableChoice::Trained => {
            preset(tables::default_preset(wavelet)).expect("the default presets exist")
        }
        TableChoice::Preset(id) => match preset(*id) {
            Some(t) => t,
            None => return opt(format!("no probability-table preset {id}")),
        },
        TableChoice::Custom(t) if t.mode() != mode => {
            return opt("the probability tables are for the other pass mode".into())
        }
        TableChoice::Custom(t) => Tables::Embedded(t.clone()),
    };
    let header = Header {
        width: image.width as u32,
        height: image.height as u32,
        components: image.components() as u8,
        bit_depth: image.bit_depth,
        signed: image.signed,
        colour,
        wavelet,
        levels,
        codeblock_height: o.codeblock_height.unwrap_or(if lossless {
            LOSSLESS_CODEBLOCK_HEIGHT
        } else {
            LOSSY_CODEBLOCK_HEIGHT
        }),
        tables,
        fraction_bits,
        layers: o.layers,
        block_shifts: o.early_termination && !lossless,
        steps: vec![steps],
    };
    header.validate()?;
    Ok(Plan { header, lossless })
}

/// [`gains::subband_energy`], memoized: it runs filter cascades (tens of
/// microseconds) and rate control asks for it once per codeblock, which was
/// 60% of a lossless encode before this cache.
fn subband_energy(wavelet: Wavelet, level: u32, orientation: Orientation) -> f64 {
    type Key = (Wavelet, u32, Orientation);
    static CACHE: OnceLock<Mutex<HashMap<Key, f64>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (wavelet, level, orientation);
    if let Some(&e) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return e;
    }
    let e = gains::subband_energy(wavelet, level, orientation);
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, e);
    e
}

/// Squared-error weight of one index unit of a block: step², synthesis
/// energy of its subband, colour weight, fractional bits.
pub(crate) fn block_weight(header: &Header, b: &BlockGeometry) -> f64 {
    let step = header.step(b.component as usize, b.band as usize).value();
    let energy = subband_energy(header.wavelet, b.level as u32, b.orientation);
    let colour = colour::component_weights(header.colour)[b.component as usize];
    step * step * energy * colour / (4f64).powi(header.fraction_bits as i32)
}

/// The encoder's front half: checked parameters, codeblocks, their
/// quantization indices as one batch, the transform coefficients and the
/// full-rate quantization noise estimate.
struct Front {
    header: Header,
    lossless: bool,
    blocks: Vec<BlockGeometry>,
    batch: CodeblockBatch,
    /// The coefficients where rate control needs them (`--bpp`, `--psnr`).
    coefficients: Option<Coefficients>,
    noise: f64,
}

/// The level-shifted samples of every plane in one allocation, laid out as
/// the index array. An owned image gives its first plane's allocation,
/// shifted in place and grown by the others, instead of a fresh copy of
/// every plane: the fresh pages of that copy were a third of a small
/// image's page faults (docs/history/codec.md, session 7).
fn shifted_samples(image: Cow<'_, Image>, header: &Header) -> Planes<i32> {
    let (len, comps) = (image.width * image.height, image.components());
    let (depth, signed, fraction) = (header.bit_depth, header.signed, header.fraction_bits);
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

fn front(
    image: Cow<'_, Image>,
    options: &EncodeOptions,
    backend: &Backend,
    seconds: &mut StageTimes,
) -> Result<Front, CodecError> {
    image.validate()?;
    let Plan {
        mut header,
        lossless,
    } = plan(&image, options)?;
    let (w, h, comps) = (image.width, image.height, image.components());
    let levels = header.levels as u32;
    let t = Instant::now();
    let mut samples = shifted_samples(image, &header);
    colour::forward(header.colour, &mut samples.planes_mut().collect::<Vec<_>>());
    let coefficients = transform::forward(samples, header.wavelet, w, h, levels, backend)?;
    seconds.transform = t.elapsed().as_secs_f64();
    let blocks = codeblocks(w, h, comps, levels, header.codeblock_height as usize);
    // Rate decisions need the real-valued coefficients (see `distortion`).
    let keep = matches!(options.target, RateTarget::Bpp(_) | RateTarget::Psnr(_));
    let (indices, noise, coefficients) = quantize(&header, coefficients, &blocks, keep);
    let batch = entropy::batch(&header, &blocks, indices);
    let sample = match options.tables {
        TableChoice::Trained => Some(1),
        TableChoice::Default if lossless => Some(tables::lossless_fit_sample(w * h * comps)),
        _ => None,
    };
    if let Some(every) = sample {
        let trainer = crate::bpc::train::Trainer::of_batch_sampled(header.mode(), &batch, every)?;
        let scale = sample_scale(&batch, every);
        header.tables = tables::fitted(&header.tables, &trainer, options.table_row_offset, &scale);
    }
    Ok(Front {
        header,
        lossless,
        blocks,
        batch,
        coefficients,
        noise,
    })
}

/// Per table group, the coefficients of all codeblocks over those of the
/// codeblocks a trainer counting one block in `every` saw (1 where it saw
/// none: there are no counts to scale).
fn sample_scale(batch: &CodeblockBatch, every: usize) -> [f64; wavelane_core::bpc::GROUPS] {
    let mut all = [0u64; wavelane_core::bpc::GROUPS];
    let mut counted = [0u64; wavelane_core::bpc::GROUPS];
    for (i, b) in batch.blocks.iter().enumerate() {
        let n = (b.width * b.height) as u64;
        all[b.group] += n;
        if crate::bpc::train::sampled(i, every) {
            counted[b.group] += n;
        }
    }
    core::array::from_fn(|g| match counted[g] {
        0 => 1.0,
        c => all[g] as f64 / c as f64,
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
        tables: TableChoice::Preset(tables::PRESET_REFERENCE),
        table_row_offset: None,
        ..options.clone()
    };
    Ok(front(
        Cow::Borrowed(image),
        &options,
        &Backend::Cpu,
        &mut StageTimes::default(),
    )?
    .batch)
}

/// Encodes `image`.
pub fn encode(
    image: &Image,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    encode_image(Cow::Borrowed(image), options, backend)
}

/// [`encode`] of an image the caller has no further use for: its planes
/// become the transform's input instead of being copied (the same file).
pub fn encode_owned(
    image: Image,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    encode_image(Cow::Owned(image), options, backend)
}

fn encode_image(
    image: Cow<'_, Image>,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Encoded, CodecError> {
    let start = Instant::now();
    let mut seconds = StageTimes::default();
    let t = Instant::now();
    let (w, h, samples) = (image.width, image.height, image.samples() as f64);
    // A PSNR target compares decoded candidates with the image, so it
    // outlives the front end; other targets let it have the image.
    let (front, image) = match options.target {
        RateTarget::Psnr(_) => (
            front(Cow::Borrowed(&*image), options, backend, &mut seconds)?,
            Some(image),
        ),
        _ => (front(image, options, backend, &mut seconds)?, None),
    };
    let Front {
        header,
        lossless,
        blocks,
        mut batch,
        coefficients,
        noise,
    } = front;
    let shifts = if header.block_shifts {
        let peak = ((1u64 << header.bit_depth) - 1) as f64;
        let target = match options.target {
            RateTarget::Bpp(bpp) => LayerTarget::Bytes((bpp * (w * h) as f64 / 8.0) as u64),
            RateTarget::Psnr(p) => {
                let wanted = peak * peak * samples / 10f64.powf(p / 10.0);
                LayerTarget::Distortion((wanted - noise).max(0.0))
            }
            RateTarget::Lossless | RateTarget::AllPasses => LayerTarget::All,
        };
        early::choose_shifts(&header, &blocks, &mut batch, target, backend)?
    } else {
        vec![0; blocks.len()]
    };
    // Rate decisions need the real-valued decreases (see `distortion`);
    // lossless and full-rate files include everything anyway.
    let real =
        coefficients.map(|c| distortion::block_distortions(&header, &c, &blocks, &batch, &shifts));
    seconds.quantize = t.elapsed().as_secs_f64() - seconds.transform;

    let t = Instant::now();
    let mut header = header;
    // Rate control that truncates may cut a block after any codeword; a
    // lossless single-layer file keeps every pass, so its allocation needs
    // no distortion (docs/history/codec.md, session 5: -3% CPU).
    let needs = if real.is_some() {
        entropy::Records::Cuts
    } else if options.target == RateTarget::Lossless && header.layers == 1 {
        entropy::Records::Totals
    } else {
        entropy::Records::Passes
    };
    // Rate control asks for every subband's synthesis energy, tens of
    // microseconds each the first time (memoized): computed by the other
    // thread beside the entropy stage rather than serially after it. Pass
    // ends without decreases need no weights (`rate_points`), and the
    // entropy stage gets both threads.
    let weighed = !matches!(needs, entropy::Records::PassEnds | entropy::Records::Totals);
    let (coded, ()) = rayon::join(
        || entropy::encode(&header, &mut batch, &shifts, needs, backend),
        || {
            let mut seen = Vec::new();
            for b in blocks.iter().filter(|_| weighed) {
                if !seen.contains(&(b.level, b.orientation)) {
                    seen.push((b.level, b.orientation));
                    subband_energy(header.wavelet, b.level as u32, b.orientation);
                }
            }
        },
    );
    let mut coded = coded?;
    let mut points = rate_points(&header, &blocks, &coded, &shifts, real.as_deref());
    let fit_lossy = options.tables == TableChoice::Default
        && !header.block_shifts
        && matches!(options.target, RateTarget::Bpp(_) | RateTarget::Psnr(_));
    if fit_lossy {
        // Fit the preset to the symbols the file will code (the passes the
        // allocation keeps), recode, and keep the result if rate control
        // predicts a better file with it (docs/history/codec.md, 2026-11-24).
        let first = first_allocation(&header, &coded, &points, options.target)?;
        if let Some(tables) = truncation_fit(&header, &batch, &coded.records, &first, options)? {
            let fitted = Header {
                tables,
                ..header.clone()
            };
            let recoded = entropy::encode(&fitted, &mut batch, &shifts, needs, backend)?;
            let recoded_points = rate_points(&fitted, &blocks, &recoded, &shifts, real.as_deref());
            let second = first_allocation(&fitted, &recoded, &recoded_points, options.target)?;
            if improves(&first, &second, options.target) {
                header = fitted;
                coded = recoded;
                points = recoded_points;
            }
        }
    }
    drop(batch);
    seconds.entropy = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut index = BlockIndex::new(blocks.len(), header.layers as usize);
    index.tops.clone_from(&coded.encoded.tops);
    index.shifts = shifts;
    let RatePoints {
        passes,
        total,
        noise: noise_real,
    } = points;
    // With real-valued decreases the distortion left after every pass is
    // known exactly (it replaces the quantizer's estimate).
    let noise = if real.is_some() { noise_real } else { noise };
    let total = if real.is_some() { total - noise } else { total };
    let model = size_model(&header, &index)?;
    let peak = ((1u64 << header.bit_depth) - 1) as f64;
    let to_psnr = |d: f64| 10.0 * (peak * peak * samples / d.max(f64::MIN_POSITIVE)).log10();
    let layers = header.layers as usize;
    let words: Vec<&[u16]> = (0..blocks.len())
        .map(|i| coded.encoded.block(i).1)
        .collect();
    let write = |alloc: &Allocation, index: &mut BlockIndex| {
        index.counts.clone_from(&alloc.counts);
        write_file(&header, index, &words)
    };

    let full = || {
        allocate(
            &passes,
            &[LayerTarget::All],
            SizeModel { layers: 1, ..model },
            total,
        )
    };
    let geometric = |last: LayerTarget| -> Vec<LayerTarget> {
        (0..layers)
            .map(|l| {
                let k = (layers - 1 - l) as i32;
                match last {
                    LayerTarget::Bytes(b) => LayerTarget::Bytes((b as f64 / 2f64.powi(k)) as u64),
                    LayerTarget::Distortion(d) => LayerTarget::Distortion(d * 2f64.powi(k)),
                    LayerTarget::All if k == 0 => LayerTarget::All,
                    LayerTarget::All => {
                        let all = full().bytes[0] as f64;
                        LayerTarget::Bytes((all / 2f64.powi(k)) as u64)
                    }
                }
            })
            .collect()
    };
    let mut measured_psnr = None;
    let (bytes, alloc) = match options.target {
        RateTarget::Lossless | RateTarget::AllPasses => {
            let alloc = allocate(&passes, &geometric(LayerTarget::All), model, total);
            (write(&alloc, &mut index)?, alloc)
        }
        RateTarget::Bpp(bpp) => {
            let budget = (bpp * (w * h) as f64 / 8.0).floor() as u64;
            let alloc = allocate(
                &passes,
                &geometric(LayerTarget::Bytes(budget)),
                model,
                total,
            );
            (write(&alloc, &mut index)?, alloc)
        }
        RateTarget::Psnr(target) => {
            let wanted = peak * peak * samples / 10f64.powf(target / 10.0);
            let mut goal = wanted;
            let mut best: Option<(Vec<u8>, Allocation, f64)> = None;
            for _ in 0..4 {
                let limit = (goal - noise).max(0.0);
                let alloc = allocate(
                    &passes,
                    &geometric(LayerTarget::Distortion(limit)),
                    model,
                    total,
                );
                let bytes = write(&alloc, &mut index)?;
                let decoded = decode(&bytes, &DecodeOptions::default(), backend)?.image;
                let image = image.as_deref().expect("a PSNR target keeps the image");
                let measured = super::psnr(image, &decoded).unwrap_or(0.0);
                let better = match &best {
                    None => true,
                    Some((b, _, p)) => {
                        // Prefer reaching the target, then the smaller file;
                        // short of it, the higher PSNR.
                        match (measured >= target, *p >= target) {
                            (true, false) => true,
                            (true, true) => bytes.len() < b.len(),
                            (false, false) => measured > *p,
                            (false, true) => false,
                        }
                    }
                };
                if better {
                    best = Some((bytes, alloc, measured));
                }
                if (measured - target).abs() < 0.05 || limit == 0.0 && measured < target {
                    break;
                }
                // The model's distortion is off by a factor: aim by the measured one.
                let actual = peak * peak * samples / 10f64.powf(measured / 10.0);
                goal = (goal * wanted / actual.max(f64::MIN_POSITIVE)).max(0.0);
            }
            let (bytes, alloc, measured) = best.expect("at least one iteration");
            measured_psnr = Some(measured);
            (bytes, alloc)
        }
    };
    seconds.rate = t.elapsed().as_secs_f64();
    seconds.total = start.elapsed().as_secs_f64();
    let estimated_psnr = (!lossless)
        .then(|| to_psnr(alloc.remaining.last().copied().unwrap_or(0.0).max(0.0) + noise));
    let report = EncodeReport {
        backend: backend.describe(),
        bytes: bytes.len(),
        bpp: bytes.len() as f64 * 8.0 / (w * h) as f64,
        layer_bytes: alloc.bytes.clone(),
        estimated_psnr,
        measured_psnr,
        wavelet: super::format::wavelet_name(header.wavelet),
        levels: header.levels,
        codeblocks: blocks.len(),
        // Totals stand for every pass of the schedule (a lossless file
        // codes them all); the other records list the passes coded.
        passes_coded: match needs {
            entropy::Records::Totals => (coded.encoded.tops.iter())
                .map(|&top| wavelane_core::bpc::pass_count(header.mode(), top) as u64)
                .sum(),
            _ => coded.records.iter().map(|r| r.len() as u64).sum(),
        },
        bitplanes_skipped: index.shifts.iter().map(|&s| s as u64).sum(),
        seconds,
    };
    Ok(Encoded { bytes, report })
}

/// The truncation-independent parts of the file size.
pub(super) fn size_model(header: &Header, index: &BlockIndex) -> Result<SizeModel, CodecError> {
    let mut fixed = Vec::new();
    header.write(&mut fixed)?;
    let mut bits = 0u64;
    let mut prev = 0i32;
    for (i, top) in index.tops.iter().enumerate() {
        let code = top.map_or(0, |m| m as i32 + 1);
        bits += se_bits(code - prev);
        prev = code;
        if code != 0 && header.block_shifts {
            bits += ue_bits(index.shifts[i] as u32);
        }
    }
    Ok(SizeModel {
        fixed_bytes: fixed.len() as u64 + 4 + 4,
        fixed_index_bits: bits,
        layers: header.layers as usize,
        resolutions: header.levels as usize + 1,
    })
}

/// Quantizes every coefficient into one array of `components x width x
/// height` indices (component planes back to back, Mallat layout); returns
/// it with the squared error of a full-rate reconstruction, weighted like
/// rate control's distortion, and the coefficients if `keep`.
fn quantize(
    header: &Header,
    coefficients: Coefficients,
    blocks: &[BlockGeometry],
    keep: bool,
) -> (Vec<i32>, f64, Option<Coefficients>) {
    use rayon::prelude::*;
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
    let noise: f64 = out
        .par_chunks_mut(w)
        .enumerate()
        .map(|(row, dst)| {
            let (c, y) = (row / h, row % h);
            let mut noise = 0.0;
            for b in by_row[row].iter().map(|&i| &blocks[i as usize]) {
                let q16 = header.step(c, b.band as usize).q16();
                let half = quant::half_bin(q16, 0);
                let weight = block_weight(header, b);
                let span = b.rect.x..b.rect.x + b.rect.width;
                let mut err = 0.0;
                match &coefficients {
                    Coefficients::Int(p) if q16 == UNIT_STEP => {
                        // Lossless steps: the index is the coefficient and
                        // reconstructs exactly, except i32::MIN (one off
                        // after saturation); skipping the u128 arithmetic
                        // of the general path is most of this stage's time.
                        let src = &p.plane(c)[y * w..(y + 1) * w];
                        dst[span.clone()].copy_from_slice(&src[span.clone()]);
                        err = src[span].iter().filter(|&&v| v == i32::MIN).count() as f64;
                    }
                    Coefficients::Int(p) => {
                        let src = &p.plane(c)[y * w..(y + 1) * w];
                        for x in span {
                            let q = if q16 == UNIT_STEP {
                                src[x]
                            } else {
                                quant::quantize_i32(src[x], q16)
                            };
                            let e = (src[x] - quant::dequantize_i32(q, 0, q16, half)) as f64;
                            err += e * e;
                            dst[x] = q;
                        }
                    }
                    Coefficients::Float(p) => {
                        let src = &p.plane(c)[y * w..(y + 1) * w];
                        for x in span {
                            let q = quant::quantize_f32(src[x], q16);
                            let e = (src[x] - quant::dequantize_f32(q, 0, q16, half)) as f64;
                            err += e * e;
                            dst[x] = q;
                        }
                    }
                }
                noise += err * weight / (header.step(c, b.band as usize).value().powi(2));
            }
            noise
        })
        .sum();
    (out, noise, keep.then_some(coefficients))
}
