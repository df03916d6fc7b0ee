//! The GVLE inter-block scan (GVLE §3.4; docs/vle.md) as a step-by-step
//! model of what each GPU workgroup does, so that its correctness and
//! freedom from deadlock can be tested under any interleaving of the atomic
//! operations.
//!
//! # Steps
//!
//! Blocks (4096-symbol block-inputs) are grouped in segments of
//! [`SEGMENT_BLOCKS`]. Block `j` of segment `i` with bit length `len`:
//!
//! 1. **adds** `COUNT_ONE | len` atomically to elements `j..SEGMENT_BLOCKS` of its
//!    segment, so element `k` ends up holding the inclusive in-segment
//!    prefix of block `k` and a counter of the adds it received;
//! 2. **waits** until element `j - 1` has counted `j` adds: its sum is the
//!    block's offset inside the segment;
//! 3. **looks back** over the last elements of segments `i - 1, i - 2, ...`:
//!    a complete one (counter [`SEGMENT_BLOCKS`]) adds its segment total and the look-back
//!    continues; a published inclusive prefix ends it; segment 0 always ends it;
//! 4. if its add completed its segment's last element, **publishes** the
//!    segment's inclusive prefix (segments > 0).
//!
//! # Termination and memory layouts
//!
//! Blocks take their index from an atomic ticket, so when block `b` waits,
//! every block before it has started and never waits on a later block: the
//! waits always end, whatever the scheduler (lavapipe runs workgroups as
//! coroutines on a few threads). [`ScanMemory`] has two layouts: GVLE's
//! 64-bit elements (55-bit sum, 8-bit counter, flag P in bit 63) where
//! 64-bit atomics exist, and a 32-bit fallback (24-bit in-segment sums and an
//! 8-bit counter, which is enough: a segment holds at most 128 × 4096 × 24
//! bits < 2^24) with the
//! published prefix split over two write-once words, each with a valid bit,
//! so that no memory-ordering guarantee beyond single-word atomicity is needed.

/// Blocks per segment. GVLE uses the 32 lanes of a warp; 128 (one per
/// invocation of the encoder's workgroup, which adds to every element of its
/// segment from its own block on in one step) makes the look-back over
/// earlier segments four times shorter, and was 15% faster on an H200
/// (docs/history/vle.md).
pub const SEGMENT_BLOCKS: usize = 128;

/// 64-bit layout: bits of the sum; the add counter is the 8 bits above it.
pub const SUM_BITS_64: u32 = 55;
/// Mask of the add counter once shifted down by the sum bits.
const COUNT_MASK: u64 = 0xff;

// The GPU encoder's invocation `k` adds to element `k` of its segment, the
// counters must hold SEGMENT_BLOCKS, and a segment's sum must fit the 32-bit
// layout's sum bits (24-bit codewords, the longest allowed).
const _: () = assert!(SEGMENT_BLOCKS <= super::lanes::WORKGROUP_SIZE);
const _: () = assert!(SEGMENT_BLOCKS as u64 <= COUNT_MASK);
const _: () =
    assert!(((SEGMENT_BLOCKS * super::lanes::BLOCK_SYMBOLS * 24) as u64) < 1 << SUM_BITS_32);
/// 64-bit layout: flag P (the element holds a global inclusive prefix).
pub const FLAG_P_64: u64 = 1 << 63;
/// 32-bit layout: bits of the in-segment sum; the counter is above them.
pub const SUM_BITS_32: u32 = 24;
/// 32-bit layout: valid bit of each of the two published-prefix words.
pub const PREFIX_VALID_32: u32 = 1 << 31;

/// What the last element of a segment says during look-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentState {
    /// Not all blocks of the segment have added yet.
    Pending,
    /// The segment's own total.
    Aggregate(u64),
    /// The inclusive prefix of everything up to the segment's end.
    Prefix(u64),
}

