//! Stage: codeblock formation. The index array of every component is cut
//! into the codeblocks of [`crate::codec::codeblocks`] as one
//! [`CodeblockBatch`]: component planes back to back, each codeblock a
//! strided view of its plane, which is the layout both BPC-PaCo drivers
//! code without a copy.

use crate::backend::Backend;
use crate::bpc::{BlockDesc, CodeblockBatch};
use crate::codec::codeblocks::BlockGeometry;
use crate::codec::header::Header;

/// The batch of `blocks` over the full-size index planes `indices`.
pub(crate) fn form(
    backend: &Backend,
    header: &Header,
    blocks: &[BlockGeometry],
    indices: Vec<i32>,
) -> CodeblockBatch {
    match backend {
        Backend::Cpu => batch(header, blocks, indices),
        // The batch is a view of the index array: on the GPU backend it
        // stays where the quantization stage left it, on the host.
        #[cfg(feature = "gpu")]
        Backend::Gpu(_) => batch(header, blocks, indices),
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
