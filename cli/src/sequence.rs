//! Video and image sequences: `wavelane encode clip.y4m -o clip.wls` (or
//! raw planar video with `--video-size` and `--pix-fmt`), `wavelane decode
//! clip.wls -o out.y4m | frames/%05d.png [--frames A..B]`, `wavelane info
//! clip.wls`. `encode`, `decode` and `info` hand sequences here; the
//! library side is `wavelane::sequence` (docs/format.md "Sequence files").

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use super::CliResult;
use crate::decode::DecodeArgs;
use crate::encode::EncodeArgs;
use wavelane::backend::{Backend, Job};
use wavelane::codec::{EncodeOptions, RateTarget};
use wavelane::image_io;
use wavelane::output::AtomicFile;
use wavelane::sequence::container::{SequenceFile, SequenceLimits, SequenceWriter, SEQUENCE_MAGIC};
use wavelane::sequence::raw::{self, RawReader};
use wavelane::sequence::y4m::{Y4mReader, Y4mWriter};
use wavelane::sequence::{
    self, rgb, Frame, FrameFormat, SequenceError, SequenceHeader, VideoParams,
};

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

fn has_ext(path: &Path, ext: &str) -> bool {
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

fn frames_bar(n: u64, json: bool) -> ProgressBar {
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
    let (mut source, format, params, estimate) =
        open_source(input, args).map_err(|e| format!("{}: {e}", input.display()))?;
    let lossless = options.target == RateTarget::Lossless && options.layers == 1;
    let job = Job::Encode {
        samples: format.samples(),
        lossless,
    };
    let backend = Backend::select_for(args.backend.into(), job)?;
    let header = SequenceHeader::new(format, params.clone(), options);
    let mut writer = SequenceWriter::new(BufWriter::new(&mut out), &header)?;
    let bar = frames_bar(estimate, args.json);
    let mut frame_bytes = Vec::new();
    while let Some(frame) = source
        .next_frame()
        .map_err(|e| format!("{}: {e}", input.display()))?
    {
        let streams = sequence::encode_frame(&frame, &format, options, &backend)
            .map_err(|e| format!("frame {}: {e}", frame_bytes.len()))?;
        let before = writer.bytes();
        writer.write_frame(&streams)?;
        frame_bytes.push(writer.bytes() - before);
        if bar.position() >= bar.length().unwrap_or(0) {
            bar.set_length(bar.position() + 1);
        }
        bar.inc(1);
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
            "seconds": seconds, "fps": n / seconds, "backend": backend.describe(),
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
            backend.describe()
        );
    }
    Ok(())
}

/// Parses `--frames A..B` (from 0, both included).
pub fn parse_frames(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--frames {s}: expected A..B with A <= B, e.g. 3..5");
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// The image file of frame `k` for a pattern with `%d` or `%0Nd`.
pub fn frame_path(pattern: &Path, k: u64) -> Result<PathBuf, String> {
    let p = pattern.to_string_lossy();
    let bad = || format!("{p}: an image pattern needs one %d or %0Nd (e.g. frames/%05d.png)");
    let at = p.find('%').ok_or_else(bad)?;
    let rest = &p[at + 1..];
    let d = rest.find('d').ok_or_else(bad)?;
    let spec = &rest[..d];
    let width: usize = match spec {
        "" => 0,
        s if s.starts_with('0') && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().map_err(|_| bad())?
        }
        _ => return Err(bad()),
    };
    let tail = &rest[d + 1..];
    if tail.contains('%') {
        return Err(bad());
    }
    Ok(PathBuf::from(format!("{}{k:0width$}{tail}", &p[..at])))
}

enum Sink {
    Y4m(Y4mWriter<BufWriter<AtomicFile>>),
    Raw(BufWriter<AtomicFile>),
    Images(PathBuf),
}

