//! Training probability tables from data, as the BPC-PaCo design does it
//! (docs/bpc-paco.md, "Training tables"): for every subband group, bitplane and context, the
//! probability that the coded symbol is 0, measured on a training set and
//! stored as `floor(P(0) * 128)`.
//!
//! The trainer runs the sequential encoder over every codeblock with a
//! [`SymbolObserver`] that counts symbols by (group, table, bitplane,
//! context). Which symbols are coded, and in which contexts, does not
//! depend on the probabilities, so one pass over the data suffices.
//! Probabilities are clamped to 1..=127: 0 would let one symbol exhaust a
//! codeword and 128 is not representable. Cells never seen stay at 64.

use std::sync::Mutex;

use image::DynamicImage;
use rayon::prelude::*;
use wavelane_core::bpc::{
    self, BitPlanes, CodingParams, GroupTables, Mode, PassKind, ProbabilityTables, Scratch,
    SymbolClass, SymbolObserver, GROUPS, MAX_HEIGHT, TABLE_BITPLANES,
};
use wavelane_core::dwt::{self, Cdf53, Fixed97, ImageLayout};

use super::{BlockDesc, BpcError, CodeblockBatch};

const CLASSES: usize = 5;
const CONTEXTS: usize = 9;
/// `[group][class][bitplane][context]` -> (zeros, total).
type Cells = [[[[(u64, u64); CONTEXTS]; TABLE_BITPLANES]; CLASSES]; GROUPS];

/// Stores to one cell of every 4 KiB page of freshly allocated `cells`.
///
/// A large zeroed allocation arrives as untouched pages that the kernel
/// maps to its shared zero page on the first read; counting reads a cell
/// before it writes it, so each page then takes a second fault whose
/// copy-on-write flushes the TLBs of every core running the process (an
/// inter-processor interrupt, a VM exit in a virtual machine). Counting on
/// two threads spent about half its time there. A store first maps each
/// page privately in one fault.
fn write_every_page(cells: &mut [(u64, u64)]) {
    const PER_PAGE: usize = 4096 / std::mem::size_of::<(u64, u64)>();
    for page in cells.chunks_mut(PER_PAGE) {
        // black_box: the compiler knows the allocation is zeroed and
        // would drop a plain store of zero.
        page[0] = std::hint::black_box((0, 0));
    }
}

/// The classes in the order of [`class_index`].
#[cfg(feature = "gpu")]
const CLASS_ORDER: [SymbolClass; CLASSES] = [
    SymbolClass::Significance,
    SymbolClass::Sign,
    SymbolClass::Refinement,
    SymbolClass::CleanupSignificance,
    SymbolClass::CleanupSign,
];

fn class_index(c: SymbolClass) -> usize {
    match c {
        SymbolClass::Significance => 0,
        SymbolClass::Sign => 1,
        SymbolClass::Refinement => 2,
        SymbolClass::CleanupSignificance => 3,
        SymbolClass::CleanupSign => 4,
    }
}

/// Symbol statistics of a training set. Equal trainers have the same
/// mode and the same counts in every cell.
#[derive(Clone, PartialEq, Eq)]
pub struct Trainer {
    mode: Mode,
    cells: Box<Cells>,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("mode", &self.mode)
            .field("symbols", &self.symbols())
            .finish()
    }
}

/// Which symbols of a codeblock a [`Trainer`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockSymbols {
    /// None.
    None,
    /// All of them.
    All,
    /// Those of the passes up to and including this one (in coding order:
    /// bitplanes downwards, SPP, MRP, CP within a bitplane).
    Through {
        /// The last pass counted.
        kind: PassKind,
        /// Its bitplane.
        bitplane: u8,
    },
}

struct Observer<'a> {
    cells: &'a mut Cells,
    group: usize,
    /// The last pass counted, as `(bitplane, order of the pass within its
    /// bitplane)`; `None` counts every symbol.
    last: Option<(u8, u8)>,
}

