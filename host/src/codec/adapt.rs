//! Presets adjusted to one image (table code 254, docs/format.md): the
//! encoder counts the image's symbols per table cell and changes the cells
//! of the preset where the bits saved exceed the bits the change costs in
//! the header. Most cells are unused or close to the preset, so the header
//! carries a short run-length list of changes instead of 3-6 KB of tables.

use wavelane_core::bits::{BitError, BitReader, BitWriter};
use wavelane_core::bpc::{
    GroupTables, Mode, ProbabilityTables, SymbolClass, GROUPS, TABLE_BITPLANES,
};

use super::format::FormatError;
use super::index::{se_bits, ue_bits};
use crate::bpc::train::{cheapest_probability, code_length, Trainer};

/// Bits a change is assumed to pay for the run of unchanged cells before
/// it, when deciding whether to send it (the real stream is measured
/// afterwards).
const RUN_BITS_ESTIMATE: f64 = 5.0;

/// Bits by which a cell's gain, measured on the very counts its new
/// probability was fitted to, overstates the gain on other symbols of the
/// same source (about `log2(e) / 2` per fitted parameter, as in AIC); taken
/// off before scaling a sample's gain up to the whole image.
const FIT_OPTIMISM_BITS: f64 = 1.0;

/// One probability of a group: its symbol class, bitplane and context.
#[derive(Debug, Clone, Copy)]
struct Cell {
    class: SymbolClass,
    bitplane: usize,
    context: usize,
}

/// Every cell of a group in the embedded layout's order: sig, sign,
/// refine, then in 3-pass mode cp_sig and cp_sign; row by row.
fn cells(mode: Mode) -> Vec<Cell> {
    let mut out = Vec::new();
    let mut rows = |class, contexts| {
        for bitplane in 0..TABLE_BITPLANES {
            for context in 0..contexts {
                out.push(Cell {
                    class,
                    bitplane,
                    context,
                });
            }
        }
    };
    rows(SymbolClass::Significance, 9);
    rows(SymbolClass::Sign, 4);
    rows(SymbolClass::Refinement, 1);
    if mode == Mode::ThreePass {
        rows(SymbolClass::CleanupSignificance, 9);
        rows(SymbolClass::CleanupSign, 4);
    }
    out
}

fn value_mut(g: &mut GroupTables, c: Cell) -> &mut u8 {
    let (j, k) = (c.bitplane, c.context);
    match c.class {
        SymbolClass::Significance => &mut g.sig[j][k],
        SymbolClass::Sign => &mut g.sign[j][k],
        SymbolClass::Refinement => &mut g.refine[j],
        SymbolClass::CleanupSignificance => &mut g.cp_sig[j][k],
        SymbolClass::CleanupSign => &mut g.cp_sign[j][k],
    }
}

fn value(g: &GroupTables, c: Cell) -> u8 {
    let (j, k) = (c.bitplane, c.context);
    match c.class {
        SymbolClass::Significance => g.sig[j][k],
        SymbolClass::Sign => g.sign[j][k],
        SymbolClass::Refinement => g.refine[j],
        SymbolClass::CleanupSignificance => g.cp_sig[j][k],
        SymbolClass::CleanupSign => g.cp_sign[j][k],
    }
}

/// Ideal code length of every symbol `trainer` counted, coded with
/// `tables`, group `g`'s counts weighted by `scale[g]` (see [`adjust`]).
pub fn coded_bits(tables: &ProbabilityTables, trainer: &Trainer, scale: &[f64; GROUPS]) -> f64 {
    let cells = cells(tables.mode());
    let mut sum = 0.0;
    for (g, group) in tables.groups().iter().enumerate() {
        for &c in &cells {
            let (zeros, total) = trainer.counts(g, c.class, c.bitplane, c.context);
            if total > 0 {
                sum += scale[g] * code_length(zeros, total, value(group, c));
            }
        }
    }
    sum
}

/// `base` adjusted to the counts of `trainer`, and the bits that saves
/// net of the header bytes the changes take.
#[derive(Debug, Clone)]
pub struct Adjusted {
    /// The adjusted tables.
    pub tables: ProbabilityTables,
    /// Estimated bits saved minus the bits of the change list.
    pub saved_bits: f64,
}

