//! The encoder's driver: the two submissions of the module docs of
//! [`super`], with or without the rate-control records ([`super::records`]).

use vulkano::buffer::Subbuffer;
use wavelane_core::bpc::{EncodeError, ProbabilityTables};

use super::{
    build_for, check_range, flatten_tables, groups_for, three_pass, GpuTiming, Source, EMPTY,
    ENCODER, MAX_GROUPS, ORDER_BUCKETS, ORDER_WORKGROUP,
};
use crate::backend::gpu::{Dispatch, Gpu, GpuError};
use crate::bpc::{BpcError, CodeblockBatch, EncodedBatch};
use crate::shaders;

/// Encodes every codeblock of `batch` on `gpu`; the same result as
/// [`crate::bpc::cpu::encode`].
pub fn encode(
    gpu: &Gpu,
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> Result<(EncodedBatch, GpuTiming), BpcError> {
    encode_on_device(gpu, Source::Host(batch), tables, RecordsAsked::No).map(|(e, _, t)| (e, t))
}

/// Which rate-control records an encoding writes on the device
/// ([`super::records`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordsAsked {
    /// None: the plain encoder builds.
    No,
    /// The pass records.
    Passes,
    /// The pass records and the cut decreases.
    Cuts,
}

/// The records of an encoding, still on the device (layout in
/// [`super::records`]).
pub(crate) struct DeviceRecords {
    /// Four words (one `uvec4`) per pass, codeblock after codeblock.
    pub records: Subbuffer<[u32]>,
    /// Where each codeblock's records start, and their total at the end
    /// (from the codeblocks' top bitplanes).
    pub starts: Vec<u32>,
    /// The candidate cuts (none unless [`RecordsAsked::Cuts`]).
    pub cuts: Option<DeviceCuts>,
}

/// Every codeblock's candidate cuts ([`crate::bpc::cuts`]) on the device:
/// `bpc_cut_hull` flags them among the packed cut decreases, and
/// `bpc_cut_compact` gathers them, codeblock after codeblock.
pub(crate) struct DeviceCuts {
    /// Where each codeblock's candidates start.
    pub starts: Subbuffer<[u32]>,
    /// Element 0: the candidates of all codeblocks.
    pub total: Subbuffer<[u32]>,
    /// Each candidate's codeword count (the cut).
    pub slots: Subbuffer<[u32]>,
    /// Each candidate's decrease (index units).
    pub decreases: Subbuffer<[i64]>,
}

/// A coding's codewords left on the device: the packed stream, codeblock
/// `b`'s at `offsets[b]..offsets[b + 1]`. Rate control keeps a prefix of
/// each codeblock's, so only those prefixes need come down
/// ([`gather_prefixes`]).
#[derive(Clone)]
pub(crate) struct DeviceWords {
    /// The packed codewords.
    pub packed: Subbuffer<[u16]>,
    /// Where each codeblock's start, and their total at the end.
    pub offsets: Vec<usize>,
}

/// [`encode`] of the codeblocks of `source` (uploaded from the host, or
/// read in place from a device buffer), with the records `asked` written
/// on the device (the records build of the encoder, `bpc_encode_records`,
/// for any height and mode) and returned in device buffers.
pub(crate) fn encode_on_device(
    gpu: &Gpu,
    source: Source<'_>,
    tables: &ProbabilityTables,
    asked: RecordsAsked,
) -> Result<(EncodedBatch, Option<DeviceRecords>, GpuTiming), BpcError> {
    encode_keeping(gpu, source, tables, asked, false).map(|(e, r, _, t)| (e, r, t))
}

/// [`encode_on_device`], the codewords downloaded, or with `keep_words`
/// left on the device: the batch then has the tops and offsets but no
/// codewords, and the [`DeviceWords`] hold them.
pub(crate) fn encode_keeping(
    gpu: &Gpu,
    source: Source<'_>,
    tables: &ProbabilityTables,
    asked: RecordsAsked,
    keep_words: bool,
) -> Result<
    (
        EncodedBatch,
        Option<DeviceRecords>,
        Option<DeviceWords>,
        GpuTiming,
    ),
    BpcError,
