//! The search of a `--psnr` target: rate control's distortion model is off
//! by a factor that depends on the image, so the encoder allocates for a
//! distortion, decodes the candidate, measures its PSNR and aims again by
//! the measured distortion, for up to [`ROUNDS`] rounds (docs/codec.md,
//! "Targets and layers").

use super::decode::decode;
use super::error::CodecError;
use super::image::Image;
use super::metrics::psnr;
use super::options::DecodeOptions;
use super::rate::Allocation;
use crate::backend::Backend;

/// Candidates decoded at most.
pub(crate) const ROUNDS: usize = 6;

/// How far above the target each round aims, dB.
const AIM_ABOVE_DB: f64 = 0.02;

/// A candidate this close above the target ends the search, dB.
const CLOSE_ENOUGH_DB: f64 = 0.05;

/// The best of the candidates `encode_at` makes for distortion limits
/// aiming at `target` dB on `image`: the smallest that reaches the target,
/// else the one of highest PSNR. `noise` is the distortion no truncation
/// removes. Returns the file, its allocation and its measured PSNR.
pub(crate) fn search(
    image: &Image,
    target: f64,
    noise: f64,
    backend: &Backend,
    mut encode_at: impl FnMut(f64) -> Result<(Vec<u8>, Allocation), CodecError>,
) -> Result<(Vec<u8>, Allocation, f64), CodecError> {
    let peak = ((1u64 << image.bit_depth) - 1) as f64;
    let samples = image.samples() as f64;
    let distortion_at = |db: f64| peak * peak * samples / 10f64.powf(db / 10.0);
    let wanted = distortion_at(target + AIM_ABOVE_DB);
    let mut goal = wanted;
    let mut best: Option<(Vec<u8>, Allocation, f64)> = None;
    for _ in 0..ROUNDS {
        let limit = (goal - noise).max(0.0);
        let (bytes, alloc) = encode_at(limit)?;
        let decoded = decode(&bytes, &DecodeOptions::default(), backend)?.image;
        let measured = psnr(image, &decoded).unwrap_or(0.0);
        let better = match &best {
            None => true,
            Some((b, _, p)) => {
                // Prefer reaching the target, then the smaller file;
                // short of it, the higher PSNR.
                match (measured >= target, *p >= target) {
                    (true, false) => true,
                    (true, true) => bytes.len() < b.len(),
                    (false, false) => measured > *p,
                    (false, true) => false,
                }
            }
        };
        if better {
            best = Some((bytes, alloc, measured));
        }
        let reached = measured >= target && measured - target < CLOSE_ENOUGH_DB;
        if reached || limit == 0.0 && measured < target {
            break;
        }
        // The model's distortion is off by a factor: aim by the measured one.
        let actual = distortion_at(measured);
        goal = (goal * wanted / actual.max(f64::MIN_POSITIVE)).max(0.0);
    }
    Ok(best.expect("at least one round"))
}