/// Changes every cell of `base` whose counts in `trainer` save more bits
/// with their cheapest probability than the change costs. `scale[g]`: how
/// many times more symbols the image codes in group `g` than `trainer`
/// counted (it may have counted a sample of the codeblocks).
pub fn adjust(base: &ProbabilityTables, trainer: &Trainer, scale: &[f64; GROUPS]) -> Adjusted {
    let mode = base.mode();
    let cells = cells(mode);
    let mut groups = base.groups().clone();
    let mut saved = 0.0;
    for (g, group) in groups.iter_mut().enumerate() {
        for &c in &cells {
            let (zeros, total) = trainer.counts(g, c.class, c.bitplane, c.context);
            let old = value(group, c);
            let new = cheapest_probability(zeros, total);
            if total == 0 || new == old {
                continue;
            }
            let fitted_gain = code_length(zeros, total, old) - code_length(zeros, total, new);
            let gain = scale[g] * (fitted_gain - FIT_OPTIMISM_BITS);
            let cost = se_bits(new as i32 - old as i32) as f64 + RUN_BITS_ESTIMATE;
            if gain > cost {
                *value_mut(group, c) = new;
                saved += gain;
            }
        }
    }
    let tables = ProbabilityTables::new(mode, groups).expect("probabilities are at most 127");
    let header_bits = 8.0 * (CHANGES_PREFIX_BYTES + write_changes(base, &tables).len()) as f64;
    Adjusted {
        tables,
        saved_bits: saved - header_bits,
    }
}

/// Header bytes before the change list: base preset id, u16 list length.
pub const CHANGES_PREFIX_BYTES: usize = 3;

/// The cells where `tables` differs from `base` (same mode), as the header
/// stores them: over every cell of every group in layout order, pairs
/// `ue(unchanged cells before the change)`, `se(new - old)`, then
/// `ue(unchanged cells to the end)`; zero bits to a byte.
pub fn write_changes(base: &ProbabilityTables, tables: &ProbabilityTables) -> Vec<u8> {
    let cells = cells(base.mode());
    let mut codes: Vec<(u32, i32)> = Vec::new();
    let mut run = 0u32;
    for (b, t) in base.groups().iter().zip(tables.groups()) {
        for &c in &cells {
            let d = value(t, c) as i32 - value(b, c) as i32;
            if d == 0 {
                run += 1;
            } else {
                codes.push((run, d));
                run = 0;
            }
        }
    }
    let bits: u64 = codes
        .iter()
        .map(|&(r, d)| ue_bits(r) + se_bits(d))
        .sum::<u64>()
        + ue_bits(run);
    let mut buf = vec![0u8; bits.div_ceil(8) as usize];
    let mut w = BitWriter::new(&mut buf);
    let fits = "the buffer holds exactly the codes";
    for &(r, d) in &codes {
        w.write_ue(r).expect(fits);
        w.write_se(d).expect(fits);
    }
    w.write_ue(run).expect(fits);
    w.align_zero().expect(fits);
    buf
}

