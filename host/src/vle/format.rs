//! The `.wlv` container: header, code table, chunk index, chunk CRCs,
//! index CRC, data (docs/format.md, "VLE file").
//!
//! | offset | size | field |
//! |--------|------|-------|
//! | 0 | 4 | magic `WLVE` |
//! | 4 | 1 | version (2; 1 is still read) |
//! | 5 | 3 | reserved, zero |
//! | 8 | 8 | original length in bytes (u64 LE) |
//! | 16 | 4 | symbols per chunk (u32 LE; a multiple of 32, at most 2^24) |
//! | 20 | 4 | CRC-32 (IEEE) of the original bytes (u32 LE) |
//! | 24 | 8 | data length in bits (u64 LE) |
//! | 32 | 1..=193 | code table ([`CodeTable::serialize`]) |
//! | .. | 4 × chunks | chunk index: bit length of each chunk (u32 LE) |
//! | .. | 4 × chunks | version 2: CRC-32 of each chunk's coded bits ([`chunk_crc`]) |
//! | .. | 4 | version 2: CRC-32 of every byte before this field |
//! | .. | ⌈bits / 8⌉ | data: the chunks' codewords, MSB-first, concatenated; zero padding |
//!
//! Chunk `c` starts at the sum of the lengths before it. Parsing checks every
//! field against the others and the file size before anything is allocated:
//! the original length is at most the data bits (every codeword has at least
//! one bit), each chunk's length lies between its symbol count times the
//! shortest and the longest codeword, the lengths add up to the data bits,
//! the padding bits are zero and nothing follows the data.
//!
//! Version 2 adds the per-chunk CRCs so that a damaged file can be told
//! apart chunk by chunk without decoding it: `wavelane verify` checks them
//! at CRC speed, and `wavelane vle decompress --partial` restores every
//! chunk whose CRC holds. The CRCs cover the coded bits rather than the
//! original bytes for that reason; the CRC of the original bytes (offset
//! 20) still checks the decoder's output. The index CRC protects what
//! locates the chunks: with it intact, a changed data byte damages only
//! the chunk that holds it.

use wavelane_core::vle::{check_chunk_symbols, chunk_count, CodeTable, MAX_TABLE_BYTES};

use super::VleCodecError;

/// File magic.
pub const MAGIC: [u8; 4] = *b"WLVE";
/// Format version written (1 and 2 are read).
pub const VERSION: u8 = 2;
/// The first version with chunk CRCs and the index CRC.
pub const VERSION_CHUNK_CRCS: u8 = 2;
/// Bytes before the code table.
pub const HEADER_BYTES: usize = 32;

/// A parsed (or to-be-written) VLE file; `data` borrows the file.
#[derive(Debug, Clone)]
pub struct VleFile<'a> {
    /// Format version (parsed), or [`VERSION`] for a file to write.
    pub version: u8,
    /// Length of the original input in bytes (= symbols).
    pub original_len: u64,
    /// Symbols per chunk.
    pub chunk_symbols: u32,
    /// CRC-32 of the original bytes.
    pub crc32: u32,
    /// Length of the coded data in bits.
    pub data_bits: u64,
    /// The canonical code.
    pub table: CodeTable,
    /// Bit length of each chunk.
    pub chunk_bits: Vec<u32>,
    /// CRC-32 of each chunk's coded bits ([`chunk_crc`]); empty for a
    /// version 1 file, which has none.
    pub chunk_crcs: Vec<u32>,
    /// The coded data: `data_bits.div_ceil(8)` bytes, or fewer in a file
    /// parsed with [`VleFile::parse_prefix`].
    pub data: &'a [u8],
}

/// How much of the data a parse requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Completeness {
    /// All of it, and nothing after it.
    Whole,
    /// Any prefix of it (`--partial`): the chunks past the end are missing.
    Prefix,
}

fn truncated(what: &'static str) -> VleCodecError {
    VleCodecError::Truncated(what)
}

impl<'a> VleFile<'a> {
    /// Serialized size in bytes of the whole file (as [`VleFile::to_bytes`]
    /// writes it, or as the parsed file's header promises).
    pub fn byte_len(&self) -> usize {
        self.data_offset() + self.data_bits.div_ceil(8) as usize
    }

    /// Offset of the first data byte.
    fn data_offset(&self) -> usize {
        let crcs = if self.version >= VERSION_CHUNK_CRCS {
            4 * self.chunk_bits.len() + 4
        } else {
            0
        };
        HEADER_BYTES + self.table.serialized_len() + 4 * self.chunk_bits.len() + crcs
    }

