//! BPC-PaCo on all CPU cores: rayon over codeblocks, each coded by
//! [`wavelane_core::bpc`]. Same bytes as the sequential core form and as
//! the GPU.

use rayon::prelude::*;
use wavelane_core::bpc::{
    self, codeword_bound, nonzero_count, symbol_count, BitPlanes, CodingParams, PassRecord,
    ProbabilityTables, Scratch, MAX_HEIGHT, MAX_PASSES,
};

use super::cuts::{cut_candidates, CutCandidates};
use super::{BpcError, CodeblockBatch, EncodedBatch};

mod decode;
pub use decode::{decode, decode_with_limits};

/// Which core form codes each codeblock (both give the same bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoreForm {
    /// [`bpc::encode_sequential`] / [`bpc::decode_phases`] (the canonical
    /// order, the faster on CPUs; without records the encoder reads the
    /// bits from [`bpc::encode_sequential_planes`]' planes, and
    /// [`bpc::decode_phases`] decodes like
    /// [`bpc::decode_sequential`], all lanes of a phase at once).
    #[default]
    Sequential,
    /// [`bpc::encode_lanes`] / [`bpc::decode_lanes`] with 32-lane subgroups.
    Lanes,
}

type BigScratch = Box<Scratch<MAX_HEIGHT>>;

fn scratch() -> BigScratch {
    Box::new(Scratch::new())
}

/// What a thread reuses from one codeblock to the next while encoding.
#[derive(Default)]
struct EncodeScratch {
    state: BigScratch,
    /// The codeblock's bit planes, for the encoder without distortion.
    planes: Box<BitPlanes<MAX_HEIGHT>>,
    /// Codeword buffer, grown to the largest bound seen.
    words: Vec<u16>,
}

/// Codeblocks per rayon leaf when encoding (see [`encode_blocks`]).
const ENCODE_LEAF_BLOCKS: usize = 4;

thread_local! {
    /// Each thread's [`EncodeScratch`], kept from one batch to the next;
    /// the trainer's counting walk borrows its state and planes too
    /// ([`with_walk_scratch`]).
    static ENCODE_SCRATCH: std::cell::RefCell<EncodeScratch> = Default::default();
}

/// Runs `f` with this thread's coding state and bit planes, the ones the
/// encoder reuses (for walks that code nothing, such as the trainer's
/// counting). `f` must not encode on this thread.
pub(crate) fn with_walk_scratch<R>(
    f: impl FnOnce(&mut Scratch<MAX_HEIGHT>, &mut BitPlanes<MAX_HEIGHT>) -> R,
) -> R {
    ENCODE_SCRATCH.with_borrow_mut(|s| f(&mut s.state, &mut s.planes))
}

/// One encoded codeblock.
struct Block {
    top: Option<u8>,
    words: Vec<u16>,
    records: Vec<PassRecord>,
    cuts: CutCandidates,
}

/// What the encoder reports besides the codewords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Nothing.
    None,
    /// The per-pass records without their distortion decreases (0): the
    /// pass ends only ([`bpc::WithoutDistortion`]).
    PassEnds,
    /// The per-pass records.
    Records,
    /// The records and the candidate cuts ([`CutCandidates`]).
    Cuts,
}

/// Collects the squared-error decrease (index units) of every truncation
/// of a codeblock's stream from the sequential encoder's trace: entry `m`
/// is what a decoder given the first `m` codewords removes (spec section
/// 8), for `m` below the codeword count (the whole stream removes the
/// block's energy, the sum of its records). Rate control gets the
/// candidates among them ([`cut_candidates`]).
#[derive(Default)]
struct CutTrace {
    cuts: Vec<i128>,
    decreased: i128,
}

impl bpc::SymbolObserver for CutTrace {
    const TRACE: bool = true;

    #[inline]
    fn symbol(&mut self, _: bpc::SymbolClass, _: u8, _: u8, _: bool) {}

    #[inline]
    fn slot(&mut self, _slot: u32) {
        self.cuts.push(self.decreased);
    }

    #[inline]
    fn decrease(&mut self, decrease: i64) {
        self.decreased += decrease as i128;
    }
}

