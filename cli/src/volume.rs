//! `wavelane volume encode | decode | info`: MRI/CT and other volumes
//! (NIfTI-1 `.nii`/`.nii.gz`, multi-page TIFF, raw) to volume `.wl` files
//! and back (docs/volumes.md). `wavelane decode` and `wavelane info` hand
//! volume files here, and `wavelane encode` hands NIfTI inputs here.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::CliResult;
use crate::args::BackendArg;
use wavelane::backend::Backend;
use wavelane::codec::format::wavelet_name;
use wavelane::output::AtomicFile;
use wavelane::verify;
use wavelane::volume::format::VolumeContainer;
use wavelane::volume::io::{self, RawSpec, DEFAULT_MAX_VOXELS};
use wavelane::volume::{self, SampleType, VolumeDecodeOptions, VolumeOptions, VolumeTarget};

/// Arguments of `wavelane volume`.
#[derive(Debug, Args)]
pub struct VolumeArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: VolumeCommand,
}

/// `wavelane volume` subcommands.
#[derive(Debug, Subcommand)]
pub enum VolumeCommand {
    /// Encode a volume (.nii, .nii.gz, multi-page .tif, or raw with --dims) as a volume .wl file.
    #[command(after_help = "Examples:\n  \
        wavelane volume encode head.nii.gz -o head.wl --lossless\n  \
        wavelane volume encode ct.raw --dims 512x512x120 --sample i16 -o ct.wl --bpp 0.5 --layers 3\n  \
        wavelane volume encode stack.tif -o stack.wl --levels 5,5,2 --backend gpu")]
    Encode(VolumeEncodeArgs),
    /// Decode a volume .wl file to .nii, .nii.gz, .tif or .raw (by the extension).
    #[command(after_help = "Examples:\n  \
        wavelane volume decode head.wl -o head.nii.gz\n  \
        wavelane volume decode head.wl -o mid.nii --slices 60..63 --layers 2\n  \
        wavelane volume decode head.wl -o preview.nii --reduce 1   # half size on every axis\n  \
        wavelane volume decode damaged.wl -o rescued.nii --partial")]
    Decode(VolumeDecodeArgs),
    /// Describe a volume .wl file: dimensions, depth, per-axis levels, sizes.
    Info(VolumeInfoArgs),
    /// A built-in CT-like phantom, lossless and at several rates: table and orthogonal slices.
    Demo(crate::volume_demo::VolumeDemoArgs),
}

