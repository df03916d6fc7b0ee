//! The encoder's inter-block scan: a single-pass scan with decoupled
//! look-back (Merrill & Garland), as a step-by-step model of what each GPU
//! workgroup does, so that its correctness and freedom from deadlock can be
//! tested under any interleaving of the memory operations.
//!
//! Every block (one workgroup iteration, see [`super::lanes::Geometry`]) has
//! one status element, zero (pending) at the start. Block `b` with a code of
//! `len` bits:
//!
//! 1. **publishes** its aggregate `A(len)` right after its own scan, before it
//!    waits on anything (block 0 publishes its inclusive prefix `P(len)`);
//! 2. **looks back** in windows of `window` predecessors (the lanes of one
//!    subgroup: lane `k` reads block `end - 1 - k`), from `end = b` down: it
//!    finds the nearest published prefix in the window (blocks before 0 count
//!    as `P(0)`); if every block from `end - 1` down to that one is at least
//!    `A`, it adds their aggregates and that prefix and is done; with no
//!    prefix in the window, and none pending, it adds all the window's
//!    aggregates and moves the window back; any pending block in the range
//!    it needs makes it read the same window again (a spin);
//! 3. **publishes** its inclusive prefix `P(exclusive + len)` (blocks > 0).
//!
//! Blocks take their index from an atomic ticket, so when block `b` waits on
//! a pending block, that block has started, and step 1 comes before any wait
//! of its own: every wait ends, whatever the scheduler (lavapipe runs
//! workgroups as coroutines on a few threads). One status element per block,
//! written twice, replaces the earlier scheme's adds into up to 32 elements
//! per block; a look-back over `window` blocks costs one round of parallel
//! reads.
//!
//! [`ScanMemory`] has two layouts. With 64-bit atomics each block's status is
//! one `u64`: state in bits 62..64 ([`AGGREGATE_64`], [`PREFIX_64`]), value
//! below. The 32-bit fallback keeps the aggregate in one word with a valid
//! bit (an aggregate is < 2^31 bits for every geometry) and the inclusive
//! prefix (up to 2^62) in two write-once words of 31 payload bits and a
//! valid bit each, so that a reader never needs ordering between two memory
//! locations: every state it can observe is final.

/// 64-bit layout: the element holds the block's aggregate.
pub const AGGREGATE_64: u64 = 1 << 62;
/// 64-bit layout: the element holds the block's inclusive prefix.
pub const PREFIX_64: u64 = 1 << 63;
/// 64-bit layout: the value bits.
pub const VALUE_MASK_64: u64 = AGGREGATE_64 - 1;
/// 32-bit layout: valid bit of the aggregate word and of both prefix words.
pub const VALID_32: u32 = 1 << 31;

/// What one block's status says during look-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    /// Not published yet.
    Pending,
    /// The block's own code length.
    Aggregate(u64),
    /// The inclusive prefix of everything up to the block's end.
    Prefix(u64),
}

/// The memory operations of the scan on one layout; each is one atomic
/// access per word on the GPU.
pub trait ScanMemory {
    /// Publishes block `block`'s aggregate.
    fn publish_aggregate(&mut self, block: usize, len: u64);
    /// Publishes block `block`'s inclusive prefix.
    fn publish_prefix(&mut self, block: usize, prefix: u64);
    /// Reads block `block`'s status.
    fn read(&self, block: usize) -> BlockState;
}

/// The 64-bit layout: one `u64` per block, zero-initialised.
#[derive(Debug)]
pub struct Cells64<'a>(pub &'a mut [u64]);

impl ScanMemory for Cells64<'_> {
    fn publish_aggregate(&mut self, block: usize, len: u64) {
        self.0[block] = AGGREGATE_64 | len;
    }
    fn publish_prefix(&mut self, block: usize, prefix: u64) {
        self.0[block] = PREFIX_64 | prefix;
    }
    fn read(&self, block: usize) -> BlockState {
        let v = self.0[block];
        if v & PREFIX_64 != 0 {
            BlockState::Prefix(v & VALUE_MASK_64)
        } else if v & AGGREGATE_64 != 0 {
            BlockState::Aggregate(v & VALUE_MASK_64)
        } else {
            BlockState::Pending
        }
    }
}

