//! Video and image sequences: `wavelane encode clip.y4m -o clip.wls` (or
//! raw planar video with `--video-size` and `--pix-fmt`), `wavelane decode
//! clip.wls -o out.y4m | frames/%05d.png [--frames A..B]`, `wavelane info
//! clip.wls`. `encode`, `decode` and `info` hand sequences here; the
//! library side is `wavelane::sequence` (docs/format.md "Sequence files").
//! Decoding and `info` are [`crate::sequence_decode`].

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

pub use super::sequence_decode::{decode, info};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::batch::devices::Coder;
use super::batch::pipeline::{self, Flow, Threads};
use super::batch::DeviceList;
use super::{CliError, CliResult};
use crate::encode::EncodeArgs;
use wavelane::backend::{Backend, BackendKind, Job};
use wavelane::codec::{EncodeOptions, RateTarget};
use wavelane::output::AtomicFile;
use wavelane::sequence::container::{SequenceWriter, SEQUENCE_MAGIC};
use wavelane::sequence::raw::{self, RawReader};
use wavelane::sequence::y4m::Y4mReader;
use wavelane::sequence::{self, Frame, FrameFormat, SequenceError, SequenceHeader, VideoParams};

/// Whether `encode` takes `input` as a sequence: a `.y4m` file, or any
/// file with `--video-size` (raw planar video).
pub fn is_sequence_input(input: &Path, args: &EncodeArgs) -> bool {
    args.video_size.is_some() || has_ext(input, "y4m")
}

/// Whether `path` is a `.wls` file (by its magic).
pub fn is_sequence_file(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == SEQUENCE_MAGIC)
}

pub(crate) fn has_ext(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// A Y4M or raw input read frame by frame.
enum Source {
    Y4m(Y4mReader<BufReader<File>>),
    Raw(RawReader<BufReader<File>>),
}

impl Source {
    fn next_frame(&mut self) -> Result<Option<Frame>, SequenceError> {
        match self {
            Source::Y4m(r) => r.next_frame(),
            Source::Raw(r) => r.next_frame(),
        }
    }
}

/// Opens the input; its format, stream parameters and an estimate of its
/// frame count (exact for raw video and for Y4M with bare `FRAME` lines).
fn open_source(
    input: &Path,
    args: &EncodeArgs,
) -> Result<(Source, FrameFormat, VideoParams, u64), Box<dyn std::error::Error + Send + Sync>> {
    let file = File::open(input)?;
    let size = file.metadata()?.len();
    let reader = BufReader::with_capacity(1 << 20, file);
    if let Some(vs) = &args.video_size {
        let (width, height) = raw::parse_video_size(vs)
            .ok_or_else(|| format!("--video-size {vs}: expected WxH, e.g. 1920x1080"))?;
        let name = args.pix_fmt.as_deref().unwrap_or("yuv420p");
        let (layout, bit_depth) = raw::parse_pix_fmt(name).ok_or_else(|| {
            format!("--pix-fmt {name}: expected gray, yuv420p, yuv422p or yuv444p, or their NNle forms (e.g. yuv422p10le)")
        })?;
        let format = FrameFormat {
            width,
            height,
            layout,
            bit_depth,
        };
        let r = RawReader::new(reader, format)?;
        let params = VideoParams {
            colour_tag: Some(sequence::y4m::canonical_tag(layout, bit_depth)),
            ..VideoParams::default()
        };
        return Ok((Source::Raw(r), format, params, size / format.frame_bytes()));
    }
    if args.pix_fmt.is_some() {
        return Err("--pix-fmt needs --video-size (raw input)".into());
    }
    let r = Y4mReader::new(reader)?;
    let (format, params) = (r.format, r.params.clone());
    let frames = size.saturating_sub(r.header_bytes) / r.frame_stride();
    Ok((Source::Y4m(r), format, params, frames))
}

pub(crate) fn frames_bar(n: u64, json: bool) -> ProgressBar {
    if json {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(n);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} frames {per_sec} {elapsed} {msg}")
            .expect("valid template"),
    );
    bar
}

