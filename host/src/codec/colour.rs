//! Sample preparation before the wavelet transform and its inverse after
//! it: DC level shift, fractional bits, and the colour transforms of the
//! first three components.
//!
//! Everything is integer arithmetic, so the same samples come out on every
//! machine: the RCT is JPEG 2000's reversible transform, the ICT its YCbCr
//! matrix in Q14 fixed point (irreversible, rounded). Samples carry
//! `fraction_bits` fractional bits from the shift on, so the ICT's rounding
//! and the transform's rounding stay well below the quantization noise.

use rayon::prelude::*;

use super::format::ColourTransform;

/// Q14 ICT analysis matrix rows (Y, Cb, Cr); each row's coefficients sum
/// to 16384 (Y) or 0 (Cb, Cr), so grey stays grey.
const ICT_FORWARD: [[i64; 3]; 3] = [
    [4899, 9617, 1868],
    [-2765, -5427, 8192],
    [8192, -6860, -1332],
];
/// Q14 ICT synthesis: R = Y + a·Cr, G = Y - b·Cb - c·Cr, B = Y + d·Cb.
const ICT_CR_R: i64 = 22970;
const ICT_CB_G: i64 = 5638;
const ICT_CR_G: i64 = 11700;
const ICT_CB_B: i64 = 29032;
const HALF_Q14: i64 = 1 << 13;

/// Rows per parallel work item.
const CHUNK: usize = 1 << 14;