/// Order of a pass within its bitplane (SPP, MRP, CP).
fn pass_order(kind: PassKind) -> u8 {
    match kind {
        PassKind::Significance => 0,
        PassKind::Refinement => 1,
        PassKind::Cleanup => 2,
    }
}

/// The pass a symbol class is coded in.
fn class_pass(class: SymbolClass) -> PassKind {
    match class {
        SymbolClass::Significance | SymbolClass::Sign => PassKind::Significance,
        SymbolClass::Refinement => PassKind::Refinement,
        SymbolClass::CleanupSignificance | SymbolClass::CleanupSign => PassKind::Cleanup,
    }
}

impl Observer<'_> {
    /// Whether the symbols of `class` at `bitplane` are counted: those of
    /// the passes up to and including `last`. A phase of the walk lies in
    /// one pass (one class, one bitplane), so this decides for whole
    /// phases as exactly as for single symbols.
    #[inline(always)]
    fn counted(&self, class: SymbolClass, bitplane: u8) -> bool {
        (bitplane as usize) < TABLE_BITPLANES
            && match self.last {
                None => true,
                // Bitplanes run downwards, passes upwards within a bitplane.
                Some((j, order)) => {
                    bitplane > j || bitplane == j && pass_order(class_pass(class)) <= order
                }
            }
    }
}

impl SymbolObserver for Observer<'_> {
    fn symbol(&mut self, class: SymbolClass, bitplane: u8, context: u8, symbol: bool) {
        if self.counted(class, bitplane) {
            let cell = &mut self.cells[self.group][class_index(class)][bitplane as usize]
                [context as usize];
            cell.0 += !symbol as u64;
            cell.1 += 1;
        }
    }

    /// A popcount per context instead of an update per symbol: the
    /// encoder's walk reports whole phases, and consecutive symbols of one
    /// context would otherwise wait on each other's counter update. The
    /// pass cut-off (`last`) applies to the whole phase, which lies in one
    /// pass: the counts equal [`Self::symbol`]'s (tested).
    #[inline]
    fn phase(&mut self, class: SymbolClass, bitplane: u8, by_context: &[u32], ones: u32) {
        if self.counted(class, bitplane) {
            let row = &mut self.cells[self.group][class_index(class)][bitplane as usize];
            for (cell, &lanes) in row.iter_mut().zip(by_context) {
                cell.0 += (lanes & !ones).count_ones() as u64;
                cell.1 += lanes.count_ones() as u64;
            }
        }
    }
}

crate::fastest! {
    /// [`bpc::observe_symbols_planes`] into `observer`, compiled for the
    /// CPU: the counts are popcounts of lane masks, which want its
    /// popcount instruction.
    fn count_block(
        block: &bpc::Codeblock<'_>,
        params: &CodingParams<'_>,
        state: &mut Scratch<MAX_HEIGHT>,
        planes: &mut BitPlanes<MAX_HEIGHT>,
        observer: &mut Observer<'_>,
    ) -> Result<bpc::Encoded, bpc::EncodeError> {
        bpc::observe_symbols_planes(block, params, state, planes, observer)
    }
}

/// Codeblocks per rayon leaf when counting (see [`Trainer::add_batch_selected`]).
const FIT_LEAF_BLOCKS: usize = 4;

impl Trainer {
    /// An empty trainer for `mode`.
    pub fn new(mode: Mode) -> Self {
        let mut cells = Box::new([[[[(0, 0); CONTEXTS]; TABLE_BITPLANES]; CLASSES]; GROUPS]);
        write_every_page(
            cells
                .as_flattened_mut()
                .as_flattened_mut()
                .as_flattened_mut(),
        );
        Trainer { mode, cells }
    }

