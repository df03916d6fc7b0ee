//! What an encode or a decode did: the result and its report.
//!
//! Besides the figures of the file, a report lists the pipeline's stages
//! with where each one ran and how long it took ([`Stage`]), and the bytes
//! the job moved between host and device ([`Transfers`]). Where a stage
//! ran is observed, not declared: a stage that submitted a dispatch or
//! moved a byte on the GPU while it ran is a GPU stage, so the report stays
//! right as stages move onto the device (docs/codec.md, "Backends").

use std::time::Instant;

use super::image::Image;
use crate::backend::Backend;

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

/// Where a stage ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageDevice {
    /// On the host: no dispatch and no transfer while the stage ran.
    Cpu,
    /// On the GPU, at least in part: it dispatched kernels or moved bytes.
    Gpu,
}

/// One stage of an encode or a decode.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Stage {
    /// The stage's name (docs/codec.md lists them).
    pub name: &'static str,
    /// Where it ran.
    pub device: StageDevice,
    /// Wall-clock seconds, transfers included.
    pub seconds: f64,
    /// Seconds of the stage's GPU kernels by timestamps (0 on the CPU or
    /// where the queue has no timestamps).
    pub kernel_seconds: f64,
}

/// Bytes copied between host memory and the device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Transfers {
    /// Host to device.
    pub upload_bytes: u64,
    /// Device to host.
    pub download_bytes: u64,
}

/// The GPU counters' reading where `backend` is a GPU; zeros otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Reading {
    upload: u64,
    download: u64,
    dispatches: u64,
    kernel_ns: u64,
}

impl Reading {
    fn of(backend: &Backend) -> Reading {
        match backend {
            Backend::Cpu => Reading::default(),
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => {
                let c = g.counts();
                Reading {
                    upload: c.upload_bytes,
                    download: c.download_bytes,
                    dispatches: c.dispatches,
                    kernel_ns: c.kernel_ns,
                }
            }
        }
    }

    fn since(self, earlier: Reading) -> Reading {
        Reading {
            upload: self.upload.saturating_sub(earlier.upload),
            download: self.download.saturating_sub(earlier.download),
            dispatches: self.dispatches.saturating_sub(earlier.dispatches),
            kernel_ns: self.kernel_ns.saturating_sub(earlier.kernel_ns),
        }
    }
}

/// Times the stages of one encode or decode: [`StageClock::start`] before
/// a stage, [`StageClock::stop`] after it. The GPU counters are shared by
/// every user of the device, so a report's transfers and devices are exact
/// when one job uses the device at a time (the command-line tool), and
/// include the others' work otherwise.
pub(crate) struct StageClock<'a> {
    backend: &'a Backend,
    first: Reading,
    stages: Vec<Stage>,
}

/// A started stage ([`StageClock::start`]).
pub(crate) struct Started {
    at: Instant,
    reading: Reading,
}

impl Started {
    /// Seconds since the start.
    pub(crate) fn seconds(&self) -> f64 {
        self.at.elapsed().as_secs_f64()
    }
}

impl<'a> StageClock<'a> {
    pub(crate) fn new(backend: &'a Backend) -> Self {
        StageClock {
            backend,
            first: Reading::of(backend),
            stages: Vec::new(),
        }
    }

    pub(crate) fn start(&self) -> Started {
        Started {
            at: Instant::now(),
            reading: Reading::of(self.backend),
        }
    }

    /// Records the stage `name` begun at `started`; returns its seconds.
    pub(crate) fn stop(&mut self, started: Started, name: &'static str) -> f64 {
        let seconds = started.at.elapsed().as_secs_f64();
        let done = Reading::of(self.backend).since(started.reading);
        let ran = done.upload + done.download + done.dispatches > 0;
        self.stages.push(Stage {
            name,
            device: if ran {
                StageDevice::Gpu
            } else {
                StageDevice::Cpu
            },
            seconds,
            kernel_seconds: done.kernel_ns as f64 * 1e-9,
        });
        seconds
    }

    /// The stages recorded and the bytes moved since [`StageClock::new`].
    pub(crate) fn finish(self) -> (Vec<Stage>, Transfers) {
        let moved = Reading::of(self.backend).since(self.first);
        (
            self.stages,
            Transfers {
                upload_bytes: moved.upload,
                download_bytes: moved.download,
            },
        )
    }
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
    /// The stages in the order they ran, with where each ran.
    pub stages: Vec<Stage>,
    /// Bytes the encode moved between host and device.
    pub transfers: Transfers,
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
    /// The stages in the order they ran, with where each ran.
    pub stages: Vec<Stage>,
    /// Bytes the decode moved between host and device.
    pub transfers: Transfers,
}

/// A decoded image and its report.
#[derive(Debug, Clone)]
pub struct Decoded<I = Image> {
    /// The image: planes ([`Image`], from [`crate::codec::decode`]) or
    /// interleaved samples ([`crate::codec::Interleaved`], from
    /// [`crate::codec::decode_interleaved`]).
    pub image: I,
    /// What happened.
    pub report: DecodeReport,
}