fn saturate(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

/// Forward colour transform of the first three planes, in place.
pub fn forward<P: AsMut<[i32]>>(transform: ColourTransform, planes: &mut [P]) {
    let [a, b, c, ..] = planes else { return };
    let rows = a
        .as_mut()
        .par_chunks_mut(CHUNK)
        .zip(b.as_mut().par_chunks_mut(CHUNK))
        .zip(c.as_mut().par_chunks_mut(CHUNK));
    match transform {
        ColourTransform::None => {}
        ColourTransform::Rct => rows.for_each(|((r, g), b)| {
            for ((r, g), b) in r.iter_mut().zip(g.iter_mut()).zip(b.iter_mut()) {
                let (rv, gv, bv) = (*r, *g, *b);
                *r = (rv.wrapping_add(gv.wrapping_mul(2)).wrapping_add(bv)) >> 2;
                *g = bv.wrapping_sub(gv);
                *b = rv.wrapping_sub(gv);
            }
        }),
        ColourTransform::Ict => rows.for_each(|((r, g), b)| {
            for ((r, g), b) in r.iter_mut().zip(g.iter_mut()).zip(b.iter_mut()) {
                let x = [*r as i64, *g as i64, *b as i64];
                let row = |m: [i64; 3]| {
                    saturate((m[0] * x[0] + m[1] * x[1] + m[2] * x[2] + HALF_Q14) >> 14)
                };
                *r = row(ICT_FORWARD[0]);
                *g = row(ICT_FORWARD[1]);
                *b = row(ICT_FORWARD[2]);
            }
        }),
    }
}

/// Inverse colour transform of the first three planes, in place. Any input
/// is accepted (decoded data is untrusted): arithmetic wraps or saturates.
pub fn inverse(transform: ColourTransform, planes: &mut [Vec<i32>]) {
    let [a, b, c, ..] = planes else { return };
    a.par_chunks_mut(CHUNK)
        .zip(b.par_chunks_mut(CHUNK))
        .zip(c.par_chunks_mut(CHUNK))
        .for_each(|((y, cb), cr)| inverse_chunk(transform, y, cb, cr));
}

/// [`inverse`] of one chunk of the three planes.
#[inline(always)]
fn inverse_chunk(transform: ColourTransform, y: &mut [i32], cb: &mut [i32], cr: &mut [i32]) {
    match transform {
        ColourTransform::None => {}
        ColourTransform::Rct => {
            for ((y, cb), cr) in y.iter_mut().zip(cb.iter_mut()).zip(cr.iter_mut()) {
                let g = y.wrapping_sub(cb.wrapping_add(*cr) >> 2);
                let (r, b) = (cr.wrapping_add(g), cb.wrapping_add(g));
                (*y, *cb, *cr) = (r, g, b);
            }
        }
        ColourTransform::Ict => {
            for ((y, cb), cr) in y.iter_mut().zip(cb.iter_mut()).zip(cr.iter_mut()) {
                let (yv, cbv, crv) = (*y as i64, *cb as i64, *cr as i64);
                let r = yv + ((ICT_CR_R * crv + HALF_Q14) >> 14);
                let g = yv + ((-ICT_CB_G * cbv - ICT_CR_G * crv + HALF_Q14) >> 14);
                let b = yv + ((ICT_CB_B * cbv + HALF_Q14) >> 14);
                (*y, *cb, *cr) = (saturate(r), saturate(g), saturate(b));
            }
        }
    }
}

/// The decoder's last two steps at once: [`inverse`] then [`shift_out`] of
/// every plane, chunk by chunk, so that each sample is read and written
/// once instead of twice (compiled for the CPU: `fastest!`).
pub fn inverse_shift_out(
    transform: ColourTransform,
    planes: &mut [Vec<i32>],
    bit_depth: u8,
    signed: bool,
    fraction_bits: u8,
) {
    let out = ShiftOut::new(bit_depth, signed, fraction_bits);
    let rest = match planes {
        [a, b, c, rest @ ..] if transform != ColourTransform::None => {
            a.par_chunks_mut(CHUNK)
                .zip(b.par_chunks_mut(CHUNK))
                .zip(c.par_chunks_mut(CHUNK))
                .for_each(|((y, cb), cr)| inverse_shift_chunk(transform, out, y, cb, cr));
            rest
        }
        all => all,
    };
    for p in rest {
        p.par_chunks_mut(CHUNK)
            .for_each(|chunk| shift_chunk(out, chunk));
    }
}

/// [`inverse_shift_out`] with the result also interleaved into `out`
/// (pixel by pixel, each sample through `narrow`), chunk by chunk while
/// the chunk is in cache: the decoder's interleaved output without a
/// second pass over the planes. The planes hold the planar result after.
pub fn inverse_shift_out_interleaved<T: Copy + Send>(
    transform: ColourTransform,
    planes: &mut [Vec<i32>],
    (bit_depth, signed, fraction_bits): (u8, bool, u8),
    out: &mut [T],
    narrow: impl Fn(i32) -> T + Sync,
) {
    let shift = ShiftOut::new(bit_depth, signed, fraction_bits);
    let comps = planes.len();
    if comps == 0 {
        return;
    }
    chunk_groups(planes.iter_mut().map(|p| p.as_mut_slice()))
        .into_par_iter()
        .zip(out.par_chunks_mut(CHUNK * comps))
        .for_each(|(mut group, out)| {
            let rest = match &mut group[..] {
                [y, cb, cr, rest @ ..] if transform != ColourTransform::None => {
                    inverse_shift_chunk(transform, shift, y, cb, cr);
                    rest
                }
                all => all,
            };
            for p in rest {
                shift_chunk(shift, p);
            }
            interleave(&group, out, &narrow);
        });
}

crate::fastest! {
    /// `out[comps * i + c] = narrow(planes[c][i])`: the planes of one
    /// chunk interleaved pixel by pixel. Compiled for the CPU: as a loop
    /// in the caller's closure it ran as baseline scalar code, a strided
    /// byte store per sample (docs/perf/codec.md, "The CPU decoder's
    /// count planes and sign contexts"). Three planes of one length (RGB)
    /// and one plane go through loops of their own with the pixel's width
    /// known; any other count sample by sample.
    fn interleave<T: Copy, F: Fn(i32) -> T>(planes: &[&mut [i32]], out: &mut [T], narrow: &F) -> () {
        match planes {
            [a] => {
                for (o, &v) in out.iter_mut().zip(a.iter()) {
                    *o = narrow(v);
                }
            }
            [a, b, c] if a.len() == b.len() && a.len() == c.len() => {
                let planes = a.iter().zip(b.iter()).zip(c.iter());
                for (px, ((&a, &b), &c)) in out.chunks_exact_mut(3).zip(planes) {
                    px[0] = narrow(a);
                    px[1] = narrow(b);
                    px[2] = narrow(c);
                }
            }
            _ => {
                let comps = planes.len();
                for (c, plane) in planes.iter().enumerate() {
                    for (px, &v) in out.chunks_exact_mut(comps).zip(plane.iter()) {
                        px[c] = narrow(v);
                    }
                }
            }
        }
    }
}

crate::fastest! {
    /// [`inverse_chunk`] then [`ShiftOut::apply`] of the three chunks.
    fn inverse_shift_chunk(
        transform: ColourTransform,
        out: ShiftOut,
        y: &mut [i32],
        cb: &mut [i32],
        cr: &mut [i32],
    ) {
        inverse_chunk(transform, y, cb, cr);
        for p in [y, cb, cr] {
            out.apply(p);
        }
    }
}

crate::fastest! {
    /// [`ShiftOut::apply`] of one chunk.
    fn shift_chunk(out: ShiftOut, chunk: &mut [i32]) {
        out.apply(chunk)
    }
}

/// How much squared error in each transformed component becomes in the
/// image: the squared norms of the synthesis matrix's columns (the error of
/// a fourth, untransformed component counts once).
pub fn component_weights(transform: ColourTransform) -> [f64; 4] {
    let q = |v: i64| v as f64 / 16384.0;
    match transform {
        ColourTransform::None => [1.0; 4],
        ColourTransform::Rct => [3.0, 11.0 / 16.0, 11.0 / 16.0, 1.0],
        ColourTransform::Ict => [
            3.0,
            q(ICT_CB_G).powi(2) + q(ICT_CB_B).powi(2),
            q(ICT_CR_R).powi(2) + q(ICT_CR_G).powi(2),
            1.0,
        ],
    }
}

/// Samples to transform input: level shift (unsigned samples become
/// centred on 0), then `fraction_bits` fractional bits.
fn level_shift(
    bit_depth: u8,
    signed: bool,
    fraction_bits: u8,
) -> impl Fn(i32) -> i32 + Copy + Sync {
    let offset = if signed { 0 } else { 1i32 << (bit_depth - 1) };
    move |v| (v - offset) << fraction_bits
}

/// `level_shift` of every sample of `plane`, in place.
pub fn shift_in(plane: &mut [i32], bit_depth: u8, signed: bool, fraction_bits: u8) {
    let shift = level_shift(bit_depth, signed, fraction_bits);
    plane.par_chunks_mut(CHUNK).for_each(|chunk| {
        for v in chunk {
            *v = shift(*v);
        }
    });
}

/// [`shift_in`] of `plane` into `out` (the same length): the copy the
/// encoder needs anyway, made in the same parallel pass instead of a serial
/// clone first.
pub fn shifted_into(
    plane: &[i32],
    out: &mut [i32],
    bit_depth: u8,
    signed: bool,
    fraction_bits: u8,
) {
    let shift = level_shift(bit_depth, signed, fraction_bits);
    out.par_chunks_mut(CHUNK)
        .zip(plane.par_chunks(CHUNK))
        .for_each(|(dst, src)| {
            for (d, v) in dst.iter_mut().zip(src) {
                *d = shift(*v);
            }
        });
}

/// [`shift_in`] of interleaved samples (pixels of `planes.len()`
/// samples) into one plane per component: the encoder's planes made from
/// interleaved samples in the level shift's own pass, chunk by chunk so
/// that each chunk of pixels is read from cache for every plane.
pub fn shifted_from<T: Copy + Into<i32> + Sync>(
    samples: &[T],
    planes: Vec<&mut [i32]>,
    bit_depth: u8,
    signed: bool,
    fraction_bits: u8,
) {
    let comps = planes.len();
    if comps == 0 {
        return;
    }
    let shift = level_shift(bit_depth, signed, fraction_bits);
    chunk_groups(planes)
        .into_par_iter()
        .zip(samples.par_chunks(CHUNK * comps))
        .for_each(|(mut group, src)| {
            for (c, plane) in group.iter_mut().enumerate() {
                for (d, px) in plane.iter_mut().zip(src.chunks_exact(comps)) {
                    *d = shift(px[c].into());
                }
            }
        });
}

/// The `k`-th [`CHUNK`] of every plane together, for every `k`: the
/// pixels of one parallel task in the passes between planes and
/// interleaved samples.
fn chunk_groups<'a>(planes: impl IntoIterator<Item = &'a mut [i32]>) -> Vec<Vec<&'a mut [i32]>> {
    let mut groups: Vec<Vec<&mut [i32]>> = Vec::new();
    for plane in planes {
        for (k, chunk) in plane.chunks_mut(CHUNK).enumerate() {
            match groups.get_mut(k) {
                Some(group) => group.push(chunk),
                None => groups.push(vec![chunk]),
            }
        }
    }
    groups
}

