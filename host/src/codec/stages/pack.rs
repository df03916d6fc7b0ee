//! Stage: packing. The encoder writes the kept codewords of every block
//! and the codeblock index into the `.wl` layout ([`crate::codec::file`],
//! docs/format.md); the decoder gathers each decoded block's codewords
//! from the layers and resolutions it selected.

use rayon::prelude::*;

use crate::backend::Backend;
use crate::bpc::EncodedBatch;
use crate::codec::error::CodecError;
use crate::codec::file::{write_file, Container};
use crate::codec::header::Header;
use crate::codec::index::BlockIndex;
use crate::codec::progressive::Selection;
use crate::codec::rate::Allocation;
use crate::codec::stages::entropy::{Coded, Words};

/// The file of `alloc`'s truncation points: `index` (tops and shifts set)
/// takes the allocation's counts; `coded` holds the blocks' codewords, on
/// the host or on the device. Codewords left on the device are gathered
/// there, each block's kept prefix only, so what comes down is the file's
/// data; the file itself is written on the host.
pub(crate) fn pack(
    backend: &Backend,
    header: &Header,
    index: &mut BlockIndex,
    alloc: &Allocation,
    coded: &Coded,
) -> Result<Vec<u8>, CodecError> {
    index.counts.clone_from(&alloc.counts);
    let encoded = &coded.encoded;
    let blocks = encoded.tops.len();
    match (&coded.words, backend) {
        (Words::Host, _) => {
            let words: Vec<&[u16]> = (0..blocks).map(|i| encoded.block(i).1).collect();
            Ok(write_file(header, index, &words)?)
        }
        #[cfg(feature = "gpu")]
        (Words::Device(device), Backend::Gpu(gpu)) => {
            let layers = index.layers.max(1);
            let kept: Vec<u32> = (alloc.counts.chunks(layers))
                .map(|c| c.iter().sum())
                .collect();
            let (data, starts) = crate::bpc::gpu::gather_prefixes(gpu, device, &kept)?;
            let words: Vec<&[u16]> = starts.windows(2).map(|w| &data[w[0]..w[1]]).collect();
            Ok(write_file(header, index, &words)?)
        }
        #[cfg(feature = "gpu")]
        (Words::Device(_), Backend::Cpu) => Err(CodecError::from(
            crate::codec::format::FormatError::Unrepresentable(
                "codewords on a device, packed on the CPU backend".into(),
            ),
        )),
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
    // Each block's length first, then its codewords straight into its
    // place in one batch, block by block on all cores (an 8K lossless
    // file: 24,669 blocks, 15 MB).
    let layers = |i: usize| layers_of[c.blocks[i].resolution as usize];
    let lens: Vec<usize> = (0..sel.blocks)
        .into_par_iter()
        .map(|i| c.block_codewords_len(i, layers(i)))
        .collect();
    let mut offsets = Vec::with_capacity(lens.len() + 1);
    offsets.push(0);
    for &len in &lens {
        offsets.push(offsets[offsets.len() - 1] + len);
    }
    let mut codewords = crate::memory::zeroed_vec(offsets[lens.len()]);
    let parts = crate::memory::split_into_parts(&mut codewords, lens.iter().copied());
    parts
        .into_par_iter()
        .enumerate()
        .for_each(|(i, part)| c.block_codewords_into(i, layers(i), part));
    EncodedBatch {
        tops: c.index.tops[..sel.blocks].to_vec(),
        offsets,
        codewords,
    }
}