impl Sink {
    fn open(
        output: &Path,
        format: &FrameFormat,
        params: &VideoParams,
    ) -> Result<Self, super::CliError> {
        if has_ext(output, "y4m") {
            let f = BufWriter::new(AtomicFile::create(output)?);
            return Ok(Sink::Y4m(Y4mWriter::new(f, *format, params)?));
        }
        if has_ext(output, "yuv") || has_ext(output, "raw") {
            return Ok(Sink::Raw(BufWriter::new(AtomicFile::create(output)?)));
        }
        frame_path(output, 0)?;
        if image_io::FileFormat::from_path(output).is_none() {
            return Err(format!(
                "{}: decode a sequence to .y4m, .yuv or an image pattern (.png, .ppm, .pgm, .tif)",
                output.display()
            )
            .into());
        }
        let gray_only = has_ext(output, "pgm");
        if gray_only && format.layout != sequence::ChromaLayout::Mono {
            return Err(
                "PGM output holds gray frames only; this sequence is in colour (use .png or .ppm)"
                    .into(),
            );
        }
        if has_ext(output, "ppm") && format.layout == sequence::ChromaLayout::Mono {
            return Err("this sequence is gray: use .pgm or .png".into());
        }
        Ok(Sink::Images(output.to_path_buf()))
    }

    fn write(
        &mut self,
        k: u64,
        frame: &Frame,
        format: &FrameFormat,
        params: &VideoParams,
    ) -> CliResult {
        match self {
            Sink::Y4m(w) => w.write_frame(frame)?,
            Sink::Raw(w) => raw::write_raw_frame(w, format, frame)?,
            Sink::Images(p) => {
                image_io::save(&rgb::to_image(frame, format, params), &frame_path(p, k)?)?
            }
        }
        Ok(())
    }

    fn finish(self) -> CliResult {
        let file = match self {
            Sink::Y4m(w) => w.into_inner(),
            Sink::Raw(w) => w,
            Sink::Images(_) => return Ok(()),
        };
        file.into_inner().map_err(|e| e.into_error())?.commit()?;
        Ok(())
    }
}