/// The 32-bit fallback, all words zero-initialised: one aggregate word per
/// block and two prefix words per block.
#[derive(Debug)]
pub struct Cells32<'a> {
    /// Per block: [`VALID_32`] | aggregate.
    pub aggregates: &'a mut [u32],
    /// Per block: low and high 31 bits of the inclusive prefix, each with
    /// [`VALID_32`] set once written.
    pub prefixes: &'a mut [u32],
}

impl ScanMemory for Cells32<'_> {
    fn publish_aggregate(&mut self, block: usize, len: u64) {
        self.aggregates[block] = VALID_32 | len as u32;
    }
    fn publish_prefix(&mut self, block: usize, prefix: u64) {
        self.prefixes[2 * block] = VALID_32 | (prefix as u32 & !VALID_32);
        self.prefixes[2 * block + 1] = VALID_32 | ((prefix >> 31) as u32 & !VALID_32);
    }
    fn read(&self, block: usize) -> BlockState {
        let (lo, hi) = (self.prefixes[2 * block], self.prefixes[2 * block + 1]);
        if lo & hi & VALID_32 != 0 {
            let low = (lo & !VALID_32) as u64;
            let high = (hi & !VALID_32) as u64;
            return BlockState::Prefix(low | high << 31);
        }
        let a = self.aggregates[block];
        if a & VALID_32 != 0 {
            BlockState::Aggregate((a & !VALID_32) as u64)
        } else {
            BlockState::Pending
        }
    }
}

/// Result of one step of a block's scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A memory operation was done; more follow.
    Progress,
    /// A wait found its condition false (a spin iteration); try again later.
    Blocked,
    /// Finished: the exclusive prefix (bit position) of the block.
    Done(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    PublishAggregate,
    /// Look-back window ending (exclusive) at block `end`; `acc` holds the
    /// aggregates of the windows already passed.
    LookBack {
        end: usize,
        acc: u64,
    },
    PublishPrefix(u64),
    Done(u64),
}

/// One block's part of the scan, one window read or one publication per
/// [`BlockScan::step`].
#[derive(Debug, Clone)]
pub struct BlockScan {
    block: usize,
    len: u64,
    window: usize,
    phase: Phase,
}

impl BlockScan {
    /// Block `block` with a code of `len` bits, looking back over `window`
    /// blocks at a time (the subgroup size; at least 1).
    pub fn new(block: usize, len: u64, window: usize) -> Self {
        BlockScan {
            block,
            len,
            window: window.max(1),
            phase: Phase::PublishAggregate,
        }
    }

    /// The block this scan is for.
    pub fn block(&self) -> usize {
        self.block
    }

    /// Does the next step.
    pub fn step(&mut self, mem: &mut impl ScanMemory) -> Step {
        match self.phase {
            Phase::PublishAggregate => {
                if self.block == 0 {
                    mem.publish_prefix(0, self.len);
                    self.phase = Phase::Done(0);
                } else {
                    mem.publish_aggregate(self.block, self.len);
                    self.phase = Phase::LookBack {
                        end: self.block,
                        acc: 0,
                    };
                }
                Step::Progress
            }
            Phase::LookBack { end, acc } => {
                // Lane k reads block end - 1 - k; blocks before 0 are P(0).
                let mut sum = acc;
                for k in 0..self.window {
                    let state = match (end - 1).checked_sub(k) {
                        Some(b) => mem.read(b),
                        None => BlockState::Prefix(0),
                    };
                    match state {
                        BlockState::Pending => return Step::Blocked,
                        BlockState::Aggregate(a) => sum += a,
                        BlockState::Prefix(p) => {
                            self.phase = Phase::PublishPrefix(sum + p);
                            return Step::Progress;
                        }
                    }
                }
                // The window has no prefix, so end > window (block 0 is P).
                self.phase = Phase::LookBack {
                    end: end - self.window,
                    acc: sum,
                };
                Step::Progress
            }
            Phase::PublishPrefix(exclusive) => {
                mem.publish_prefix(self.block, exclusive + self.len);
                self.phase = Phase::Done(exclusive);
                Step::Progress
            }
            Phase::Done(exclusive) => Step::Done(exclusive),
        }
    }
}