> {
    let desc = source.descriptors()?;
    let n = source.len();
    if n == 0 {
        return Ok((
            EncodedBatch {
                offsets: vec![0],
                ..Default::default()
            },
            None,
            None,
            GpuTiming::default(),
        ));
    }
    check_range(gpu, "the coefficients", source.coefficients_len() * 4)?;
    let coefficients = &source.coefficients_on(gpu)?;
    let blocks = gpu.upload(&desc)?;
    let table_buf = gpu.upload(&flatten_tables(tables))?;
    let measured = Measured::new(gpu, n)?;
    // Submission 1: M and capacities, scanned into scratch offsets; the
    // coding order (heaviest codeblocks first).
    let mut run1 = measured
        .dispatches(coefficients, &blocks, tables.min_probability())
        .to_vec();
    let Measured {
        tops,
        caps,
        scratch_offsets,
        status,
        order,
        ..
    } = measured;
    let mut timing = GpuTiming::default();
    let scan1 = gpu.scan_scratch(n as u32)?;
    run1.extend(gpu.scan_dispatches(&scratch_offsets, n as u32, &scan1)?);
    timing.add(gpu.run(&run1)?);
    let capacity = total_of(gpu, &scan1.result, &caps, n)?;
    // The tops are final after the measure (the coders only read them):
    // read once, for the records' sizes and the result.
    let top_words = gpu.download(&tops)?;
    // Each codeblock's records, sized from its top bitplane.
    let record_starts = match asked {
        RecordsAsked::No => Vec::new(),
        _ => record_starts(&top_words, tables.mode()),
    };
    let record_count = record_starts.last().copied().unwrap_or(0) as u64;
    check_range(gpu, "the pass records", record_count * 16)?;
    check_range(gpu, "the encoder scratch", capacity * 2)?;
    let with_cuts = asked == RecordsAsked::Cuts;
    if with_cuts {
        check_range(gpu, "the cut decreases", capacity * 8)?;
    }

    // Submission 2: encode, scan the counts, pack.
    let scratch = gpu.uninit::<u16>(capacity.max(2))?;
    let counts = gpu.uninit::<u32>(n as u64)?;
    let packed = gpu.uninit::<u16>(capacity.max(2))?;
    let scan2 = gpu.scan_scratch(n as u32)?;
    let shader = if asked == RecordsAsked::No {
        build_for(&ENCODER, source.blocks(), tables)
    } else {
        &shaders::BPC_ENCODE_RECORDS
    };
    let mut encode = Dispatch::new(shader, [groups_for(n), 1, 1])
        .buffer(coefficients)
        .buffer(&blocks)
        .buffer(&table_buf)
        .buffer(&tops)
        .buffer(&caps)
        .buffer(&scratch_offsets)
        .buffer(&scratch)
        .buffer(&counts)
        .buffer(&status)
        .buffer(&order)
        .zeroing(&counts);
    // The records build's buffers: the records, and the cut decreases by
    // scratch slot (one word when not asked for: the shader bounds its
    // stores by the buffer's length).
    let mut device_records = None;
    let mut cut_scratch = None;
    let mut starts_buffer = None;
    if asked != RecordsAsked::No {
        let records = gpu.uninit::<u32>(4 * record_count.max(1))?;
        let cut_slots = if with_cuts { capacity.max(1) } else { 1 };
        let scratch_cuts = gpu.uninit::<i64>(cut_slots)?;
        let starts = gpu.upload(&record_starts)?;
        encode = encode
            .zeroing(&records)
            .buffer(&records)
            .buffer(&scratch_cuts)
            .buffer(&starts);
        cut_scratch = with_cuts.then_some(scratch_cuts);
        starts_buffer = Some(starts);
        device_records = Some(DeviceRecords {
            records,
            starts: record_starts,
            cuts: None,
        });
    }
    let mut run2 = vec![encode.push(&[n as u32, three_pass(tables)])];
    run2.extend(gpu.scan_dispatches(&counts, n as u32, &scan2)?);
    run2.push(
        Dispatch::new(&shaders::BPC_PACK, [groups_for(n), 1, 1])
            .buffer(&counts)
            .buffer(&scratch_offsets)
            .buffer(&scratch)
            .buffer(&scan2.result)
            .buffer(&packed)
            .push(&[n as u32]),
    );
    if let (Some(cut_scratch), Some(starts), Some(r)) =
        (&cut_scratch, &starts_buffer, &mut device_records)
    {
        let most_passes = r.starts.windows(2).map(|w| w[1] - w[0]).max();
        let (dispatches, cuts) = candidate_dispatches(
            gpu,
            CutInputs {
                records: &r.records,
                record_starts: starts,
                offsets: &counts,
                total: &scan2.result,
                scratch_offsets: &scratch_offsets,
                cut_scratch,
            },
            n,
            capacity,
            [n as u32, most_passes.unwrap_or(0)],
        )?;
        run2.extend(dispatches);
        r.cuts = Some(cuts);
    }
    timing.add(gpu.run(&run2)?);

    for (block, s) in gpu.download(&status)?.into_iter().enumerate() {
        match s {
            0 => {}
            2 => return Err(BpcError::Encode { block, source: EncodeError::CoefficientTooLarge }),
            other => {
                return Err(BpcError::Mismatch(format!(
                    "GPU encoder reported status {other} for codeblock {block} (1: descriptor, 3: scratch overflow, 4: subgroups too narrow for the records)"
                )))
            }
        }
    }
    let total = gpu.download(&scan2.result)?[0] as usize;
    if total as u64 > capacity {
        return Err(BpcError::Mismatch(format!(
            "the GPU encoder reported {total} codewords for a capacity of {capacity}"
        )));
    }
    let offsets: Vec<usize> = gpu
        .download(&counts)?
        .into_iter()
        .map(|o| o as usize)
        .chain([total])
        .collect();
    let tops = top_words
        .into_iter()
        .map(|t| (t != EMPTY).then_some(t as u8))
        .collect();
    if keep_words {
        if !offsets.windows(2).all(|w| w[0] <= w[1]) {
            return Err(BpcError::Mismatch(
                "the GPU encoder's codeword offsets decrease".into(),
            ));
        }
        let out = EncodedBatch {
            tops,
            offsets: offsets.clone(),
            codewords: Vec::new(),
        };
        let words = DeviceWords { packed, offsets };
        return Ok((out, device_records, Some(words), timing));
    }
    let codewords = if total == 0 {
        Vec::new()
    } else {
        gpu.download(&packed.clone().slice(0..total as u64))?
    };
    let out = EncodedBatch {
        tops,
        offsets,
        codewords,
    };
    out.validate()?;
    Ok((out, device_records, None, timing))
}

