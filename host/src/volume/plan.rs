//! Volume options to coding parameters: the default levels per axis, the
//! wavelet and quantization steps of each target, the tables
//! (docs/volumes.md, "Coding").

use wavelane_core::bpc::Mode;
use wavelane_core::dwt::volume::{axes_at, total_levels, volume_subbands};
use wavelane_core::dwt::{gains, max_levels, Wavelet};

use super::format::{VolumeHeader, MAX_AXIS_LEVELS};
use super::types::{Volume, VolumeError};
use crate::codec::header::{QuantStep, Tables};
use crate::codec::presets;
use crate::codec::{LOSSLESS_CODEBLOCK_HEIGHT, LOSSY_CODEBLOCK_HEIGHT};

/// What the file must reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VolumeTarget {
    /// Bit-exact (5/3, every pass).
    Lossless,
    /// The whole file at most this many bits per voxel (fixed-point 9/7).
    Bpp(f64),
}

/// Options of [`super::encode_volume`].
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeOptions {
    /// The target.
    pub target: VolumeTarget,
    /// Levels `[x, y, z]`; `None`: [`default_levels`].
    pub levels: Option<[u8; 3]>,
    /// Quality layers (1..=32; each roughly half the bytes of the next).
    pub layers: u8,
    /// BPC-PaCo passes per bitplane (2 or 3).
    pub passes: u8,
    /// Codeblock rows (default: the image codec's, 64 lossless, 256 lossy).
    pub codeblock_height: Option<u16>,
    /// Base quantization step of the lossy path in sample units (default
    /// `2^(b - 8)` with `b` the bits the samples span, 8 to the type's).
    pub base_step: Option<f64>,
}

impl VolumeOptions {
    /// Lossless, default levels, one layer.
    pub fn lossless() -> Self {
        VolumeOptions {
            target: VolumeTarget::Lossless,
            levels: None,
            layers: 1,
            passes: 3,
            codeblock_height: None,
            base_step: None,
        }
    }

    /// `bpp` bits per voxel, default levels, one layer.
    pub fn bpp(bpp: f64) -> Self {
        VolumeOptions {
            target: VolumeTarget::Bpp(bpp),
            ..Self::lossless()
        }
    }
}

/// Default levels `[x, y, z]` for a volume of `dims`: X and Y as the image
/// codec (5, fewer for small slices); Z only while the coarsest low band
/// keeps at least 4 slices (`floor(log2(depth)) - 2`, at most the XY
/// levels). A Z level needs a run of slices long enough for the filters
/// (5 taps for the 5/3, 9 for the 9/7): on a stack of a few thick slices
/// the symmetric extension at both ends dominates and a Z level costs more
/// bits than it saves, while deep stacks of thin slices are as correlated
/// along Z as in-plane (docs/volumes.md, "Levels").
pub fn default_levels(dims: [usize; 3]) -> [u8; 3] {
    let xy = max_levels(dims[0], dims[1]).min(5);
    let log2_depth = usize::BITS - 1 - dims[2].max(1).leading_zeros();
    let z = log2_depth.saturating_sub(2).min(xy);
    [xy as u8, xy as u8, z as u8]
}

/// Squared synthesis norm of subband `(level, mask)` of a decomposition
/// with `levels`: the product of the 1-D energies along each axis
/// (separable bases, as [`gains::subband_energy`] in 2-D).
pub fn subband_energy_3d(wavelet: Wavelet, levels: [u32; 3], level: u32, mask: u8) -> f64 {
    let total = total_levels(levels);
    let axes = axes_at(levels, level);
    (0..3)
        .map(|a| {
            let low_after = |n: u32| {
                if n == 0 {
                    1.0
                } else {
                    gains::energy_1d_band(wavelet, n - 1, false)
                }
            };
            if level == total || !axes[a] {
                low_after(levels[a])
            } else {
                gains::energy_1d_band(wavelet, level, mask & (1 << a) != 0)
            }
        })
        .product()
}

