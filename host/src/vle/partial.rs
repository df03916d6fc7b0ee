//! What a damaged or cut `.wlv` file still holds (`wavelane vle
//! decompress --partial`, `wavelane verify`).
//!
//! A version 2 file records a CRC-32 of each chunk's coded bits and one
//! of everything that locates the chunks (docs/format.md, "VLE file").
//! With the index CRC intact every chunk can be found and checked on its
//! own, and every chunk decodes on its own, so a changed byte costs only
//! the chunk that holds it and a cut costs only the chunks past the cut.
//! A damaged chunk's bytes come out as zeros, and the caller is told
//! which byte ranges those are: nothing damaged passes as data.

use rayon::prelude::*;

use super::format::{chunk_crc, VleFile, VERSION_CHUNK_CRCS};
use super::{cpu, VleCodecError};

/// Why a chunk could not be restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Damage {
    /// Its bits do not match its CRC.
    Crc,
    /// The file ends before its last bit.
    Missing,
}

/// A chunk left out of a partial decode.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DamagedChunk {
    /// The chunk.
    pub chunk: usize,
    /// Its original bytes `start..end`, written as zeros.
    pub bytes: (u64, u64),
    /// Why.
    pub damage: Damage,
}

impl std::fmt::Display for DamagedChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.damage {
            Damage::Crc => "CRC mismatch",
            Damage::Missing => "past the end of the file",
        };
        write!(
            f,
            "chunk {} (original bytes {}..{}): {why}",
            self.chunk, self.bytes.0, self.bytes.1
        )
    }
}

/// The chunks of a version 2 file whose CRC fails (none for version 1,
/// which has no chunk CRCs), for chunks wholly within the data.
pub fn damaged_chunks(file: &VleFile<'_>) -> Vec<usize> {
    if file.version < VERSION_CHUNK_CRCS {
        return Vec::new();
    }
    let offsets = file.chunk_offsets();
    (0..file.chunk_bits.len())
        .into_par_iter()
        .filter(|&c| {
            file.chunk_present(c, &offsets)
                && chunk_crc(file.data, offsets[c], file.chunk_bits[c] as u64) != file.chunk_crcs[c]
        })
        .collect()
}

