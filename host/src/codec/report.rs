//! What an encode or a decode did: the result and its report.

use super::image::Image;

/// Seconds spent per stage.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct StageTimes {
    /// Level shift, colour transform and DWT.
    pub transform: f64,
    /// Quantization and codeblock set-up (and early-termination analysis).
    pub quantize: f64,
    /// BPC-PaCo coding of every codeblock.
    pub entropy: f64,
    /// PCRD-Opt and file assembly (and PSNR refinement decodes).
    pub rate: f64,
    /// Everything.
    pub total: f64,
}

/// What the encoder did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EncodeReport {
    /// Where it ran.
    pub backend: String,
    /// File size.
    pub bytes: usize,
    /// Bits per pixel of the file.
    pub bpp: f64,
    /// File size through each layer.
    pub layer_bytes: Vec<u64>,
    /// PSNR the rate-control model predicts (lossy), dB.
    pub estimated_psnr: Option<f64>,
    /// PSNR measured by decoding (only `--psnr` targets decode), dB.
    pub measured_psnr: Option<f64>,
    /// Wavelet name.
    pub wavelet: &'static str,
    /// Decomposition levels.
    pub levels: u8,
    /// Codeblocks.
    pub codeblocks: usize,
    /// Coding passes run over all codeblocks.
    pub passes_coded: u64,
    /// Bitplanes early termination skipped, over all codeblocks.
    pub bitplanes_skipped: u64,
    /// Seconds per stage.
    pub seconds: StageTimes,
}

/// An encoded file and its report.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The `.wl` bytes.
    pub bytes: Vec<u8>,
    /// What happened.
    pub report: EncodeReport,
}

/// What the decoder did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DecodeReport {
    /// Where it ran.
    pub backend: String,
    /// Output width.
    pub width: usize,
    /// Output height.
    pub height: usize,
    /// The bytes were a truncated prefix of the file.
    pub truncated: bool,
    /// Resolutions decoded (1 = the LL band alone).
    pub resolutions: usize,
    /// Layers decoded.
    pub layers: usize,
    /// Bytes of the file the decode needed (header and the segments of
    /// the decoded resolutions and layers that were present).
    pub bytes_used: u64,
    /// Seconds spent.
    pub seconds: f64,
}

/// A decoded image and its report.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The image.
    pub image: Image,
    /// What happened.
    pub report: DecodeReport,
}