/// The atomic operations of the scan on one memory layout.
pub trait ScanMemory {
    /// Atomic add of one count and `len` to element `elem`; returns the old
    /// `(count, sum)`.
    fn add(&mut self, elem: usize, len: u64) -> (u32, u64);
    /// Atomic read of element `elem`: `(count, sum)`.
    fn read(&self, elem: usize) -> (u32, u64);
    /// Atomic read(s) of segment `seg`'s last element and published prefix.
    fn segment(&self, seg: usize) -> SegmentState;
    /// Publishes the inclusive prefix of segment `seg`.
    fn publish(&mut self, seg: usize, prefix: u64);
}

/// GVLE's layout: one `u64` per block, zero-initialised.
#[derive(Debug)]
pub struct Cells64<'a>(pub &'a mut [u64]);

impl ScanMemory for Cells64<'_> {
    fn add(&mut self, elem: usize, len: u64) -> (u32, u64) {
        let old = self.0[elem];
        self.0[elem] = old.wrapping_add(1 << SUM_BITS_64 | len);
        (
            (old >> SUM_BITS_64 & COUNT_MASK) as u32,
            old & ((1 << SUM_BITS_64) - 1),
        )
    }
    fn read(&self, elem: usize) -> (u32, u64) {
        let v = self.0[elem];
        (
            (v >> SUM_BITS_64 & COUNT_MASK) as u32,
            v & ((1 << SUM_BITS_64) - 1),
        )
    }
    fn segment(&self, seg: usize) -> SegmentState {
        let v = self.0[seg * SEGMENT_BLOCKS + SEGMENT_BLOCKS - 1];
        let sum = v & ((1 << SUM_BITS_64) - 1);
        if v & FLAG_P_64 != 0 {
            SegmentState::Prefix(sum)
        } else if (v >> SUM_BITS_64 & COUNT_MASK) as usize == SEGMENT_BLOCKS {
            SegmentState::Aggregate(sum)
        } else {
            SegmentState::Pending
        }
    }
    fn publish(&mut self, seg: usize, prefix: u64) {
        self.0[seg * SEGMENT_BLOCKS + SEGMENT_BLOCKS - 1] = FLAG_P_64 | prefix;
    }
}

/// The 32-bit fallback: one `u32` per block and two `u32` per segment, all
/// zero-initialised.
#[derive(Debug)]
pub struct Cells32<'a> {
    /// Per-block elements: counter in bits 24..32, sum below.
    pub cells: &'a mut [u32],
    /// Per segment: low and high 31 bits of the published prefix, each with
    /// [`PREFIX_VALID_32`] set once written.
    pub prefix: &'a mut [u32],
}

impl ScanMemory for Cells32<'_> {
    fn add(&mut self, elem: usize, len: u64) -> (u32, u64) {
        let old = self.cells[elem];
        self.cells[elem] = old.wrapping_add(1 << SUM_BITS_32 | len as u32);
        (old >> SUM_BITS_32, (old & ((1 << SUM_BITS_32) - 1)) as u64)
    }
    fn read(&self, elem: usize) -> (u32, u64) {
        let v = self.cells[elem];
        (v >> SUM_BITS_32, (v & ((1 << SUM_BITS_32) - 1)) as u64)
    }
    fn segment(&self, seg: usize) -> SegmentState {
        let (lo, hi) = (self.prefix[2 * seg], self.prefix[2 * seg + 1]);
        if lo & hi & PREFIX_VALID_32 != 0 {
            let low = (lo & !PREFIX_VALID_32) as u64;
            let high = (hi & !PREFIX_VALID_32) as u64;
            return SegmentState::Prefix(low | high << 31);
        }
        match self.read(seg * SEGMENT_BLOCKS + SEGMENT_BLOCKS - 1) {
            (count, sum) if count as usize == SEGMENT_BLOCKS => SegmentState::Aggregate(sum),
            _ => SegmentState::Pending,
        }
    }
    fn publish(&mut self, seg: usize, prefix: u64) {
        self.prefix[2 * seg] = PREFIX_VALID_32 | (prefix as u32 & !PREFIX_VALID_32);
        self.prefix[2 * seg + 1] = PREFIX_VALID_32 | ((prefix >> 31) as u32 & !PREFIX_VALID_32);
    }
}