/// The first `kept[b]` codewords of every codeblock `b` of `words`,
/// gathered on the device (`bpc_pack` with the kept counts' offsets) and
/// downloaded back to back, with where each codeblock's start and their
/// total at the end: what a file of those truncation points holds.
pub(crate) fn gather_prefixes(
    gpu: &Gpu,
    words: &DeviceWords,
    kept: &[u32],
) -> Result<(Vec<u16>, Vec<usize>), BpcError> {
    let n = kept.len();
    if words.offsets.len() != n + 1 {
        return Err(BpcError::Mismatch(format!(
            "{n} kept counts for {} coded codeblocks",
            words.offsets.len().saturating_sub(1)
        )));
    }
    let mut starts = Vec::with_capacity(n + 1);
    let mut at = 0usize;
    for (b, &k) in kept.iter().enumerate() {
        if k as usize > words.offsets[b + 1] - words.offsets[b] {
            return Err(BpcError::Mismatch(format!(
                "codeblock {b}: {k} codewords kept of {}",
                words.offsets[b + 1] - words.offsets[b]
            )));
        }
        starts.push(at);
        at += k as usize;
    }
    starts.push(at);
    if at == 0 {
        return Ok((Vec::new(), starts));
    }
    let as_u32 = |v: &[usize]| v.iter().map(|&o| o as u32).collect::<Vec<u32>>();
    let dest = gpu.upload(&as_u32(&starts[..n]))?;
    let from = gpu.upload(&as_u32(&words.offsets[..n]))?;
    let total = gpu.upload(&[at as u32])?;
    let out = gpu.uninit::<u16>(at as u64)?;
    gpu.run(&[Dispatch::new(&shaders::BPC_PACK, [groups_for(n), 1, 1])
        .buffer(&dest)
        .buffer(&from)
        .buffer(&words.packed)
        .buffer(&total)
        .buffer(&out)
        .push(&[n as u32])])?;
    Ok((gpu.download(&out)?, starts))
}