    /// A trainer for `mode` whose cell `(group, class, bitplane, context)`
    /// holds `count(...)`'s `(zeros, total)` (the device's counts,
    /// [`crate::bpc::gpu::counts`]), for groups below [`GROUPS`], bitplanes
    /// below [`TABLE_BITPLANES`] and contexts 0..=8.
    #[cfg(feature = "gpu")]
    pub(crate) fn from_cells(
        mode: Mode,
        mut count: impl FnMut(usize, SymbolClass, usize, usize) -> (u64, u64),
    ) -> Self {
        let mut t = Trainer::new(mode);
        for (g, group) in t.cells.iter_mut().enumerate() {
            for (class, cells) in CLASS_ORDER.into_iter().zip(group.iter_mut()) {
                for (j, row) in cells.iter_mut().enumerate() {
                    for (k, cell) in row.iter_mut().enumerate() {
                        *cell = count(g, class, j, k);
                    }
                }
            }
        }
        t
    }

    /// Symbols counted so far (bitplanes 0..=14).
    pub fn symbols(&self) -> u64 {
        self.cells
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .map(|c| c.1)
            .sum()
    }

    /// `(zeros, total)` symbols counted in one cell (bitplanes 0..=14,
    /// contexts 0..=8; sign contexts 0..=3, refinement context 0).
    pub fn counts(
        &self,
        group: usize,
        class: SymbolClass,
        bitplane: usize,
        context: usize,
    ) -> (u64, u64) {
        self.cells[group][class_index(class)][bitplane][context]
    }

    /// The coding mode the symbols were counted for.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Adds `other`'s counts to these (flat slices, so that the adds
    /// vectorize).
    fn add(&mut self, other: &Trainer) {
        let theirs = other.cells.as_flattened().as_flattened().as_flattened();
        let mine = self
            .cells
            .as_flattened_mut()
            .as_flattened_mut()
            .as_flattened_mut();
        for (a, b) in mine.iter_mut().zip(theirs) {
            a.0 += b.0;
            a.1 += b.1;
        }
    }

    /// Counts the symbols of every codeblock of `batch` (on all cores).
    pub fn add_batch(&mut self, batch: &CodeblockBatch) -> Result<(), BpcError> {
        self.add_batch_sampled(batch, 1)
    }

    /// Counts the symbols of about one codeblock in `every` of `batch`
    /// (those [`sampled`] picks): statistics at a fraction of the cost.
    pub fn add_batch_sampled(
        &mut self,
        batch: &CodeblockBatch,
        every: usize,
    ) -> Result<(), BpcError> {
        if let Some(counted) = Self::count(self.mode, batch, &sample_selection(batch, every))? {
            self.add(&counted);
        }
        Ok(())
    }

    /// A trainer for `mode` that counted the symbols of about one codeblock
    /// in `every` of `batch` ([`Trainer::add_batch_sampled`] into a new
    /// trainer, without the new trainer's 170 KB to zero and add into).
    pub fn of_batch_sampled(
        mode: Mode,
        batch: &CodeblockBatch,
        every: usize,
    ) -> Result<Self, BpcError> {
        let counted = Self::count(mode, batch, &sample_selection(batch, every))?;
        Ok(counted.unwrap_or_else(|| Trainer::new(mode)))
    }

    /// A trainer for `mode` that counted, of every codeblock `i` of
    /// `batch`, the symbols `which[i]` selects
    /// ([`Trainer::add_batch_selected`] into a new trainer, without the
    /// new trainer's 170 KB to zero and add into).
    pub fn of_batch_selected(
        mode: Mode,
        batch: &CodeblockBatch,
        which: &[BlockSymbols],
    ) -> Result<Self, BpcError> {
        let counted = Self::count(mode, batch, which)?;
        Ok(counted.unwrap_or_else(|| Trainer::new(mode)))
    }

    /// Counts, of every codeblock `i` of `batch`, the symbols `which[i]`
    /// selects (the lossy table fit counts those a truncated file codes).
    ///
    /// Errors: as [`Trainer::add_batch`]; [`BpcError::Mismatch`] when
    /// `which` does not have one entry per block.
    pub fn add_batch_selected(
        &mut self,
        batch: &CodeblockBatch,
        which: &[BlockSymbols],
    ) -> Result<(), BpcError> {
        if let Some(counted) = Self::count(self.mode, batch, which)? {
            self.add(&counted);
        }
        Ok(())
    }

