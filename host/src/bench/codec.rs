//! `wavelane bench codec`: whole encodes and decodes of one image, on a
//! backend opened once, over repeats.
//!
//! # What is timed
//!
//! - **Wall** ([`Clock::Wall`]): one [`codec::encode_interleaved`] call,
//!   from the image's samples in host memory (at their own width, pixel
//!   by pixel, as `wavelane encode` reads a file) to the file's bytes in
//!   host memory, or one
//!   [`codec::decode_interleaved`] call back (to the samples at their own
//!   width, pixel by pixel, as an image file or an array holds them); on
//!   the GPU backend this includes every upload and download. Frames per second and samples per second are
//!   taken from the best repeat.
//! - **Kernel** (GPU only): the GPU timestamps of every dispatch the call
//!   submitted, summed (the `kernel_seconds` of the report's stages).
//! - **Stages**: each stage's wall time in the codec's own report
//!   ([`crate::codec::Stage`]), with where it ran; best and median over the
//!   repeats.
//! - **Kernels** (GPU only): each shader's dispatches and GPU time in the
//!   best repeat, longest first ([`crate::backend::gpu::KernelTally`]).
//! - **Transfers**: the bytes the call moved between host and device (the
//!   same in every repeat).
//!
//! One untimed encode and decode run first (pipelines, caches). Device
//! start-up is not in any figure: the caller opens the backend before and
//! reports its start-up apart.
//!
//! # Checks
//!
//! Every repeat's file must equal the first encode's byte for byte, and
//! every decoded image the first decode's; a lossless target must decode
//! to the image itself. A difference fails the benchmark. The report holds
//! the CRC-32 of the file and of the decoded samples, so that runs on
//! different backends can be compared (the 5/3 and fixed-point 9/7 give the
//! same bytes everywhere).

use serde::Serialize;

use super::{repeat, stats, wall, BenchError, Clock, Measurement, Stats};
use crate::backend::Backend;
use crate::codec::{
    self, DecodeOptions, EncodeOptions, Image, Interleaved, RateTarget, StageDevice, Transfers,
};

/// What to measure.
#[derive(Debug, Clone)]
pub struct CodecConfig {
    /// The image.
    pub image: Image,
    /// The encoder's options (the decoder decodes everything).
    pub options: EncodeOptions,
    /// Timed repeats after one warm-up.
    pub repeats: usize,
}

/// A stage's times over the repeats.
#[derive(Debug, Clone, Serialize)]
pub struct StageResult {
    /// The stage's name in the codec's report.
    pub name: &'static str,
    /// Where it ran (in the best repeat; the same in every repeat).
    pub device: StageDevice,
    /// Best, milliseconds.
    pub best_ms: f64,
    /// Median, milliseconds.
    pub median_ms: f64,
    /// Kernel milliseconds of the stage in its best repeat (0 on the CPU).
    pub kernel_ms: f64,
}

/// One shader's dispatches in a call.
#[derive(Debug, Clone, Serialize)]
pub struct KernelResult {
    /// The shader's name.
    pub shader: &'static str,
    /// Its dispatches in the call.
    pub dispatches: u64,
    /// Their GPU time, milliseconds (timestamps: the fills recorded
    /// before a dispatch count with it).
    pub ms: f64,
}

/// An encode or a decode over the repeats.
#[derive(Debug, Clone, Serialize)]
pub struct CodecResult {
    /// `encode` or `decode`.
    pub op: &'static str,
    /// Wall milliseconds of the best repeat, transfers included.
    pub best_ms: f64,
    /// Wall milliseconds of the median repeat.
    pub median_ms: f64,
    /// (slowest - best) / best of the wall times.
    pub spread: f64,
    /// GPU backend: kernel milliseconds (best, median, spread); `None` on
    /// the CPU.
    pub kernel_ms: Option<Stats>,
    /// 1 / best wall time.
    pub frames_per_s: f64,
    /// Image samples / best wall time, in 10^9 per second.
    pub gsamples_per_s: f64,
    /// Bytes moved between host and device by one call.
    pub transfers: Transfers,
    /// The stages, in the order they ran.
    pub stages: Vec<StageResult>,
    /// GPU backend: the shaders of the best repeat, longest first (empty
    /// on the CPU).
    pub kernels: Vec<KernelResult>,
    /// Every wall repeat.
    pub wall: Measurement,
}

/// The report of `wavelane bench codec --json`.
#[derive(Debug, Clone, Serialize)]
pub struct CodecReport {
    /// `"codec"`.
    pub area: &'static str,
    /// [`Backend::describe`].
    pub backend: String,
    /// Seconds opening the backend took (set by the caller, which opens
    /// it; 0 for the CPU).
    pub device_start_seconds: f64,
    /// Image width.
    pub width: usize,
    /// Image height.
    pub height: usize,
    /// Components.
    pub components: usize,
    /// Bits per sample.
    pub bit_depth: u8,
    /// width x height x components.
    pub samples: usize,
    /// The rate target.
    pub target: RateTarget,
    /// The file's wavelet.
    pub wavelet: &'static str,
    /// Quality layers.
    pub layers: u8,
    /// File bytes.
    pub file_bytes: usize,
    /// Bits per pixel of the file.
    pub bpp: f64,
    /// CRC-32 of the file.
    pub file_crc32: u32,
    /// CRC-32 of the decoded samples (every plane in order, each sample as
    /// 4 little-endian bytes).
    pub decoded_crc32: u32,
    /// The decoded image equals the input (always, for a lossless target).
    pub decoded_equals_input: bool,
    /// Timed repeats.
    pub repeats: usize,
    /// What the figures time (module docs).
    pub timing: &'static str,
    /// The encode, then the decode.
    pub results: Vec<CodecResult>,
}

