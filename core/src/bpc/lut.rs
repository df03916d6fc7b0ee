//! Probability tables (spec section 5): one [`GroupTables`] per subband
//! group, one row per bitplane 0..=14, values = probability of symbol 0 in
//! units of 1/128. Bitplanes 15 and above code with `P = 64`.

use core::fmt;

use super::{lut_natural, lut_reference, Mode, GROUPS, TABLE_BITPLANES};

/// Probability used for bitplanes without a table row (`j >= 15`).
pub const UNTABLED_PROBABILITY: u8 = 64;

/// The tables of one subband group.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct GroupTables {
    /// Significance (SPP; 2-pass: all significance), `[bitplane][context 0..=8]`.
    pub sig: [[u8; 9]; TABLE_BITPLANES],
    /// Sign after SPP significance, `[bitplane][sign context 0..=3]`.
    pub sign: [[u8; 4]; TABLE_BITPLANES],
    /// Refinement, `[bitplane]`.
    pub refine: [u8; TABLE_BITPLANES],
    /// Significance in the cleanup pass (3-pass only), `[bitplane][context]`.
    pub cp_sig: [[u8; 9]; TABLE_BITPLANES],
    /// Sign after cleanup-pass significance (3-pass only).
    pub cp_sign: [[u8; 4]; TABLE_BITPLANES],
}

impl GroupTables {
    /// Every probability one half (64).
    pub const UNIFORM: GroupTables = GroupTables {
        sig: [[64; 9]; TABLE_BITPLANES],
        sign: [[64; 4]; TABLE_BITPLANES],
        refine: [64; TABLE_BITPLANES],
        cp_sig: [[64; 9]; TABLE_BITPLANES],
        cp_sign: [[64; 4]; TABLE_BITPLANES],
    };

    fn values(&self) -> impl Iterator<Item = u8> + '_ {
        let sig = self.sig.iter().chain(&self.cp_sig).flatten();
        let sign = self.sign.iter().chain(&self.cp_sign).flatten();
        sig.chain(sign).chain(&self.refine).copied()
    }
}

/// A table value is above 127.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LutError {
    /// The group holding the bad value.
    pub group: usize,
}

impl fmt::Display for LutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "probability above 127 in table group {}", self.group)
    }
}

impl core::error::Error for LutError {}

/// A complete set of probability tables for one [`Mode`]: 16 groups
/// (5 levels x HL, LH, HH, then LL). Values are checked to be <= 127 at
/// construction, which keeps the coder's interval arithmetic in range.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ProbabilityTables {
    mode: Mode,
    groups: [GroupTables; GROUPS],
}

impl ProbabilityTables {
    /// The reference implementation's 2-pass tables (the default preset).
    pub const REFERENCE_TWO_PASS: ProbabilityTables = ProbabilityTables {
        mode: Mode::TwoPass,
        groups: lut_reference::REFERENCE_TWO_PASS_GROUPS,
    };

    /// The reference implementation's 3-pass tables (the default preset).
    pub const REFERENCE_THREE_PASS: ProbabilityTables = ProbabilityTables {
        mode: Mode::ThreePass,
        groups: lut_reference::REFERENCE_THREE_PASS_GROUPS,
    };

