//! Stage: rate control. PCRD-Opt ([`crate::codec::rate`]) over the coded
//! blocks' rate-distortion points, one allocation per quality layer.
//!
//! Layer targets are geometric: the last layer gets the file's target,
//! each layer before it half the bytes (or twice the distortion) of the
//! next, so that a decoder stopping after any layer gets a usable image
//! (docs/codec.md, "Targets and layers").

use crate::backend::Backend;
use crate::codec::rate::{allocate, Allocation, Hulls, LayerTarget, SizeModel};

/// The rate control of one file: every block's hull, the size model and
/// the total decrease they are measured against.
pub(crate) struct RateControl<'a> {
    /// Every block's hull of its candidate truncation points.
    pub hulls: &'a Hulls,
    /// The truncation-independent parts of the file size.
    pub model: SizeModel,
    /// The decrease of every point of every block together.
    pub total: f64,
}

impl RateControl<'_> {
    /// Every block's truncation point in every layer, the last layer
    /// reaching `last`.
    pub(crate) fn allocate(&self, backend: &Backend, last: LayerTarget) -> Allocation {
        match backend {
            Backend::Cpu => self.host_allocate(last),
            // No shader for this stage: the GPU backend runs it on the
            // host (docs/codec.md, "Backends").
            #[cfg(feature = "gpu")]
            Backend::Gpu(_) => self.host_allocate(last),
        }
    }

    fn host_allocate(&self, last: LayerTarget) -> Allocation {
        allocate(
            self.hulls,
            &self.layer_targets(last),
            self.model,
            self.total,
        )
    }

    /// One target per layer, the last one `last`, each before it half the
    /// bytes (twice the distortion) of the next; keeping everything, the
    /// layers before the last halve the size of a file that does.
    fn layer_targets(&self, last: LayerTarget) -> Vec<LayerTarget> {
        let layers = self.model.layers;
        let full = || {
            allocate(
                self.hulls,
                &[LayerTarget::All],
                SizeModel {
                    layers: 1,
                    ..self.model
                },
                self.total,
            )
        };
        (0..layers)
            .map(|l| {
                let k = (layers - 1 - l) as i32;
                match last {
                    LayerTarget::Bytes(b) => LayerTarget::Bytes((b as f64 / 2f64.powi(k)) as u64),
                    LayerTarget::Distortion(d) => LayerTarget::Distortion(d * 2f64.powi(k)),
                    LayerTarget::All if k == 0 => LayerTarget::All,
                    LayerTarget::All => {
                        let all = full().bytes[0] as f64;
                        LayerTarget::Bytes((all / 2f64.powi(k)) as u64)
                    }
                }
            })
            .collect()
    }
}
