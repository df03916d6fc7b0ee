//! DWT targets: forward → inverse round trips in 2-D and 3-D for every
//! wavelet (core and CPU backend, equal bits, nothing written outside the
//! layout), and the plain level vs the block-based form the shaders run.

use wavelane::backend::Backend;
use wavelane::dwt as host_dwt;
use wavelane::dwt::HostWavelet;
use wavelane_core::dwt::block::{
    forward_level_blocked, inverse_level_blocked, BlockGeometry, LevelShape,
};
use wavelane_core::dwt::volume::{self, VolumeLayout};
use wavelane_core::dwt::{
    self, forward_level_2d, inverse_level_2d, Cdf53, Cdf97, Fixed97, ImageLayout, Lifting,
};

use super::input::{Input, SeedWriter};

/// What the targets need of a sample type beyond [`HostWavelet`].
pub trait FuzzSample: Copy + PartialEq + core::fmt::Debug {
    /// A sample from fuzz input: full range or small (`wide` false).
    fn read(inp: &mut Input<'_>, wide: bool) -> Self;
    /// A value written around layouts to detect stray writes.
    const GUARD: Self;
    /// Bitwise identity (NaN-safe for floats).
    fn bits(self) -> u32;
    /// Whether a round trip returned `original` (exact for the integer
    /// wavelets; within float error for the 9/7).
    fn close_to(self, original: Self, scale: f64) -> bool;
}

impl FuzzSample for i32 {
    fn read(inp: &mut Input<'_>, wide: bool) -> Self {
        if wide {
            inp.u32() as i32
        } else {
            inp.u16() as i16 as i32
        }
    }
    const GUARD: i32 = 0x5a5a_5a5a;
    fn bits(self) -> u32 {
        self as u32
    }
    fn close_to(self, original: Self, _scale: f64) -> bool {
        self == original
    }
}

impl FuzzSample for f32 {
    fn read(inp: &mut Input<'_>, wide: bool) -> Self {
        let v = inp.u16() as i16 as f32;
        if wide {
            v * 1024.0
        } else {
            v
        }
    }
    const GUARD: f32 = 1.2345e-19;
    fn bits(self) -> u32 {
        self.to_bits()
    }
    fn close_to(self, original: Self, scale: f64) -> bool {
        ((self - original).abs() as f64) <= 1e-5 * scale + 1e-3
    }
}

fn same_bits<T: FuzzSample>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

/// Positions of `l` that are inside the volume.
fn inside(l: &VolumeLayout, i: usize) -> bool {
    let z = i / l.slice_stride;
    let r = i % l.slice_stride;
    z < l.depth && r / l.row_stride < l.height && r % l.row_stride < l.width
}

fn roundtrip<W: HostWavelet>(inp: &mut Input<'_>)
where
    W::Sample: FuzzSample,
{
    let wide = inp.bool();
    let (w, h, d) = (inp.range(1, 80), inp.range(1, 80), inp.range(1, 4));
    let pad = inp.range(0, 3);
    let levels = [
        inp.range(0, 8) as u32,
        inp.range(0, 8) as u32,
        inp.range(0, 3) as u32,
    ];
    let row_stride = w + pad;
    let slice_stride = row_stride * h + pad;
    let layout = VolumeLayout {
        width: w,
        height: h,
        depth: d,
        row_stride,
        slice_stride,
    };
    let len = slice_stride * d + pad;
    let extra_scratch = inp.range(0, 40);
    let mut original = vec![<W::Sample as FuzzSample>::GUARD; len];
    for (i, v) in original.iter_mut().enumerate() {
        if inside(&layout, i) {
            *v = <W::Sample as FuzzSample>::read(inp, wide);
        }
    }
    let mut scratch = vec![W::Sample::default(); volume::scratch_len_3d(w, h, d) + extra_scratch];

    let mut core_fwd = original.clone();
    let core_result = volume::forward_3d::<W>(&mut core_fwd, layout, levels, &mut scratch);
    let mut host_fwd = original.clone();
    let host_result = host_dwt::forward_3d::<W>(&Backend::Cpu, &mut host_fwd, layout, levels);
    assert_eq!(
        core_result.is_ok(),
        host_result.is_ok(),
        "core {core_result:?} vs CPU backend"
    );
    let Ok(()) = core_result else {
        assert_eq!(core_result, Err(dwt::DwtError::TooManyLevels));
        return;
    };
    assert!(
        same_bits(&core_fwd, &host_fwd),
        "CPU backend forward differs from core"
    );
    for (i, (a, b)) in core_fwd.iter().zip(&original).enumerate() {
        assert!(
            inside(&layout, i) || a.bits() == b.bits(),
            "forward wrote outside at {i}"
        );
    }
    if d == 1 && levels[2] == 0 && levels[0] == levels[1] {
        let plane = ImageLayout::with_stride(w, h, row_stride);
        let mut two_d = original.clone();
        dwt::forward_2d::<W>(&mut two_d, plane, levels[0], &mut scratch).expect("2-D forward");
        assert!(
            same_bits(&two_d, &core_fwd),
            "2-D and 3-D transforms differ"
        );
    }

    let mut core_inv = core_fwd.clone();
    volume::inverse_3d::<W>(&mut core_inv, layout, levels, &mut scratch).expect("inverse");
    host_dwt::inverse_3d::<W>(&Backend::Cpu, &mut host_fwd, layout, levels).expect("host inverse");
    assert!(
        same_bits(&core_inv, &host_fwd),
        "CPU backend inverse differs from core"
    );
    let scale = if wide { 32768.0 * 1024.0 } else { 32768.0 };
    for (i, (a, b)) in core_inv.iter().zip(&original).enumerate() {
        assert!(
            a.close_to(*b, scale),
            "round trip changed sample {i}: {b:?} -> {a:?}"
        );
    }
}

/// Round-trip target: a wavelet, a volume (depth 1 is an image) with
/// padded strides, per-axis levels (too many is an error) and samples.
pub fn dwt_roundtrip(data: &[u8]) {
    let mut inp = Input::new(data);
    match inp.range(0, 2) {
        0 => roundtrip::<Cdf53>(&mut inp),
        1 => roundtrip::<Fixed97>(&mut inp),
        _ => roundtrip::<Cdf97>(&mut inp),
    }
}

fn blocked<W: Lifting>(inp: &mut Input<'_>)
where
    W::Sample: FuzzSample,
{
    let wide = inp.bool();
    let (w, h) = (inp.range(1, 80), inp.range(1, 80));
    let stride = w + inp.range(0, 3);
    let halo = W::WAVELET.halo_pairs();
    let geometry = |inp: &mut Input<'_>| {
        BlockGeometry::new(
            W::WAVELET,
            inp.range(2 * halo + 1, 2 * halo + 12),
            inp.range(2 * halo + 1, 2 * halo + 12),
        )
        .expect("room for output")
    };
    let (g1, g2) = (geometry(inp), geometry(inp));
    let n = (h - 1) * stride + w;
    let src: Vec<W::Sample> = (0..n)
        .map(|i| {
            if i % stride < w {
                <W::Sample as FuzzSample>::read(inp, wide)
            } else {
                <W::Sample as FuzzSample>::GUARD
            }
        })
        .collect();
    let layout = ImageLayout::with_stride(w, h, stride);
    let mut scratch = vec![W::Sample::default(); dwt::scratch_len_2d(w, h)];
    let mut plain = src.clone();
    forward_level_2d::<W>(&mut plain, layout, &mut scratch).expect("plain forward level");

    let shape = LevelShape::level_2d(w, h);
    let (lw, lh) = shape.ll_size();
    let guard = <W::Sample as FuzzSample>::GUARD;
    for g in [g1, g2] {
        let mut block = vec![W::Sample::default(); g.block_len()];
        let mut out = vec![guard; n];
        forward_level_blocked::<W>(
            (&src, stride),
            shape,
            (&mut out, stride),
            None,
            g,
            &mut block,
        )
        .expect("blocked forward");
        assert!(same_bits(&out, &plain), "blocked forward differs ({g:?})");

        // LL into its own compact buffer: details stay in `out`.
        let mut out2 = vec![guard; n];
        let mut ll = vec![guard; lw * lh];
        forward_level_blocked::<W>(
            (&src, stride),
            shape,
            (&mut out2, stride),
            Some((&mut ll, lw)),
            g,
            &mut block,
        )
        .expect("blocked forward with LL buffer");
        for y in 0..h {
            for x in 0..w {
                let i = y * stride + x;
                let want = if x < lw && y < lh { guard } else { plain[i] };
                assert_eq!(
                    out2[i].bits(),
                    want.bits(),
                    "detail/LL split at ({x}, {y}), {g:?}"
                );
                if x < lw && y < lh {
                    assert_eq!(ll[y * lw + x].bits(), plain[i].bits(), "LL at ({x}, {y})");
                }
            }
        }

        let mut back = vec![guard; n];
        inverse_level_blocked::<W>(
            (&plain, stride),
            None,
            shape,
            (&mut back, stride),
            g,
            &mut block,
        )
        .expect("blocked inverse");
        let mut want = plain.clone();
        inverse_level_2d::<W>(&mut want, layout, &mut scratch).expect("plain inverse level");
        for i in (0..n).filter(|i| i % stride < w) {
            assert_eq!(
                back[i].bits(),
                want[i].bits(),
                "blocked inverse at {i}, {g:?}"
            );
        }
        let mut back2 = vec![guard; n];
        inverse_level_blocked::<W>(
            (&out2, stride),
            Some((&ll, lw)),
            shape,
            (&mut back2, stride),
            g,
            &mut block,
        )
        .expect("blocked inverse with LL buffer");
        assert!(same_bits(&back, &back2), "LL buffer changed the inverse");
    }
}

/// Differential target: one 2-D level by the plain transform and by the
/// block-based form at two block geometries, forward and inverse, with the
/// LL band in place or in its own buffer. Integer samples span the full
/// `i32` range (arithmetic wraps, as on the GPU).
pub fn dwt_blocked_diff(data: &[u8]) {
    let mut inp = Input::new(data);
    match inp.range(0, 2) {
        0 => blocked::<Cdf53>(&mut inp),
        1 => blocked::<Fixed97>(&mut inp),
        _ => blocked::<Cdf97>(&mut inp),
    }
}

/// Seeds: each wavelet on odd and even sizes, 2-D and 3-D.
pub fn seeds_roundtrip() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for wavelet in 0..3u8 {
        for (w, h, d, levels) in [
            (16u8, 16u8, 1u8, [3u8, 3, 0]),
            (13, 7, 1, [2, 2, 0]),
            (9, 5, 3, [2, 1, 1]),
        ] {
            let mut s = SeedWriter::new()
                .u8(wavelet)
                .u8(0)
                .u8(w - 1)
                .u8(h - 1)
                .u8(d - 1)
                .u8(1)
                .bytes(&levels)
                .u8(0);
            for i in 0..(w as u16 * h as u16 * d as u16) {
                s = s.u16((i * 37 % 512).wrapping_sub(256));
            }
            seeds.push(s.finish());
        }
    }
    seeds
}

/// Seeds for [`dwt_blocked_diff`].
pub fn seeds_blocked() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for wavelet in 0..3u8 {
        for (w, h) in [(24u8, 20u8), (11, 3), (1, 9)] {
            let mut s = SeedWriter::new()
                .u8(wavelet)
                .u8(0)
                .u8(w - 1)
                .u8(h - 1)
                .u8(1)
                .bytes(&[3, 5, 9, 2]);
            for i in 0..(w as u16 * h as u16) {
                s = s.u16((i * 91 % 1000).wrapping_sub(500));
            }
            seeds.push(s.finish());
        }
    }
    seeds
}
