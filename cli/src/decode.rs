//! `wavelane decode`: `.wl` files to images, at full or reduced
//! resolution, through all or some layers, reading only the bytes needed.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use indicatif::ProgressBar;

use super::batch::{open_early, read_while_opening, run_files, select_backend};
use super::{CliError, CliResult};
use wavelane_core::dwt::{level_size, Wavelet};

use crate::args::BackendArg;
use wavelane::backend::Job;
use wavelane::codec::file::{Container, ReadOptions};
use wavelane::codec::header::Header;
use wavelane::codec::progressive::{header_len_from_prefix, prefix_len};
use wavelane::codec::{self, CodecError, DecodeOptions, FormatError};
use wavelane::image_io;
use wavelane::verify;

/// Arguments of `wavelane decode`.
#[derive(Debug, Args)]
#[command(
    after_help = "Sequences (.wls): -o out.y4m (the input's layout and depth back), -o out.yuv\n\
(raw planes) or an image pattern (one picture per frame; RGB, or gray for gray video):\n  \
wavelane decode clip.wls -o back.y4m\n  \
wavelane decode clip.wls -o frames/%05d.png --frames 3..5"
)]
pub struct DecodeArgs {
    /// Input .wl files (or one .wls sequence).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output image (.png, .pgm, .ppm, .pnm, .tif); with several inputs, a directory (PNG files);
    /// for a sequence: .y4m, .yuv, or a pattern such as frames/%05d.png.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Decode at 1/2^K of the size, reading only the resolutions needed.
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub reduce: u8,
    /// Decode only the first N quality layers.
    #[arg(long, value_name = "N")]
    pub layers: Option<u8>,
    /// Where the transform and decoder run; `auto` takes a hardware GPU only
    /// for images large enough to finish first there for this many CPU
    /// threads (docs/perf/codec.md), else the CPU.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Decode what is there: a truncated file as the progressive prefix it
    /// is (a lower-quality or smaller image), segments whose CRC fails left
    /// out with the layers after them; a warning on stderr says what was lost.
    #[arg(long)]
    pub partial: bool,
    /// Skip inputs whose output already exists (outputs are written atomically).
    #[arg(long)]
    pub skip_existing: bool,
    /// Print JSON reports instead of text.
    #[arg(long)]
    pub json: bool,
    /// Volume files: decode slices A to B only (both included, from 0), to
    /// a .nii, .nii.gz, .tif or .raw output.
    #[arg(long, value_name = "A..B")]
    pub slices: Option<String>,
    /// Sequence (.wls) files: decode frames A to B only (both included, from 0;
    /// 3..5 is frames 3, 4 and 5), reading only those frames.
    #[arg(long, value_name = "A..B")]
    pub frames: Option<String>,
}

/// Reads the bytes of `path` a decode with `reduce` needs: the main
/// header, then the prefix holding the kept resolutions.
fn read_needed(
    path: &Path,
    reduce: u8,
) -> Result<(Vec<u8>, u64), Box<dyn std::error::Error + Send + Sync>> {
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if reduce == 0 {
        let mut all = Vec::new();
        file.read_to_end(&mut all)?;
        return Ok((all, size));
    }
    let mut bytes = vec![0u8; 14.min(size as usize)];
    file.read_exact(&mut bytes)?;
    let header_len = header_len_from_prefix(&bytes)?.min(size);
    bytes.resize(header_len as usize, 0);
    file.read_exact(&mut bytes[14.min(header_len as usize)..])?;
    let needed = {
        let c = Container::parse(&bytes, ReadOptions::default())?;
        prefix_len(&c, reduce).min(size)
    };
    let have = bytes.len();
    bytes.resize(needed as usize, 0);
    file.read_exact(&mut bytes[have..])?;
    Ok((bytes, size))
}

/// The job `auto` weighs: the samples decoded at `reduce` and whether the
/// file uses the reversible 5/3. A header that does not parse counts as an
/// empty job (the decoder then reports what is wrong with it).
fn decode_job(bytes: &[u8], reduce: u8) -> Job {
    let Ok((h, _, _)) = Header::parse(bytes) else {
        return Job::Decode {
            samples: 0,
            reversible: true,
        };
    };
    let (w, hh) = level_size(h.width as usize, h.height as usize, reduce.into());
    Job::Decode {
        samples: (w * hh) as u64 * h.components as u64,
        reversible: h.wavelet == Wavelet::Cdf53,
    }
}

/// The job of decoding `path` from the first bytes of its header, so that
/// the device can open while the rest is read; `None` where they do not
/// parse (the whole read then decides).
fn peek_job(path: &Path, reduce: u8) -> Option<Job> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut head)
        .ok()?;
    Header::parse(&head).ok()?;
    Some(decode_job(&head, reduce))
}