/// Reads a change list written by [`write_changes`] against `base`. Every
/// run must stay inside the tables, every change be non-zero and give a
/// probability in 0..=127, the padding be zero bits and shorter than a
/// byte.
pub fn read_changes(
    bytes: &[u8],
    base: &ProbabilityTables,
) -> Result<ProbabilityTables, FormatError> {
    let bad = |rule: &'static str| FormatError::BadField {
        field: "table_changes",
        value: bytes.len() as u64,
        rule,
    };
    let bit_err = |_: BitError| bad("the change list ends inside a code");
    let mode = base.mode();
    let cells = cells(mode);
    let total = cells.len() * base.groups().len();
    let mut groups = base.groups().clone();
    let mut r = BitReader::new(bytes);
    let mut pos = 0usize;
    loop {
        let run = r.read_ue().map_err(bit_err)? as usize;
        if run > total - pos {
            return Err(bad("a run of unchanged cells passes the end"));
        }
        pos += run;
        if pos == total {
            break;
        }
        let d = r.read_se().map_err(bit_err)?;
        let (g, c) = (pos / cells.len(), cells[pos % cells.len()]);
        let cell = value_mut(&mut groups[g], c);
        let new = *cell as i32 + d;
        if d == 0 || !(0..=127).contains(&new) {
            return Err(bad("changes are non-zero and give 0..=127"));
        }
        *cell = new as u8;
        pos += 1;
    }
    let rest = r.remaining_bits();
    if rest >= 8 || r.read_bits(rest as u32).map_err(bit_err)? != 0 {
        return Err(bad("the padding is fewer than 8 zero bits"));
    }
    ProbabilityTables::new(mode, groups).map_err(|e| FormatError::BadField {
        field: "table_changes",
        value: e.group as u64,
        rule: "probabilities must be <= 127",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_lists_round_trip_and_are_short_for_few_changes() {
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let base = ProbabilityTables::natural_lossless(mode);
            let same = write_changes(base, base);
            assert!(same.len() <= 4, "one ue() of every cell");
            assert_eq!(&read_changes(&same, base).unwrap(), base);
            let mut groups = base.groups().clone();
            groups[0].sig[0][0] = 1;
            groups[7].refine[3] = 127;
            groups[15].sign[14][3] = 0;
            if mode == Mode::ThreePass {
                groups[15].cp_sign[14][3] = 100;
            }
            let changed = ProbabilityTables::new(mode, groups).unwrap();
            let bytes = write_changes(base, &changed);
            assert!(bytes.len() < 16, "{} bytes", bytes.len());
            assert_eq!(read_changes(&bytes, base).unwrap(), changed);
        }
    }

    #[test]
    fn malformed_change_lists_are_errors() {
        let base = ProbabilityTables::natural_lossy(Mode::TwoPass);
        let mut groups = base.groups().clone();
        groups[2].sig[1][1] = 3;
        let changed = ProbabilityTables::new(Mode::TwoPass, groups).unwrap();
        let good = write_changes(base, &changed);
        // Cut short, emptied, with trailing bytes, every single-byte change.
        assert!(read_changes(&good[..good.len() - 1], base).is_err());
        assert!(read_changes(&[], base).is_err());
        let mut long = good.clone();
        long.push(0);
        assert!(read_changes(&long, base).is_err());
        for i in 0..good.len() {
            for flip in 0..8 {
                let mut bad = good.clone();
                bad[i] ^= 1 << flip;
                // Either an error or other valid tables, never a panic.
                if let Ok(t) = read_changes(&bad, base) {
                    assert_eq!(t.mode(), Mode::TwoPass);
                }
            }
        }
        // A change to 128 or below 0.
        let mut buf = [0u8; 8];
        let mut w = BitWriter::new(&mut buf);
        w.write_ue(0).unwrap();
        w.write_se(128 - base.groups()[0].sig[0][0] as i32).unwrap();
        assert!(read_changes(&buf, base).is_err());
    }

    #[test]
    fn adjusting_pays_on_the_counts_it_was_fitted_to() {
        use crate::bpc::CodeblockBatch;
        // A block whose statistics the preset does not expect: a
        // checkerboard of +-5.
        let coefficients: Vec<i32> = (0..64 * 64)
            .map(|i| if (i / 64 + i % 64) % 2 == 0 { 5 } else { -5 })
            .collect();
        let batch = CodeblockBatch::one(coefficients, 64, 0);
        let base = ProbabilityTables::natural_lossless(Mode::ThreePass);
        let mut trainer = Trainer::new(Mode::ThreePass);
        trainer.add_batch(&batch).unwrap();
        let adjusted = adjust(base, &trainer, &[1.0; GROUPS]);
        assert!(adjusted.saved_bits > 0.0);
        // The same counts standing for ten times as many symbols pay more.
        let tenfold = adjust(base, &trainer, &[10.0; GROUPS]);
        assert!(tenfold.saved_bits > 9.0 * adjusted.saved_bits);
        let before = coded_bits(base, &trainer, &[1.0; GROUPS]);
        let after = coded_bits(&adjusted.tables, &trainer, &[1.0; GROUPS]);
        assert!(after + adjusted.saved_bits <= before + 1e-6);
        assert!(adjusted.tables.groups()[1..] == base.groups()[1..]);
        // Nothing counted: nothing changes.
        let empty = adjust(base, &Trainer::new(Mode::ThreePass), &[1.0; GROUPS]);
        assert_eq!(&empty.tables, base);
        assert!(empty.saved_bits < 0.0);
    }
}
