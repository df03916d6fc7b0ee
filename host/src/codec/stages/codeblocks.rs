//! Stage: codeblock formation. The index array of every component is cut
//! into the codeblocks of [`crate::codec::codeblocks`] as one
//! [`CodeblockBatch`]: component planes back to back, each codeblock a
//! strided view of its plane, which is the layout both BPC-PaCo drivers
//! code without a copy. The entropy stage takes the batch on the host for
//! now: index planes on the device come down here, in one download per
//! component (the one plane-sized transfer of a GPU encode that keeps no
//! coefficients; docs/codec.md "Backends").

use crate::backend::Backend;
use crate::bpc::{BlockDesc, CodeblockBatch};
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::planes::Resident;

/// The batch of `blocks` over the full-size index planes `indices`. The
/// batch is a view of the index array (descriptors only), so forming it
/// moves no coefficient; where the planes are on the device it is where
/// they come to the host.
pub(crate) fn form(
    backend: &Backend,
    header: &Header,
    blocks: &[BlockGeometry],
    indices: Resident<Vec<i32>>,
) -> Result<CodeblockBatch, CodecError> {
    let _ = backend; // the planes' residence decides
    match indices {
        Resident::Host(indices) => Ok(batch(header, blocks, indices)),
        #[cfg(feature = "gpu")]
        Resident::Device(planes) => {
            let data = super::device::download(&planes).map_err(super::device::gpu_err)?;
            Ok(batch(header, blocks, data))
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

/// The batch of all blocks over the full-size index planes.
fn batch(header: &Header, blocks: &[BlockGeometry], indices: Vec<i32>) -> CodeblockBatch {
    let (w, h) = (header.width as usize, header.height as usize);
    CodeblockBatch {
        coefficients: indices,
        blocks: descriptors(blocks, w, h),
    }
}
