//! The tables of blocks coded with bitplanes dropped (early termination):
//! a block whose lowest `s` bitplanes were dropped is coded and decoded
//! with the tables shifted down by `s` rows ([`super::entropy`] has why),
//! and the blocks of one shift are coded as one batch.

use wavelane_core::bpc::{GroupTables, ProbabilityTables, TABLE_BITPLANES};

/// `tables` with every row moved down by `shift` bitplanes (rows above the
/// table get the untabled probability, as bitplanes >= 15 do).
pub(crate) fn shifted_tables(tables: &ProbabilityTables, shift: u8) -> ProbabilityTables {
    let s = shift as usize;
    let mut groups: [GroupTables; wavelane_core::bpc::GROUPS] = tables.groups().clone();
    for (g, src) in groups.iter_mut().zip(tables.groups()) {
        *g = GroupTables::UNIFORM;
        for j in 0..TABLE_BITPLANES.saturating_sub(s) {
            g.sig[j] = src.sig[j + s];
            g.sign[j] = src.sign[j + s];
            g.refine[j] = src.refine[j + s];
            g.cp_sig[j] = src.cp_sig[j + s];
            g.cp_sign[j] = src.cp_sign[j + s];
        }
    }
    ProbabilityTables::new(tables.mode(), groups).expect("rows of valid tables are valid")
}

/// Groups block indices by shift: `(shift, blocks)` in increasing shift.
pub(crate) fn by_shift(shifts: &[u8]) -> Vec<(u8, Vec<usize>)> {
    let mut groups: Vec<(u8, Vec<usize>)> = Vec::new();
    for (i, &s) in shifts.iter().enumerate() {
        match groups.iter_mut().find(|g| g.0 == s) {
            Some(g) => g.1.push(i),
            None => groups.push((s, vec![i])),
        }
    }
    groups.sort_by_key(|g| g.0);
    groups
}