/// What the candidate cuts are made from: the records and their starts, the
/// codeword offsets and total, and the cut decreases in the encoder's
/// scratch regions.
struct CutInputs<'a> {
    records: &'a Subbuffer<[u32]>,
    record_starts: &'a Subbuffer<[u32]>,
    offsets: &'a Subbuffer<[u32]>,
    total: &'a Subbuffer<[u32]>,
    scratch_offsets: &'a Subbuffer<[u32]>,
    cut_scratch: &'a Subbuffer<[i64]>,
}

/// The dispatches that pack the cut decreases like the codewords, flag the
/// candidate cuts of every codeblock (`bpc_cut_hull`, the twin of
/// [`crate::bpc::cuts::cut_candidates`]), scan the flags and gather the
/// candidates (`bpc_cut_compact`), and the buffers they leave. `capacity`
/// bounds the codewords; `params` is (codeblocks, the most passes of one).
fn candidate_dispatches(
    gpu: &Gpu,
    inputs: CutInputs<'_>,
    n: usize,
    capacity: u64,
    params: [u32; 2],
) -> Result<(Vec<Dispatch>, DeviceCuts), BpcError> {
    let positions = capacity.max(1);
    let packed_cuts = gpu.uninit::<i64>(positions)?;
    let stack = gpu.uninit::<u32>(positions)?;
    let flags = gpu.uninit::<u32>(positions)?;
    let scan = gpu.scan_scratch(positions as u32)?;
    let cuts = DeviceCuts {
        starts: gpu.uninit::<u32>(n as u64)?,
        total: scan.result.clone(),
        slots: gpu.uninit::<u32>(positions)?,
        decreases: gpu.uninit::<i64>(positions)?,
    };
    let pairs = n as u64 * params[1] as u64;
    let mut run = vec![
        Dispatch::new(&shaders::BPC_PACK_CUTS, [groups_for(n), 1, 1])
            .buffer(inputs.offsets)
            .buffer(inputs.scratch_offsets)
            .buffer(inputs.cut_scratch)
            .buffer(inputs.total)
            .buffer(&packed_cuts)
            .push(&[n as u32]),
        Dispatch::new(
            &shaders::BPC_CUT_HULL,
            [pairs.div_ceil(64).clamp(1, MAX_GROUPS as u64) as u32, 1, 1],
        )
        .buffer(inputs.records)
        .buffer(inputs.record_starts)
        .buffer(inputs.offsets)
        .buffer(inputs.total)
        .buffer(&packed_cuts)
        .buffer(&stack)
        .buffer(&flags)
        .zeroing(&flags)
        .push(&params),
    ];
    run.extend(gpu.scan_dispatches(&flags, positions as u32, &scan)?);
    run.push(
        Dispatch::new(&shaders::BPC_CUT_COMPACT, [groups_for(n), 1, 1])
            .buffer(inputs.offsets)
            .buffer(inputs.total)
            .buffer(&packed_cuts)
            .buffer(&flags)
            .buffer(&scan.result)
            .buffer(&cuts.starts)
            .buffer(&cuts.slots)
            .buffer(&cuts.decreases)
            .push(&[n as u32, positions as u32]),
    );
    Ok((run, cuts))
}

/// Where each codeblock's pass records start among all of them (its top
/// bitplane gives its passes; `tops` as `bpc_measure.comp` writes them),
/// with the total at the end.
fn record_starts(tops: &[u32], mode: wavelane_core::bpc::Mode) -> Vec<u32> {
    let mut starts = Vec::with_capacity(tops.len() + 1);
    let mut at = 0u32;
    starts.push(at);
    for &t in tops {
        let top = (t != EMPTY).then_some(t.min(u8::MAX as u32) as u8);
        at = at.saturating_add(wavelane_core::bpc::pass_count(mode, top) as u32);
        starts.push(at);
    }
    starts
}

