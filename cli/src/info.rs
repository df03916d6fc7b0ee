//! `wavelane info`: what a `.wl` file holds.

use std::path::PathBuf;

use clap::Args;

use super::CliResult;
use wavelane::codec::file::{Container, ReadOptions};
use wavelane::codec::format::wavelet_name;

/// Arguments of `wavelane info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The .wl file (image or volume), or a .wls sequence (its frames listed).
    pub input: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `wavelane info`.
pub fn run(args: InfoArgs) -> CliResult {
    if crate::volume::is_volume_file(&args.input) {
        return crate::volume::info_file(&args.input, args.json);
    }
    if crate::sequence::is_sequence_file(&args.input) {
        return crate::sequence::info(&args.input, args.json);
    }
    let bytes = std::fs::read(&args.input)?;
    let c = Container::parse(&bytes, ReadOptions::default())
        .map_err(|e| format!("{}: {e}", args.input.display()))?;
    let crc_ok: Vec<Option<bool>> = (0..c.segments.len())
        .map(|k| match c.check_segment(k) {
            Ok(true) => Some(true),
            Ok(false) => None,
            Err(_) => Some(false),
        })
        .collect();
    let h = &c.header;
    let version = c.version;
    let tables = h.tables.name();
    let tables_text = match h.tables.row_offset() {
        0 => tables.to_string(),
        k => format!("{tables} (rows moved {k:+})"),
    };
    let non_empty = c.index.tops.iter().filter(|t| t.is_some()).count();
    let codewords: u64 = c.index.counts.iter().map(|&n| n as u64).sum();
    let pixels = h.width as f64 * h.height as f64;
    let mut resolutions = Vec::new();
    for r in 0..=h.levels as usize {
        let layer_bytes: Vec<u64> = c
            .segments
            .iter()
            .filter(|s| s.resolution == r)
            .map(|s| s.len)
            .collect();
        let (w, hh) = wavelane_core::dwt::level_size(
            h.width as usize,
            h.height as usize,
            (h.levels as usize - r) as u32,
        );
        resolutions.push((r, w, hh, layer_bytes));
    }
    if args.json {
        let v = serde_json::json!({
            "file": args.input, "format_version": version, "bytes": bytes.len(), "complete": c.is_complete(), "full_bytes": c.full_len,
            "bpp": bytes.len() as f64 * 8.0 / pixels,
            "width": h.width, "height": h.height, "components": h.components, "bit_depth": h.bit_depth,
            "signed": h.signed, "colour_transform": h.colour, "wavelet": wavelet_name(h.wavelet),
            "levels": h.levels, "codeblock_height": h.codeblock_height, "passes": h.mode().passes(),
            "tables": tables, "table_row_offset": h.tables.row_offset(), "fraction_bits": h.fraction_bits, "layers": h.layers,
            "block_shifts": h.block_shifts, "header_bytes": c.header_len,
            "steps": h.steps.iter().map(|l| l.iter().map(|s| s.value()).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "codeblocks": c.blocks.len(), "non_empty_codeblocks": non_empty, "codewords": codewords,
            "resolutions": resolutions.iter().map(|(r, w, hh, lb)| serde_json::json!({
                "resolution": r, "width": w, "height": hh, "layer_bytes": lb,
            })).collect::<Vec<_>>(),
            "segments_crc_ok": crc_ok,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{}: wavelane image, format version {}",
        args.input.display(),
        version
    );
    println!(
        "  {}x{}, {} component(s), {}-bit {}, colour transform {}",
        h.width,
        h.height,
        h.components,
        h.bit_depth,
        if h.signed { "signed" } else { "unsigned" },
        h.colour.name()
    );
    println!(
        "  wavelet {} with {} level(s), codeblocks 64x{}, BPC-PaCo {} passes, {} tables, {} fractional bit(s)",
        wavelet_name(h.wavelet),
        h.levels,
        h.codeblock_height,
        h.mode().passes(),
        tables_text,
        h.fraction_bits
    );
    println!(
        "  {} bytes ({:.4} bpp){}, main header {} bytes, {} layer(s){}",
        bytes.len(),
        bytes.len() as f64 * 8.0 / pixels,
        if c.is_complete() {
            String::new()
        } else {
            format!(" of {} (truncated)", c.full_len)
        },
        c.header_len,
        h.layers,
        if h.block_shifts {
            ", early termination"
        } else {
            ""
        }
    );
    println!(
        "  {} codeblocks ({} non-empty), {} codewords",
        c.blocks.len(),
        non_empty,
        codewords
    );
    for (r, w, hh, lb) in &resolutions {
        let lb: Vec<String> = lb.iter().map(|b| b.to_string()).collect();
        println!(
            "  resolution {r} ({w}x{hh}): layer bytes [{}]",
            lb.join(", ")
        );
    }
    let bad = crc_ok.iter().filter(|c| **c == Some(false)).count();
    if bad > 0 {
        println!("  {bad} segment(s) fail their CRC check");
    }
    Ok(())
}