crate::fastest! {
    /// [`bpc::encode_sequential_observed`], compiled for the CPU: with `()`
    /// the plain encoder, with a [`CutTrace`] the tracing one (which codes
    /// lane by lane; same bytes).
    fn encode_observed<O: bpc::SymbolObserver>(
        block: &bpc::Codeblock<'_>,
        params: &CodingParams<'_>,
        scratch: &mut Scratch<MAX_HEIGHT>,
        words: &mut [u16],
        records: Option<&mut [PassRecord]>,
        observer: &mut O,
    ) -> Result<bpc::Encoded, bpc::EncodeError> {
        bpc::encode_sequential_observed(block, params, scratch, words, records, observer)
    }
}

crate::fastest! {
    /// [`bpc::encode_sequential_planes`] without the distortion
    /// decreases, compiled for the CPU. Without the decreases the walk
    /// needs only the magnitudes' bits, which the planes give at one
    /// transpose per step instead of a mask per pass.
    fn encode_pass_ends(
        block: &bpc::Codeblock<'_>,
        params: &CodingParams<'_>,
        scratch: &mut Scratch<MAX_HEIGHT>,
        planes: &mut BitPlanes<MAX_HEIGHT>,
        words: &mut [u16],
        records: Option<&mut [PassRecord]>,
    ) -> Result<bpc::Encoded, bpc::EncodeError> {
        bpc::encode_sequential_planes(
            block,
            params,
            scratch,
            planes,
            words,
            records,
            &mut bpc::WithoutDistortion,
        )
    }
}

/// `min_probability` is `tables.min_probability()`, which scans every
/// table: computed once per batch rather than per codeblock.
fn encode_one(
    batch: &CodeblockBatch,
    i: usize,
    tables: &ProbabilityTables,
    min_probability: u8,
    form: CoreForm,
    detail: Detail,
    scratch: &mut EncodeScratch,
) -> Result<Block, BpcError> {
    let with_records = detail != Detail::None;
    let block = batch.block(i)?;
    let err = |source| BpcError::Encode { block: i, source };
    let top = bpc::most_significant_bitplane(&block).map_err(err)?;
    let symbols = symbol_count(block.width(), block.height(), top, nonzero_count(&block));
    // The bound is several times the usual size: code into the thread's
    // reused buffer (no fresh zeroed pages per block) and copy out what
    // was used.
    let bound = codeword_bound(block.width(), symbols, min_probability);
    if scratch.words.len() < bound {
        scratch.words.resize(bound, 0);
    }
    let words = &mut scratch.words[..bound];
    let mut records = [PassRecord::EMPTY; MAX_PASSES];
    let recs = with_records.then_some(&mut records[..]);
    let params = CodingParams::new(tables, batch.blocks[i].group);
    let (state, planes) = (&mut scratch.state, &mut scratch.planes);
    let mut trace = CutTrace::default();
    let enc = match (form, detail) {
        // Only the sequential form reports the symbols' order.
        (_, Detail::Cuts) => encode_observed(&block, &params, state, words, recs, &mut trace),
        // Only the sequential form leaves the decreases out. Without
        // records nothing needs them either, and the walk over the bit
        // planes is the cheaper one (a lossless single-layer file's
        // totals; docs/perf/codec.md, "The CPU encoder on the AVX2
        // development machine"): same bytes.
        (_, Detail::PassEnds) | (CoreForm::Sequential, Detail::None) => {
            encode_pass_ends(&block, &params, state, planes, words, recs)
        }
        (CoreForm::Sequential, _) => encode_observed(&block, &params, state, words, recs, &mut ()),
        (CoreForm::Lanes, _) => bpc::encode_lanes(&block, &params, state, words, recs, 32),
    }
    .map_err(err)?;
    let words = words[..enc.codewords].to_vec();
    let records = if with_records {
        records[..enc.passes].to_vec()
    } else {
        Vec::new()
    };
    let cuts = match detail {
        Detail::Cuts => cut_candidates(&records, &trace.cuts),
        _ => CutCandidates::default(),
    };
    Ok(Block {
        top: enc.top_bitplane,
        words,
        records,
        cuts,
    })
}

/// Every block's records and candidate cuts (empty where not asked for).
type Details = (Vec<Vec<PassRecord>>, Vec<CutCandidates>);

