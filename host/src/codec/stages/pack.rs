//! Stage: packing. The encoder writes the kept codewords of every block
//! and the codeblock index into the `.wl` layout ([`crate::codec::file`],
//! docs/format.md); the decoder gathers each decoded block's codewords
//! from the layers and resolutions it selected.

use crate::backend::Backend;
use crate::bpc::EncodedBatch;
use crate::codec::file::{write_file, Container};
use crate::codec::format::FormatError;
use crate::codec::header::Header;
use crate::codec::index::BlockIndex;
use crate::codec::progressive::Selection;
use crate::codec::rate::Allocation;

/// The file of `alloc`'s truncation points: `index` (tops and shifts set)
/// takes the allocation's counts, `codewords[i]` holds block `i`'s coded
/// codewords.
pub(crate) fn pack(
    backend: &Backend,
    header: &Header,
    index: &mut BlockIndex,
    alloc: &Allocation,
    codewords: &[&[u16]],
) -> Result<Vec<u8>, FormatError> {
    index.counts.clone_from(&alloc.counts);
    match backend {
        Backend::Cpu => write_file(header, index, codewords),
        // No shader for this stage: the GPU backend runs it on the host
        // (docs/codec.md, "Backends").
        #[cfg(feature = "gpu")]
        Backend::Gpu(_) => write_file(header, index, codewords),
    }
}

/// The codewords of the blocks `sel` decodes, as one batch in file order:
/// each block through the layers `layers_of` gives its resolution (the
/// selection's layers, fewer where a damaged segment was left out).
pub(crate) fn unpack(
    backend: &Backend,
    c: &Container<'_>,
    sel: &Selection,
    layers_of: &[usize],
) -> EncodedBatch {
    match backend {
        Backend::Cpu => host_unpack(c, sel, layers_of),
        #[cfg(feature = "gpu")]
        Backend::Gpu(_) => host_unpack(c, sel, layers_of),
    }
}

fn host_unpack(c: &Container<'_>, sel: &Selection, layers_of: &[usize]) -> EncodedBatch {
    let mut encoded = EncodedBatch {
        tops: c.index.tops[..sel.blocks].to_vec(),
        offsets: vec![0],
        codewords: Vec::new(),
    };
    for i in 0..sel.blocks {
        let layers = layers_of[c.blocks[i].resolution as usize];
        encoded.codewords.extend(c.block_codewords(i, layers));
        encoded.offsets.push(encoded.codewords.len());
    }
    encoded
}