    /// The reference preset of `mode`.
    pub const fn reference(mode: Mode) -> &'static ProbabilityTables {
        match mode {
            Mode::TwoPass => &Self::REFERENCE_TWO_PASS,
            Mode::ThreePass => &Self::REFERENCE_THREE_PASS,
        }
    }

    /// Natural-image tables for the image codec's lossless path (5/3, RCT,
    /// step 1, 8-bit samples), 2 passes; trained on a public-domain corpus
    /// by `scripts/train-natural-tables.py`.
    pub const NATURAL_LOSSLESS_TWO_PASS: ProbabilityTables = ProbabilityTables {
        mode: Mode::TwoPass,
        groups: lut_natural::NATURAL_LOSSLESS_TWO_PASS_GROUPS,
    };

    /// [`Self::NATURAL_LOSSLESS_TWO_PASS`] for 3 passes.
    pub const NATURAL_LOSSLESS_THREE_PASS: ProbabilityTables = ProbabilityTables {
        mode: Mode::ThreePass,
        groups: lut_natural::NATURAL_LOSSLESS_THREE_PASS_GROUPS,
    };

    /// Natural-image tables for the image codec's lossy path (fixed-point
    /// 9/7, ICT, the default steps), 2 passes.
    pub const NATURAL_LOSSY_TWO_PASS: ProbabilityTables = ProbabilityTables {
        mode: Mode::TwoPass,
        groups: lut_natural::NATURAL_LOSSY_TWO_PASS_GROUPS,
    };

    /// [`Self::NATURAL_LOSSY_TWO_PASS`] for 3 passes.
    pub const NATURAL_LOSSY_THREE_PASS: ProbabilityTables = ProbabilityTables {
        mode: Mode::ThreePass,
        groups: lut_natural::NATURAL_LOSSY_THREE_PASS_GROUPS,
    };

    /// The natural-image lossless tables of `mode`.
    pub const fn natural_lossless(mode: Mode) -> &'static ProbabilityTables {
        match mode {
            Mode::TwoPass => &Self::NATURAL_LOSSLESS_TWO_PASS,
            Mode::ThreePass => &Self::NATURAL_LOSSLESS_THREE_PASS,
        }
    }

    /// The natural-image lossy tables of `mode`.
    pub const fn natural_lossy(mode: Mode) -> &'static ProbabilityTables {
        match mode {
            Mode::TwoPass => &Self::NATURAL_LOSSY_TWO_PASS,
            Mode::ThreePass => &Self::NATURAL_LOSSY_THREE_PASS,
        }
    }

    /// These tables moved `offset` bitplanes up (down when negative): row
    /// `j` of the result is row `clamp(j - offset, 0, 14)` of `self`.
    ///
    /// Rows are indexed by absolute bitplane, so tables fitted to indices of
    /// one scale code the indices of a scale `2^offset` times larger best
    /// with their rows moved up by `offset` (a 12-bit image coded
    /// losslessly with 8-bit tables: offset 4). Bitplanes below the moved
    /// rows reuse row 0, those above reuse row 14.
    pub fn with_row_offset(&self, offset: i8) -> ProbabilityTables {
        let mut out = self.clone();
        let last = TABLE_BITPLANES as i32 - 1;
        for (dst, src) in out.groups.iter_mut().zip(&self.groups) {
            for j in 0..TABLE_BITPLANES {
                let from = (j as i32 - offset as i32).clamp(0, last) as usize;
                dst.sig[j] = src.sig[from];
                dst.sign[j] = src.sign[from];
                dst.refine[j] = src.refine[from];
                dst.cp_sig[j] = src.cp_sig[from];
                dst.cp_sign[j] = src.cp_sign[from];
            }
        }
        out
    }

    /// Tables with every probability one half: no compression, but handy for
    /// checking coder arithmetic by hand.
    pub const fn uniform(mode: Mode) -> ProbabilityTables {
        ProbabilityTables {
            mode,
            groups: [const { GroupTables::UNIFORM }; GROUPS],
        }
    }

    /// Tables from their groups (for example trained ones); errors if any
    /// value is above 127.
    pub fn new(mode: Mode, groups: [GroupTables; GROUPS]) -> Result<Self, LutError> {
        for (group, g) in groups.iter().enumerate() {
            if g.values().any(|p| p > 127) {
                return Err(LutError { group });
            }
        }
        Ok(ProbabilityTables { mode, groups })
    }

    /// The coding mode these tables are for.
    pub const fn mode(&self) -> Mode {
        self.mode
    }

    /// All groups.
    pub fn groups(&self) -> &[GroupTables; GROUPS] {
        &self.groups
    }

    /// The smallest probability any symbol of this mode can be coded with
    /// (bitplanes above 14 code with 64). When it is above 0, the tighter
    /// bound of [`codeword_bound`](super::codeword_bound) holds.
    pub fn min_probability(&self) -> u8 {
        let three = self.mode == Mode::ThreePass;
        let mut min = UNTABLED_PROBABILITY;
        for g in &self.groups {
            let used = g
                .sig
                .iter()
                .flatten()
                .chain(g.sign.iter().flatten())
                .chain(&g.refine);
            let cp = g.cp_sig.iter().flatten().chain(g.cp_sign.iter().flatten());
            let cp = cp.filter(|_| three);
            min = used.chain(cp).copied().fold(min, u8::min);
        }
        min
    }

    /// The rows used to code bitplane `j` of group `group` (`group < 16`).
    #[inline]
    pub(super) fn plane(&self, group: usize, j: u8) -> PlaneTables {
        let g = &self.groups[group];
        let j = j as usize;
        if j >= TABLE_BITPLANES {
            return PlaneTables::UNTABLED;
        }
        PlaneTables {
            sig: g.sig[j],
            sign: g.sign[j],
            refine: g.refine[j],
            cp_sig: g.cp_sig[j],
            cp_sign: g.cp_sign[j],
        }
    }
}

