//! Stage: codeblock formation. The index array of every component is cut
//! into the codeblocks of [`crate::codec::codeblocks`]: descriptors only
//! (offset, stride, size), over the planes where they lie. On the host
//! that is one [`CodeblockBatch`] (component planes back to back, each
//! codeblock a strided view of its plane, the layout both BPC-PaCo
//! drivers code without a copy); on the device the coder reads the index
//! planes in place ([`super::resident`]), and a host batch exists only
//! where a stage that reads indices on the host asked for one
//! ([`Formed::host`]: docs/codec.md "Backends" lists what crosses).

use wavelane_core::bpc::Mode;

use crate::backend::Backend;
use crate::bpc::train::{BlockSymbols, Trainer};
use crate::bpc::{BlockDesc, CodeblockBatch};
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::planes::Resident;

/// The codeblocks of the index planes, where the indices are: on the host,
/// on the device, or both (a lossy GPU encode has the host's indices of the
/// coefficients it downloaded for the real-valued distortions).
pub(crate) struct Formed {
    /// Every block over the host's index array (`components x width x
    /// height`), with the indices where the host has them.
    host: Option<CodeblockBatch>,
    /// The same blocks over the index planes on the device.
    #[cfg(feature = "gpu")]
    device: Option<super::resident::DeviceBlocks>,
    /// Every block's descriptor in the host's layout.
    descs: Vec<BlockDesc>,
}

impl Formed {
    /// The descriptors of every block over the host's index array.
    pub fn descs(&self) -> &[BlockDesc] {
        &self.descs
    }

    /// The symbols `which[i]` selects of every block `i`, counted for
    /// `mode` (the table fit's statistics): on the device where the
    /// indices are there (the counting build of the encoder,
    /// `bpc::gpu::counts`: only the counts come down), else on
    /// the host's batch. The same [`Trainer`] either way. Where the planes
    /// exceed the device's binding limit (a typed `GpuError::Limit`) the
    /// host counts, on indices it then downloads.
    pub fn count_symbols(
        &mut self,
        mode: Mode,
        which: &[BlockSymbols],
    ) -> Result<Trainer, CodecError> {
        #[cfg(feature = "gpu")]
        if let Some(d) = &self.device {
            let source = crate::bpc::gpu::Source::Device {
                coefficients: &d.planes.buffer,
                blocks: &d.blocks,
            };
            match crate::bpc::gpu::count_on_device(&d.planes.gpu, source, mode, which) {
                Err(crate::bpc::BpcError::Gpu(crate::backend::GpuError::Limit(why))) => {
                    log::debug!("symbol counts on the host: {why}");
                }
                counted => return Ok(counted?),
            }
        }
        Ok(Trainer::of_batch_selected(mode, self.host()?, which)?)
    }

    /// Whether the host has the indices (a test's check that a stage
    /// left them on the device).
    #[cfg(test)]
    pub fn has_host(&self) -> bool {
        self.host.is_some()
    }

    /// The blocks on the device, if the indices are there.
    #[cfg(feature = "gpu")]
    pub fn device(&self) -> Option<&super::resident::DeviceBlocks> {
        self.device.as_ref()
    }

    /// The host batch, downloaded from the device planes the first time a
    /// stage asks (every stage that reads indices on the host: early
    /// termination, the real-valued distortions, the CPU coder; a
    /// `--lossless` GPU encode asks none of them, and the table fits count
    /// on the device, [`Formed::count_symbols`]).
    pub fn host(&mut self) -> Result<&mut CodeblockBatch, CodecError> {
        if self.host.is_none() {
            #[cfg(feature = "gpu")]
            if let Some(d) = &self.device {
                let data = super::device::download(&d.planes).map_err(super::device::gpu_err)?;
                self.host = Some(CodeblockBatch {
                    coefficients: data,
                    blocks: self.descs.clone(),
                });
            }
        }
        self.host.as_mut().ok_or_else(nowhere)
    }

    /// The host batch ([`Formed::host`]), taken.
    pub fn into_host(mut self) -> Result<CodeblockBatch, CodecError> {
        self.host()?;
        Ok(self.host.take().expect("Formed::host made it"))
    }

    /// Forgets the device's copy of the indices (after a stage changed the
    /// host's: early termination's bitplane shifts).
    pub fn drop_device(&mut self) {
        #[cfg(feature = "gpu")]
        {
            self.device = None;
        }
    }
}

/// The error of a [`Formed`] with its indices neither on the host nor on
/// the device (no stage makes one).
fn nowhere() -> CodecError {
    CodecError::Bpc(crate::bpc::BpcError::Mismatch(
        "codeblocks with no indices anywhere".into(),
    ))
}

/// The blocks `blocks` over the full-size index planes `indices`, where
/// they are. Forming them moves no coefficient (unless the device cannot
/// bind the planes for the coder: then they come down once).
pub(crate) fn form(
    backend: &Backend,
    header: &Header,
    blocks: &[BlockGeometry],
    indices: Resident<Vec<i32>>,
) -> Result<Formed, CodecError> {
    let _ = backend; // the planes' residence decides
    let (w, h) = (header.width as usize, header.height as usize);
    let descs = descriptors(blocks, w, h);
    let batch = |coefficients, blocks: &[BlockDesc]| CodeblockBatch {
        coefficients,
        blocks: blocks.to_vec(),
    };
    match indices {
        Resident::Host(indices) => Ok(Formed {
            host: Some(batch(indices, &descs)),
            #[cfg(feature = "gpu")]
            device: None,
            descs,
        }),
        #[cfg(feature = "gpu")]
        Resident::Device(planes) => {
            let mut formed = Formed {
                host: None,
                device: None,
                descs,
            };
            if super::resident::bindable(&planes.gpu, planes.len, planes.comps) {
                formed.device = Some(super::resident::DeviceBlocks::new(planes, blocks, w));
            } else {
                let data = super::device::download(&planes).map_err(super::device::gpu_err)?;
                formed.host = Some(batch(data, &formed.descs));
            }
            Ok(formed)
        }
    }
}

/// An all-zero batch of `blocks` over planes of `width x height` (the
/// decoder's output layout at a reduced resolution).
pub(crate) fn zeros_like(
    blocks: &[BlockGeometry],
    width: usize,
    height: usize,
    components: usize,
) -> CodeblockBatch {
    CodeblockBatch {
        coefficients: vec![0; width * height * components],
        blocks: descriptors(blocks, width, height),
    }
}

/// Descriptors of `blocks` in planes of `plane_width x plane_height`
/// (stride `plane_width`), component planes back to back.
fn descriptors(
    blocks: &[BlockGeometry],
    plane_width: usize,
    plane_height: usize,
) -> Vec<BlockDesc> {
    blocks
        .iter()
        .map(|b| BlockDesc {
            offset: b.component as usize * plane_width * plane_height
                + b.rect.y * plane_width
                + b.rect.x,
            stride: plane_width,
            width: b.rect.width,
            height: b.rect.height,
            group: b.group(),
        })
        .collect()
}
