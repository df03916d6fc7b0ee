//! `wavelane decode` and `wavelane info` of `.wls` sequences: frames to
//! `.y4m`, raw `.yuv` or one picture per frame, `--frames A..B`, and the
//! frame list (see [`crate::sequence`]).

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Instant;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::batch::pipeline::{self, Flow, Threads};
use super::sequence::{describe, frame_workers, frames_bar, has_ext};
use super::{CliError, CliResult};
use crate::decode::DecodeArgs;
use wavelane::backend::{Backend, Job};
use wavelane::codec::RateTarget;
use wavelane::image_io;
use wavelane::output::AtomicFile;
use wavelane::sequence::container::{SequenceFile, SequenceLimits};
use wavelane::sequence::raw;
use wavelane::sequence::y4m::Y4mWriter;
use wavelane::sequence::{self, rgb, Frame, FrameFormat, VideoParams};

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
    let file = if args.partial {
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
    let mut workers = frame_workers(args.devices.as_ref(), args.backend.into(), job)?;
    let mut sink = Sink::open(&args.output, &format, &params)?;
    let bar = frames_bar(last - first + 1, args.json);
    let (mut written, mut skipped) = (0u64, Vec::new());
    let mut failure: Option<CliError> = None;
    // Set at the first failure: the reader stops, the frames in flight end.
    let failed = AtomicBool::new(false);
    let file = Mutex::new(file);
    // The frames go through the batch pipeline (docs/codec.md, "Batches"):
    // one reader, the workers each decode a frame, and the frames are
    // written in order on this thread.
    pipeline::run(
        (last - first + 1) as usize,
        &mut workers,
        Threads {
            readers: 1,
            writers: 1,
        },
        |i| {
            if failed.load(Ordering::Relaxed) {
                return Ok(Flow::End);
            }
            let mut file = file.lock().map_err(|_| "the frame reader panicked")?;
            Ok(Flow::Code(file.read_frame(first + i as u64)))
        },
        |backend: &mut Backend, _, streams| {
            Ok(streams.and_then(|s| sequence::decode_frame(&s, &format, backend)))
        },
        |_, frame| Ok(frame),
        |i, outcome| {
            if failure.is_some() {
                return;
            }
            let k = first + i as u64;
            match outcome {
                Ok(Ok(f)) => match sink.write(k, &f, &format, &params) {
                    Ok(()) => written += 1,
                    Err(e) => failure = Some(e),
                },
                Ok(Err(e)) if args.partial => {
                    bar.suspend(|| eprintln!("wavelane: warning: {name}: frame {k} left out: {e}"));
                    skipped.push(k);
                }
                Ok(Err(e)) => {
                    failure = Some(
                        format!("{name}: frame {k}: {e} (decode the intact frames with --partial)")
                            .into(),
                    )
                }
                Err(e) => failure = Some(e),
            }
            if failure.is_some() {
                failed.store(true, Ordering::Relaxed);
            }
            bar.inc(1);
        },
    );
    if let Some(e) = failure {
        bar.abandon();
        return Err(e);
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
            "fps": written as f64 / seconds, "backend": describe(&workers),
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
            describe(&workers)
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
