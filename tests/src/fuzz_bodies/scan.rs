//! Prefix-scan target: the sequential scan, the subgroup-lane model of the
//! GPU shader at any geometry, and the CPU backend must agree.

use wavelane_core::scan::{exclusive_scan, exclusive_scan_lanes, lanes_scratch_len, ScanError};

use super::input::{Input, SeedWriter};

/// Differential target: subgroup size 1..=64, workgroup size a multiple of
/// it (sometimes not, which must be an error), then `u32` values.
pub fn scan_lanes_diff(data: &[u8]) {
    let mut inp = Input::new(data);
    let subgroup = inp.range(0, 64);
    let workgroup = subgroup * inp.range(1, 8) + usize::from(inp.u8() == 0xff);
    let short_scratch = inp.u8() == 0xff;
    let raw = inp.rest();
    let values: Vec<u32> = raw
        .chunks(4)
        .map(|c| c.iter().rev().fold(0u32, |a, &b| a << 8 | b as u32))
        .collect();
    let mut want = values.clone();
    let total = exclusive_scan(&mut want);
    let mut host = values.clone();
    assert_eq!(wavelane::backend::cpu::exclusive_scan(&mut host), total);
    assert_eq!(host, want, "CPU backend scan");

    let mut got = values.clone();
    let needed = lanes_scratch_len(values.len(), workgroup);
    let mut scratch = vec![
        0u32;
        if short_scratch {
            needed.saturating_sub(1)
        } else {
            needed
        }
    ];
    match exclusive_scan_lanes(&mut got, workgroup, subgroup, &mut scratch) {
        Ok(t) => {
            assert_eq!(t, total, "lane scan total");
            assert_eq!(got, want, "lane scan values");
        }
        Err(ScanError::BadGeometry) => {
            assert!(subgroup == 0 || workgroup == 0 || !workgroup.is_multiple_of(subgroup))
        }
        Err(ScanError::ScratchTooSmall) => assert!(scratch.len() < needed),
    }
}

/// Seeds: common GPU geometries over a few hundred values.
pub fn seeds() -> Vec<Vec<u8>> {
    [(32u8, 7u8), (8, 3), (4, 0), (16, 7), (1, 0)]
        .into_iter()
        .map(|(sub, k)| {
            let mut s = SeedWriter::new().u8(sub).u8(k).u8(0).u8(0);
            for i in 0..300u32 {
                s = s.u32(i.wrapping_mul(2_654_435_761) >> (i % 32));
            }
            s.finish()
        })
        .collect()
}