/// Decodes a `.wls` file (`wavelane decode`).
pub fn decode(args: &DecodeArgs, input: &Path) -> CliResult {
    // Frames come back whole and at full size: a reduced or layer-limited
    // frame would not fit the Y4M layout the sequence promises.
    if args.reduce != 0 || args.layers.is_some() || args.slices.is_some() {
        return Err("--reduce, --layers and --slices do not apply to sequences (.wls)".into());
    }
    let start = Instant::now();
    let name = input.display();
    let reader = BufReader::new(File::open(input)?);
    let limits = SequenceLimits::default();
    let mut file = if args.partial {
        let (f, why) =
            SequenceFile::open_partial(reader, limits).map_err(|e| format!("{name}: {e}"))?;
        if let Some(e) = why {
            eprintln!(
                "wavelane: warning: {name}: {e}; decoding the {} whole frame(s) there",
                f.frame_count()
            );
        }
        f
    } else {
        SequenceFile::open(reader, limits).map_err(|e| format!("{name}: {e}"))?
    };
    let format = file.header.format;
    let params = file.header.params.clone();
    let count = file.frame_count();
    let (first, mut last) = match &args.frames {
        Some(s) => parse_frames(s)?,
        None => (0, count.saturating_sub(1)),
    };
    if count == 0 || last >= count {
        if !args.partial || first >= count {
            return Err(format!(
                "{name}: --frames {first}..{last}, the sequence has {count} frame(s) (0..{})",
                count.saturating_sub(1)
            )
            .into());
        }
        eprintln!(
            "wavelane: warning: {name}: only frames up to {} are there",
            count - 1
        );
        last = count - 1;
    }
    let job = Job::Decode {
        samples: format.samples(),
        reversible: file.header.target == RateTarget::Lossless,
    };
    let backend = Backend::select_for(args.backend.into(), job)?;
    let mut sink = Sink::open(&args.output, &format, &params)?;
    let bar = frames_bar(last - first + 1, args.json);
    let (mut written, mut skipped) = (0u64, Vec::new());
    for k in first..=last {
        let frame = file
            .read_frame(k)
            .and_then(|s| sequence::decode_frame(&s, &format, &backend));
        match frame {
            Ok(f) => {
                sink.write(k, &f, &format, &params)?;
                written += 1;
            }
            Err(e) if args.partial => {
                bar.suspend(|| eprintln!("wavelane: warning: {name}: frame {k} left out: {e}"));
                skipped.push(k);
            }
            Err(e) => {
                return Err(format!(
                    "{name}: frame {k}: {e} (decode the intact frames with --partial)"
                )
                .into())
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if written == 0 {
        return Err(format!("{name}: no frame could be decoded").into());
    }
    sink.finish()?;
    let seconds = start.elapsed().as_secs_f64();
    if args.json {
        let j = serde_json::json!({
            "input": input, "output": args.output, "format": format, "frames": [first, last],
            "decoded": written, "skipped": skipped, "seconds": seconds,
            "fps": written as f64 / seconds, "backend": backend.describe(),
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        println!(
            "{name} -> {}: frames {first}..{last} ({written} decoded{}), {}x{} {} {}-bit, {seconds:.3} s ({:.2} fps) on {}",
            args.output.display(),
            if skipped.is_empty() { String::new() } else { format!(", {} left out", skipped.len()) },
            format.width,
            format.height,
            format.layout.name(),
            format.bit_depth,
            written as f64 / seconds,
            backend.describe()
        );
    }
    Ok(())
}

/// Describes a `.wls` file and lists its frames (`wavelane info`).
pub fn info(input: &Path, json: bool) -> CliResult {
    let name = input.display();
    let file = SequenceFile::open(
        BufReader::new(File::open(input)?),
        SequenceLimits::default(),
    )
    .map_err(|e| format!("{name}: {e}"))?;
    let h = &file.header;
    let f = h.format;
    let pixels = f.width as f64 * f.height as f64;
    let frames: Vec<serde_json::Value> = file
        .frames
        .iter()
        .enumerate()
        .map(|(k, e)| {
            serde_json::json!({"frame": k, "offset": e.offset, "bytes": e.len,
                "bpp": e.len as f64 * 8.0 / pixels, "crc": format!("{:08x}", e.crc)})
        })
        .collect();
    if json {
        let j = serde_json::json!({
            "file": input, "kind": "sequence", "container_version": wavelane::sequence::container::SEQUENCE_VERSION,
            "bytes": file.file_len, "header_bytes": file.header_len, "format": f,
            "params": h.params, "fps": h.params.fps(), "target": h.target,
            "frame_count": file.frame_count(), "frames": frames,
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(());
    }
    println!("{name}: wavelane sequence, container version 1");
    println!(
        "  {} frame(s) of {}x{} {} {}-bit, {} bytes, target {:?}",
        file.frame_count(),
        f.width,
        f.height,
        f.layout.name(),
        f.bit_depth,
        file.file_len,
        h.target
    );
    let p = &h.params;
    let ratio = |r: Option<(u32, u32)>| r.map_or("-".to_string(), |(n, d)| format!("{n}:{d}"));
    println!(
        "  frame rate {}{}, aspect {}, colour tag {}{}",
        ratio(p.frame_rate),
        p.fps().map_or(String::new(), |v| format!(" ({v:.3} fps)")),
        ratio(p.aspect),
        p.colour_tag.as_deref().unwrap_or("-"),
        if p.extra.is_empty() {
            String::new()
        } else {
            format!(", {}", p.extra.join(" "))
        }
    );
    for (k, e) in file.frames.iter().enumerate() {
        println!(
            "  frame {k}: offset {}, {} bytes ({:.4} bpp)",
            e.offset,
            e.len,
            e.len as f64 * 8.0 / pixels
        );
    }
    Ok(())
}