/// Result of one step of a block's scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// An atomic operation was done; more follow.
    Progress,
    /// A wait found its condition false (a spin iteration); try again later.
    Blocked,
    /// Finished: the exclusive prefix (bit position) of the block.
    Done(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Adding(usize),
    InSegment,
    LookBack(usize),
    Publish,
    Done,
}

/// One block's part of the scan, one atomic operation per [`BlockScan::step`].
#[derive(Debug, Clone)]
pub struct BlockScan {
    block: usize,
    len: u64,
    add_end: usize,
    phase: Phase,
    /// The segment total, when this block's add completed its segment.
    segment_total: Option<u64>,
    in_segment: u64,
    before_segment: u64,
}

impl BlockScan {
    /// Block `block` (of `blocks` in all) with a code of `len` bits.
    pub fn new(block: usize, blocks: usize, len: u64) -> Self {
        let seg_start = block - block % SEGMENT_BLOCKS;
        BlockScan {
            block,
            len,
            add_end: (blocks - seg_start).min(SEGMENT_BLOCKS),
            phase: Phase::Adding(block % SEGMENT_BLOCKS),
            segment_total: None,
            in_segment: 0,
            before_segment: 0,
        }
    }

    /// Does the next atomic operation.
    pub fn step(&mut self, mem: &mut impl ScanMemory) -> Step {
        let seg = self.block / SEGMENT_BLOCKS;
        let j = self.block % SEGMENT_BLOCKS;
        match self.phase {
            Phase::Adding(k) => {
                let (count, sum) = mem.add(seg * SEGMENT_BLOCKS + k, self.len);
                if k == SEGMENT_BLOCKS - 1 && count as usize == SEGMENT_BLOCKS - 1 {
                    self.segment_total = Some(sum + self.len);
                }
                self.phase = if k + 1 < self.add_end {
                    Phase::Adding(k + 1)
                } else {
                    Phase::InSegment
                };
                Step::Progress
            }
            Phase::InSegment => {
                if j > 0 {
                    let (count, sum) = mem.read(seg * SEGMENT_BLOCKS + j - 1);
                    if count as usize != j {
                        return Step::Blocked;
                    }
                    self.in_segment = sum;
                }
                self.phase = if seg > 0 {
                    Phase::LookBack(seg - 1)
                } else {
                    Phase::Publish
                };
                Step::Progress
            }
            Phase::LookBack(s) => {
                match mem.segment(s) {
                    SegmentState::Pending => return Step::Blocked,
                    SegmentState::Prefix(p) => {
                        self.before_segment += p;
                        self.phase = Phase::Publish;
                    }
                    SegmentState::Aggregate(a) => {
                        self.before_segment += a;
                        self.phase = if s == 0 {
                            Phase::Publish
                        } else {
                            Phase::LookBack(s - 1)
                        };
                    }
                }
                Step::Progress
            }
            Phase::Publish => {
                if let (Some(total), true) = (self.segment_total, seg > 0) {
                    mem.publish(seg, self.before_segment + total);
                }
                self.phase = Phase::Done;
                Step::Progress
            }
            Phase::Done => Step::Done(self.before_segment + self.in_segment),
        }
    }
}