/// Runs every block's scan in block order (each to completion, which never
/// blocks in this order) and writes each block's exclusive prefix to
/// `positions`. The sequential driver of the lane model.
pub fn scan_in_order(
    mem: &mut impl ScanMemory,
    lens: &[u64],
    window: usize,
    positions: &mut [u64],
) {
    for (b, (&len, pos)) in lens.iter().zip(positions.iter_mut()).enumerate() {
        let mut scan = BlockScan::new(b, len, window);
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
    /// scheduler advances one of them by one step at a time. Fails if every
    /// worker is blocked (a deadlock).
    fn run_interleaved(
        mem: &mut impl ScanMemory,
        lens: &[u64],
        workers: usize,
        window: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<u64> {
        let mut positions = vec![u64::MAX; lens.len()];
        let mut ticket = 0usize;
        let mut running: Vec<Option<BlockScan>> = vec![None; workers];
        loop {
            for slot in running.iter_mut().filter(|s| s.is_none()) {
                if ticket < lens.len() {
                    *slot = Some(BlockScan::new(ticket, lens[ticket], window));
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
                        positions[scan.block()] = p;
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
        for round in 0..300 {
            let blocks = rng.random_range(1..200);
            let lens: Vec<u64> = (0..blocks).map(|_| rng.random_range(32..786_433)).collect();
            let workers = rng.random_range(1..40);
            let window = [1, 4, 8, 16, 32, 64][rng.random_range(0..6)];
            let want = expected(&lens);
            let mut cells = vec![0u64; blocks];
            let got = run_interleaved(&mut Cells64(&mut cells), &lens, workers, window, &mut rng);
            assert_eq!(got, want, "64-bit, round {round}, window {window}");
            let mut aggregates = vec![0u32; blocks];
            let mut prefixes = vec![0u32; 2 * blocks];
            let mut mem = Cells32 {
                aggregates: &mut aggregates,
                prefixes: &mut prefixes,
            };
            let got = run_interleaved(&mut mem, &lens, workers, window, &mut rng);
            assert_eq!(got, want, "32-bit, round {round}, window {window}");
        }
    }

    #[test]
    fn waits_only_on_pending_predecessors() {
        // Block 5 with blocks 3 and 4 published as aggregates and block 2
        // pending spins in a window of 4, ends once block 2 publishes.
        let mut cells = vec![0u64; 6];
        let mut mem = Cells64(&mut cells);
        mem.publish_prefix(1, 100);
        mem.publish_aggregate(3, 7);
        mem.publish_aggregate(4, 9);
        let mut scan = BlockScan::new(5, 11, 4);
        assert_eq!(scan.step(&mut mem), Step::Progress); // publishes A(11)
        assert_eq!(mem.read(5), BlockState::Aggregate(11));
        assert_eq!(scan.step(&mut mem), Step::Blocked);
        assert_eq!(scan.step(&mut mem), Step::Blocked);
        mem.publish_aggregate(2, 5);
        assert_eq!(scan.step(&mut mem), Step::Progress);
        assert_eq!(scan.step(&mut mem), Step::Progress); // publishes P
        assert_eq!(scan.step(&mut mem), Step::Done(100 + 5 + 7 + 9));
        assert_eq!(mem.read(5), BlockState::Prefix(100 + 5 + 7 + 9 + 11));
    }

    #[test]
    fn in_order_driver_and_large_prefixes() {
        // Prefixes above 2^32 bits in both layouts (the 32-bit one splits them).
        let lens = vec![786_432u64; 6000];
        for window in [1, 8, 32] {
            let mut pos = vec![0u64; lens.len()];
            let mut cells = vec![0u64; lens.len()];
            scan_in_order(&mut Cells64(&mut cells), &lens, window, &mut pos);
            assert_eq!(pos, expected(&lens));
            let mut pos = vec![0u64; lens.len()];
            let mut aggregates = vec![0u32; lens.len()];
            let mut prefixes = vec![0u32; 2 * lens.len()];
            let mut mem = Cells32 {
                aggregates: &mut aggregates,
                prefixes: &mut prefixes,
            };
            scan_in_order(&mut mem, &lens, window, &mut pos);
            assert_eq!(pos, expected(&lens));
            mem.publish_prefix(0, (1 << 40) + 12345);
            assert_eq!(mem.read(0), BlockState::Prefix((1 << 40) + 12345));
        }
    }
}
