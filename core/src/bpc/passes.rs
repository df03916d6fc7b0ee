//! The pass schedule (spec section 3): which passes run in which bitplane.

use super::Mode;

/// A coding pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PassKind {
    /// Significance propagation pass (SPP).
    Significance,
    /// Magnitude refinement pass (MRP).
    Refinement,
    /// Cleanup pass (CP), 3-pass mode only.
    Cleanup,
}

/// Number of passes of a codeblock with top bitplane `top` (`None`: empty):
/// `2 (M + 1)` in 2-pass mode, `1 + 3 M` in 3-pass mode.
pub const fn pass_count(mode: Mode, top: Option<u8>) -> usize {
    match (mode, top) {
        (_, None) => 0,
        (Mode::TwoPass, Some(m)) => 2 * (m as usize + 1),
        (Mode::ThreePass, Some(m)) => 1 + 3 * m as usize,
    }
}

/// Iterator over `(pass, bitplane)` from bitplane `M` down to 0.
///
/// ```
/// use wavelane_core::bpc::{Mode, PassKind::*, PassSchedule};
/// let s: Vec<_> = PassSchedule::new(Mode::ThreePass, Some(1)).collect();
/// assert_eq!(s, [(Cleanup, 1), (Significance, 0), (Refinement, 0), (Cleanup, 0)]);
/// ```
#[derive(Debug, Clone)]
pub struct PassSchedule {
    mode: Mode,
    index: usize,
    count: usize,
    top: u8,
}

impl PassSchedule {
    /// The passes of a codeblock of top bitplane `top` in `mode`.
    pub const fn new(mode: Mode, top: Option<u8>) -> Self {
        PassSchedule {
            mode,
            index: 0,
            count: pass_count(mode, top),
            top: match top {
                Some(m) => m,
                None => 0,
            },
        }
    }

    /// Pass number `i` (0-based) of the schedule.
    pub const fn pass(mode: Mode, top: u8, i: usize) -> (PassKind, u8) {
        match mode {
            Mode::TwoPass => {
                let kind = if i.is_multiple_of(2) {
                    PassKind::Significance
                } else {
                    PassKind::Refinement
                };
                (kind, top - (i / 2) as u8)
            }
            Mode::ThreePass => {
                if i == 0 {
                    return (PassKind::Cleanup, top);
                }
                let kind = match (i - 1) % 3 {
                    0 => PassKind::Significance,
                    1 => PassKind::Refinement,
                    _ => PassKind::Cleanup,
                };
                (kind, top - 1 - ((i - 1) / 3) as u8)
            }
        }
    }
}

impl Iterator for PassSchedule {
    type Item = (PassKind, u8);

    fn next(&mut self) -> Option<Self::Item> {
        if self.index >= self.count {
            return None;
        }
        let item = Self::pass(self.mode, self.top, self.index);
        self.index += 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.count - self.index;
        (left, Some(left))
    }
}

impl ExactSizeIterator for PassSchedule {}

#[cfg(test)]
mod tests {
    use super::*;
    use PassKind::*;

    #[test]
    fn two_pass_schedule() {
        let s: std::vec::Vec<_> = PassSchedule::new(Mode::TwoPass, Some(1)).collect();
        assert_eq!(
            s,
            [
                (Significance, 1),
                (Refinement, 1),
                (Significance, 0),
                (Refinement, 0)
            ]
        );
        assert_eq!(PassSchedule::new(Mode::TwoPass, None).count(), 0);
    }

    #[test]
    fn counts_match_the_schedule() {
        for m in 0..=27u8 {
            for mode in [Mode::TwoPass, Mode::ThreePass] {
                let s = PassSchedule::new(mode, Some(m));
                assert_eq!(s.len(), pass_count(mode, Some(m)));
                assert_eq!(s.clone().last().map(|p| p.1), Some(0));
                assert!(s.len() <= super::super::MAX_PASSES);
            }
        }
        assert_eq!(pass_count(Mode::ThreePass, Some(0)), 1);
    }
}
