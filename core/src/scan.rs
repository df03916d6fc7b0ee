//! Prefix sums: the primitive that turns per-item output sizes into output
//! offsets, so that variable-length results (codeblock streams, CAVLC bit
//! strings, Huffman chunks) can be packed into one buffer in parallel.
//!
//! [`exclusive_scan`] is the plain sequential form. [`exclusive_scan_lanes`]
//! computes the same thing the way `shaders/scan/scan.comp` does: the input is cut
//! into workgroups of `workgroup_size` invocations, each workgroup into
//! subgroups of `subgroup_size` lanes; lanes combine with a subgroup scan,
//! subgroups through their totals, workgroups through a scan of workgroup
//! totals. Additions wrap modulo 2^32 in both forms (as on the GPU), so the two
//! are equal for every input and every subgroup size.

/// Errors of the lane-model scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ScanError {
    /// `subgroup_size` is 0 or does not divide `workgroup_size`.
    BadGeometry,
    /// The scratch buffer for workgroup totals is too small.
    ScratchTooSmall,
}

/// Replaces every element by the wrapping sum of the elements before it and
/// returns the wrapping sum of all elements.
pub fn exclusive_scan(values: &mut [u32]) -> u32 {
    let mut acc = 0u32;
    for v in values.iter_mut() {
        let x = *v;
        *v = acc;
        acc = acc.wrapping_add(x);
    }
    acc
}

/// Number of workgroup totals [`exclusive_scan_lanes`] needs scratch room for.
pub fn lanes_scratch_len(len: usize, workgroup_size: usize) -> usize {
    len.div_ceil(workgroup_size.max(1))
}

/// The subgroup-lane model of the GPU scan; equal to [`exclusive_scan`].
///
/// `scratch` must hold at least [`lanes_scratch_len`] elements; it receives
/// the exclusive scan of the workgroup totals (the second dispatch of the GPU
/// version). Returns the total.
pub fn exclusive_scan_lanes(
    values: &mut [u32],
    workgroup_size: usize,
    subgroup_size: usize,
    scratch: &mut [u32],
) -> Result<u32, ScanError> {
    if subgroup_size == 0 || workgroup_size == 0 || !workgroup_size.is_multiple_of(subgroup_size) {
        return Err(ScanError::BadGeometry);
    }
    let groups = lanes_scratch_len(values.len(), workgroup_size);
    if scratch.len() < groups {
        return Err(ScanError::ScratchTooSmall);
    }
    // Dispatch 1: scan inside each workgroup, emit the workgroup total.
    for (g, block) in values.chunks_mut(workgroup_size).enumerate() {
        scratch[g] = workgroup_scan(block, subgroup_size);
    }
    // Dispatch 2: scan the workgroup totals (sequential here; one workgroup
    // loops over them on the GPU, carrying the running sum).
    let total = exclusive_scan(&mut scratch[..groups]);
    // Dispatch 3: add each workgroup's offset.
    for (g, block) in values.chunks_mut(workgroup_size).enumerate() {
        for v in block.iter_mut() {
            *v = v.wrapping_add(scratch[g]);
        }
    }
    Ok(total)
}

/// One workgroup: subgroup exclusive scans (Hillis-Steele, as a subgroup
/// does it in log2 steps), then an exclusive scan of the subgroup totals.
fn workgroup_scan(block: &mut [u32], subgroup_size: usize) -> u32 {
    let mut running = 0u32;
    for sub in block.chunks_mut(subgroup_size) {
        // Inclusive scan in lock-step: at stride d every lane adds lane i-d.
        let mut d = 1;
        while d < sub.len() {
            for i in (d..sub.len()).rev() {
                sub[i] = sub[i].wrapping_add(sub[i - d]);
            }
            d *= 2;
        }
        // Inclusive -> exclusive, offset by the subgroups before this one.
        let sub_total = *sub.last().unwrap_or(&0);
        for i in (0..sub.len()).rev() {
            let before = if i == 0 { 0 } else { sub[i - 1] };
            sub[i] = running.wrapping_add(before);
        }
        running = running.wrapping_add(sub_total);
    }
    running
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;

    #[test]
    fn small_known_values() {
        let mut v = [3, 1, 4, 1, 5];
        assert_eq!(exclusive_scan(&mut v), 14);
        assert_eq!(v, [0, 3, 4, 8, 9]);
        let mut e: [u32; 0] = [];
        assert_eq!(exclusive_scan(&mut e), 0);
    }

    #[test]
    fn bad_geometry_is_an_error() {
        let mut v = [1u32; 8];
        let mut s = [0u32; 8];
        assert_eq!(
            exclusive_scan_lanes(&mut v, 12, 8, &mut s),
            Err(ScanError::BadGeometry)
        );
        assert_eq!(
            exclusive_scan_lanes(&mut v, 4, 0, &mut s),
            Err(ScanError::BadGeometry)
        );
        assert_eq!(
            exclusive_scan_lanes(&mut v, 4, 4, &mut s[..1]),
            Err(ScanError::ScratchTooSmall)
        );
    }

    proptest! {
        #[test]
        fn lanes_equal_sequential(
            input in proptest::collection::vec(any::<u32>(), 0..3000),
            sg_log in 0u32..6,
            wg_mul in 1usize..9,
        ) {
            let sg = 1usize << sg_log;
            let wg = sg * wg_mul;
            let mut a = input.clone();
            let mut b = input;
            let ta = exclusive_scan(&mut a);
            let mut scratch = vec![0; lanes_scratch_len(b.len(), wg)];
            let tb = exclusive_scan_lanes(&mut b, wg, sg, &mut scratch).unwrap();
            prop_assert_eq!(ta, tb);
            prop_assert_eq!(a, b);
        }
    }
}