/// The coding parameters of `v` under `o`, or why they cannot be honoured.
pub fn plan(v: &Volume, o: &VolumeOptions) -> Result<VolumeHeader, VolumeError> {
    let opt = |m: String| Err(VolumeError::Options(m));
    let lossless = o.target == VolumeTarget::Lossless;
    if let VolumeTarget::Bpp(b) = o.target {
        if !(b > 0.0 && b.is_finite()) {
            return opt(format!("--bpp {b} must be > 0"));
        }
    }
    let dims = [v.width, v.height, v.depth];
    let levels = o.levels.unwrap_or_else(|| default_levels(dims));
    let largest = dims.iter().copied().max().unwrap_or(1);
    let max = max_levels(largest, 1).min(MAX_AXIS_LEVELS as u32) as u8;
    if levels.iter().any(|&l| l > max) {
        return opt(format!(
            "--levels {},{},{}: a {}x{}x{} volume allows at most {max} per axis",
            levels[0], levels[1], levels[2], dims[0], dims[1], dims[2]
        ));
    }
    let wavelet = if lossless {
        Wavelet::Cdf53
    } else {
        Wavelet::Fixed97
    };
    let bits = v.sample.bits();
    // The bits the samples really span: a CT in i16 spans about 12, an MRI
    // often 10-11. The default step and the tables' row follow the span, as
    // an 8-bit image's follow its 8 bits; stepping by the type's 16 bits
    // instead quantizes such a volume so coarsely that every pass fits
    // below a modest rate (docs/volumes.md, "Coding").
    let used_bits = span_bits(&v.samples).clamp(8, bits);
    let l32 = levels.map(|l| l as u32);
    let total = total_levels(l32);
    // As the image codec: keep 16-bit samples and the transform's gain well
    // below the coder's 2^28 limit (a 3-D level's low-band gain is K^3 where
    // a 2-D level's is K^2; 4 fractional bits leave 2^4 of headroom).
    let fraction_bits = if lossless {
        0
    } else {
        (24i32 - bits as i32 - (total as i32 * 3 + 4) / 5).clamp(0, 4) as u8
    };
    let mode = Mode::from_passes(o.passes)
        .ok_or_else(|| VolumeError::Options(format!("--passes {} (2 or 3)", o.passes)))?;
    let mut base = 1.0;
    let bands = volume_subbands(dims, l32).map_err(|e| VolumeError::Options(e.to_string()))?;
    let steps = if lossless {
        bands.map(|_| QuantStep::ONE).collect()
    } else {
        base = o.base_step.unwrap_or((used_bits as f64 - 8.0).exp2());
        if !(base > 0.0 && base.is_finite()) {
            return opt(format!("base step {base} must be > 0"));
        }
        let scale = base * (fraction_bits as f64).exp2();
        bands
            .map(|b| {
                let e = subband_energy_3d(wavelet, l32, b.level as u32, b.mask);
                QuantStep::from_value(scale / e.sqrt())
            })
            .collect()
    };
    if !(1..=32).contains(&o.layers) {
        return opt(format!("{} layers (1..=32)", o.layers));
    }
    let row_offset = presets::row_offset(used_bits, wavelet, base);
    let tables = Tables::preset(presets::default_preset(wavelet), mode, row_offset)
        .expect("the default presets exist");
    let header = VolumeHeader {
        dims: dims.map(|d| d as u32),
        sample: v.sample,
        wavelet,
        levels,
        codeblock_height: o.codeblock_height.unwrap_or(if lossless {
            LOSSLESS_CODEBLOCK_HEIGHT
        } else {
            LOSSY_CODEBLOCK_HEIGHT
        }),
        tables,
        fraction_bits,
        layers: o.layers,
        steps,
        nifti_header: v.nifti_header.clone(),
    };
    header.validate()?;
    Ok(header)
}

/// Bits needed for the span of `samples` (`max - min`), at least 1.
fn span_bits(samples: &[i32]) -> u8 {
    let (lo, hi) = samples
        .iter()
        .fold((i32::MAX, i32::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    let span = (hi as i64 - lo as i64).max(1) as u64;
    (64 - span.leading_zeros()) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_levels_follow_the_depth() {
        assert_eq!(default_levels([256, 256, 1]), [5, 5, 0]);
        assert_eq!(default_levels([256, 256, 7]), [5, 5, 0]);
        assert_eq!(default_levels([256, 256, 8]), [5, 5, 1]);
        assert_eq!(default_levels([256, 256, 40]), [5, 5, 3]);
        assert_eq!(default_levels([256, 256, 300]), [5, 5, 5]);
        assert_eq!(default_levels([16, 16, 300]), [4, 4, 4]);
    }

    /// With no Z levels every band's energy is the 2-D one (Z contributes
    /// 1), and the low band after one level of every axis is the 1-D low
    /// energy cubed.
    #[test]
    fn energies_are_products_of_the_axes() {
        use wavelane_core::dwt::Orientation;
        for w in [Wavelet::Cdf53, Wavelet::Fixed97] {
            let l = [3, 3, 0];
            let two_d = |lev, o| gains::subband_energy(w, lev, o);
            assert!((subband_energy_3d(w, l, 3, 0) - two_d(3, Orientation::LL)).abs() < 1e-9);
            assert!((subband_energy_3d(w, l, 1, 1) - two_d(1, Orientation::HL)).abs() < 1e-9);
            assert!((subband_energy_3d(w, l, 0, 3) - two_d(0, Orientation::HH)).abs() < 1e-9);
            let low = gains::energy_1d_band(w, 0, false);
            let e = subband_energy_3d(w, [1, 1, 1], 1, 0);
            assert!((e - low * low * low).abs() < 1e-9);
        }
    }
}
