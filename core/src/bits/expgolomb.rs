//! Exp-Golomb codes (H.264 clause 9.1): `ue(v)` and `se(v)`.

use super::{BitError, BitReader, BitWriter};

impl BitWriter<'_> {
    /// Writes `value` as an unsigned Exp-Golomb code `ue(v)`.
    pub fn write_ue(&mut self, value: u32) -> Result<(), BitError> {
        self.write_code_num(value as u64)
    }

    /// codeNum + 1 written with leading zeros: M zeros, then the M+1 bits of
    /// codeNum + 1. codeNum may be up to 2^32 (the mapping of `se(i32::MIN)`).
    fn write_code_num(&mut self, code_num: u64) -> Result<(), BitError> {
        let v = code_num + 1;
        let m = 63 - v.leading_zeros(); // floor(log2(v)), 0..=32
        if 2 * m < 32 {
            // The M zeros are v's own leading zeros in 2M + 1 bits: one
            // store instead of two (codebook indices and the `.wl` index
            // write one such code per entry).
            return self.write_bits(v as u32, 2 * m + 1);
        }
        self.write_bits(0, m)?;
        if m == 32 {
            // 33 significant bits: the leading 1, then the low 32.
            self.write_bit(true)?;
            return self.write_bits(v as u32, 32);
        }
        self.write_bits(v as u32, m + 1)
    }

    /// Writes `value` as a signed Exp-Golomb code `se(v)`.
    pub fn write_se(&mut self, value: i32) -> Result<(), BitError> {
        // 1 -> 1, -1 -> 2, 2 -> 3, ...
        let mapped = if value > 0 {
            value as u64 * 2 - 1
        } else {
            value.unsigned_abs() as u64 * 2
        };
        self.write_code_num(mapped)
    }
}

impl BitReader<'_> {
    /// Reads an unsigned Exp-Golomb code `ue(v)`.
    pub fn read_ue(&mut self) -> Result<u32, BitError> {
        u32::try_from(self.read_code_num()?).map_err(|_| BitError::ExpGolombTooLong)
    }

    fn read_code_num(&mut self) -> Result<u64, BitError> {
        // A code of up to 31 bits that lies whole in the input is read with
        // one peek: its zeros are the leading zeros of the next 32 bits
        // (the `.wl` index reads one such code per entry). Any other code
        // (longer, cut short, or past the end) takes the bit-by-bit walk,
        // which reports its error.
        let next = self.peek_bits_padded(32)?;
        let zeros = next.leading_zeros();
        let len = 2 * zeros + 1;
        if len <= 31 && self.remaining_bits() >= len as usize {
            self.skip_bits(len as usize)?;
            return Ok((next >> (32 - len)) as u64 - 1);
        }
        let mut zeros = 0u32;
        while !self.read_bit()? {
            zeros += 1;
            if zeros > 32 {
                return Err(BitError::ExpGolombTooLong);
            }
        }
        let rest = self.read_bits(zeros)? as u64;
        Ok(((1u64 << zeros) - 1) + rest)
    }

    /// Reads a signed Exp-Golomb code `se(v)`.
    pub fn read_se(&mut self) -> Result<i32, BitError> {
        let k = self.read_code_num()?;
        let mag = k.div_ceil(2) as i64;
        let v = if k % 2 == 1 { mag } else { -mag };
        i32::try_from(v).map_err(|_| BitError::ExpGolombTooLong)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ue_known_codes() {
        // H.264 Table 9-2: 0 -> 1, 1 -> 010, 2 -> 011, 3 -> 00100, 8 -> 0001001.
        let mut buf = [0u8; 4];
        let mut w = BitWriter::new(&mut buf);
        for v in [0, 1, 2, 3, 8] {
            w.write_ue(v).unwrap();
        }
        assert_eq!(w.bit_position(), 1 + 3 + 3 + 5 + 7);
        // 1 010 011 00100 0001001 -> 1010 0110 0100 0001 001(0 0000)
        assert_eq!(&buf[..3], &[0b1010_0110, 0b0100_0001, 0b0010_0000]);
        let mut r = BitReader::new(&buf);
        for v in [0, 1, 2, 3, 8] {
            assert_eq!(r.read_ue().unwrap(), v);
        }
    }

    #[test]
    fn se_round_trip_and_extremes() {
        let mut buf = [0u8; 64];
        let vals = [
            0,
            1,
            -1,
            2,
            -2,
            1000,
            -1000,
            i32::MAX,
            i32::MIN + 1,
            i32::MIN,
        ];
        let mut w = BitWriter::new(&mut buf);
        for v in vals {
            w.write_se(v).unwrap();
        }
        w.write_ue(u32::MAX).unwrap();
        let mut r = BitReader::new(&buf);
        for v in vals {
            assert_eq!(r.read_se().unwrap(), v);
        }
        assert_eq!(r.read_ue().unwrap(), u32::MAX);
    }

    #[test]
    fn hostile_zero_run_is_an_error() {
        let buf = [0u8; 16];
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_ue(), Err(BitError::ExpGolombTooLong));
        let mut r = BitReader::new(&buf[..2]);
        assert_eq!(r.read_ue(), Err(BitError::UnexpectedEnd));
    }

    #[test]
    fn writer_and_reader_are_bounded() {
        let mut buf = [0u8; 1];
        let mut w = BitWriter::new(&mut buf);
        w.write_bits(0b101, 3).unwrap();
        assert_eq!(w.write_bits(0, 6), Err(BitError::BufferFull));
        w.write_bits(0b11111, 5).unwrap();
        assert_eq!(w.write_bit(true), Err(BitError::BufferFull));
        assert_eq!(buf[0], 0b1011_1111);
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_bits(33), Err(BitError::TooManyBits));
        assert_eq!(r.read_bits(4).unwrap(), 0b1011);
        assert_eq!(r.peek_bits_padded(8).unwrap(), 0b1111_0000);
        assert_eq!(r.read_bits(5), Err(BitError::UnexpectedEnd));
        r.skip_bits(4).unwrap();
        assert_eq!(r.peek_bits_padded(32).unwrap(), 0, "all padding at the end");
    }

    /// Codes read with one peek and codes read bit by bit agree at the
    /// input's end: a code ending on the last bit is read, one cut short
    /// is an error, and so is an empty input.
    #[test]
    fn codes_at_the_end_of_the_input() {
        // ue 6 = 00111, ue 0 = 1, then two zeros: a code cut short.
        let buf = [0b0011_1100u8];
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_ue().unwrap(), 6);
        assert_eq!(r.read_ue().unwrap(), 0);
        assert_eq!(r.read_ue(), Err(BitError::UnexpectedEnd));
        // Fifteen zeros and a one: ue(2^15 - 1) cut short after its stop bit.
        let buf = [0u8, 1];
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_ue(), Err(BitError::UnexpectedEnd));
        let mut r = BitReader::new(&[]);
        assert_eq!(r.read_ue(), Err(BitError::UnexpectedEnd));
        // The longest code read with one peek, 31 bits: 15 zeros, the stop
        // bit, 15 ones: (2^15 - 1) + (2^15 - 1). Then one bit left over.
        let buf = [0u8, 1, 0xFF, 0xFE];
        let mut r = BitReader::new(&buf);
        assert_eq!(r.read_ue().unwrap(), (1 << 16) - 2);
        assert_eq!(r.remaining_bits(), 1);
    }
}
