//! DC level shift of unsigned samples (JPEG 2000 Annex G): an unsigned
//! `bits`-bit sample `s` becomes `s - 2^(bits-1)`, centring it on zero before
//! the transform; the inverse adds `2^(bits-1)` back and clamps to
//! `0..=2^bits - 1` (lossy decodes can overshoot).

use super::DwtError;

fn offset(bits: u32) -> Result<i32, DwtError> {
    if (1..=16).contains(&bits) {
        Ok(1 << (bits - 1))
    } else {
        Err(DwtError::BadBitDepth)
    }
}

/// Loads unsigned `bits`-bit samples (1..=16) into `dst`, level shifted.
/// Samples above the bit depth are clamped first. Copies `min` of the lengths.
pub fn shift_in_u16(src: &[u16], bits: u32, dst: &mut [i32]) -> Result<(), DwtError> {
    let off = offset(bits)?;
    let max = ((1u32 << bits) - 1) as i32;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = (s as i32).min(max) - off;
    }
    Ok(())
}

/// Undoes [`shift_in_u16`]: adds the offset and clamps to the bit depth.
pub fn shift_out_u16(src: &[i32], bits: u32, dst: &mut [u16]) -> Result<(), DwtError> {
    let off = offset(bits)?;
    let max = ((1u32 << bits) - 1) as i32;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s.saturating_add(off).clamp(0, max) as u16;
    }
    Ok(())
}

/// Level shift in place: `x -= 2^(bits-1)`.
pub fn shift_forward(data: &mut [i32], bits: u32) -> Result<(), DwtError> {
    let off = offset(bits)?;
    for x in data {
        *x = x.wrapping_sub(off);
    }
    Ok(())
}

/// Inverse level shift in place: `x += 2^(bits-1)`, clamped to
/// `0..=2^bits - 1`.
pub fn shift_inverse(data: &mut [i32], bits: u32) -> Result<(), DwtError> {
    let off = offset(bits)?;
    let max = ((1u32 << bits) - 1) as i32;
    for x in data {
        *x = x.saturating_add(off).clamp(0, max);
    }
    Ok(())
}

/// Level shift of `f32` samples in place (for the 9/7 float path).
pub fn shift_forward_f32(data: &mut [f32], bits: u32) -> Result<(), DwtError> {
    let off = offset(bits)? as f32;
    for x in data {
        *x -= off;
    }
    Ok(())
}

/// Inverse level shift of `f32` samples: adds the offset, rounds to the
/// nearest integer and clamps to the bit depth.
pub fn shift_inverse_f32(src: &[f32], bits: u32, dst: &mut [i32]) -> Result<(), DwtError> {
    let off = offset(bits)? as f32;
    let max = ((1u32 << bits) - 1) as f32;
    for (d, &s) in dst.iter_mut().zip(src) {
        let v = s + off;
        // NaN clamps to 0; round half away from zero without libm.
        let v = if v.is_nan() { 0.0 } else { v.clamp(0.0, max) };
        *d = (v + 0.5) as i32;
    }
    Ok(())
}