/// A deterministic test image: gradients, hard-edged bands and noise, so
/// that its statistics resemble a photograph's (compressible, with
/// texture), at any size, component count and depth (1..=16).
pub fn synthetic_image(width: usize, height: usize, components: usize, bit_depth: u8) -> Image {
    let max = (1i64 << bit_depth.clamp(1, 16)) - 1;
    let hash = |x: usize, y: usize, c: usize| {
        let mut z = ((x as u64) << 32) ^ ((y as u64) << 8) ^ (c as u64);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    Image::from_fn(width, height, components, bit_depth, |x, y, c| {
        let (w, h) = (width.max(1) as i64, height.max(1) as i64);
        let (x, y, c) = (x as i64, y as i64, c as i64);
        let gradient = (x * 160 / w + y * 60 / h + c * 20) % 256;
        let band = if (x / 37 + y / 53 + c).rem_euclid(5) == 0 {
            50
        } else {
            0
        };
        let noise = (hash(x as usize, y as usize, c as usize) >> 60) as i64 - 8;
        let v8 = (gradient + band + noise).clamp(0, 255);
        // Rounded, so that even a 1-bit image has both values.
        ((v8 * max + 127) / 255) as i32
    })
}

/// CRC-32 of an image's samples (every plane in order, each sample as 4
/// little-endian bytes).
pub fn image_crc32(image: &Image) -> u32 {
    let bytes: Vec<u8> = image
        .planes
        .iter()
        .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    crate::vle::cpu::crc32(&bytes)
}

/// One call's figures.
struct Call {
    ns: f64,
    kernel_ns: f64,
    stages: Vec<codec::Stage>,
    transfers: Transfers,
    kernels: Vec<KernelResult>,
}

/// Times `call` and tallies the shaders it dispatched on `backend`'s GPU.
fn tallied<T>(backend: &Backend, call: impl FnOnce() -> T) -> (f64, T, Vec<KernelResult>) {
    let tally = || backend.gpu().map(|g| g.kernel_tally());
    let before = tally();
    let (ns, out) = wall(call);
    let mut kernels: Vec<KernelResult> = match (before, tally()) {
        (Some(before), Some(after)) => after
            .since(&before)
            .shaders
            .into_iter()
            .map(|(shader, (dispatches, ns))| KernelResult {
                shader,
                dispatches,
                ms: ns as f64 / 1e6,
            })
            .collect(),
        _ => Vec::new(),
    };
    kernels.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    (ns, out, kernels)
}

/// Runs the benchmark on `backend`, calling `progress` before the encodes
/// and before the decodes.
pub fn run(
    config: &CodecConfig,
    backend: &Backend,
    mut progress: impl FnMut(&str),
) -> Result<CodecReport, BenchError> {
    if config.repeats == 0 {
        return Err(BenchError::Invalid("--repeats must be positive".into()));
    }
    let image = &config.image;
    let samples = image.samples();
    // Encoded from its samples at their own width, as `wavelane encode`
    // reads a file.
    let input = Interleaved::from_image(image);
    progress("encode");
    let mut first: Option<Vec<u8>> = None;
    let mut encodes = Vec::new();
    let (_, encoded) = repeat(config.repeats, || {
        let (ns, encoded, kernels) = tallied(backend, || {
            codec::encode_interleaved(&input, &config.options, backend)
        });
        let encoded = encoded?;
        match &first {
            None => first = Some(encoded.bytes.clone()),
            Some(bytes) if *bytes != encoded.bytes => {
                return Err(BenchError::Mismatch(
                    "an encode gave another file than the first".into(),
                ))
            }
            Some(_) => {}
        }
        let r = &encoded.report;
        let call = Call {
            ns,
            kernel_ns: kernel_ns(&r.stages),
            stages: r.stages.clone(),
            transfers: r.transfers,
            kernels,
        };
        encodes.push(call);
        Ok((ns, encoded))
    })?;
    encodes.remove(0); // the warm-up
    progress("decode");
    let options = DecodeOptions::default();
    let mut first: Option<Interleaved> = None;
    let mut decodes = Vec::new();
    let (_, decoded) = repeat(config.repeats, || {
        let (ns, decoded, kernels) = tallied(backend, || {
            codec::decode_interleaved(&encoded.bytes, &options, backend)
        });
        let decoded = decoded?;
        match &first {
            None => first = Some(decoded.image.clone()),
            Some(im) if *im != decoded.image => {
                return Err(BenchError::Mismatch(
                    "a decode gave another image than the first".into(),
                ))
            }
            Some(_) => {}
        }
        let r = &decoded.report;
        let call = Call {
            ns,
            kernel_ns: kernel_ns(&r.stages),
            stages: r.stages.clone(),
            transfers: r.transfers,
            kernels,
        };
        decodes.push(call);
        Ok((ns, decoded))
    })?;
    decodes.remove(0); // the warm-up
    let decoded = decoded.image.to_image();
    let equal = decoded == *image;
    if config.options.target == RateTarget::Lossless && !equal {
        return Err(BenchError::Mismatch(
            "the lossless file does not decode to the image".into(),
        ));
    }
    let gpu = backend.kind() == crate::backend::BackendKind::Gpu;
    let r = &encoded.report;
    Ok(CodecReport {
        area: "codec",
        backend: backend.describe(),
        device_start_seconds: 0.0,
        width: image.width,
        height: image.height,
        components: image.components(),
        bit_depth: image.bit_depth,
        samples,
        target: config.options.target,
        wavelet: r.wavelet,
        layers: r.layer_bytes.len() as u8,
        file_bytes: encoded.bytes.len(),
        bpp: r.bpp,
        file_crc32: crate::vle::cpu::crc32(&encoded.bytes),
        decoded_crc32: image_crc32(&decoded),
        decoded_equals_input: equal,
        repeats: config.repeats,
        timing: "wall clock around each encode or decode call (transfers included); \
                 kernel: GPU timestamps of its dispatches; stages: the codec's report",
        results: vec![
            summarize("encode", encodes, samples, gpu),
            summarize("decode", decodes, samples, gpu),
        ],
    })
}

fn kernel_ns(stages: &[codec::Stage]) -> f64 {
    stages.iter().map(|s| s.kernel_seconds * 1e9).sum()
}

/// The figures of `calls` (the timed repeats of one operation).
fn summarize(op: &'static str, calls: Vec<Call>, samples: usize, gpu: bool) -> CodecResult {
    let wall = Measurement::new(Clock::Wall, calls.iter().map(|c| c.ns).collect());
    let best = calls
        .iter()
        .min_by(|a, b| a.ns.total_cmp(&b.ns))
        .expect("at least one repeat");
    let ms = |s: Stats| Stats {
        best: s.best / 1e6,
        median: s.median / 1e6,
        spread: s.spread,
    };
    let stages = best
        .stages
        .iter()
        .enumerate()
        .map(|(i, stage)| {
            // The same stage of every repeat (the list's order is fixed).
            let seconds: Vec<f64> = calls
                .iter()
                .filter_map(|c| c.stages.get(i).filter(|s| s.name == stage.name))
                .map(|s| s.seconds)
                .collect();
            let s = stats(seconds);
            StageResult {
                name: stage.name,
                device: stage.device,
                best_ms: s.best * 1e3,
                median_ms: s.median * 1e3,
                kernel_ms: stage.kernel_seconds * 1e3,
            }
        })
        .collect();
    let best_ns = wall.stats.best;
    CodecResult {
        op,
        best_ms: wall.best_ms(),
        median_ms: wall.median_ms(),
        spread: wall.stats.spread,
        kernel_ms: gpu.then(|| ms(stats(calls.iter().map(|c| c.kernel_ns).collect()))),
        frames_per_s: 1e9 / best_ns,
        gsamples_per_s: samples as f64 / best_ns,
        transfers: best.transfers,
        stages,
        kernels: best.kernels.clone(),
        wall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark checks what it times: a lossless round trip on the CPU
    /// gives the image back, two stage lists, zero transfers, and every
    /// figure positive.
    #[test]
    fn a_cpu_round_trip_is_timed_and_checked() {
        let config = CodecConfig {
            image: synthetic_image(70, 45, 3, 8),
            options: EncodeOptions::lossless(),
            repeats: 2,
        };
        let report = run(&config, &Backend::Cpu, |_| {}).unwrap();
        assert!(report.decoded_equals_input);
        assert_eq!(report.decoded_crc32, image_crc32(&config.image));
        assert_eq!(report.results.len(), 2);
        for r in &report.results {
            assert_eq!(r.wall.ns.len(), 2);
            assert!(r.best_ms > 0.0 && r.frames_per_s > 0.0, "{r:?}");
            assert_eq!(r.transfers, Transfers::default());
            assert!(r.kernel_ms.is_none());
            assert!(r.kernels.is_empty());
            assert!(!r.stages.is_empty());
            assert!(r.stages.iter().all(|s| s.device == StageDevice::Cpu));
        }
    }

    #[test]
    fn the_synthetic_image_fills_its_depth() {
        for depth in [1u8, 8, 12, 16] {
            let im = synthetic_image(64, 32, 2, depth);
            let max = im.planes.iter().flatten().copied().max().unwrap();
            assert!(max < (1 << depth) && max > 0, "{depth}: {max}");
            im.validate().unwrap();
        }
    }
}