/// Reads the total of a scan and checks it against the per-block values
/// (the scan wraps modulo 2^32; the sum must not).
fn total_of(
    gpu: &Gpu,
    result: &Subbuffer<[u32]>,
    values: &Subbuffer<[u32]>,
    n: usize,
) -> Result<u64, BpcError> {
    let total = gpu.download(result)?[0] as u64;
    let sum: u64 = gpu
        .download(values)?
        .iter()
        .take(n)
        .map(|&c| c as u64)
        .sum();
    if sum != total {
        return Err(BpcError::Gpu(GpuError::Limit(format!(
            "the codeword capacity of this batch ({sum}) exceeds 32 bits; encode fewer codeblocks at once"
        ))));
    }
    Ok(total)
}

/// What `bpc_measure.comp` and `bpc_order.comp` leave for the coding
/// builds (the encoders and the counting build): each codeblock's top
/// bitplane `tops`, codeword capacity `caps` and its slot for their scan
/// `scratch_offsets`, `status` (refused or empty), and the coding order
/// `order` (heaviest codeblocks first), sorted through `order_buckets`.
pub(super) struct Measured {
    /// Each codeblock's top bitplane (or empty).
    pub tops: Subbuffer<[u32]>,
    /// Each codeblock's codeword capacity.
    pub caps: Subbuffer<[u32]>,
    /// The capacities' scan, once run.
    pub scratch_offsets: Subbuffer<[u32]>,
    /// Each codeblock's status (0: codable or empty).
    pub status: Subbuffer<[u32]>,
    /// The order's buckets.
    order_buckets: Subbuffer<[u32]>,
    /// The coding order.
    pub order: Subbuffer<[u32]>,
    /// Codeblocks.
    n: usize,
}

impl Measured {
    /// The buffers for `n` codeblocks, zeroed by the measure dispatch
    /// ([`Measured::dispatches`]).
    pub fn new(gpu: &Gpu, n: usize) -> Result<Self, BpcError> {
        Ok(Measured {
            tops: gpu.uninit::<u32>(n as u64)?,
            caps: gpu.uninit::<u32>(n as u64)?,
            scratch_offsets: gpu.uninit::<u32>(n as u64)?,
            status: gpu.uninit::<u32>(n as u64)?,
            order_buckets: gpu.uninit::<u32>(2 * ORDER_BUCKETS)?,
            order: gpu.uninit::<u32>(n as u64)?,
            n,
        })
    }

    /// The measure and order dispatches over `blocks` of `coefficients`
    /// (`min_probability` sizes the capacities).
    pub fn dispatches(
        &self,
        coefficients: &Subbuffer<[i32]>,
        blocks: &Subbuffer<[u32]>,
        min_probability: u8,
    ) -> [Dispatch; 2] {
        let n = self.n;
        [
            Dispatch::new(&shaders::BPC_MEASURE, [groups_for(n), 1, 1])
                .buffer(coefficients)
                .buffer(blocks)
                .buffer(&self.tops)
                .buffer(&self.caps)
                .buffer(&self.scratch_offsets)
                .buffer(&self.status)
                .buffer(&self.order_buckets)
                .zeroing(&self.tops)
                .zeroing(&self.caps)
                .zeroing(&self.scratch_offsets)
                .zeroing(&self.status)
                .zeroing(&self.order_buckets)
                .zeroing(&self.order)
                .push(&[n as u32, min_probability as u32]),
            Dispatch::new(
                &shaders::BPC_ORDER,
                [
                    (n as u32).div_ceil(ORDER_WORKGROUP).clamp(1, MAX_GROUPS),
                    1,
                    1,
                ],
            )
            .buffer(&self.tops)
            .buffer(&self.order_buckets)
            .buffer(&self.order)
            .push(&[n as u32]),
        ]
    }
}
