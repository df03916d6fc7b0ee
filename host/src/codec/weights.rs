//! What rate control weighs: the squared-error weight of a codeblock's
//! index units (quantization step, subband synthesis energy, colour
//! weight, fractional bits), and the size model of the parts of a file
//! that do not depend on truncation (docs/codec.md, "Encoder").

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use wavelane_core::dwt::{gains, Orientation, Wavelet};

use super::codeblocks::BlockGeometry;
use super::colour;
use super::error::CodecError;
use super::header::Header;
use super::index::{se_bits, ue_bits, BlockIndex};
use super::rate::SizeModel;

/// [`gains::subband_energy`], memoized: it runs filter cascades (tens of
/// microseconds) and rate control asks for it once per codeblock, which
/// without the cache dominated a lossless encode.
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

/// Every block's [`block_weight`], computed once per subband of each
/// component (consecutive blocks share it), so that callers on many
/// threads do not each take the energies' memo lock per block.
pub(crate) fn block_weights(header: &Header, blocks: &[BlockGeometry]) -> Vec<f64> {
    let mut last: Option<((u8, u8, u8, Orientation), f64)> = None;
    blocks
        .iter()
        .map(|b| {
            let key = (b.component, b.band, b.level, b.orientation);
            match last {
                Some((k, w)) if k == key => w,
                _ => {
                    let w = block_weight(header, b);
                    last = Some((key, w));
                    w
                }
            }
        })
        .collect()
}

/// Computes the synthesis energy of every subband `blocks` lie in, so that
/// rate control finds them memoized (run beside the entropy stage, which
/// leaves the CPU's other threads idle while it waits on a GPU or on its
/// longest blocks).
pub(crate) fn warm_energies(header: &Header, blocks: &[BlockGeometry]) {
    let mut seen = Vec::new();
    for b in blocks {
        if !seen.contains(&(b.level, b.orientation)) {
            seen.push((b.level, b.orientation));
            subband_energy(header.wavelet, b.level as u32, b.orientation);
        }
    }
}

/// The truncation-independent parts of the file size.
pub(crate) fn size_model(header: &Header, index: &BlockIndex) -> Result<SizeModel, CodecError> {
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
