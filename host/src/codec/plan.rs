//! Options to coding parameters: the defaults each target implies, checked
//! against each other and the image, resolved into the file's header
//! (docs/codec.md, "Encoder").

use wavelane_core::bpc::Mode;
use wavelane_core::dwt::{gains, max_levels, Wavelet};

use super::error::{CodecError, OptionsError};
use super::format::{ColourTransform, MAX_FRACTION_BITS, MAX_LAYERS, MAX_LEVELS};
use super::header::{Header, QuantStep, Tables};
use super::image::Shape;
use super::options::{
    EncodeOptions, RateTarget, TableChoice, LOSSLESS_CODEBLOCK_HEIGHT, LOSSY_CODEBLOCK_HEIGHT,
};
use super::presets;

/// Resolved coding parameters (the header without its steps' origin).
pub(crate) struct Plan {
    /// The file's coding parameters; tables fitted later replace its
    /// preset.
    pub header: Header,
    /// The target is lossless.
    pub lossless: bool,
}

/// The wavelet `o` asks for, or the default for its target.
pub(crate) fn wavelet_of(o: &EncodeOptions) -> Wavelet {
    o.wavelet.unwrap_or(if o.target == RateTarget::Lossless {
        Wavelet::Cdf53
    } else {
        Wavelet::Fixed97
    })
}

/// The base quantization step of a lossy (9/7) plan for samples of
/// `bit_depth` bits: the step `o` gives, else `2^(bits-8)`, and for a PSNR
/// target at most the step whose full-rate noise is a quarter of the
/// target's (the search in `encode` halves it where that is not enough).
pub(crate) fn lossy_base_step(bit_depth: u8, o: &EncodeOptions) -> f64 {
    let base = o.base_step.unwrap_or((bit_depth as f64 - 8.0).exp2());
    match o.target {
        RateTarget::Psnr(p) => {
            let peak = ((1u32 << bit_depth) - 1) as f64;
            let mse = peak * peak / 10f64.powf(p / 10.0);
            base.min((12.0 * mse).sqrt() / 2.0)
        }
        _ => base,
    }
}