fn encode_blocks(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    form: CoreForm,
    detail: Detail,
) -> Result<(EncodedBatch, Details), BpcError> {
    let with_records = detail != Detail::None;
    let min_p = tables.min_probability();
    // Small leaves: a block's cost varies tenfold with its subband, and a
    // rayon leaf, once started, runs to its end on one thread; leaves of a
    // quarter of the batch per thread left one thread coding alone at the
    // end of the stage. The scratch is the
    // thread's own, so that many leaves do not mean many fresh buffers.
    let blocks: Vec<Result<Block, BpcError>> = (0..batch.len())
        .into_par_iter()
        .with_max_len(ENCODE_LEAF_BLOCKS)
        .map(|i| {
            ENCODE_SCRATCH.with_borrow_mut(|s| encode_one(batch, i, tables, min_p, form, detail, s))
        })
        .collect();
    // The error of the first failing codeblock, whatever the thread timing.
    let blocks: Vec<Block> = blocks.into_iter().collect::<Result<_, _>>()?;
    let mut out = EncodedBatch {
        tops: Vec::with_capacity(blocks.len()),
        offsets: Vec::with_capacity(blocks.len() + 1),
        codewords: Vec::with_capacity(blocks.iter().map(|b| b.words.len()).sum()),
    };
    out.offsets.push(0);
    let mut records = Vec::with_capacity(if with_records { blocks.len() } else { 0 });
    let mut cuts = Vec::with_capacity(if detail == Detail::Cuts {
        blocks.len()
    } else {
        0
    });
    for b in blocks {
        out.tops.push(b.top);
        out.codewords.extend_from_slice(&b.words);
        out.offsets.push(out.codewords.len());
        if with_records {
            records.push(b.records);
        }
        if detail == Detail::Cuts {
            cuts.push(b.cuts);
        }
    }
    Ok((out, (records, cuts)))
}

/// Encodes every codeblock of `batch` with `tables`.
pub fn encode(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    form: CoreForm,
) -> Result<EncodedBatch, BpcError> {
    encode_blocks(batch, tables, form, Detail::None).map(|(e, _)| e)
}

/// [`encode`] plus the per-pass records of every codeblock (for rate control).
pub fn encode_with_records(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    form: CoreForm,
) -> Result<(EncodedBatch, Vec<Vec<PassRecord>>), BpcError> {
    encode_blocks(batch, tables, form, Detail::Records).map(|(e, (records, _))| (e, records))
}

/// [`encode_with_records`] with every record's `distortion_decrease` 0,
/// which the encoder then does not compute: the pass ends only, for rate
/// control that keeps every pass. Always codes with the sequential form,
/// the one that can leave the decreases out.
pub fn encode_with_pass_ends(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> Result<(EncodedBatch, Vec<Vec<PassRecord>>), BpcError> {
    encode_blocks(batch, tables, CoreForm::Sequential, Detail::PassEnds)
        .map(|(e, (records, _))| (e, records))
}

/// [`encode_with_records`] plus every block's [`CutCandidates`] (for rate
/// control that truncates anywhere, not only at pass ends). Always codes
/// with the sequential form, the one that reports the symbols' order.
pub fn encode_with_cuts(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> Result<(EncodedBatch, Details), BpcError> {
    encode_blocks(batch, tables, CoreForm::Sequential, Detail::Cuts)
}

/// One codeblock coded on the CPU with its details: top bitplane,
/// codewords, pass records and (where asked for) cut decreases.
#[cfg(feature = "gpu")]
pub(crate) type BlockDetails = (Option<u8>, Vec<u16>, Vec<PassRecord>, CutCandidates);

/// The blocks `which` of `batch` coded on the CPU with their pass records
/// and, with `cuts`, their [`CutCandidates`] (sequential form): what the GPU
/// driver falls back to for codeblocks whose decreases could overflow its
/// 64-bit sums ([`super::gpu::records_fit`]).
#[cfg(feature = "gpu")]
pub(crate) fn block_details(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
    which: &[usize],
    cuts: bool,
) -> Result<Vec<BlockDetails>, BpcError> {
    let detail = if cuts { Detail::Cuts } else { Detail::Records };
    let min_p = tables.min_probability();
    which
        .par_iter()
        .map(|&i| {
            ENCODE_SCRATCH.with_borrow_mut(|s| {
                encode_one(batch, i, tables, min_p, CoreForm::Sequential, detail, s)
                    .map(|b| (b.top, b.words, b.records, b.cuts))
            })
        })
        .collect()
}