/// Encodes a Y4M or raw input to a `.wls` file (`wavelane encode`).
pub fn encode(args: &EncodeArgs, options: &EncodeOptions, input: &Path) -> CliResult {
    if args.bit_depth.is_some() || args.skip_existing {
        return Err("--bit-depth and --skip-existing do not apply to video input (the .y4m header or --pix-fmt gives the depth)".into());
    }
    let start = Instant::now();
    let mut out = AtomicFile::create(&args.output)?;
    let (source, format, params, estimate) =
        open_source(input, args).map_err(|e| format!("{}: {e}", input.display()))?;
    let lossless = options.target == RateTarget::Lossless && options.layers == 1;
    let job = Job::Encode {
        samples: format.samples(),
        lossless,
    };
    let mut workers = frame_workers(args.devices.as_ref(), args.backend.into(), job)?;
    let header = SequenceHeader::new(format, params.clone(), options);
    let mut writer = SequenceWriter::new(BufWriter::new(&mut out), &header)?;
    let bar = frames_bar(estimate, args.json);
    let mut frame_bytes = Vec::new();
    let mut failure: Option<CliError> = None;
    // Set at the first failure: the reader stops, the frames in flight end.
    let failed = AtomicBool::new(false);
    let source = Mutex::new(source);
    // The frames go through the batch pipeline (docs/codec.md, "Batches"):
    // one reader (the source is a stream), the workers each code a frame,
    // and the frames are written in order on this thread.
    pipeline::run(
        usize::MAX,
        &mut workers,
        Threads {
            readers: 1,
            writers: 1,
        },
        |_| {
            if failed.load(Ordering::Relaxed) {
                return Ok(Flow::End);
            }
            let mut source = source.lock().map_err(|_| "the frame reader panicked")?;
            match source.next_frame() {
                Ok(Some(frame)) => Ok(Flow::Code(frame)),
                Ok(None) => Ok(Flow::End),
                Err(e) => Err(format!("{}: {e}", input.display()).into()),
            }
        },
        |backend: &mut Backend, i, frame: Frame| {
            sequence::encode_frame(&frame, &format, options, backend)
                .map_err(|e| format!("frame {i}: {e}").into())
        },
        |_, streams| Ok(streams),
        |_, outcome| {
            if failure.is_some() {
                return;
            }
            let written = outcome.and_then(|streams| {
                let before = writer.bytes();
                writer.write_frame(&streams)?;
                Ok(writer.bytes() - before)
            });
            match written {
                Ok(bytes) => {
                    frame_bytes.push(bytes);
                    if bar.position() >= bar.length().unwrap_or(0) {
                        bar.set_length(bar.position() + 1);
                    }
                    bar.inc(1);
                }
                Err(e) => {
                    failed.store(true, Ordering::Relaxed);
                    failure = Some(e);
                }
            }
        },
    );
    if let Some(e) = failure {
        bar.abandon();
        return Err(e);
    }
    bar.finish_and_clear();
    if frame_bytes.is_empty() {
        return Err(format!("{}: no frames", input.display()).into());
    }
    writer.finish()?.flush()?;
    out.commit()?;
    let seconds = start.elapsed().as_secs_f64();
    let total = std::fs::metadata(&args.output)?.len();
    let n = frame_bytes.len() as f64;
    let pixels = format.width as f64 * format.height as f64;
    let bpp = frame_bytes.iter().sum::<u64>() as f64 * 8.0 / (n * pixels);
    if args.json {
        let j = serde_json::json!({
            "input": input, "output": args.output, "format": format,
            "params": params, "target": options.target, "frames": frame_bytes.len(),
            "bytes": total, "frame_bytes": frame_bytes, "bpp_per_frame": bpp,
            "seconds": seconds, "fps": n / seconds, "backend": describe(&workers),
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        println!(
            "{} -> {}: {} frames {}x{} {} {}-bit, {} bytes ({:.4} bpp per frame), {:.3} s ({:.2} fps) on {}",
            input.display(),
            args.output.display(),
            frame_bytes.len(),
            format.width,
            format.height,
            format.layout.name(),
            format.bit_depth,
            total,
            bpp,
            seconds,
            n / seconds,
            describe(&workers)
        );
    }
    Ok(())
}

/// Frames a GPU codes at once when no `--devices` list says otherwise: one
/// frame's transfers and host stages overlap the other's kernels.
const FRAMES_PER_GPU: usize = 2;

/// The workers that code (or decode) frames: one per entry of `--devices`; else the
/// backend chosen for the frame size, on [`FRAMES_PER_GPU`] workers where
/// it is a GPU and one worker (which uses every core) on the CPU.
pub(crate) fn frame_workers(
    devices: Option<&DeviceList>,
    kind: BackendKind,
    job: Job,
) -> Result<Vec<Backend>, CliError> {
    if let Some(list) = devices {
        let coders = Coder::devices(&list.resolve()?, kind)?;
        return Ok(coders
            .iter()
            .filter_map(|c| c.gpu().map(|g| Backend::Gpu(g.clone())))
            .collect());
    }
    let backend = Backend::select_for(kind, job)?;
    Ok(match backend.gpu() {
        Some(_) => vec![backend; FRAMES_PER_GPU],
        None => vec![backend],
    })
}

/// The workers for reports: the backend, and how many frames at once.
pub(crate) fn describe(workers: &[Backend]) -> String {
    match workers {
        [one] => one.describe(),
        [first, ..] if workers.iter().all(|w| w.describe() == first.describe()) => {
            format!("{} x{} frames in flight", first.describe(), workers.len())
        }
        _ => workers
            .iter()
            .map(Backend::describe)
            .collect::<Vec<_>>()
            .join(", "),
    }
}
