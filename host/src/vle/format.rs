//! The `.wlv` container: header, code table, chunk index, data.
//!
//! | offset | size | field |
//! |--------|------|-------|
//! | 0 | 4 | magic `WLVE` |
//! | 4 | 1 | version (1) |
//! | 5 | 3 | reserved, zero |
//! | 8 | 8 | original length in bytes (u64 LE) |
//! | 16 | 4 | symbols per chunk (u32 LE; a multiple of 32, at most 2^24) |
//! | 20 | 4 | CRC-32 (IEEE) of the original bytes (u32 LE) |
//! | 24 | 8 | data length in bits (u64 LE) |
//! | 32 | 1..=193 | code table ([`CodeTable::serialize`]) |
//! | .. | 4 × chunks | chunk index: bit length of each chunk (u32 LE) |
//! | .. | ⌈bits / 8⌉ | data: the chunks' codewords, MSB-first, concatenated; zero padding |
//!
//! Chunk `c` starts at the sum of the lengths before it. Parsing checks every
//! field against the others and the file size before anything is allocated:
//! the original length is at most the data bits (every codeword has at least
//! one bit), each chunk's length lies between its symbol count times the
//! shortest and the longest codeword, the lengths add up to the data bits,
//! the padding bits are zero and nothing follows the data.

use wavelane_core::vle::{check_chunk_symbols, chunk_count, CodeTable, MAX_TABLE_BYTES};

use super::VleCodecError;

/// File magic.
pub const MAGIC: [u8; 4] = *b"WLVE";
/// Format version written and accepted.
pub const VERSION: u8 = 1;
/// Bytes before the code table.
pub const HEADER_BYTES: usize = 32;

/// A parsed (or to-be-written) VLE file; `data` borrows the file.
#[derive(Debug, Clone)]
pub struct VleFile<'a> {
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
    /// The coded data, `data_bits.div_ceil(8)` bytes.
    pub data: &'a [u8],
}

fn truncated(what: &'static str) -> VleCodecError {
    VleCodecError::Truncated(what)
}

impl<'a> VleFile<'a> {
    /// Serialized size in bytes.
    pub fn byte_len(&self) -> usize {
        HEADER_BYTES + self.table.serialized_len() + 4 * self.chunk_bits.len() + self.data.len()
    }

    /// Writes the file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.byte_len());
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
        out.extend_from_slice(self.data);
        out
    }

    /// Parses and validates a file.
    pub fn parse(file: &'a [u8]) -> Result<VleFile<'a>, VleCodecError> {
        let header = file.get(..HEADER_BYTES).ok_or(truncated("header"))?;
        if header[..4] != MAGIC {
            return Err(VleCodecError::NotVle);
        }
        if header[4] != VERSION {
            return Err(VleCodecError::UnsupportedVersion(header[4]));
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
        // Every symbol takes at least one bit, so `original_len <= data_bits`,
        // and the data must fit in the file: this bounds every allocation.
        let rest = &file[HEADER_BYTES + table_len..];
        // A cut file is told apart from an inconsistent header, so that
        // `wavelane vle decompress` and `verify` say "truncated".
        if original_len <= data_bits && data_bits > rest.len() as u64 * 8 {
            return Err(truncated("data"));
        }
        if data_bits > rest.len() as u64 * 8 || original_len > data_bits {
            return Err(VleCodecError::Malformed(
                "original length and data length do not fit the file",
            ));
        }
        let chunks = chunk_count(original_len as usize, chunk_symbols as usize);
        let index_bytes = rest.get(..chunks * 4).ok_or(truncated("chunk index"))?;
        let data_len = data_bits.div_ceil(8) as usize;
        let data = &rest[chunks * 4..];
        if data.len() < data_len {
            return Err(truncated("data"));
        }
        if data.len() > data_len {
            return Err(VleCodecError::Malformed("bytes after the data"));
        }
        if data_bits % 8 != 0 && data[data_len - 1] << (data_bits % 8) != 0 {
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
            let bits = u32::from_le_bytes(raw.try_into().expect("4 bytes"));
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
            original_len,
            chunk_symbols,
            crc32,
            data_bits,
            table,
            chunk_bits,
            data,
        })
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