/// [`shift_in`] of `plane` appended to `out`: written in parallel straight
/// into `out`'s spare capacity, so its pages are written once rather than
/// zeroed first.
pub fn extend_shifted(
    out: &mut Vec<i32>,
    plane: &[i32],
    bit_depth: u8,
    signed: bool,
    fraction_bits: u8,
) {
    let shift = level_shift(bit_depth, signed, fraction_bits);
    out.par_extend(plane.par_iter().with_min_len(CHUNK).map(|&v| shift(v)));
}

/// Inverse of [`shift_in`]: rounds the fractional bits away, undoes the
/// level shift and clamps to the sample range.
pub fn shift_out(plane: &mut [i32], bit_depth: u8, signed: bool, fraction_bits: u8) {
    let out = ShiftOut::new(bit_depth, signed, fraction_bits);
    plane
        .par_chunks_mut(CHUNK)
        .for_each(|chunk| shift_chunk(out, chunk));
}

/// [`shift_out`]'s arithmetic: `clamp(((v + half) >> fraction_bits) +
/// offset, lo, hi)`, computed in `i32` so that it vectorizes. Equal to the
/// exact (wide) form for every `v`: the clamp moves to before the offset,
/// and where `v + half` saturates the exact result is above `hi` as well,
/// since `i32::MAX >> 8` exceeds every 16-bit range (fraction bits <= 8,
/// bit depth <= 16; `shift_out_equals_the_wide_form` checks the extremes).
#[derive(Debug, Clone, Copy)]
struct ShiftOut {
    half: i32,
    fraction_bits: u32,
    offset: i32,
    lo: i32,
    hi: i32,
}

