//! The 4x4 integer transform, the luma and chroma DC Hadamard transforms and
//! flat-matrix quantisation of H.264 (clauses 8.5.6 to 8.5.12, and their
//! encoder-side inverses). Blocks are 16 values in raster order
//! (`[y * 4 + x]`).

/// Quantisation multipliers `MF[qp % 6]` for positions of class (a, b, c):
/// a = both coordinates even, b = both odd, c = otherwise.
const QUANT_MF: [[i32; 3]; 6] = [
    [13107, 5243, 8066],
    [11916, 4660, 7490],
    [10082, 4194, 6554],
    [9362, 3647, 5825],
    [8192, 3355, 5243],
    [7282, 2893, 4559],
];

/// normAdjust4x4 (clause 8.5.9) for the same position classes.
const DEQUANT_V: [[i32; 3]; 6] = [
    [10, 16, 13],
    [11, 18, 14],
    [13, 20, 16],
    [14, 23, 18],
    [16, 25, 20],
    [18, 29, 23],
];

/// Largest level magnitude CAVLC can code in any context (Baseline/Main).
pub const MAX_LEVEL: i32 = 2063;

const fn position_class(i: usize) -> usize {
    let (x, y) = (i % 4, i / 4);
    match (x % 2, y % 2) {
        (0, 0) => 0,
        (1, 1) => 1,
        _ => 2,
    }
}

/// QPc for a luma QP (Table 8-15, chroma_qp_index_offset 0).
pub const fn chroma_qp(qp: u8) -> u8 {
    const HIGH: [u8; 22] = [
        29, 30, 31, 32, 32, 33, 34, 34, 35, 35, 36, 36, 37, 37, 37, 38, 38, 38, 39, 39, 39, 39,
    ];
    if qp < 30 {
        qp
    } else {
        HIGH[qp as usize - 30]
    }
}

/// Forward core transform W = Cf X Cf^T of a residual block.
pub fn forward4x4(x: &[i32; 16]) -> [i32; 16] {
    let mut t = [0i32; 16];
    for r in 0..4 {
        let [a, b, c, d] = [x[r * 4], x[r * 4 + 1], x[r * 4 + 2], x[r * 4 + 3]];
        let (s03, d03, s12, d12) = (a + d, a - d, b + c, b - c);
        t[r * 4] = s03 + s12;
        t[r * 4 + 1] = 2 * d03 + d12;
        t[r * 4 + 2] = s03 - s12;
        t[r * 4 + 3] = d03 - 2 * d12;
    }
    let mut w = [0i32; 16];
    for c in 0..4 {
        let [a, b, cc, d] = [t[c], t[4 + c], t[8 + c], t[12 + c]];
        let (s03, d03, s12, d12) = (a + d, a - d, b + cc, b - cc);
        w[c] = s03 + s12;
        w[4 + c] = 2 * d03 + d12;
        w[8 + c] = s03 - s12;
        w[12 + c] = d03 - 2 * d12;
    }
    w
}

fn inverse_1d(d: [i32; 4]) -> [i32; 4] {
    let e0 = d[0] + d[2];
    let e1 = d[0] - d[2];
    let e2 = (d[1] >> 1) - d[3];
    let e3 = d[1] + (d[3] >> 1);
    [e0 + e3, e1 + e2, e1 - e2, e0 - e3]
}

/// Inverse transform of scaled coefficients (clause 8.5.12.2): rows, then
/// columns, then `(h + 32) >> 6`.
pub fn inverse4x4(d: &[i32; 16]) -> [i32; 16] {
    let mut f = [0i32; 16];
    for r in 0..4 {
        let row = inverse_1d([d[r * 4], d[r * 4 + 1], d[r * 4 + 2], d[r * 4 + 3]]);
        f[r * 4..r * 4 + 4].copy_from_slice(&row);
    }
    let mut out = [0i32; 16];
    for c in 0..4 {
        let col = inverse_1d([f[c], f[4 + c], f[8 + c], f[12 + c]]);
        for r in 0..4 {
            out[r * 4 + c] = (col[r] + 32) >> 6;
        }
    }
    out
}

/// One row of the luma DC Hadamard matrix of clause 8.5.10:
/// rows (1 1 1 1), (1 1 -1 -1), (1 -1 -1 1), (1 -1 1 -1).
fn hadamard4(v: [i32; 4]) -> [i32; 4] {
    let (s01, d01, s23, d23) = (v[0] + v[1], v[0] - v[1], v[2] + v[3], v[2] - v[3]);
    [s01 + s23, s01 - s23, d01 - d23, d01 + d23]
}