    /// The counts of [`Trainer::add_batch_selected`] in a trainer of their
    /// own (`None` where `which` selects nothing).
    fn count(
        mode: Mode,
        batch: &CodeblockBatch,
        which: &[BlockSymbols],
    ) -> Result<Option<Trainer>, BpcError> {
        batch.validate()?;
        if which.len() != batch.len() {
            return Err(BpcError::Mismatch(format!(
                "{} symbol selections for {} codeblocks",
                which.len(),
                batch.len()
            )));
        }
        let uniform = ProbabilityTables::uniform(mode);
        // One trainer (about 170 KB, zeroed and merged) per pool thread
        // that counts, made when it first does, rather than one per rayon
        // split: the leaves can then be a few blocks each, which keeps
        // both threads busy to the end (a block's cost varies tenfold with
        // its subband), and a thread only locks its own trainer.
        let threads = rayon::current_num_threads();
        let per_thread: Vec<Mutex<Option<Trainer>>> =
            (0..threads).map(|_| Mutex::new(None)).collect();
        (0..batch.len())
            .into_par_iter()
            .with_max_len(FIT_LEAF_BLOCKS)
            .filter(|&i| which[i] != BlockSymbols::None)
            .try_for_each(|i| {
                let block = batch.block(i)?;
                let group = batch.blocks[i].group;
                let params = CodingParams::new(&uniform, group);
                let slot = rayon::current_thread_index().unwrap_or(0) % threads;
                let mut trainer = per_thread[slot].lock().unwrap_or_else(|e| e.into_inner());
                let t = trainer.get_or_insert_with(|| Trainer::new(mode));
                let mut observer = Observer {
                    cells: &mut t.cells,
                    group,
                    last: match which[i] {
                        BlockSymbols::Through { kind, bitplane } => {
                            Some((bitplane, pass_order(kind)))
                        }
                        _ => None,
                    },
                };
                // Counting needs the symbols, not their coding; the
                // counts are popcounts of lane masks, which want the
                // CPU's popcount instruction.
                // The thread's encoder scratch: counting codes nothing.
                super::cpu::with_walk_scratch(|state, planes| {
                    count_block(&block, &params, state, planes, &mut observer)
                        .map_err(|source| BpcError::Encode { block: i, source })
                })?;
                Ok::<_, BpcError>(())
            })?;
        let mut counted = per_thread
            .into_iter()
            .filter_map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner()));
        let first = counted.next();
        Ok(first.map(|mut all| {
            for t in counted {
                all.add(&t);
            }
            all
        }))
    }

    /// The tables: per cell the [`cheapest_probability`] of its counts (64
    /// where no symbol was seen).
    // j and k index the counts and several table arrays in parallel.
    #[allow(clippy::needless_range_loop)]
    pub fn tables(&self) -> ProbabilityTables {
        let p = |(zeros, total): (u64, u64)| cheapest_probability(zeros, total);
        let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
        for (g, dst) in groups.iter_mut().enumerate() {
            let c = &self.cells[g];
            for j in 0..TABLE_BITPLANES {
                for k in 0..CONTEXTS {
                    dst.sig[j][k] = p(c[0][j][k]);
                    if self.mode == Mode::ThreePass {
                        dst.cp_sig[j][k] = p(c[3][j][k]);
                    }
                }
                for k in 0..4 {
                    dst.sign[j][k] = p(c[1][j][k]);
                    if self.mode == Mode::ThreePass {
                        dst.cp_sign[j][k] = p(c[4][j][k]);
                    }
                }
                dst.refine[j] = p(c[2][j][0]);
            }
        }
        ProbabilityTables::new(self.mode, groups).expect("trained values are at most 127")
    }
}

/// Whether codeblock `i` is among the about one in `every` that
/// [`Trainer::add_batch_sampled`] counts: a hash of `i`, so that no period
/// of the block order (components, subbands, columns of blocks) lines up
/// with the sample. Block 0 is always counted; `every <= 1` counts all.
pub fn sampled(i: usize, every: usize) -> bool {
    let hash = (i as u32).wrapping_mul(0x9E37_79B9).rotate_right(16);
    every <= 1 || hash.is_multiple_of(every as u32)
}