    /// Writes the file, always at the current [`VERSION`] (the chunk CRCs
    /// are computed from the data, so a parsed version 1 file is rewritten
    /// as version 2).
    pub fn to_bytes(&self) -> Vec<u8> {
        let current = VleFile {
            version: VERSION,
            chunk_crcs: Vec::new(),
            ..self.clone()
        };
        let mut out = Vec::with_capacity(current.byte_len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[VERSION, 0, 0, 0]);
        out.extend_from_slice(&self.original_len.to_le_bytes());
        out.extend_from_slice(&self.chunk_symbols.to_le_bytes());
        out.extend_from_slice(&self.crc32.to_le_bytes());
        out.extend_from_slice(&self.data_bits.to_le_bytes());
        let mut table = [0u8; MAX_TABLE_BYTES];
        let n = self
            .table
            .serialize(&mut table)
            .expect("MAX_TABLE_BYTES holds any table");
        out.extend_from_slice(&table[..n]);
        for &b in &self.chunk_bits {
            out.extend_from_slice(&b.to_le_bytes());
        }
        for crc in chunk_crcs(self.data, &self.chunk_bits) {
            out.extend_from_slice(&crc.to_le_bytes());
        }
        let index_crc = crc32fast::hash(&out);
        out.extend_from_slice(&index_crc.to_le_bytes());
        out.extend_from_slice(self.data);
        out
    }