/// The 4x4 Hadamard transform H X H (unnormalised) of a raster block.
pub fn hadamard4x4(x: &[i32; 16]) -> [i32; 16] {
    let mut t = [0i32; 16];
    for r in 0..4 {
        let row = hadamard4([x[r * 4], x[r * 4 + 1], x[r * 4 + 2], x[r * 4 + 3]]);
        t[r * 4..r * 4 + 4].copy_from_slice(&row);
    }
    let mut out = [0i32; 16];
    for c in 0..4 {
        let col = hadamard4([t[c], t[4 + c], t[8 + c], t[12 + c]]);
        for r in 0..4 {
            out[r * 4 + c] = col[r];
        }
    }
    out
}

/// The 2x2 Hadamard transform of chroma DC values `[c00, c01, c10, c11]`.
pub fn hadamard2x2(c: [i32; 4]) -> [i32; 4] {
    let (s0, d0, s1, d1) = (c[0] + c[1], c[0] - c[1], c[2] + c[3], c[2] - c[3]);
    [s0 + s1, d0 + d1, s0 - s1, d0 - d1]
}

fn quant_one(w: i32, mf: i32, qbits: u32) -> i32 {
    // Intra rounding offset: 1/3 of a step.
    let f = (1i64 << qbits) / 3;
    let mag = ((w.unsigned_abs() as i64 * mf as i64 + f) >> qbits) as i32;
    let mag = mag.min(MAX_LEVEL);
    if w < 0 {
        -mag
    } else {
        mag
    }
}

/// Quantises transform coefficients (raster order); `skip_dc` leaves
/// position 0 at 0 (it is coded by a DC transform instead).
pub fn quant4x4(w: &[i32; 16], qp: u8, skip_dc: bool) -> [i32; 16] {
    let qbits = 15 + qp as u32 / 6;
    let mf = &QUANT_MF[qp as usize % 6];
    core::array::from_fn(|i| {
        if skip_dc && i == 0 {
            0
        } else {
            quant_one(w[i], mf[position_class(i)], qbits)
        }
    })
}

/// Quantises DC-transform outputs (luma Intra16x16 after the halving, or
/// chroma DC): the position-(0,0) multiplier with one more bit of shift.
pub fn quant_dc(f: i32, qp: u8) -> i32 {
    quant_one(f, QUANT_MF[qp as usize % 6][0], 16 + qp as u32 / 6)
}

/// Scales levels (clause 8.5.12.1, flat matrices): `c * v << (qp / 6)`;
/// position 0 is left as given when `dc` is `Some`.
pub fn dequant4x4(c: &[i32; 16], qp: u8, dc: Option<i32>) -> [i32; 16] {
    let v = &DEQUANT_V[qp as usize % 6];
    let shift = qp as u32 / 6;
    core::array::from_fn(|i| match (i, dc) {
        (0, Some(dc)) => dc,
        _ => (c[i] * v[position_class(i)]) << shift,
    })
}

/// Inverse luma DC transform and scaling of Intra16x16 DC levels (raster
/// order of the 4x4 block grid; clause 8.5.10).
pub fn dequant_luma_dc(c: &[i32; 16], qp: u8) -> [i32; 16] {
    let f = hadamard4x4(c);
    let scale = 16 * DEQUANT_V[qp as usize % 6][0];
    let k = qp as u32 / 6;
    f.map(|f| {
        if qp >= 36 {
            (f * scale) << (k - 6)
        } else {
            (f * scale + (1 << (5 - k))) >> (6 - k)
        }
    })
}

/// Inverse chroma DC transform and scaling (clause 8.5.11, 4:2:0).
pub fn dequant_chroma_dc(c: [i32; 4], qpc: u8) -> [i32; 4] {
    let f = hadamard2x2(c);
    let scale = 16 * DEQUANT_V[qpc as usize % 6][0];
    f.map(|f| ((f * scale) << (qpc as u32 / 6)) >> 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_round_trip_at_qp0_is_close() {
        // At QP 0 quantisation is fine enough that the reconstruction is
        // within a few steps of the input residual.
        let x: [i32; 16] = core::array::from_fn(|i| (i as i32 * 37 % 101) - 50);
        let q = quant4x4(&forward4x4(&x), 0, false);
        let r = inverse4x4(&dequant4x4(&q, 0, None));
        for i in 0..16 {
            assert!((r[i] - x[i]).abs() <= 2, "{i}: {} vs {}", r[i], x[i]);
        }
    }

    #[test]
    fn flat_block_has_only_dc() {
        let w = forward4x4(&[10; 16]);
        assert_eq!(w[0], 160);
        assert!(w[1..].iter().all(|&v| v == 0));
        let d = dequant4x4(&quant4x4(&w, 12, false), 12, None);
        assert_eq!(inverse4x4(&d), [10; 16]);
    }

    #[test]
    fn chroma_qp_table() {
        assert_eq!(chroma_qp(29), 29);
        assert_eq!(chroma_qp(30), 29);
        assert_eq!(chroma_qp(40), 36);
        assert_eq!(chroma_qp(51), 39);
    }
}