/// Runs every block's scan in block order (each to completion, which never
/// blocks in this order) and writes each block's exclusive prefix to
/// `positions`. The sequential driver of the lane model.
pub fn scan_in_order(mem: &mut impl ScanMemory, lens: &[u64], positions: &mut [u64]) {
    for (b, (&len, pos)) in lens.iter().zip(positions.iter_mut()).enumerate() {
        let mut scan = BlockScan::new(b, lens.len(), len);
        *pos = loop {
            match scan.step(mem) {
                Step::Done(p) => break p,
                Step::Progress => {}
                Step::Blocked => unreachable!("in block order every wait is already satisfied"),
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::vec;
    use std::vec::Vec;

    /// `workers` persistent workgroups take tickets in order; a random
    /// scheduler advances one of them by one atomic operation at a time.
    /// Fails if every worker is blocked (a deadlock).
    fn run_interleaved(
        mem: &mut impl ScanMemory,
        lens: &[u64],
        workers: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<u64> {
        let mut positions = vec![u64::MAX; lens.len()];
        let mut ticket = 0usize;
        let mut running: Vec<Option<BlockScan>> = vec![None; workers];
        loop {
            for slot in running.iter_mut().filter(|s| s.is_none()) {
                if ticket < lens.len() {
                    *slot = Some(BlockScan::new(ticket, lens.len(), lens[ticket]));
                    ticket += 1;
                }
            }
            let active: Vec<usize> = (0..workers).filter(|&w| running[w].is_some()).collect();
            if active.is_empty() {
                return positions;
            }
            // Try workers in a random order until one makes progress.
            let start = rng.random_range(0..active.len());
            let mut progressed = false;
            for t in 0..active.len() {
                let w = active[(start + t) % active.len()];
                let scan = running[w].as_mut().unwrap();
                match scan.step(mem) {
                    Step::Blocked => continue,
                    Step::Progress => {}
                    Step::Done(p) => {
                        positions[scan.block] = p;
                        running[w] = None;
                    }
                }
                progressed = true;
                break;
            }
            assert!(progressed, "deadlock: every workgroup is spinning");
        }
    }

    fn expected(lens: &[u64]) -> Vec<u64> {
        let mut acc = 0;
        lens.iter()
            .map(|&l| {
                let p = acc;
                acc += l;
                p
            })
            .collect()
    }

    #[test]
    fn every_interleaving_gives_the_prefix_sums() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for round in 0..120 {
            // Up to five segments, so that look-backs pass complete segments
            // and stop at published prefixes.
            let blocks = rng.random_range(1..4 * SEGMENT_BLOCKS + 40);
            let lens: Vec<u64> = (0..blocks)
                .map(|_| rng.random_range(4096..98_305))
                .collect();
            let workers = rng.random_range(1..40);
            let want = expected(&lens);
            let mut cells = vec![0u64; blocks];
            let got = run_interleaved(&mut Cells64(&mut cells), &lens, workers, &mut rng);
            assert_eq!(got, want, "64-bit, round {round}");
            let mut cells = vec![0u32; blocks];
            let mut prefix = vec![0u32; 2 * blocks.div_ceil(SEGMENT_BLOCKS)];
            let mut mem = Cells32 {
                cells: &mut cells,
                prefix: &mut prefix,
            };
            let got = run_interleaved(&mut mem, &lens, workers, &mut rng);
            assert_eq!(got, want, "32-bit, round {round}");
        }
    }

    #[test]
    fn in_order_driver_and_large_prefixes() {
        // Prefixes above 2^32 bits in both layouts (the 32-bit one splits them).
        let lens = vec![1u64 << 27; 100];
        let mut pos = vec![0u64; 100];
        let mut cells = vec![0u64; 100];
        scan_in_order(&mut Cells64(&mut cells), &lens, &mut pos);
        assert_eq!(pos, expected(&lens));
        let lens = vec![98_304u64; 3 * SEGMENT_BLOCKS + 5];
        let mut pos = vec![0u64; lens.len()];
        let mut cells = vec![0u32; lens.len()];
        let mut prefix = vec![0u32; 8];
        let mut mem = Cells32 {
            cells: &mut cells,
            prefix: &mut prefix,
        };
        scan_in_order(&mut mem, &lens, &mut pos);
        assert_eq!(pos, expected(&lens));
        mem.publish(0, (1 << 40) + 12345);
        assert_eq!(mem.segment(0), SegmentState::Prefix((1 << 40) + 12345));
    }
}