/// Bits a symbol costs at the ideal code length when coded with the 7-bit
/// probability `p` of a zero (the true probability clamped to
/// `1/256..=255/256`, so that 0 stays finite): `(zero, one)`. A table,
/// because the table fit evaluates every counted cell at several
/// probabilities on one thread before the coding can start, and two
/// logarithms per evaluation were half of that time (0.5 ms on a 384²
/// gray image).
pub fn symbol_bits(p: u8) -> (f64, f64) {
    static TABLE: std::sync::LazyLock<[(f64, f64); 128]> = std::sync::LazyLock::new(|| {
        std::array::from_fn(|p| {
            let p0 = (p as f64 / 128.0).clamp(1.0 / 256.0, 255.0 / 256.0);
            (-p0.log2(), -(1.0 - p0).log2())
        })
    });
    TABLE[(p & 127) as usize]
}

/// Ideal code length of `zeros` zeros among `total` symbols coded with
/// 7-bit probability `p` of a zero ([`symbol_bits`]; `p` at most 127).
pub fn code_length(zeros: u64, total: u64, p: u8) -> f64 {
    let (zero, one) = symbol_bits(p);
    zeros as f64 * zero + (total - zeros) as f64 * one
}

/// One entry per codeblock of `batch`: all its symbols where [`sampled`]
/// picks it (one block in about `every`), none elsewhere.
fn sample_selection(batch: &CodeblockBatch, every: usize) -> Vec<BlockSymbols> {
    (0..batch.len())
        .map(|i| match sampled(i, every) {
            true => BlockSymbols::All,
            false => BlockSymbols::None,
        })
        .collect()
}

/// The 7-bit probability that codes `zeros` zeros among `total` symbols in
/// the fewest bits: `floor` or `ceil` of `128 * zeros / total` (the code
/// length is convex in the probability), clamped to 1..=127; 64 when
/// `total` is 0. Plain flooring of the measured probability biases every
/// cell toward the symbol 1.
pub fn cheapest_probability(zeros: u64, total: u64) -> u8 {
    if total == 0 {
        return 64;
    }
    let floor = (zeros * 128 / total).clamp(1, 127) as u8;
    let ceil = (floor + 1).min(127);
    if code_length(zeros, total, ceil) < code_length(zeros, total, floor) {
        ceil
    } else {
        floor
    }
}

/// Wavelet for image training.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrainWavelet {
    /// Reversible CDF 5/3 (the lossless codec path).
    Cdf53,
    /// Fixed-point CDF 9/7 (the lossy codec path).
    Fixed97,
}

/// How images become codeblocks for training.
#[derive(Debug, Clone, Copy)]
pub struct ImageTraining {
    /// The transform.
    pub wavelet: TrainWavelet,
    /// Decomposition levels (clamped to what the image size allows).
    pub levels: u32,
    /// Quantization step: coefficient `c` becomes `sign(c) floor(|c| / step)`.
    pub step: f64,
    /// Codeblock height (width is 64).
    pub codeblock_height: usize,
}

