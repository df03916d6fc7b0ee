//! A byte cursor that turns fuzzer input into structured parameters.
//!
//! Every read succeeds: once the input is exhausted the reads return zero,
//! so every byte string is a valid input for every target and libFuzzer's
//! mutations never fall into a "rejected" dead end.

/// Reads little-endian fields from the front of a fuzz input.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    /// The next byte, or 0 when the input is exhausted.
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next little-endian `u16` (missing bytes read as 0).
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// The next little-endian `u32` (missing bytes read as 0).
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// A value in `lo..=hi` from one byte (`hi - lo` must be below 256 for
    /// an even spread; larger ranges use two bytes).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        debug_assert!(lo <= hi);
        let span = hi - lo + 1;
        let raw = if span <= 256 {
            self.u8() as usize
        } else {
            self.u16() as usize
        };
        lo + raw % span
    }

    /// A boolean from one byte's low bit.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// The bytes not read yet (the cursor is left at the end).
    pub fn rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.data)
    }

    /// Bytes left.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the input is exhausted.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Writes the fields [`Input`] reads, for seed generators: the inverse of
/// the cursor, so a seed states its parameters in the same order a target
/// reads them.
#[derive(Debug, Clone, Default)]
pub struct SeedWriter {
    bytes: Vec<u8>,
}

impl SeedWriter {
    /// An empty seed.
    pub fn new() -> Self {
        SeedWriter::default()
    }

    /// Appends one byte.
    pub fn u8(mut self, v: u8) -> Self {
        self.bytes.push(v);
        self
    }

    /// Appends a little-endian `u16`.
    pub fn u16(mut self, v: u16) -> Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends a little-endian `u32`.
    pub fn u32(mut self, v: u32) -> Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Appends raw bytes.
    pub fn bytes(mut self, v: &[u8]) -> Self {
        self.bytes.extend_from_slice(v);
        self
    }

    /// The finished seed.
    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_the_end_are_zero() {
        let mut i = Input::new(&[1, 2, 3]);
        assert_eq!(i.u16(), 0x0201);
        assert_eq!(i.u32(), 3);
        assert_eq!(i.u8(), 0);
        assert!(i.is_empty());
    }

    #[test]
    fn range_stays_in_bounds() {
        for b in 0..=255u8 {
            let v = Input::new(&[b]).range(3, 9);
            assert!((3..=9).contains(&v));
        }
        assert_eq!(Input::new(&[0xff, 0xff]).range(0, 999), 65535 % 1000);
    }

    #[test]
    fn seed_writer_round_trips_through_input() {
        let seed = SeedWriter::new()
            .u8(7)
            .u16(0x1234)
            .u32(0xdead_beef)
            .bytes(b"xy")
            .finish();
        let mut i = Input::new(&seed);
        assert_eq!((i.u8(), i.u16(), i.u32()), (7, 0x1234, 0xdead_beef));
        assert_eq!(i.rest(), b"xy");
    }
}