/// The probabilities of one bitplane of one group, looked up once per pass.
#[derive(Debug, Clone, Copy)]
pub(super) struct PlaneTables {
    pub sig: [u8; 9],
    pub sign: [u8; 4],
    pub refine: u8,
    pub cp_sig: [u8; 9],
    pub cp_sign: [u8; 4],
}

impl PlaneTables {
    const UNTABLED: PlaneTables = PlaneTables {
        sig: [UNTABLED_PROBABILITY; 9],
        sign: [UNTABLED_PROBABILITY; 4],
        refine: UNTABLED_PROBABILITY,
        cp_sig: [UNTABLED_PROBABILITY; 9],
        cp_sign: [UNTABLED_PROBABILITY; 4],
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_presets_are_valid_and_nonzero() {
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            for t in [
                ProbabilityTables::reference(mode),
                ProbabilityTables::natural_lossless(mode),
                ProbabilityTables::natural_lossy(mode),
            ] {
                assert_eq!(t.mode(), mode);
                assert!(ProbabilityTables::new(mode, t.groups().clone()).is_ok());
                assert!(t.min_probability() >= 1);
            }
        }
    }

    #[test]
    fn natural_presets_differ_from_the_reference() {
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let reference = ProbabilityTables::reference(mode);
            assert_ne!(ProbabilityTables::natural_lossless(mode), reference);
            assert_ne!(ProbabilityTables::natural_lossy(mode), reference);
        }
    }

    #[test]
    fn row_offsets_move_rows_and_clamp_at_the_ends() {
        let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
        for (j, row) in groups[3].sig.iter_mut().enumerate() {
            row[2] = j as u8 + 1;
        }
        for (j, r) in groups[3].refine.iter_mut().enumerate() {
            *r = 100 + j as u8;
        }
        let t = ProbabilityTables::new(Mode::ThreePass, groups).unwrap();
        assert_eq!(t.with_row_offset(0), t);
        let up = t.with_row_offset(4);
        let sig: [u8; 15] = core::array::from_fn(|j| up.groups()[3].sig[j][2]);
        assert_eq!(sig, [1, 1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        let down = t.with_row_offset(-3);
        let refine = down.groups()[3].refine;
        assert_eq!(refine[0], 103);
        assert_eq!(refine[11], 114);
        assert_eq!(refine[14], 114);
        assert_eq!(t.with_row_offset(i8::MAX).groups()[3].refine, [100; 15]);
        assert_eq!(t.with_row_offset(i8::MIN).groups()[3].refine, [114; 15]);
        assert_eq!(up.mode(), Mode::ThreePass);
    }

    #[test]
    fn values_above_127_are_rejected() {
        let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
        groups[7].cp_sign[3][2] = 128;
        assert_eq!(
            ProbabilityTables::new(Mode::ThreePass, groups),
            Err(LutError { group: 7 })
        );
    }

    #[test]
    fn untabled_bitplanes_use_one_half() {
        let t = &ProbabilityTables::REFERENCE_TWO_PASS;
        let p = t.plane(0, 15);
        assert_eq!(p.sig, [64; 9]);
        assert_eq!(p.refine, 64);
        assert_eq!(t.plane(0, 0).sig[0], t.groups()[0].sig[0][0]);
    }

    #[test]
    fn min_probability_ignores_cp_rows_in_two_pass_mode() {
        let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
        groups[0].cp_sig[0][0] = 0;
        let two = ProbabilityTables::new(Mode::TwoPass, groups.clone()).unwrap();
        let three = ProbabilityTables::new(Mode::ThreePass, groups).unwrap();
        assert_eq!(two.min_probability(), 64);
        assert_eq!(three.min_probability(), 0);
    }
}
