//! The raw codeblock files of `wavelane bpc` (documented in docs/format.md):
//!
//! - `BPCREF01`: quantized 64x64 codeblocks of an image, the format of the
//!   reference sample. Little-endian: magic `BPCREF01`, u32 width, u32
//!   height, u32 count, then per codeblock u8 level, u8 orientation (0 HL,
//!   1 LH, 2 HH; the LL band is level 5, orientation 0), u8 M (0xFF when
//!   all-zero), u8 0, u16 x, u16 y, 4096 i16 coefficients row-major.
//! - encoded blocks: per codeblock in order, u8 M (0xFF for an empty
//!   codeblock), u32 LE codeword count, the codewords as u16 big-endian.
//!
//! Readers take untrusted bytes: every count is checked against the bytes
//! that are there before anything is allocated or read.

use wavelane_core::bpc::{group_index, Orientation, MAX_BITPLANE};

use super::{BpcError, EncodedBatch};

/// Magic of the reference codeblock format.
pub const REF_MAGIC: &[u8; 8] = b"BPCREF01";
/// Side of a `BPCREF01` codeblock.
pub const REF_BLOCK_SIDE: usize = 64;
/// Coefficients per `BPCREF01` codeblock.
pub const REF_BLOCK_LEN: usize = REF_BLOCK_SIDE * REF_BLOCK_SIDE;
/// The `level` of the LL band in `BPCREF01` (5 decomposition levels).
pub const REF_LL_LEVEL: u8 = 5;
/// `M` byte of an empty codeblock.
pub const EMPTY_TOP: u8 = 0xFF;

const REF_HEADER: usize = 8 + 12;
const REF_BLOCK_HEADER: usize = 8;
const REF_BLOCK_BYTES: usize = REF_BLOCK_HEADER + 2 * REF_BLOCK_LEN;

/// One codeblock of a `BPCREF01` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefBlock {
    /// Decomposition level, 0 the finest; [`REF_LL_LEVEL`] for LL.
    pub level: u8,
    /// 0 HL, 1 LH, 2 HH (0 for LL).
    pub orientation: u8,
    /// `M` as stored (informational: coders compute it from the data).
    pub top: u8,
    /// Top-left column in the Mallat layout.
    pub x: u16,
    /// Top-left row in the Mallat layout.
    pub y: u16,
    /// 64 x 64 coefficients, row-major.
    pub coefficients: Vec<i16>,
}

impl RefBlock {
    /// The probability-table group of this codeblock's subband.
    pub fn group(&self) -> usize {
        if self.level == REF_LL_LEVEL {
            group_index(self.level, Orientation::LL)
        } else {
            let o = [Orientation::HL, Orientation::LH, Orientation::HH][self.orientation as usize];
            group_index(self.level, o)
        }
    }
}

/// A whole `BPCREF01` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefFile {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Codeblocks in file order.
    pub blocks: Vec<RefBlock>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl RefFile {
    /// Parses a `BPCREF01` file.
    pub fn parse(bytes: &[u8]) -> Result<RefFile, BpcError> {
        let bad = |m: String| BpcError::Format(format!("BPCREF01: {m}"));
        if bytes.len() < REF_HEADER || &bytes[..8] != REF_MAGIC {
            return Err(bad("missing magic `BPCREF01`".into()));
        }
        let (width, height, count) = (u32_at(bytes, 8), u32_at(bytes, 12), u32_at(bytes, 16));
        let body = bytes.len() - REF_HEADER;
        if !body.is_multiple_of(REF_BLOCK_BYTES) || body / REF_BLOCK_BYTES != count as usize {
            return Err(bad(format!(
                "header says {count} codeblocks but {body} bytes follow ({REF_BLOCK_BYTES} per codeblock)"
            )));
        }
        let mut blocks = Vec::with_capacity(count as usize);
        for (i, rec) in bytes[REF_HEADER..]
            .chunks_exact(REF_BLOCK_BYTES)
            .enumerate()
        {
            let (level, orientation) = (rec[0], rec[1]);
            let valid = (level < REF_LL_LEVEL && orientation <= 2)
                || (level == REF_LL_LEVEL && orientation == 0);
            if !valid {
                return Err(bad(format!(
                    "codeblock {i}: level {level} orientation {orientation} is not a subband of 5 levels"
                )));
            }
            let coefficients = rec[REF_BLOCK_HEADER..]
                .chunks_exact(2)
                .map(|p| i16::from_le_bytes([p[0], p[1]]))
                .collect();
            blocks.push(RefBlock {
                level,
                orientation,
                top: rec[2],
                x: u16::from_le_bytes([rec[4], rec[5]]),
                y: u16::from_le_bytes([rec[6], rec[7]]),
                coefficients,
            });
        }
        Ok(RefFile {
            width,
            height,
            blocks,
        })
    }

    /// Serializes to `BPCREF01`. Errors if a codeblock does not hold 4096
    /// coefficients.
    pub fn to_bytes(&self) -> Result<Vec<u8>, BpcError> {
        let mut out = Vec::with_capacity(REF_HEADER + self.blocks.len() * REF_BLOCK_BYTES);
        out.extend_from_slice(REF_MAGIC);
        out.extend_from_slice(&self.width.to_le_bytes());
        out.extend_from_slice(&self.height.to_le_bytes());
        out.extend_from_slice(&(self.blocks.len() as u32).to_le_bytes());
        for (i, b) in self.blocks.iter().enumerate() {
            if b.coefficients.len() != REF_BLOCK_LEN {
                return Err(BpcError::Format(format!(
                    "codeblock {i} has {} coefficients, BPCREF01 needs {REF_BLOCK_LEN}",
                    b.coefficients.len()
                )));
            }
            out.extend_from_slice(&[b.level, b.orientation, b.top, 0]);
            out.extend_from_slice(&b.x.to_le_bytes());
            out.extend_from_slice(&b.y.to_le_bytes());
            for c in &b.coefficients {
                out.extend_from_slice(&c.to_le_bytes());
            }
        }
        Ok(out)
    }
}