    /// Parses and validates a whole file.
    pub fn parse(file: &'a [u8]) -> Result<VleFile<'a>, VleCodecError> {
        Self::parse_as(file, Completeness::Whole)
    }

    /// Parses a file whose data may be cut short (`--partial`): everything
    /// before the data must be whole and, in a version 2 file, match its
    /// index CRC; `data` is what there is of the data. Chunks that end past
    /// it are missing ([`VleFile::chunk_present`]).
    pub fn parse_prefix(file: &'a [u8]) -> Result<VleFile<'a>, VleCodecError> {
        Self::parse_as(file, Completeness::Prefix)
    }

    fn parse_as(file: &'a [u8], completeness: Completeness) -> Result<VleFile<'a>, VleCodecError> {
        let header = file.get(..HEADER_BYTES).ok_or(truncated("header"))?;
        if header[..4] != MAGIC {
            return Err(VleCodecError::NotVle);
        }
        let version = header[4];
        if !(1..=VERSION).contains(&version) {
            return Err(VleCodecError::UnsupportedVersion(version));
        }
        if header[5..8] != [0, 0, 0] {
            return Err(VleCodecError::Malformed(
                "reserved header bytes are not zero",
            ));
        }
        let u64_at = |o: usize| u64::from_le_bytes(header[o..o + 8].try_into().expect("8 bytes"));
        let u32_at = |o: usize| u32::from_le_bytes(header[o..o + 4].try_into().expect("4 bytes"));
        let original_len = u64_at(8);
        let chunk_symbols = u32_at(16);
        let crc32 = u32_at(20);
        let data_bits = u64_at(24);
        check_chunk_symbols(chunk_symbols as usize)?;

        let (table, table_len) = CodeTable::deserialize(&file[HEADER_BYTES..])?;
        if table.is_empty() != (original_len == 0) {
            return Err(VleCodecError::Malformed(
                "the code table is empty exactly when the input is",
            ));
        }
        // Every symbol takes at least one bit, so `original_len <= data_bits`;
        // the data must fit in the file (a whole one), which bounds every
        // allocation: a prefix parse bounds the chunk count by the bytes
        // its index and CRCs take instead.
        let rest = &file[HEADER_BYTES + table_len..];
        if original_len > data_bits {
            return Err(VleCodecError::Malformed(
                "original length and data length do not fit the file",
            ));
        }
        // A cut file is told apart from an inconsistent header, so that
        // `wavelane vle decompress` and `verify` say "truncated".
        if completeness == Completeness::Whole && data_bits > rest.len() as u64 * 8 {
            return Err(truncated("data"));
        }
        let chunks = chunk_count(original_len as usize, chunk_symbols as usize);
        let index_len = chunks
            .checked_mul(4)
            .filter(|&n| n <= rest.len())
            .ok_or(truncated("chunk index"))?;
        let index_bytes = &rest[..index_len];
        let mut data = &rest[chunks * 4..];
        let mut chunk_crcs = Vec::new();
        if version >= VERSION_CHUNK_CRCS {
            let crc_bytes = data.get(..chunks * 4 + 4).ok_or(truncated("chunk CRCs"))?;
            let (crcs, index_crc) = crc_bytes.split_at(chunks * 4);
            let covered = HEADER_BYTES + table_len + 8 * chunks;
            if crc32fast::hash(&file[..covered]) != u32_le(index_crc) {
                return Err(VleCodecError::IndexCrc);
            }
            chunk_crcs = crcs.chunks_exact(4).map(u32_le).collect();
            data = &data[chunks * 4 + 4..];
        }
        let data_len = data_bits.div_ceil(8) as usize;
        if data.len() > data_len {
            return Err(VleCodecError::Malformed("bytes after the data"));
        }
        if completeness == Completeness::Whole && data.len() < data_len {
            return Err(truncated("data"));
        }
        if data.len() == data_len
            && data_bits % 8 != 0
            && data[data_len - 1] << (data_bits % 8) != 0
        {
            return Err(VleCodecError::Malformed("padding bits are not zero"));
        }
        let shortest = table
            .lengths()
            .iter()
            .filter(|&&l| l > 0)
            .min()
            .copied()
            .unwrap_or(0) as u64;
        let longest = table.max_len() as u64;
        let mut sum = 0u64;
        let mut chunk_bits = Vec::with_capacity(chunks);
        for (c, raw) in index_bytes.chunks_exact(4).enumerate() {
            let bits = u32_le(raw);
            let symbols =
                (original_len - c as u64 * chunk_symbols as u64).min(chunk_symbols as u64);
            if (bits as u64) < symbols * shortest || bits as u64 > symbols * longest {
                return Err(VleCodecError::BadChunkIndex { chunk: c });
            }
            sum += bits as u64;
            chunk_bits.push(bits);
        }
        if sum != data_bits {
            return Err(VleCodecError::Malformed(
                "chunk lengths do not add up to the data length",
            ));
        }
        Ok(VleFile {
            version,
            original_len,
            chunk_symbols,
            crc32,
            data_bits,
            table,
            chunk_bits,
            chunk_crcs,
            data,
        })
    }

    /// Whether chunk `c`'s bits are all within [`VleFile::data`].
    pub fn chunk_present(&self, c: usize, offsets: &[u64]) -> bool {
        let end = offsets[c] + self.chunk_bits[c] as u64;
        end <= self.data.len() as u64 * 8
    }

    /// Bit offset of each chunk (the exclusive prefix sum of the lengths).
    pub fn chunk_offsets(&self) -> Vec<u64> {
        chunk_offsets(&self.chunk_bits)
    }
}

/// Bit offset of each chunk of lengths `chunk_bits` (their exclusive prefix sum).
pub fn chunk_offsets(chunk_bits: &[u32]) -> Vec<u64> {
    let mut acc = 0u64;
    chunk_bits
        .iter()
        .map(|&b| {
            let at = acc;
            acc += b as u64;
            at
        })
        .collect()
}

fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes(b.try_into().expect("4 bytes"))
}

/// CRC-32 of the `bits` bits of `data` from bit `start` on (MSB-first), as
/// the bytes they make when shifted to start a byte, the last one
/// zero-padded. `data` must hold them all.
pub fn chunk_crc(data: &[u8], start: u64, bits: u64) -> u32 {
    let first = (start / 8) as usize;
    let shift = (start % 8) as u32;
    let bytes = bits.div_ceil(8) as usize;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = [0u8; 256];
    let mut done = 0usize;
    while done < bytes {
        let n = (bytes - done).min(buf.len());
        for (i, out) in buf[..n].iter_mut().enumerate() {
            let k = first + done + i;
            let hi = data[k] << shift;
            // The next byte's top bits, when the range reaches into it.
            let lo = if shift == 0 {
                0
            } else {
                data.get(k + 1).map_or(0, |&b| b >> (8 - shift))
            };
            *out = hi | lo;
        }
        if done + n == bytes && !bits.is_multiple_of(8) {
            buf[n - 1] &= 0xFFu8 << (8 - bits % 8);
        }
        hasher.update(&buf[..n]);
        done += n;
    }
    hasher.finalize()
}

/// [`chunk_crc`] of every chunk of lengths `chunk_bits` in `data`.
pub fn chunk_crcs(data: &[u8], chunk_bits: &[u32]) -> Vec<u32> {
    chunk_offsets(chunk_bits)
        .iter()
        .zip(chunk_bits)
        .map(|(&at, &bits)| chunk_crc(data, at, bits as u64))
        .collect()
}
