//! Image samples at their own width (1 byte up to 8 bits, else 2 bytes
//! little-endian; signed ones as two's complement), packed into and
//! unpacked out of the staging chunks of a transfer
//! ([`crate::backend::Gpu::write_bytes`], [`crate::backend::Gpu::read_bytes`]):
//! component planes back to back, as `shaders/codec/colour_forward.comp`
//! reads them and `colour_inverse.glsl` writes them.
//!
//! The conversion runs straight between the image's `i32` planes and each
//! chunk, over the thread pool, rather than through a packed copy of the
//! whole image: that copy was a fresh allocation of the image's size and a
//! pass over it on one thread (docs/perf/codec.md, "Transfers on every
//! core").

use rayon::prelude::*;

use crate::backend::gpu::transfer::{par_copy, COPY_PIECE};

/// Bytes a sample of `bit_depth` bits takes on the bus.
pub(crate) fn sample_bytes(bit_depth: u8) -> usize {
    if bit_depth <= 8 {
        1
    } else {
        2
    }
}

/// Fills `chunk`, the packed bytes from `offset` on, from `planes` (each
/// of `len` samples, already checked against the bit depth, so keeping the
/// low bytes loses nothing); zeros past the last sample (the buffer's
/// padding to whole words). `offset` and `chunk.len()` are multiples of
/// `bytes` (staging chunks and buffers are whole words).
pub(crate) fn pack(planes: &[Vec<i32>], len: usize, bytes: usize, offset: u64, chunk: &mut [u8]) {
    chunk
        .par_chunks_mut(COPY_PIECE)
        .enumerate()
        .for_each(|(k, piece)| {
            let start = offset as usize + k * COPY_PIECE;
            pack_piece(planes, len, bytes, start / bytes, piece);
        });
}

fn pack_piece(
    planes: &[Vec<i32>],
    len: usize,
    bytes: usize,
    mut sample: usize,
    mut out: &mut [u8],
) {
    while !out.is_empty() {
        let plane = match len {
            0 => None,
            _ => planes.get(sample / len),
        };
        let Some(plane) = plane else {
            out.fill(0);
            return;
        };
        let at = sample % len;
        let n = (len - at).min(out.len() / bytes).max(1);
        let (head, rest) = out.split_at_mut((n * bytes).min(out.len()));
        let src = &plane[at..at + n];
        match bytes {
            1 => head.iter_mut().zip(src).for_each(|(d, &v)| *d = v as u8),
            _ => head
                .chunks_exact_mut(2)
                .zip(src)
                .for_each(|(d, &v)| d.copy_from_slice(&(v as u16).to_le_bytes())),
        }
        out = rest;
        sample += n;
    }
}

/// Fills `chunk`, the packed bytes from `offset` on, from `src`, samples
/// already packed (interleaved at `bytes` bytes each, in the host's
/// order): a copy, with two-byte samples put little-endian on a big-endian
/// host; zeros past the end (the buffer's padding to whole words).
pub(crate) fn copy_little_endian(src: &[u8], bytes: usize, offset: u64, chunk: &mut [u8]) {
    let at = (offset as usize).min(src.len());
    let n = chunk.len().min(src.len() - at);
    let (head, tail) = chunk.split_at_mut(n);
    par_copy(head, &src[at..at + n]);
    tail.fill(0);
    if cfg!(target_endian = "big") && bytes == 2 {
        head.chunks_exact_mut(2).for_each(|s| s.swap(0, 1));
    }
}

/// Writes the samples of `chunk`, the packed bytes from `offset` on, into
/// `planes` (each of `len` samples), sign-extending from `bit_depth` bits
/// where the samples are `signed`; bytes past the last sample are
/// ignored.
pub(crate) fn unpack(
    planes: &mut [Vec<i32>],
    len: usize,
    bit_depth: u8,
    signed: bool,
    offset: u64,
    chunk: &[u8],
) {
    let bytes = sample_bytes(bit_depth);
    let bits = 8 * bytes as u32;
    let mut sample = offset as usize / bytes;
    let mut src = chunk;
    while len > 0 && src.len() >= bytes {
        let Some(plane) = planes.get_mut(sample / len) else {
            return;
        };
        let at = sample % len;
        let n = (len - at).min(src.len() / bytes);
        let per_piece = COPY_PIECE / bytes;
        plane[at..at + n]
            .par_chunks_mut(per_piece)
            .zip(src[..n * bytes].par_chunks(per_piece * bytes))
            .for_each(|(d, s)| {
                let raw = |v: u32| {
                    if signed {
                        ((v << (32 - bits)) as i32) >> (32 - bits)
                    } else {
                        v as i32
                    }
                };
                match bytes {
                    1 => d.iter_mut().zip(s).for_each(|(d, &b)| *d = raw(b as u32)),
                    _ => d
                        .iter_mut()
                        .zip(s.chunks_exact(2))
                        .for_each(|(d, b)| *d = raw(u16::from_le_bytes([b[0], b[1]]) as u32)),
                }
            });
        src = &src[n * bytes..];
        sample += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packing in chunks at every offset, then unpacking, gives the planes
    /// back, for both widths, signed and unsigned, planes that cross piece
    /// and chunk borders, and word padding.
    #[test]
    fn pack_then_unpack_in_chunks_is_the_identity() {
        for (depth, signed) in [(8u8, false), (5, true), (12, false), (16, true), (10, true)] {
            let bytes = sample_bytes(depth);
            let len = COPY_PIECE / bytes + 37;
            let (lo, hi) = match signed {
                true => (-(1i64 << (depth - 1)), (1i64 << (depth - 1)) - 1),
                false => (0, (1i64 << depth) - 1),
            };
            let span = (hi - lo + 1) as u64;
            let planes: Vec<Vec<i32>> = (0..3u64)
                .map(|c| {
                    (0..len as u64)
                        .map(|i| (lo + ((i * 7919 + c * 104729) % span) as i64) as i32)
                        .collect()
                })
                .collect();
            let total = (len * 3 * bytes).div_ceil(4) * 4;
            for chunk_len in [2 * COPY_PIECE + 6, 4096, total] {
                let mut packed = vec![0xAAu8; total];
                for (k, chunk) in packed.chunks_mut(chunk_len).enumerate() {
                    pack(&planes, len, bytes, (k * chunk_len) as u64, chunk);
                }
                // The layout: plane after plane, low byte first.
                let at = (len + 5) * bytes;
                let v = planes[1][5] as u32;
                assert_eq!(packed[at], v as u8, "depth {depth}");
                if bytes == 2 {
                    assert_eq!(packed[at + 1], (v >> 8) as u8, "depth {depth}");
                }
                assert!(packed[len * 3 * bytes..].iter().all(|&b| b == 0));
                let mut back = vec![vec![0i32; len]; 3];
                for (k, chunk) in packed.chunks(chunk_len).enumerate() {
                    unpack(&mut back, len, depth, signed, (k * chunk_len) as u64, chunk);
                }
                assert_eq!(
                    back, planes,
                    "depth {depth} signed {signed} chunk {chunk_len}"
                );
            }
        }
    }
}
