//! Progressive access: which resolutions, layers and bytes a decode needs.
//!
//! Data is stored resolution-major (LL first), then by layer, so decoding
//! with `--reduce k` needs only a prefix of the file: the main header and
//! the segments of the resolutions kept. Decoding fewer layers skips the
//! later layers' segments inside each resolution. A truncated file is just a
//! shorter prefix: every codeblock decodes the codewords it still has.

use wavelane_core::dwt::level_size;

use super::error::{CodecError, OptionsError};
use super::file::Container;
use super::format::FormatError;

/// What a decode covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    /// Resolutions decoded (1 = only the LL band).
    pub resolutions: usize,
    /// Layers decoded.
    pub layers: usize,
    /// Codeblocks decoded: a prefix of the file order.
    pub blocks: usize,
    /// Output width.
    pub width: usize,
    /// Output height.
    pub height: usize,
}

/// The selection for `reduce` dropped resolutions and `layers` layers
/// (`None`: all; more than the file has: all).
pub fn select(c: &Container<'_>, reduce: u8, layers: Option<u8>) -> Result<Selection, CodecError> {
    let hd = &c.header;
    if reduce > hd.levels {
        return Err(CodecError::Options(OptionsError::Reduce {
            reduce,
            levels: hd.levels,
        }));
    }
    let layers = match layers {
        Some(0) => return Err(OptionsError::NoLayers.into()),
        Some(n) => n.min(hd.layers) as usize,
        None => hd.layers as usize,
    };
    let resolutions = (hd.levels - reduce) as usize + 1;
    let blocks = c
        .blocks
        .iter()
        .take_while(|b| (b.resolution as usize) < resolutions)
        .count();
    let (width, height) = level_size(hd.width as usize, hd.height as usize, reduce as u32);
    Ok(Selection {
        resolutions,
        layers,
        blocks,
        width,
        height,
    })
}

/// Bytes of the file the selection reads (that are present).
pub fn bytes_used(c: &Container<'_>, sel: &Selection) -> u64 {
    let present = c.bytes.len() as u64;
    let data: u64 = c
        .segments
        .iter()
        .filter(|s| s.resolution < sel.resolutions && s.layer < sel.layers)
        .map(|s| (s.offset + s.len).min(present).saturating_sub(s.offset))
        .sum();
    c.header_len as u64 + data
}

/// How many leading bytes of a file hold everything a decode with
/// `reduce` needs: the main header and every segment of the kept
/// resolutions. Reading just this prefix decodes exactly as the whole file.
pub fn prefix_len(c: &Container<'_>, reduce: u8) -> u64 {
    let keep = (c.header.levels.saturating_sub(reduce)) as usize + 1;
    c.segments
        .iter()
        .filter(|s| s.resolution < keep)
        .map(|s| s.offset + s.len)
        .max()
        .unwrap_or(c.header_len as u64)
}

/// Length of the main header of a file from its first 14 bytes (the
/// header-length field), so a reader can fetch the header before the data.
pub fn header_len_from_prefix(first: &[u8]) -> Result<u64, FormatError> {
    if first.len() < 14 {
        return Err(FormatError::Truncated {
            what: "main header",
            needed: 14,
            available: first.len() as u64,
        });
    }
    if first[..8] != super::format::MAGIC {
        return Err(FormatError::BadMagic);
    }
    Ok(u32::from_le_bytes([first[10], first[11], first[12], first[13]]) as u64)
}
