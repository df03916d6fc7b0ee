//! VLE on all CPU cores: the core functions run per chunk group under rayon.
//!
//! Encoding makes two passes. The first sums each chunk's codeword lengths;
//! their prefix sum gives every chunk's bit offset. The second encodes groups
//! of chunks in parallel, each into its own disjoint byte range of the output:
//! a group owns the bytes from the one holding its first bit up to (not
//! including) the one holding the next group's first bit, writes zeros over
//! the leading bits of its first byte, and hands back its incomplete last
//! byte, which is ORed into the next group's first byte afterwards. The
//! result is byte-identical to [`wavelane_core::vle::encode()`].

use rayon::prelude::*;
use wavelane_core::vle::{
    self, decode_chunk, encode_span, span_bits, CodeTable, DecodeTable, DEFAULT_LUT_SIZE, SYMBOLS,
};

use super::{Encoded, VleCodecError};

/// Input bytes per parallel work item (histogram, CRC, encode groups).
const WORK_BYTES: usize = 1 << 20;

/// Byte histogram on all cores.
pub fn histogram(data: &[u8]) -> [u64; SYMBOLS] {
    data.par_chunks(WORK_BYTES)
        .map(|part| {
            let mut h = [0u64; SYMBOLS];
            vle::histogram(part, &mut h);
            h
        })
        .reduce(
            || [0u64; SYMBOLS],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// CRC-32 (IEEE) on all cores: per-part hashers combined in order.
pub fn crc32(data: &[u8]) -> u32 {
    data.par_chunks(WORK_BYTES * 4)
        .map(|part| {
            let mut h = crc32fast::Hasher::new();
            h.update(part);
            h
        })
        .reduce(crc32fast::Hasher::new, |mut a, b| {
            a.combine(&b);
            a
        })
        .finalize()
}

/// Encodes `data` with `table` in chunks of `chunk_symbols` on all cores.
pub fn encode(
    data: &[u8],
    table: &CodeTable,
    chunk_symbols: usize,
) -> Result<Encoded, VleCodecError> {
    vle::check_chunk_symbols(chunk_symbols)?;
    // Pass 1: chunk lengths.
    let chunk_bits = data
        .par_chunks(chunk_symbols)
        .map(|c| span_bits(c, table).map(|b| b as u32))
        .collect::<Result<Vec<u32>, _>>()?;
    let data_bits: u64 = chunk_bits.iter().map(|&b| b as u64).sum();
    let mut out = vec![0u8; data_bits.div_ceil(8) as usize];

    // Group boundaries: chunk indices and their bit offsets.
    let per_group = (WORK_BYTES / chunk_symbols).max(1);
    let mut starts = Vec::new(); // (first symbol, bit offset) of each group
    let mut bit = 0u64;
    for (c, &b) in chunk_bits.iter().enumerate() {
        if c % per_group == 0 {
            starts.push((c * chunk_symbols, bit));
        }
        bit += b as u64;
    }
    // Split the output into the byte range each group owns.
    let mut jobs = Vec::with_capacity(starts.len());
    let mut rest: &mut [u8] = &mut out;
    let mut rest_at = 0usize;
    for (g, &(sym, off)) in starts.iter().enumerate() {
        let end_sym = starts.get(g + 1).map_or(data.len(), |s| s.0);
        let end_byte = starts
            .get(g + 1)
            .map_or(rest_at + rest.len(), |s| (s.1 / 8) as usize);
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(end_byte - rest_at);
        jobs.push((&data[sym..end_sym], mine, (off % 8) as u32));
        rest = tail;
        rest_at = end_byte;
    }
    // Pass 2: encode the groups; then stitch the incomplete last bytes.
    let ends = jobs
        .into_par_iter()
        .map(|(symbols, mine, lead)| encode_span(symbols, table, mine, lead))
        .collect::<Result<Vec<_>, _>>()?;
    for (g, end) in ends.iter().enumerate() {
        if end.tail_bits > 0 {
            let next = starts
                .get(g + 1)
                .map_or(out.len() - 1, |s| (s.1 / 8) as usize);
            out[next] |= end.tail;
        }
    }
    Ok(Encoded {
        table: table.clone(),
        chunk_symbols,
        chunk_bits,
        data_bits,
        data: out,
    })
}

/// Decodes `symbols` symbols from `data` (chunk `c` at `offsets[c]`, the
/// stream `data_bits` long) on all cores into `out`.
pub fn decode(
    table: &CodeTable,
    data: &[u8],
    data_bits: u64,
    offsets: &[u64],
    chunk_symbols: usize,
    out: &mut [u8],
) -> Result<(), VleCodecError> {
    vle::check_chunk_symbols(chunk_symbols)?;
    vle::check_index(
        offsets,
        vle::chunk_count(out.len(), chunk_symbols),
        data_bits,
    )?;
    decode_selected(
        table,
        data,
        (offsets, data_bits),
        chunk_symbols,
        out,
        |_| true,
    )
}

/// Decodes the chunks of a parsed file (whose data may be a prefix: see
/// [`super::format::VleFile::parse_prefix`]) for which `keep` holds, on all
/// cores into `out` (the whole original length); the others' bytes are
/// left as they are. Each kept chunk must lie within the data.
pub fn decode_chunks(
    file: &super::VleFile<'_>,
    offsets: &[u64],
    out: &mut [u8],
    keep: impl Fn(usize) -> bool + Sync,
) -> Result<(), VleCodecError> {
    if out.len() as u64 != file.original_len {
        return Err(VleCodecError::Malformed(
            "output length is not the original length",
        ));
    }
    let bounds = (offsets, file.data_bits);
    decode_selected(
        &file.table,
        file.data,
        bounds,
        file.chunk_symbols as usize,
        out,
        keep,
    )
}

/// The chunk loop of [`decode`] and [`decode_chunks`]: `index` is the
/// chunks' bit offsets and the stream's length in bits.
fn decode_selected(
    table: &CodeTable,
    data: &[u8],
    index: (&[u64], u64),
    chunk_symbols: usize,
    out: &mut [u8],
    keep: impl Fn(usize) -> bool + Sync,
) -> Result<(), VleCodecError> {
    let (offsets, data_bits) = index;
    let decoder = DecodeTable::<DEFAULT_LUT_SIZE>::new(table)?;
    let per_group = (WORK_BYTES / chunk_symbols).max(1);
    out.par_chunks_mut(chunk_symbols * per_group)
        .enumerate()
        .try_for_each(|(g, group)| {
            for (i, chunk) in group.chunks_mut(chunk_symbols).enumerate() {
                let c = g * per_group + i;
                if !keep(c) {
                    continue;
                }
                let end = offsets.get(c + 1).copied().unwrap_or(data_bits);
                decode_chunk(&decoder, data, offsets[c], end, chunk)
                    .map_err(|source| VleCodecError::Chunk { chunk: c, source })?;
            }
            Ok(())
        })
}