/// The coding parameters of `image` under `o`, or why they contradict
/// each other or the image.
pub(crate) fn plan(image: &Shape, o: &EncodeOptions) -> Result<Plan, CodecError> {
    let opt = |e: OptionsError| Err(CodecError::Options(e));
    let lossless = o.target == RateTarget::Lossless;
    match o.target {
        RateTarget::Bpp(b) if !(b > 0.0 && b.is_finite()) => return opt(OptionsError::Bpp(b)),
        RateTarget::Psnr(p) if !(p > 0.0 && p.is_finite()) => return opt(OptionsError::Psnr(p)),
        _ => {}
    }
    let wavelet = wavelet_of(o);
    if lossless && wavelet != Wavelet::Cdf53 {
        return opt(OptionsError::LosslessWavelet);
    }
    let max = max_levels(image.width, image.height).min(MAX_LEVELS as u32) as u8;
    let levels = o
        .levels
        .unwrap_or(5)
        .min(if o.levels.is_some() { u8::MAX } else { max });
    if levels > max {
        return opt(OptionsError::Levels {
            levels,
            width: image.width,
            height: image.height,
            max,
        });
    }
    let three = image.components >= 3;
    let colour = o.colour.unwrap_or(match (three, lossless) {
        (false, _) => ColourTransform::None,
        (true, true) => ColourTransform::Rct,
        (true, false) => ColourTransform::Ict,
    });
    if colour != ColourTransform::None && !three {
        return opt(OptionsError::ColourComponents);
    }
    if lossless && colour == ColourTransform::Ict {
        return opt(OptionsError::LosslessIct);
    }
    let integer_exact = wavelet == Wavelet::Cdf53;
    let fraction_bits = match o.fraction_bits {
        Some(f) if integer_exact && f > 0 => return opt(OptionsError::FractionBitsOn53),
        Some(f) if f > MAX_FRACTION_BITS => return opt(OptionsError::FractionBits(f)),
        Some(f) => f,
        None if integer_exact => 0,
        // Keep 16-bit samples, the colour transform and the transform's gain
        // well below the coder's 2^28 limit.
        None => (24i32 - image.bit_depth as i32 - (levels as i32 * 3 + 4) / 5).clamp(0, 4) as u8,
    };
    let mode = Mode::from_passes(o.passes).ok_or(OptionsError::Passes(o.passes))?;
    // The 5/3 codes at step 1 (its row offset ignores the base step).
    let mut base = 1.0;
    let steps = if integer_exact {
        // A step given for the 5/3 would be silently ignored: refuse it,
        // unless it is the step the 5/3 uses anyway.
        if o.base_step.is_some_and(|s| s != 1.0) {
            return opt(OptionsError::StepOn53);
        }
        vec![QuantStep::ONE; 1 + 3 * levels as usize]
    } else {
        base = lossy_base_step(image.bit_depth, o);
        if !(base > 0.0 && base.is_finite()) {
            return opt(OptionsError::Step(base));
        }
        let scale = base * (fraction_bits as f64).exp2();
        wavelane_core::dwt::subbands(image.width, image.height, levels as u32)
            .map_err(OptionsError::Subbands)?
            .map(|b| {
                QuantStep::from_value(
                    scale / gains::subband_norm(wavelet, b.level as u32, b.orientation),
                )
            })
            .collect()
    };
    if !(1..=MAX_LAYERS).contains(&o.layers) {
        return opt(OptionsError::Layers(o.layers));
    }
    let row_offset = match (o.table_row_offset, &o.tables) {
        (None, _) => presets::row_offset(image.bit_depth, wavelet, base),
        (Some(_), TableChoice::Custom(_)) => return opt(OptionsError::RowOffsetWithoutPreset),
        (Some(k), _) if k.unsigned_abs() > presets::MAX_ROW_OFFSET as u8 => {
            return opt(OptionsError::RowOffset(k))
        }
        (Some(k), _) => k,
    };
    let preset = |id: u8| Tables::preset(id, mode, row_offset);
    let tables = match &o.tables {
        // Trained tables replace these once the codeblocks exist.
        TableChoice::Default | TableChoice::Natural | TableChoice::Trained => {
            preset(presets::default_preset(wavelet)).expect("the default presets exist")
        }
        TableChoice::Preset(id) => match preset(*id) {
            Some(t) => t,
            None => return opt(OptionsError::Preset(*id)),
        },
        TableChoice::Custom(t) if t.mode() != mode => return opt(OptionsError::TableMode),
        TableChoice::Custom(t) => Tables::Embedded(t.clone()),
    };
    let header = Header {
        width: image.width as u32,
        height: image.height as u32,
        components: image.components as u8,
        bit_depth: image.bit_depth,
        signed: image.signed,
        colour,
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
        block_shifts: o.early_termination && !lossless,
        steps: vec![steps],
    };
    header.validate()?;
    Ok(Plan { header, lossless })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each contradiction is its own variant, with the message the CLI
    /// prints.
    #[test]
    fn contradicting_options_are_typed_errors() {
        let image = crate::codec::image::Image::from_fn(20, 20, 1, 8, |x, _, _| x as i32).shape();
        let cases = [
            (
                EncodeOptions::bpp(0.0),
                OptionsError::Bpp(0.0),
                "--bpp 0 must be > 0",
            ),
            (
                EncodeOptions {
                    wavelet: Some(Wavelet::Fixed97),
                    ..EncodeOptions::lossless()
                },
                OptionsError::LosslessWavelet,
                "lossless coding needs the 5/3 wavelet",
            ),
            (
                EncodeOptions {
                    levels: Some(9),
                    ..EncodeOptions::lossless()
                },
                OptionsError::Levels {
                    levels: 9,
                    width: 20,
                    height: 20,
                    max: 5,
                },
                "9 levels: a 20x20 image allows at most 5",
            ),
            (
                EncodeOptions {
                    colour: Some(ColourTransform::Rct),
                    ..EncodeOptions::lossless()
                },
                OptionsError::ColourComponents,
                "a colour transform needs at least 3 components",
            ),
            (
                EncodeOptions {
                    passes: 4,
                    ..EncodeOptions::lossless()
                },
                OptionsError::Passes(4),
                "--passes 4 (2 or 3)",
            ),
            (
                EncodeOptions {
                    layers: 33,
                    ..EncodeOptions::lossless()
                },
                OptionsError::Layers(33),
                "33 layers (1..=32)",
            ),
            (
                EncodeOptions {
                    tables: TableChoice::Preset(9),
                    ..EncodeOptions::lossless()
                },
                OptionsError::Preset(9),
                "no probability-table preset 9",
            ),
        ];
        for (options, want, message) in cases {
            match plan(&image, &options) {
                Err(CodecError::Options(got)) => {
                    assert_eq!(got, want);
                    assert_eq!(got.to_string(), message);
                }
                Err(e) => panic!("{want:?}: {e}"),
                Ok(_) => panic!("{want:?}: accepted"),
            }
        }
    }
}
