//! `wavelane decode`: `.wl` files to images, at full or reduced
//! resolution, through all or some layers, reading only the bytes needed.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use super::batch::devices::Coder;
use super::batch::{parse_devices, run_files, BatchArgs, DeviceList, Done, FileJob};
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
#[command(after_help = "Examples:
  wavelane decode photo.wl -o photo.png
  wavelane decode photo.wl -o thumb.png --reduce 3 --layers 1
  wavelane decode archive/ -o images/              # every .wl of a directory, as PNG
  wavelane decode archive/*.wl -o images/ --devices all --json

With several inputs (or a directory) the output is a directory of PNG
files: reading, decoding and writing overlap (a few files in flight),
every output equals what decoding its input alone gives, reports come in
input order, and a failed file is reported while the others go on (exit
code 3).

Sequences (.wls): -o out.y4m (the input's layout and depth back), -o out.yuv
(raw planes) or an image pattern (one picture per frame; RGB, or gray for gray video):
  wavelane decode clip.wls -o back.y4m
  wavelane decode clip.wls -o frames/%05d.png --frames 3..5")]
pub struct DecodeArgs {
    /// Input .wl files, or directories of them (or one .wls sequence).
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
    /// Decode on these GPUs (`all`, or indices as `wavelane devices` lists them), one
    /// worker each, taking files from one queue: a faster device decodes more of them.
    /// An index listed twice runs two workers on that device (one file's transfers
    /// overlap another's kernels).
    #[arg(long, value_name = "all|0,1,...", value_parser = parse_devices)]
    pub devices: Option<DeviceList>,
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
            super::batch::refuse_devices(args.devices.as_ref(), "volume")?;
            let slices = args.slices.as_deref().map(crate::volume::parse_slices);
            let options = wavelane::volume::VolumeDecodeOptions {
                slices: slices.transpose()?,
                layers: args.layers,
                reduce: args.reduce,
                partial: args.partial,
                ..Default::default()
            };
            return crate::volume::decode_file(
                input,
                &args.output,
                &options,
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
    let job = DecodeJob {
        options: DecodeOptions {
            reduce: args.reduce,
            layers: args.layers,
            ..DecodeOptions::default()
        },
        args: &args,
    };
    run_files(
        BatchArgs {
            inputs: &args.inputs,
            output: &args.output,
            json: args.json,
            backend: args.backend.into(),
            devices: args.devices.as_ref(),
        },
        &job,
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

/// Decoding one file of a batch.
struct DecodeJob<'a> {
    args: &'a DecodeArgs,
    options: DecodeOptions,
}

/// The bytes of a file read: those the decode needs, and the file's size.
struct Loaded {
    bytes: Vec<u8>,
    file_size: u64,
    /// The size its index promises, where the file is shorter (--partial).
    cut: Option<u64>,
}

/// A file decoded, with what its report needs.
struct Coded {
    loaded: Loaded,
    decoded: codec::Decoded<codec::Interleaved>,
    damaged: Vec<usize>,
    warnings: Vec<String>,
    device_start: super::batch::start::DeviceStart,
    choice: wavelane::backend::auto::Choice,
}

impl FileJob for DecodeJob<'_> {
    type Loaded = Loaded;
    type Coded = Coded;
    const INPUTS: &'static [&'static str] = &["wl"];
    const OUTPUT: &'static str = "png";

    fn peek(&self, input: &Path) -> Option<Job> {
        peek_job(input, self.args.reduce)
    }

    fn skip(&self, out: &Path) -> Option<&'static str> {
        // Outputs are written atomically, so one under its final name is
        // complete; it only has to read back as an image.
        (self.args.skip_existing && image_io::load(out).is_ok()).then_some("exists")
    }

    fn read(&self, input: &Path, _out: &Path) -> Result<Loaded, CliError> {
        let (bytes, file_size) = read_needed(input, self.args.reduce)?;
        // A file shorter than its own header and index promise is an error
        // unless --partial asks for the progressive prefix.
        let expected = verify::wl_expected_len(&bytes).ok();
        let cut = expected.filter(|&full| file_size < full);
        if let (Some(full), false) = (cut, self.args.partial) {
            return Err(format!(
                "truncated: {file_size} of the {full} bytes its index promises \
                 (decode what is there with --partial)"
            )
            .into());
        }
        Ok(Loaded {
            bytes,
            file_size,
            cut,
        })
    }

    fn code(&self, input: &Path, loaded: Loaded, coder: &mut Coder) -> Result<Coded, CliError> {
        let bytes = &loaded.bytes;
        let (backend, device_start, choice) = coder.backend(decode_job(bytes, self.args.reduce))?;
        // Decoded straight into interleaved samples, as the image file
        // stores them; the rare recovery path converts its planes.
        let (decoded, damaged) = if self.args.partial {
            let (d, damaged) = codec::decode_skipping_damaged(bytes, &self.options, &backend)?;
            let image = codec::Interleaved::from_image(&d.image);
            let report = d.report;
            (codec::Decoded { image, report }, damaged)
        } else {
            let d = codec::decode_interleaved(bytes, &self.options, &backend)
                .map_err(|e| explain(bytes, e))?;
            (d, Vec::new())
        };
        let mut warnings = Vec::new();
        if let Some(full) = loaded.cut {
            warnings.push(format!(
                "wavelane: warning: {}: truncated ({} of {full} bytes), decoded the prefix",
                input.display(),
                loaded.file_size
            ));
        }
        if !damaged.is_empty() {
            let c = Container::parse(bytes, ReadOptions::default())?;
            for &k in &damaged {
                warnings.push(format!(
                    "wavelane: warning: {}: left out {}",
                    input.display(),
                    verify::damaged_segment(&c, k)
                ));
            }
        }
        Ok(Coded {
            loaded,
            decoded,
            damaged,
            warnings,
            device_start,
            choice,
        })
    }

    fn write(&self, input: &Path, out: &Path, coded: Coded) -> Result<Done, CliError> {
        let Coded {
            loaded,
            decoded,
            damaged,
            warnings,
            device_start,
            choice,
        } = coded;
        image_io::save_interleaved(&decoded.image, out)?;
        let r = &decoded.report;
        let samples = decoded.image.len() as f64;
        let image_bytes = samples as u64 * if decoded.image.bit_depth > 8 { 2 } else { 1 };
        let (bytes, file_size) = (&loaded.bytes, loaded.file_size);
        if self.args.json {
            let json = serde_json::json!({
                "input": input, "output": out, "file_bytes": file_size, "bytes_read": bytes.len(),
                "damaged_segments": damaged,
                "report": r, "megasamples_per_second": samples / r.seconds / 1e6,
                "transfers": r.transfers, "stages": r.stages,
                "device_start": device_start, "backend_choice": choice,
            });
            return Ok(Done {
                json: Some(json),
                warnings,
                image_bytes,
                ..Done::default()
            });
        }
        let text = format!(
            "{} -> {}: {}x{}, {} of {} resolution(s), {} layer(s), read {} of {} bytes{}{}, {:.3} s ({:.1} MS/s) on {}",
            input.display(),
            out.display(),
            r.width,
            r.height,
            r.resolutions,
            r.resolutions + self.args.reduce as usize,
            r.layers,
            bytes.len(),
            file_size,
            if loaded.cut.is_some() { " (truncated file)" } else { "" },
            if damaged.is_empty() { String::new() } else { format!(" ({} damaged segment(s) left out)", damaged.len()) },
            r.seconds,
            samples / r.seconds / 1e6,
            r.backend
        );
        Ok(Done {
            text: Some(text),
            warnings,
            image_bytes,
            ..Done::default()
        })
    }
}