/// Decodes every chunk of a (possibly cut or damaged) version 2 file that
/// is present and matches its CRC, on the CPU; the others' bytes are zero
/// and listed. With nothing left out, the output's CRC-32 must match the
/// file's as in [`super::decompress`].
pub fn decompress_partial(file: &[u8]) -> Result<(Vec<u8>, Vec<DamagedChunk>), VleCodecError> {
    let parsed = VleFile::parse_prefix(file)?;
    if parsed.version < VERSION_CHUNK_CRCS {
        return Err(VleCodecError::NoChunkCrcs);
    }
    let offsets = parsed.chunk_offsets();
    let n = parsed.chunk_symbols as u64;
    let crc_damaged = damaged_chunks(&parsed);
    let damaged: Vec<DamagedChunk> = (0..parsed.chunk_bits.len())
        .filter_map(|c| {
            let damage = if !parsed.chunk_present(c, &offsets) {
                Damage::Missing
            } else if crc_damaged.binary_search(&c).is_ok() {
                Damage::Crc
            } else {
                return None;
            };
            let start = c as u64 * n;
            let end = (start + n).min(parsed.original_len);
            Some(DamagedChunk {
                chunk: c,
                bytes: (start, end),
                damage,
            })
        })
        .collect();
    // Every chunk that is whole decodes alone: a zero-length stand-in for
    // each damaged one would shift the others, so the good chunks are
    // decoded through the same per-chunk path as a whole file, with the
    // damaged ones' output left zero.
    let mut out = vec![0u8; parsed.original_len as usize];
    let good = |c: usize| damaged.binary_search_by_key(&c, |d| d.chunk).is_err();
    cpu::decode_chunks(&parsed, &offsets, &mut out, good)?;
    if damaged.is_empty() {
        let actual = cpu::crc32(&out);
        if actual != parsed.crc32 {
            return Err(VleCodecError::Checksum {
                expected: parsed.crc32,
                actual,
            });
        }
    }
    Ok((out, damaged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::vle::{compress, decompress, VleOptions};

    /// 10 chunks of 64 symbols, each with its own byte pattern.
    fn sample() -> (Vec<u8>, Vec<u8>) {
        let data: Vec<u8> = (0..640u32)
            .map(|i| (i * 7 % 251) as u8 ^ (i / 64) as u8)
            .collect();
        let opts = VleOptions {
            chunk_symbols: 64,
            ..VleOptions::default()
        };
        let packed = compress(&data, &Backend::Cpu, &opts).unwrap();
        (data, packed)
    }

    fn data_offset(packed: &[u8]) -> usize {
        let f = VleFile::parse(packed).unwrap();
        f.byte_len() - f.data.len()
    }

    #[test]
    fn a_flipped_data_byte_costs_only_its_chunk() {
        let (data, packed) = sample();
        let f = VleFile::parse(&packed).unwrap();
        let offsets = f.chunk_offsets();
        // A byte wholly inside chunk 4.
        let at = data_offset(&packed) + (offsets[4] / 8) as usize + 1;
        assert!(((at - data_offset(&packed)) as u64 + 1) * 8 <= offsets[5]);
        let mut bad = packed.clone();
        bad[at] ^= 0x10;
        match decompress(&bad, &Backend::Cpu) {
            Err(VleCodecError::DamagedChunks(c)) => assert_eq!(c, vec![4]),
            other => panic!("{other:?}"),
        }
        let (out, damaged) = decompress_partial(&bad).unwrap();
        assert_eq!(damaged.len(), 1);
        assert_eq!((damaged[0].chunk, damaged[0].damage), (4, Damage::Crc));
        assert_eq!(damaged[0].bytes, (256, 320));
        assert!(out[256..320].iter().all(|&b| b == 0));
        assert_eq!(out[..256], data[..256]);
        assert_eq!(out[320..], data[320..]);
    }

    #[test]
    fn a_cut_file_restores_the_chunks_before_the_cut() {
        let (data, packed) = sample();
        let f = VleFile::parse(&packed).unwrap();
        let offsets = f.chunk_offsets();
        let cut = data_offset(&packed) + offsets[6].div_ceil(8) as usize;
        let (out, damaged) = decompress_partial(&packed[..cut]).unwrap();
        let missing: Vec<usize> = damaged.iter().map(|d| d.chunk).collect();
        assert_eq!(missing, vec![6, 7, 8, 9]);
        assert!(damaged.iter().all(|d| d.damage == Damage::Missing));
        assert_eq!(out[..384], data[..384]);
        assert!(out[384..].iter().all(|&b| b == 0));
        assert!(matches!(
            decompress(&packed[..cut], &Backend::Cpu),
            Err(VleCodecError::Truncated(_))
        ));
    }

    #[test]
    fn a_damaged_index_locates_nothing() {
        let (_, packed) = sample();
        for at in [9, 20, 33, data_offset(&packed) - 1] {
            let mut bad = packed.clone();
            bad[at] ^= 0x01;
            let e = decompress_partial(&bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    VleCodecError::IndexCrc
                        | VleCodecError::Malformed(_)
                        | VleCodecError::Core(_)
                        | VleCodecError::BadChunkIndex { .. }
                        | VleCodecError::Truncated(_)
                ),
                "byte {at}: {e:?}"
            );
        }
        // A flip in the chunk CRCs themselves is caught by the index CRC.
        let f = VleFile::parse(&packed).unwrap();
        let crcs_at = data_offset(&packed) - 4 - 4 * f.chunk_bits.len();
        let mut bad = packed.clone();
        bad[crcs_at] ^= 0x01;
        assert!(matches!(
            decompress_partial(&bad),
            Err(VleCodecError::IndexCrc)
        ));
    }

    #[test]
    fn version_1_files_still_decode_but_have_no_partial() {
        let (data, packed) = sample();
        let f = VleFile::parse(&packed).unwrap();
        // The same file without the chunk CRCs and the index CRC.
        let crcs = 4 * f.chunk_bits.len() + 4;
        let start = data_offset(&packed) - crcs;
        let mut v1 = packed[..start].to_vec();
        v1[4] = 1;
        v1.extend_from_slice(f.data);
        let parsed = VleFile::parse(&v1).unwrap();
        assert_eq!((parsed.version, parsed.byte_len()), (1, v1.len()));
        assert_eq!(decompress(&v1, &Backend::Cpu).unwrap(), data);
        assert!(matches!(
            decompress_partial(&v1),
            Err(VleCodecError::NoChunkCrcs)
        ));
        // Written back, it is the current version, byte for byte the
        // encoder's file.
        assert_eq!(parsed.to_bytes(), packed);
    }
}