/// The quantized codeblocks of an image's luma (8-bit images shifted to
/// signed, 16-bit images by 2^15), transformed and cut as the codec does:
/// 64-wide codeblocks of `codeblock_height` rows per subband.
pub fn image_codeblocks(
    image: &DynamicImage,
    opt: &ImageTraining,
) -> Result<CodeblockBatch, BpcError> {
    let bad = |m: String| BpcError::Format(m);
    if !opt.step.is_finite()
        || opt.step <= 0.0
        || opt.codeblock_height == 0
        || opt.codeblock_height > MAX_HEIGHT
    {
        return Err(bad(
            "the step must be positive and the codeblock height 1..=256".into(),
        ));
    }
    let luma = image.to_luma16();
    let (w, h) = (luma.width() as usize, luma.height() as usize);
    let eight_bit = image.color().bits_per_pixel() / image.color().channel_count() as u16 <= 8;
    let mut samples: Vec<i32> = luma
        .as_raw()
        .iter()
        .map(|&s| {
            if eight_bit {
                (s >> 8) as i32 - 128
            } else {
                s as i32 - 32768
            }
        })
        .collect();
    let levels = opt.levels.min(dwt::max_levels(w, h));
    let mut scratch = vec![0i32; dwt::scratch_len_2d(w, h)];
    let layout = ImageLayout::new(w, h);
    match opt.wavelet {
        TrainWavelet::Cdf53 => dwt::forward_2d::<Cdf53>(&mut samples, layout, levels, &mut scratch),
        TrainWavelet::Fixed97 => {
            dwt::forward_2d::<Fixed97>(&mut samples, layout, levels, &mut scratch)
        }
    }
    .map_err(|e| bad(format!("wavelet transform: {e:?}")))?;
    let mut batch = CodeblockBatch::default();
    for band in dwt::subbands(w, h, levels).map_err(|e| bad(format!("subbands: {e:?}")))? {
        let r = band.rect;
        let group = bpc::group_index(band.level, core_orientation(band.orientation));
        for y0 in (0..r.height).step_by(opt.codeblock_height) {
            for x0 in (0..r.width).step_by(bpc::MAX_WIDTH) {
                let (bw, bh) = (
                    (r.width - x0).min(64),
                    (r.height - y0).min(opt.codeblock_height),
                );
                let offset = batch.coefficients.len();
                for y in 0..bh {
                    let row = (r.y + y0 + y) * w + r.x + x0;
                    batch.coefficients.extend(
                        samples[row..row + bw]
                            .iter()
                            .map(|&c| quantize(c, opt.step)),
                    );
                }
                batch.blocks.push(BlockDesc {
                    offset,
                    stride: bw,
                    width: bw,
                    height: bh,
                    group,
                });
            }
        }
    }
    Ok(batch)
}

fn core_orientation(o: dwt::Orientation) -> bpc::Orientation {
    match o {
        dwt::Orientation::HL => bpc::Orientation::HL,
        dwt::Orientation::LH => bpc::Orientation::LH,
        dwt::Orientation::HH => bpc::Orientation::HH,
        dwt::Orientation::LL => bpc::Orientation::LL,
    }
}