/// Arguments of `wavelane volume encode`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("rate").args(["lossless", "bpp"]))]
pub struct VolumeEncodeArgs {
    /// Input volume: .nii, .nii.gz, multi-page .tif/.tiff, or raw samples with --dims and --sample.
    pub input: PathBuf,
    /// Output volume .wl file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Raw input: its size, width x height x depth (e.g. 256x256x128).
    #[arg(long, value_name = "WxHxD", requires = "sample")]
    pub dims: Option<String>,
    /// Raw input: its samples, little-endian.
    #[arg(long, value_name = "u8|i8|u16|i16", requires = "dims")]
    pub sample: Option<SampleType>,
    /// Bit-exact coding (the default when no rate is given).
    #[arg(long)]
    pub lossless: bool,
    /// Target size in bits per voxel of the whole file.
    #[arg(long, value_name = "X")]
    pub bpp: Option<f64>,
    /// Decomposition levels per axis, X,Y,Z (default: 5,5 in-plane, fewer
    /// for small slices; Z only while 4 or more slices stay in the low band).
    #[arg(long, value_name = "X,Y,Z")]
    pub levels: Option<String>,
    /// Quality layers (each roughly doubles the rate of the one below).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub layers: u8,
    /// BPC-PaCo coding passes per bitplane.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub passes: u8,
    /// Codeblock height (the width is always 64; default 64 lossless, 256 lossy).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub codeblock_height: Option<u16>,
    /// Base quantization step in sample units for lossy coding (default 2^(b-8), b the bits the samples span).
    #[arg(long)]
    pub qstep: Option<f64>,
    /// Where the transform and coder run (`auto`: a hardware GPU if there is one).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Print a JSON report instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wavelane volume decode`.
#[derive(Debug, Args)]
pub struct VolumeDecodeArgs {
    /// Input volume .wl file.
    pub input: PathBuf,
    /// Output volume: .nii, .nii.gz, .tif/.tiff or .raw, by the extension.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Decode slices A to B only (both included, counted from 0), reading only the codeblocks they need.
    #[arg(long, value_name = "A..B")]
    pub slices: Option<String>,
    /// Decode only the first N quality layers.
    #[arg(long, value_name = "N")]
    pub layers: Option<u8>,
    /// Decode at a lower resolution: leave out the finest N levels of every
    /// axis (of an axis with fewer levels, all it has).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub reduce: u8,
    /// Decode what is intact of a cut or damaged file (with a warning per
    /// segment left out) instead of failing.
    #[arg(long)]
    pub partial: bool,
    /// Where the transform and decoder run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Print a JSON report instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `wavelane volume info`.
#[derive(Debug, Args)]
pub struct VolumeInfoArgs {
    /// The volume .wl file.
    pub input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `wavelane volume`.
pub fn run(args: VolumeArgs) -> CliResult {
    match args.command {
        VolumeCommand::Encode(a) => encode(a),
        VolumeCommand::Decode(a) => decode(a),
        VolumeCommand::Info(a) => info(a),
        VolumeCommand::Demo(a) => crate::volume_demo::run(a),
    }
}

/// Parses `X,Y,Z` levels.
pub fn parse_levels(s: &str) -> Result<[u8; 3], String> {
    let bad = || format!("--levels {s:?}: expected X,Y,Z, three integers 0..=16");
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0u8; 3];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = p.trim().parse().map_err(|_| bad())?;
        if *o > 16 {
            return Err(bad());
        }
    }
    Ok(out)
}

/// Parses `A..B` (inclusive; `A` alone for one slice).
pub fn parse_slices(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--slices {s:?}: expected A..B (inclusive, from 0) with A <= B");
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (a, b.strip_prefix('=').unwrap_or(b)),
        None => (s, s),
    };
    let a: usize = a.trim().parse().map_err(|_| bad())?;
    let b: usize = b.trim().parse().map_err(|_| bad())?;
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

fn encode(a: VolumeEncodeArgs) -> CliResult {
    let raw = match (&a.dims, a.sample) {
        (Some(d), Some(sample)) => Some(RawSpec {
            dims: io::raw::parse_dims(d)?,
            sample,
        }),
        _ => None,
    };
    let options = VolumeOptions {
        target: match a.bpp {
            Some(b) => VolumeTarget::Bpp(b),
            None => VolumeTarget::Lossless,
        },
        levels: a.levels.as_deref().map(parse_levels).transpose()?,
        layers: a.layers,
        passes: a.passes,
        codeblock_height: a.codeblock_height,
        base_step: a.qstep,
    };
    encode_file(&a.input, &a.output, raw, &options, a.backend, a.json)
}

/// Encodes one volume file (also `wavelane encode`'s path for NIfTI input).
pub fn encode_file(
    input: &Path,
    output: &Path,
    raw: Option<RawSpec>,
    options: &VolumeOptions,
    backend: BackendArg,
    json: bool,
) -> CliResult {
    let mut file = AtomicFile::create(output)?;
    let v = io::load(input, raw, DEFAULT_MAX_VOXELS)
        .map_err(|e| format!("{}: {e}", input.display()))?;
    let backend = Backend::select(backend.into())?;
    let enc = volume::encode_volume(&v, options, &backend)?;
    file.write_all(&enc.bytes)?;
    file.commit()?;
    let r = &enc.report;
    if json {
        let mut j = serde_json::to_value(r)?;
        j["input"] = input.display().to_string().into();
        j["output"] = output.display().to_string().into();
        j["dims"] = serde_json::json!([v.width, v.height, v.depth]);
        j["sample"] = v.sample.name().into();
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        let [x, y, z] = r.levels;
        println!(
            "{} -> {}: {}x{}x{} {}, levels {x},{y},{z}, {} codeblocks, {} bytes ({:.4} bits/voxel), {:.3} s on {}",
            input.display(),
            output.display(),
            v.width,
            v.height,
            v.depth,
            v.sample.name(),
            r.codeblocks,
            r.bytes,
            r.bits_per_voxel,
            r.seconds.total,
            r.backend
        );
    }
    Ok(())
}

fn decode(a: VolumeDecodeArgs) -> CliResult {
    let slices = a.slices.as_deref().map(parse_slices).transpose()?;
    let options = VolumeDecodeOptions {
        slices,
        layers: a.layers,
        reduce: a.reduce,
        partial: a.partial,
        ..VolumeDecodeOptions::default()
    };
    decode_file(&a.input, &a.output, &options, a.backend, a.json)
}

/// Decodes one volume file (also `wavelane decode`'s path for volume files).
pub fn decode_file(
    input: &Path,
    output: &Path,
    options: &VolumeDecodeOptions,
    backend: BackendArg,
    json: bool,
) -> CliResult {
    let bytes = std::fs::read(input)?;
    let backend = Backend::select(backend.into())?;
    let dec =
        volume::decode_volume(&bytes, options, &backend).map_err(|e| explain(input, &bytes, e))?;
    let r = &dec.report;
    warn_left_out(input, &bytes, r);
    io::save(output, &dec.volume)?;
    let v = &dec.volume;
    if json {
        let mut j = serde_json::to_value(r)?;
        j["input"] = input.display().to_string().into();
        j["output"] = output.display().to_string().into();
        j["dims"] = serde_json::json!([v.width, v.height, v.depth]);
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        println!(
            "{} -> {}: {}x{}x{} {}, {} of {} codeblocks, {} layers{}, {:.3} s on {}",
            input.display(),
            output.display(),
            v.width,
            v.height,
            v.depth,
            v.sample.name(),
            r.blocks_decoded,
            r.blocks_total,
            r.layers,
            match r.damaged_segments.len() + r.missing_segments.len() {
                0 => String::new(),
                n => format!(" ({n} segment(s) left out)"),
            },
            r.seconds,
            r.backend
        );
    }
    Ok(())
}

/// A decode error, naming the damaged segment and its codeblocks and
/// pointing to `--partial` where what is intact could be decoded.
fn explain(input: &Path, bytes: &[u8], e: volume::VolumeError) -> String {
    use wavelane::codec::FormatError;
    let hint = "(decode what is intact with --partial)";
    match e {
        volume::VolumeError::Format(FormatError::SegmentCrc {
            resolution, layer, ..
        }) => {
            let c = VolumeContainer::parse(bytes, u64::MAX);
            let k = c.as_ref().ok().and_then(|c| {
                c.segments
                    .iter()
                    .position(|s| s.resolution == resolution && s.layer == layer)
                    .map(|k| verify::volume_damaged_segment(c, k).to_string())
            });
            match k {
                Some(d) => format!("{}: {d} {hint}", input.display()),
                None => format!("{}: {e} {hint}", input.display()),
            }
        }
        volume::VolumeError::Format(FormatError::Truncated {
            what: "volume data",
            needed,
            available,
        }) => format!(
            "{}: truncated: {available} of the {needed} bytes its index promises {hint}",
            input.display()
        ),
        e => format!("{}: {e}", input.display()),
    }
}

/// One warning on stderr per segment a `--partial` decode left out.
fn warn_left_out(input: &Path, bytes: &[u8], r: &volume::VolumeDecodeReport) {
    if r.file_bytes < r.expected_bytes {
        eprintln!(
            "wavelane: warning: {}: truncated ({} of {} bytes), decoded what is there",
            input.display(),
            r.file_bytes,
            r.expected_bytes
        );
    }
    if r.damaged_segments.is_empty() && r.missing_segments.is_empty() {
        return;
    }
    let Ok(c) = VolumeContainer::parse_prefix(bytes, u64::MAX) else {
        return;
    };
    for &k in &r.damaged_segments {
        let d = verify::volume_damaged_segment(&c, k);
        eprintln!("wavelane: warning: {}: left out {d}", input.display());
    }
    for &k in &r.missing_segments {
        let s = c.segments[k];
        eprintln!(
            "wavelane: warning: {}: left out segment {k} (resolution {}, layer {}): missing from the cut file",
            input.display(),
            s.resolution,
            s.layer
        );
    }
}

fn info(a: VolumeInfoArgs) -> CliResult {
    info_file(&a.input, a.json)
}

/// Describes one volume file (also `wavelane info`'s path for volume files).
pub fn info_file(input: &Path, json: bool) -> CliResult {
    let bytes = std::fs::read(input)?;
    let c = VolumeContainer::parse(&bytes, u64::MAX)
        .map_err(|e| format!("{}: {e}", input.display()))?;
    let h = &c.header;
    let crc_ok = (0..c.segments.len()).all(|k| c.check_segment(k).is_ok());
    let voxel_size = h.nifti_header.as_ref().and_then(|n| {
        io::nifti::parse_header(n, u64::MAX)
            .ok()
            .map(|i| i.voxel_size)
    });
    // The header's f32s as the shortest decimals that read back as them
    // (0.8, not the f64 widening 0.800000011920929).
    let voxel_size_json = voxel_size.map(|v| v.map(|x| x.to_string().parse().unwrap_or(x as f64)));
    let resolutions: Vec<Vec<usize>> = (0..h.resolutions())
        .map(|r| {
            c.segments
                .iter()
                .filter(|s| s.resolution == r)
                .map(|s| s.len)
                .collect()
        })
        .collect();
    if json {
        let j = serde_json::json!({
            "file": input.display().to_string(),
            "kind": "volume",
            "bytes": bytes.len(),
            "width": h.dims[0],
            "height": h.dims[1],
            "depth": h.dims[2],
            "sample": h.sample.name(),
            "wavelet": wavelet_name(h.wavelet),
            "levels": h.levels,
            "layers": h.layers,
            "passes": h.mode().passes(),
            "codeblock_height": h.codeblock_height,
            "codeblocks": c.blocks.len(),
            "tables": h.tables.name(),
            "bits_per_voxel": bytes.len() as f64 * 8.0 / h.voxels() as f64,
            "nifti_header": h.nifti_header.is_some(),
            "voxel_size": voxel_size_json,
            "segment_bytes": resolutions,
            "crc_ok": crc_ok,
        });
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(());
    }
    let [lx, ly, lz] = h.levels;
    println!("{}: wavelane volume file, version 1", input.display());
    println!(
        "  size          {} x {} x {} ({} slices), {}",
        h.dims[0],
        h.dims[1],
        h.dims[2],
        h.dims[2],
        h.sample.name()
    );
    println!(
        "  wavelet       {}, levels x {lx}, y {ly}, z {lz}",
        wavelet_name(h.wavelet)
    );
    println!(
        "  coding        {} layers, {} passes, codeblocks 64x{} ({}), tables {}",
        h.layers,
        h.mode().passes(),
        h.codeblock_height,
        c.blocks.len(),
        h.tables.name()
    );
    println!(
        "  bytes         {} ({:.4} bits/voxel), header {}",
        bytes.len(),
        bytes.len() as f64 * 8.0 / h.voxels() as f64,
        c.header_len
    );
    match voxel_size {
        Some([x, y, z]) => println!("  NIfTI header  kept; voxel size {x} x {y} x {z}"),
        None => println!("  NIfTI header  none"),
    }
    for (r, layers) in resolutions.iter().enumerate() {
        println!("  resolution {r:<2} layer bytes {layers:?}");
    }
    println!("  segment CRCs  {}", if crc_ok { "ok" } else { "FAILED" });
    if !crc_ok {
        return Err(format!("{}: a segment CRC fails", input.display()).into());
    }
    Ok(())
}

/// Whether `path` starts with the volume file magic.
pub fn is_volume_file(path: &Path) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && volume::format::is_volume(&head)
}