/// Runs `wavelane decode`.
pub fn run(args: DecodeArgs) -> CliResult {
    // A volume file goes to the volume decoder (docs/volumes.md).
    if let [input] = args.inputs.as_slice() {
        if crate::volume::is_volume_file(input) {
            let slices = args.slices.as_deref().map(crate::volume::parse_slices);
            return crate::volume::decode_file(
                input,
                &args.output,
                slices.transpose()?,
                args.layers,
                args.backend,
                args.json,
            );
        }
    }
    // A sequence file goes to the sequence decoder.
    if let [input] = args.inputs.as_slice() {
        if crate::sequence::is_sequence_file(input) {
            return crate::sequence::decode(&args, input);
        }
    }
    if args.frames.is_some() {
        return Err("--frames applies to sequence (.wls) files only".into());
    }
    if args.slices.is_some() {
        return Err("--slices applies to volume files only".into());
    }
    let options = DecodeOptions {
        reduce: args.reduce,
        layers: args.layers,
        ..DecodeOptions::default()
    };
    // Outputs are written atomically, so one under its final name is
    // complete; it only has to read back as an image.
    run_files(
        &args.inputs,
        &args.output,
        "png",
        args.json,
        |out| (args.skip_existing && image_io::load(out).is_ok()).then_some("exists"),
        |input, out, bar, reports| decode_one(&args, &options, input, out, bar, reports),
    )
}

/// A decode error, with the damaged segment's codeblocks named where the
/// codec reports a segment CRC.
fn explain(bytes: &[u8], e: CodecError) -> CliError {
    if let CodecError::Format(FormatError::SegmentCrc {
        resolution, layer, ..
    }) = e
    {
        if let Ok(c) = Container::parse(bytes, ReadOptions::default()) {
            // Segments are resolution-major, one per layer (empty included).
            let k = resolution * c.index.layers + layer;
            if k < c.segments.len() {
                return format!(
                    "{} (decode what is intact with --partial)",
                    verify::damaged_segment(&c, k)
                )
                .into();
            }
        }
    }
    e.into()
}

/// Decodes one input to `out`, adding its report.
fn decode_one(
    args: &DecodeArgs,
    options: &DecodeOptions,
    input: &Path,
    out: &Path,
    bar: &ProgressBar,
    reports: &mut Vec<serde_json::Value>,
) -> CliResult {
    let kind = args.backend.into();
    let peeked = peek_job(input, args.reduce);
    let (read, early) =
        read_while_opening(open_early(kind, peeked), || read_needed(input, args.reduce));
    let (bytes, file_size) = read?;
    // A file shorter than its own header and index promise is an error
    // unless --partial asks for the progressive prefix.
    let expected = verify::wl_expected_len(&bytes).ok();
    let cut = expected.filter(|&full| file_size < full);
    if let (Some(full), false) = (cut, args.partial) {
        return Err(format!(
            "truncated: {file_size} of the {full} bytes its index promises \
             (decode what is there with --partial)"
        )
        .into());
    }
    let (backend, device_start, choice) =
        select_backend(kind, decode_job(&bytes, args.reduce), early)?;
    let (decoded, damaged) = if args.partial {
        codec::decode_skipping_damaged(&bytes, options, &backend)?
    } else {
        let d = codec::decode(&bytes, options, &backend).map_err(|e| explain(&bytes, e))?;
        (d, Vec::new())
    };
    if let Some(full) = cut {
        bar.suspend(|| {
            eprintln!(
                "wavelane: warning: {}: truncated ({file_size} of {full} bytes), decoded the prefix",
                input.display()
            )
        });
    }
    if !damaged.is_empty() {
        let c = Container::parse(&bytes, ReadOptions::default())?;
        bar.suspend(|| {
            for &k in &damaged {
                eprintln!(
                    "wavelane: warning: {}: left out {}",
                    input.display(),
                    verify::damaged_segment(&c, k)
                );
            }
        });
    }
    image_io::save(&decoded.image, out)?;
    let r = &decoded.report;
    let samples = decoded.image.samples() as f64;
    if args.json {
        reports.push(serde_json::json!({
            "input": input, "output": out, "file_bytes": file_size, "bytes_read": bytes.len(),
            "damaged_segments": damaged,
            "report": r, "megasamples_per_second": samples / r.seconds / 1e6,
            "transfers": r.transfers, "stages": r.stages,
            "device_start": device_start, "backend_choice": choice,
        }));
    } else {
        bar.suspend(|| {
            println!(
                "{} -> {}: {}x{}, {} of {} resolution(s), {} layer(s), read {} of {} bytes{}{}, {:.3} s ({:.1} MS/s) on {}",
                input.display(),
                out.display(),
                r.width,
                r.height,
                r.resolutions,
                r.resolutions + args.reduce as usize,
                r.layers,
                bytes.len(),
                file_size,
                if cut.is_some() { " (truncated file)" } else { "" },
                if damaged.is_empty() { String::new() } else { format!(" ({} damaged segment(s) left out)", damaged.len()) },
                r.seconds,
                samples / r.seconds / 1e6,
                r.backend
            );
        });
    }
    Ok(())
}