impl ShiftOut {
    fn new(bit_depth: u8, signed: bool, fraction_bits: u8) -> Self {
        let (lo, hi) = sample_range(bit_depth, signed);
        let offset = if signed { 0 } else { 1i32 << (bit_depth - 1) };
        let half = if fraction_bits == 0 {
            0
        } else {
            1i32 << (fraction_bits - 1)
        };
        ShiftOut {
            half,
            fraction_bits: fraction_bits as u32,
            offset,
            lo: lo - offset,
            hi: hi - offset,
        }
    }

    #[inline(always)]
    fn apply(self, samples: &mut [i32]) {
        for v in samples {
            let x = v.saturating_add(self.half) >> self.fraction_bits;
            *v = x.clamp(self.lo, self.hi) + self.offset;
        }
    }
}

/// Smallest and largest sample of a bit depth.
pub fn sample_range(bit_depth: u8, signed: bool) -> (i32, i32) {
    if signed {
        (-(1 << (bit_depth - 1)), (1 << (bit_depth - 1)) - 1)
    } else {
        (0, (1 << bit_depth) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interleaved form of the decoder's last step writes what the
    /// planar one leaves in the planes, pixel by pixel, over several
    /// chunks and a partial last one, for every transform and 1..=4
    /// components.
    #[test]
    fn interleaved_inverse_equals_the_planar_one() {
        let n = 2 * CHUNK + 37;
        for transform in [
            ColourTransform::None,
            ColourTransform::Rct,
            ColourTransform::Ict,
        ] {
            for comps in 1..=4usize {
                let planes: Vec<Vec<i32>> = (0..comps)
                    .map(|c| {
                        (0..n)
                            .map(|i| ((i * 7919 + c * 131) % 9000) as i32 - 4500)
                            .collect()
                    })
                    .collect();
                let mut want = planes.clone();
                inverse_shift_out(transform, &mut want, 12, false, 2);
                let mut got = planes;
                let mut out = vec![0u16; n * comps];
                let how = (12, false, 2);
                inverse_shift_out_interleaved(transform, &mut got, how, &mut out, |v| v as u16);
                assert_eq!(got, want, "{transform:?} {comps}");
                for (i, px) in out.chunks_exact(comps).enumerate() {
                    for (c, &v) in px.iter().enumerate() {
                        assert_eq!(v as i32, want[c][i], "{transform:?} {comps} at {i}");
                    }
                }
            }
        }
    }

    /// Interleaved samples shifted into planes give what each plane's own
    /// samples shifted give, over several chunks and a partial last one.
    #[test]
    fn shifted_from_interleaved_equals_each_plane_shifted() {
        let n = 2 * CHUNK + 5;
        for comps in 1..=4usize {
            let samples: Vec<u16> = (0..n * comps).map(|i| (i * 40503 % 4096) as u16).collect();
            let mut planes = vec![vec![0i32; n]; comps];
            shifted_from(
                &samples,
                planes.iter_mut().map(|p| p.as_mut_slice()).collect(),
                12,
                false,
                3,
            );
            for (c, plane) in planes.iter().enumerate() {
                let own: Vec<i32> = samples
                    .iter()
                    .skip(c)
                    .step_by(comps)
                    .map(|&v| v as i32)
                    .collect();
                let mut want = vec![0; n];
                shifted_into(&own, &mut want, 12, false, 3);
                assert_eq!(plane, &want, "{comps} components, plane {c}");
            }
        }
    }

    #[test]
    fn rct_is_reversible_on_extreme_values() {
        let vals = [-32768, -32767, -1, 0, 1, 255, 32767];
        let mut planes = vec![Vec::new(), Vec::new(), Vec::new()];
        for &r in &vals {
            for &g in &vals {
                for &b in &vals {
                    planes[0].push(r);
                    planes[1].push(g);
                    planes[2].push(b);
                }
            }
        }
        let original = planes.clone();
        forward(ColourTransform::Rct, &mut planes);
        inverse(ColourTransform::Rct, &mut planes);
        assert_eq!(planes, original);
    }

    #[test]
    fn shift_out_equals_the_wide_form() {
        let mut values = vec![i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX];
        values.extend((-70000..70000).step_by(7));
        values.extend((0..31).flat_map(|b| [1i32 << b, -(1i32 << b), (1i32 << b) - 1]));
        for bit_depth in [1u8, 8, 12, 16] {
            for signed in [false, true] {
                for fraction_bits in 0..=8u8 {
                    let (lo, hi) = sample_range(bit_depth, signed);
                    let offset = if signed { 0 } else { 1i64 << (bit_depth - 1) };
                    let half = if fraction_bits == 0 {
                        0
                    } else {
                        1i64 << (fraction_bits - 1)
                    };
                    let mut got = values.clone();
                    shift_out(&mut got, bit_depth, signed, fraction_bits);
                    for (&v, &g) in values.iter().zip(&got) {
                        let x = ((v as i64 + half) >> fraction_bits) + offset;
                        let want = x.clamp(lo as i64, hi as i64) as i32;
                        assert_eq!(
                            g, want,
                            "v {v}, depth {bit_depth}, signed {signed}, fraction {fraction_bits}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_fused_inverse_equals_the_two_steps() {
        let values = [
            i32::MIN,
            -40000,
            -129,
            -1,
            0,
            1,
            127,
            255,
            4095,
            70000,
            i32::MAX,
        ];
        for transform in [
            ColourTransform::None,
            ColourTransform::Rct,
            ColourTransform::Ict,
        ] {
            for components in [1usize, 3, 4] {
                let planes: Vec<Vec<i32>> = (0..components)
                    .map(|c| {
                        (0..values.len().pow(2))
                            .map(|i| values[(i / values.len().pow(c.min(2) as u32)) % values.len()])
                            .collect()
                    })
                    .collect();
                let mut want = planes.clone();
                inverse(transform, &mut want);
                for p in want.iter_mut() {
                    shift_out(p, 8, false, 4);
                }
                let mut got = planes;
                inverse_shift_out(transform, &mut got, 8, false, 4);
                assert_eq!(got, want, "{transform:?}, {components} components");
            }
        }
    }

    #[test]
    fn ict_round_trip_error_is_small_with_fraction_bits() {
        let mut planes: Vec<Vec<i32>> = [37, 101, 7]
            .iter()
            .map(|m| (0..4096).map(|i| (i * m) % 256).collect())
            .collect();
        let original = planes.clone();
        for p in planes.iter_mut() {
            shift_in(p, 8, false, 4);
        }
        forward(ColourTransform::Ict, &mut planes);
        inverse(ColourTransform::Ict, &mut planes);
        for p in planes.iter_mut() {
            shift_out(p, 8, false, 4);
        }
        let worst = planes
            .iter()
            .flatten()
            .zip(original.iter().flatten())
            .map(|(a, b)| (a - b).abs())
            .max();
        assert!(worst <= Some(1), "worst {worst:?}");
        // Grey stays grey: chroma of R = G = B is 0.
        let mut grey = vec![vec![100 << 4], vec![100 << 4], vec![100 << 4]];
        forward(ColourTransform::Ict, &mut grey);
        assert_eq!((grey[0][0], grey[1][0], grey[2][0]), (100 << 4, 0, 0));
    }
}