/// `M` of 64x64 i16 coefficients as `BPCREF01` stores it (0xFF if all zero).
pub fn ref_top(coefficients: &[i16]) -> u8 {
    let or = coefficients
        .iter()
        .fold(0u32, |a, c| a | c.unsigned_abs() as u32);
    if or == 0 {
        EMPTY_TOP
    } else {
        (31 - or.leading_zeros()) as u8
    }
}

/// Serializes encoded codeblocks: per codeblock u8 M (0xFF empty), u32 LE
/// count, codewords big-endian.
pub fn write_encoded(batch: &EncodedBatch) -> Vec<u8> {
    let mut out = Vec::with_capacity(batch.len() * 5 + batch.codewords.len() * 2);
    for i in 0..batch.len() {
        let (top, words) = batch.block(i);
        out.push(top.unwrap_or(EMPTY_TOP));
        out.extend_from_slice(&(words.len() as u32).to_le_bytes());
        for w in words {
            out.extend_from_slice(&w.to_be_bytes());
        }
    }
    out
}

/// Parses exactly `count` encoded codeblocks, validating each `M` (<= 27,
/// or 0xFF with no codewords), each count against the bytes left, and that
/// nothing follows the last codeblock.
pub fn read_encoded(bytes: &[u8], count: usize) -> Result<EncodedBatch, BpcError> {
    let bad = |m: String| BpcError::Format(format!("encoded blocks: {m}"));
    let mut tops = Vec::with_capacity(count.min(bytes.len() / 5 + 1));
    let mut offsets = vec![0usize];
    let mut codewords = Vec::new();
    let mut at = 0usize;
    for i in 0..count {
        if bytes.len() - at < 5 {
            return Err(bad(format!("file ends before codeblock {i} of {count}")));
        }
        let top = bytes[at];
        let n = u32_at(bytes, at + 1) as usize;
        at += 5;
        let top = match top {
            EMPTY_TOP if n == 0 => None,
            EMPTY_TOP => return Err(bad(format!("codeblock {i} is empty but has {n} codewords"))),
            m if m <= MAX_BITPLANE => Some(m),
            m => {
                return Err(bad(format!(
                    "codeblock {i}: M = {m} is above {MAX_BITPLANE}"
                )))
            }
        };
        let len = n
            .checked_mul(2)
            .filter(|&l| l <= bytes.len() - at)
            .ok_or_else(|| {
                bad(format!(
                    "codeblock {i} claims {n} codewords; only {} bytes left",
                    bytes.len() - at
                ))
            })?;
        codewords.extend(
            bytes[at..at + len]
                .chunks_exact(2)
                .map(|p| u16::from_be_bytes([p[0], p[1]])),
        );
        at += len;
        tops.push(top);
        offsets.push(codewords.len());
    }
    if at != bytes.len() {
        return Err(bad(format!(
            "{} bytes after the last of {count} codeblocks",
            bytes.len() - at
        )));
    }
    Ok(EncodedBatch {
        tops,
        offsets,
        codewords,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> RefFile {
        let mut coefficients = vec![0i16; REF_BLOCK_LEN];
        coefficients[5] = -300;
        RefFile {
            width: 64,
            height: 64,
            blocks: vec![RefBlock {
                level: 5,
                orientation: 0,
                top: ref_top(&coefficients),
                x: 0,
                y: 0,
                coefficients,
            }],
        }
    }

    #[test]
    fn ref_file_round_trips_and_rejects_damage() {
        let f = tiny();
        assert_eq!(f.blocks[0].top, 8);
        assert_eq!(f.blocks[0].group(), 15);
        let bytes = f.to_bytes().unwrap();
        assert_eq!(RefFile::parse(&bytes).unwrap(), f);
        assert!(RefFile::parse(&bytes[..bytes.len() - 1]).is_err());
        let mut wrong = bytes.clone();
        wrong[REF_HEADER + 1] = 3; // LL with orientation 3
        assert!(RefFile::parse(&wrong).is_err());
        let mut count = bytes;
        count[16] = 2;
        assert!(RefFile::parse(&count).is_err());
    }

    #[test]
    fn encoded_blocks_round_trip_and_reject_damage() {
        let batch = EncodedBatch {
            tops: vec![Some(3), None, Some(0)],
            offsets: vec![0, 2, 2, 3],
            codewords: vec![0xABCD, 1, 0x8000],
        };
        let bytes = write_encoded(&batch);
        assert_eq!(&bytes[..7], &[3, 2, 0, 0, 0, 0xAB, 0xCD]);
        assert_eq!(read_encoded(&bytes, 3).unwrap(), batch);
        assert!(read_encoded(&bytes, 2).is_err(), "trailing bytes");
        assert!(read_encoded(&bytes, 4).is_err(), "missing block");
        let mut big = bytes.clone();
        big[1] = 0xFF; // count far beyond the file
        assert!(read_encoded(&big, 3).is_err());
        let mut m = bytes;
        m[0] = 28;
        assert!(read_encoded(&m, 3).is_err());
    }
}