fn quantize(c: i32, step: f64) -> i32 {
    let q = (c.unsigned_abs() as f64 / step)
        .floor()
        .min(((1 << bpc::COEFFICIENT_BITS) - 1) as f64) as i32;
    if c < 0 {
        -q
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One coefficient 1 in group 0, 2-pass: the only symbols are a
    /// significance 1 at bitplane 0, context 0, and a sign 0 in sign context 0.
    #[test]
    fn a_single_coefficient_trains_two_cells() {
        let batch = CodeblockBatch::one(vec![1], 1, 0);
        let mut t = Trainer::new(Mode::TwoPass);
        t.add_batch(&batch).unwrap();
        assert_eq!(t.symbols(), 2);
        let tables = t.tables();
        let mut want = GroupTables::UNIFORM;
        want.sig[0][0] = 1; // P(0) = 0, clamped
        want.sign[0][0] = 127; // P(0) = 1, clamped
        assert_eq!(tables.groups()[0], want);
        assert!(tables.groups()[1..]
            .iter()
            .all(|g| *g == GroupTables::UNIFORM));
    }

    /// Counting through a pass counts the symbols of that pass and the ones
    /// before it, in coding order, and nothing after; `All` is `add_batch`.
    #[test]
    fn selected_passes_count_a_prefix_of_the_symbols() {
        // 3-pass, M = 2: CP 2, then SPP, MRP, CP of bitplanes 1 and 0.
        let coefficients: Vec<i32> = (0..64 * 4).map(|i| [0, 5, -3, 1, 0, 0, 2][i % 7]).collect();
        let batch = CodeblockBatch::one(coefficients, 64, 3);
        let count = |which: BlockSymbols| {
            let mut t = Trainer::new(Mode::ThreePass);
            t.add_batch_selected(&batch, &[which]).unwrap();
            t
        };
        let mut all = Trainer::new(Mode::ThreePass);
        all.add_batch(&batch).unwrap();
        assert_eq!(count(BlockSymbols::All).symbols(), all.symbols());
        assert_eq!(count(BlockSymbols::None).symbols(), 0);
        let through = |kind, bitplane| count(BlockSymbols::Through { kind, bitplane });
        let top = through(PassKind::Cleanup, 2);
        // The top pass codes every coefficient once, plus the signs of the
        // newly significant (|v| >= 4).
        let at_top = 64 * 4 + (0..64 * 4).filter(|i| i % 7 == 1).count() as u64;
        assert_eq!(top.symbols(), at_top);
        let order = [
            (PassKind::Cleanup, 2),
            (PassKind::Significance, 1),
            (PassKind::Refinement, 1),
            (PassKind::Cleanup, 1),
            (PassKind::Significance, 0),
            (PassKind::Refinement, 0),
            (PassKind::Cleanup, 0),
        ];
        let counts: Vec<u64> = order
            .iter()
            .map(|&(k, j)| through(k, j).symbols())
            .collect();
        assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
        assert_eq!(*counts.last().unwrap(), all.symbols());
        // Bitplane 1's refinement symbols appear once its MRP is counted.
        let refine_1 = |t: &Trainer| t.counts(3, SymbolClass::Refinement, 1, 0).1;
        assert_eq!(refine_1(&through(PassKind::Significance, 1)), 0);
        assert!(refine_1(&through(PassKind::Refinement, 1)) > 0);
        // One selection per block.
        let mut t = Trainer::new(Mode::ThreePass);
        assert!(t.add_batch_selected(&batch, &[]).is_err());
    }

    /// Reports every symbol on its own to an [`Observer`] (the trait's
    /// default `phase` splits phases into symbols): the per-symbol counting
    /// the popcounts of whole phases must equal.
    struct PerSymbol<'a, 'b>(&'a mut Observer<'b>);

    impl SymbolObserver for PerSymbol<'_, '_> {
        fn symbol(&mut self, class: SymbolClass, bitplane: u8, context: u8, symbol: bool) {
            self.0.symbol(class, bitplane, context, symbol);
        }
    }

    proptest::proptest! {
        /// The trainer's counts by popcounts of whole phases (through the
        /// runtime-dispatched `count_block`) equal its counts symbol by
        /// symbol, with and without a pass cut-off (the lossy fit's).
        #[test]
        fn phase_counts_equal_symbol_counts_through_any_pass(
            seed in proptest::prelude::any::<u64>(),
            width in 1usize..=64,
            height in 1usize..=40,
            three_pass in proptest::prelude::any::<bool>(),
            group in 0usize..GROUPS,
            last in proptest::option::of((0u8..3, 0u8..12)),
        ) {
            // Sparse, mixed-magnitude coefficients (an xorshift stream):
            // every pass kind codes something on some bitplanes.
            let mut state = seed | 1;
            let data: Vec<i32> = (0..width * height)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let bits = (state >> 40) as u32 % 12;
                    let v = ((state & 0xffff) as i32) & ((1 << bits) - 1);
                    match state >> 60 {
                        0..=5 => 0,
                        6..=10 => v,
                        _ => -v,
                    }
                })
                .collect();
            let mode = if three_pass { Mode::ThreePass } else { Mode::TwoPass };
            let tables = ProbabilityTables::uniform(mode);
            let params = CodingParams::new(&tables, group);
            let block = bpc::Codeblock::new(&data, width, width, height).unwrap();
            let last = last.map(|(k, j)| (j, k));
            let mut state = Box::new(Scratch::<MAX_HEIGHT>::new());
            let mut planes = Box::new(BitPlanes::<MAX_HEIGHT>::new());
            let mut fast = Trainer::new(mode);
            let mut observer = Observer { cells: &mut fast.cells, group, last };
            count_block(&block, &params, &mut state, &mut planes, &mut observer).unwrap();
            let mut slow = Trainer::new(mode);
            let mut observer = Observer { cells: &mut slow.cells, group, last };
            bpc::observe_symbols(&block, &params, &mut state, &mut PerSymbol(&mut observer))
                .unwrap();
            proptest::prop_assert!(fast.cells == slow.cells, "counts differ, last {:?}", last);
            // The cut-off counts a prefix of the symbols.
            let mut all = Trainer::new(mode);
            let mut observer = Observer { cells: &mut all.cells, group, last: None };
            count_block(&block, &params, &mut state, &mut planes, &mut observer).unwrap();
            proptest::prop_assert!(fast.symbols() <= all.symbols());
        }
    }

    #[test]
    fn probabilities_are_the_cheapest_for_the_counts() {
        // Row 0 is 0, 1, 0 and row 1 all zero; M = 0, every coefficient
        // codes one significance symbol.
        let batch = CodeblockBatch::one(vec![0, 1, 0, 0, 0, 0], 3, 4);
        let mut t = Trainer::new(Mode::TwoPass);
        t.add_batch(&batch).unwrap();
        let tables = t.tables();
        let g = &tables.groups()[4];
        // Context 0: step (0,0) codes 0 for columns 0 and 2, step (0,1)
        // codes 1 for column 1 (no significant neighbour yet): 2 zeros of 3.
        // Row 1: all three see the significant (0, 1): context 1, zeros.
        assert_eq!(g.sig[0][0], cheapest_probability(2, 3));
        assert_eq!(g.sig[0][1], 127);
    }

    #[test]
    fn code_lengths_equal_the_logarithms_bit_for_bit() {
        // The fit's decisions (and so the files) must not depend on
        // whether a length came from the table or from log2.
        for p in 0..=127u8 {
            let p0 = (p as f64 / 128.0).clamp(1.0 / 256.0, 255.0 / 256.0);
            for (zeros, total) in [(0, 0), (0, 7), (7, 7), (3, 10), (123_456, 987_654)] {
                let direct =
                    -(zeros as f64) * p0.log2() - (total - zeros) as f64 * (1.0 - p0).log2();
                assert_eq!(
                    code_length(zeros, total, p).to_bits(),
                    direct.to_bits(),
                    "p {p}"
                );
            }
        }
        assert_eq!(code_length(1, 2, 64), 2.0);
    }

    #[test]
    fn cheapest_probability_beats_its_neighbours() {
        let bits = |zeros: u64, total: u64, p: u8| {
            let p0 = p as f64 / 128.0;
            -(zeros as f64) * p0.log2() - (total - zeros) as f64 * (1.0 - p0).log2()
        };
        for total in 1..60u64 {
            for zeros in 0..=total {
                let p = cheapest_probability(zeros, total);
                assert!((1..=127).contains(&p));
                for q in [p.saturating_sub(1).max(1), (p + 1).min(127)] {
                    assert!(bits(zeros, total, p) <= bits(zeros, total, q) + 1e-9);
                }
            }
        }
        assert_eq!(cheapest_probability(0, 0), 64);
        assert_eq!(cheapest_probability(0, 5), 1);
        assert_eq!(cheapest_probability(5, 5), 127);
        // An even split codes best at one half.
        assert_eq!(cheapest_probability(1, 2), 64);
    }

    #[test]
    fn sampling_counts_about_one_block_in_n_without_periods() {
        for every in [1, 2, 3, 4, 7] {
            let picked: Vec<usize> = (0..3000).filter(|&i| sampled(i, every)).collect();
            let share = picked.len() as f64 / 3000.0;
            assert!(
                (share - 1.0 / every as f64).abs() < 0.05,
                "{every}: {share}"
            );
            // Every residue class of the small periods is represented.
            for period in 2..=6 {
                for r in 0..period {
                    assert!(
                        picked.iter().any(|i| i % period == r),
                        "{every} {period} {r}"
                    );
                }
            }
        }
        assert!(sampled(0, 4));
    }
}