/// Whether `path` names a NIfTI file (`.nii`, `.nii.gz`).
pub fn is_nifti_name(path: &Path) -> bool {
    matches!(
        io::VolumeFormat::from_path(path),
        Some(io::VolumeFormat::Nifti | io::VolumeFormat::NiftiGz)
    )
}

/// `wavelane encode VOLUME.nii[.gz]`: the image options that apply to
/// volumes (`--lossless`, `--bpp`, `--layers`, `--passes`,
/// `--codeblock-height`, `--qstep`, `--backend`, `--json`; `--levels N`
/// sets X and Y, Z keeps its default).
pub fn encode_from_image_args(args: &crate::encode::EncodeArgs, input: &Path) -> CliResult {
    if args.psnr.is_some() {
        return Err("--psnr is not offered for volumes; use --bpp or --lossless".into());
    }
    let levels = match args.levels {
        Some(l) => {
            let v = io::load(input, None, DEFAULT_MAX_VOXELS)?;
            let z = volume::default_levels([v.width, v.height, v.depth])[2];
            Some([l, l, z.min(l)])
        }
        None => None,
    };
    let options = VolumeOptions {
        target: match args.bpp {
            Some(b) => VolumeTarget::Bpp(b),
            None => VolumeTarget::Lossless,
        },
        levels,
        layers: args.layers,
        passes: args.passes,
        codeblock_height: args.codeblock_height,
        base_step: args.qstep,
    };
    encode_file(input, &args.output, None, &options, args.backend, args.json)
}
