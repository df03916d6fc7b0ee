//! Intra prediction (clause 8.3): the nine 4x4 luma modes, the four 16x16
//! luma modes and the four chroma modes. Each function takes the
//! reconstructed neighbouring samples that are available (`None` when not)
//! and returns the prediction in raster order, or `None` when the mode needs
//! samples that are not available.

/// The neighbours of a 4x4 block: `top` holds p[0..8, -1] (p[4..8, -1]
/// already replaced by p[3, -1] when the top-right block is unavailable).
#[derive(Debug, Clone, Copy)]
pub struct Edges4 {
    /// p[x, -1] for x = 0..8.
    pub top: Option<[u8; 8]>,
    /// p[-1, y] for y = 0..4.
    pub left: Option<[u8; 4]>,
    /// p[-1, -1].
    pub top_left: Option<u8>,
}

/// Intra4x4PredMode values (Table 8-2).
pub const I4_VERTICAL: u8 = 0;
/// Horizontal 4x4 prediction.
pub const I4_HORIZONTAL: u8 = 1;
/// DC 4x4 prediction: the mode assumed for unavailable neighbours.
pub const I4_DC: u8 = 2;

fn avg2(a: u8, b: u8) -> u8 {
    ((a as u16 + b as u16 + 1) >> 1) as u8
}

fn avg3(a: u8, b: u8, c: u8) -> u8 {
    ((a as u16 + 2 * b as u16 + c as u16 + 2) >> 2) as u8
}

/// 4x4 luma prediction for Intra4x4PredMode `mode` (0..9).
pub fn predict4x4(mode: u8, e: &Edges4) -> Option<[u8; 16]> {
    let need_all = matches!(mode, 4..=6);
    if need_all && (e.top.is_none() || e.left.is_none() || e.top_left.is_none()) {
        return None;
    }
    let t = e.top.unwrap_or([0; 8]);
    let l = e.left.unwrap_or([0; 4]);
    let tl = e.top_left.unwrap_or(0);
    // p[x, -1] for x = -1..8 and p[-1, y] for y = -1..4.
    let pt = |x: i32| if x < 0 { tl } else { t[x as usize] };
    let pl = |y: i32| if y < 0 { tl } else { l[y as usize] };
    let mut out = [0u8; 16];
    for y in 0..4i32 {
        for x in 0..4i32 {
            out[(y * 4 + x) as usize] = match mode {
                0 => t[x as usize],
                1 => l[y as usize],
                2 => match (e.top, e.left) {
                    (Some(t), Some(l)) => {
                        ((t[..4].iter().chain(&l).map(|&v| v as u16).sum::<u16>() + 4) >> 3) as u8
                    }
                    (Some(t), None) => {
                        ((t[..4].iter().map(|&v| v as u16).sum::<u16>() + 2) >> 2) as u8
                    }
                    (None, Some(l)) => ((l.iter().map(|&v| v as u16).sum::<u16>() + 2) >> 2) as u8,
                    (None, None) => 128,
                },
                3 => {
                    if x == 3 && y == 3 {
                        ((t[6] as u16 + 3 * t[7] as u16 + 2) >> 2) as u8
                    } else {
                        avg3(pt(x + y), pt(x + y + 1), pt(x + y + 2))
                    }
                }
                4 => match x.cmp(&y) {
                    core::cmp::Ordering::Greater => avg3(pt(x - y - 2), pt(x - y - 1), pt(x - y)),
                    core::cmp::Ordering::Less => avg3(pl(y - x - 2), pl(y - x - 1), pl(y - x)),
                    core::cmp::Ordering::Equal => avg3(pt(0), tl, pl(0)),
                },
                5 => {
                    let z = 2 * x - y;
                    match z {
                        0 | 2 | 4 | 6 => avg2(pt(x - (y >> 1) - 1), pt(x - (y >> 1))),
                        1 | 3 | 5 => {
                            avg3(pt(x - (y >> 1) - 2), pt(x - (y >> 1) - 1), pt(x - (y >> 1)))
                        }
                        -1 => avg3(pl(0), tl, pt(0)),
                        _ => avg3(pl(y - 1), pl(y - 2), pl(y - 3)),
                    }
                }
                6 => {
                    let z = 2 * y - x;
                    match z {
                        0 | 2 | 4 | 6 => avg2(pl(y - (x >> 1) - 1), pl(y - (x >> 1))),
                        1 | 3 | 5 => {
                            avg3(pl(y - (x >> 1) - 2), pl(y - (x >> 1) - 1), pl(y - (x >> 1)))
                        }
                        -1 => avg3(pl(0), tl, pt(0)),
                        _ => avg3(pt(x - 1), pt(x - 2), pt(x - 3)),
                    }
                }
                7 => {
                    let i = x + (y >> 1);
                    if y % 2 == 0 {
                        avg2(pt(i), pt(i + 1))
                    } else {
                        avg3(pt(i), pt(i + 1), pt(i + 2))
                    }
                }
                8 => {
                    let z = x + 2 * y;
                    let i = y + (x >> 1);
                    match z {
                        0 | 2 | 4 => avg2(pl(i), pl(i + 1)),
                        1 | 3 => avg3(pl(i), pl(i + 1), pl(i + 2)),
                        5 => ((l[2] as u16 + 3 * l[3] as u16 + 2) >> 2) as u8,
                        _ => l[3],
                    }
                }
                _ => return None,
            };
        }
    }
    let needs_top = matches!(mode, 0 | 3 | 7);
    let needs_left = matches!(mode, 1 | 8);
    if (needs_top && e.top.is_none()) || (needs_left && e.left.is_none()) {
        return None;
    }
    Some(out)
}

/// Neighbours of an N x N block (N = 16 for luma, 8 for 4:2:0 chroma).
#[derive(Debug, Clone, Copy)]
pub struct EdgesN<'a> {
    /// p[x, -1] for x = 0..N.
    pub top: Option<&'a [u8]>,
    /// p[-1, y] for y = 0..N.
    pub left: Option<&'a [u8]>,
    /// p[-1, -1].
    pub top_left: Option<u8>,
}

fn clip1(v: i32) -> u8 {
    v.clamp(0, 255) as u8
}

fn plane(e: &EdgesN<'_>, n: usize, out: &mut [u8]) -> Option<()> {
    let (t, l, tl) = (e.top?, e.left?, e.top_left?);
    let half = n as i32 / 2;
    let pt = |x: i32| if x < 0 { tl } else { t[x as usize] } as i32;
    let pl = |y: i32| if y < 0 { tl } else { l[y as usize] } as i32;
    let (mut h, mut v) = (0i32, 0i32);
    for i in 0..half {
        h += (i + 1) * (pt(half + i) - pt(half - 2 - i));
        v += (i + 1) * (pl(half + i) - pl(half - 2 - i));
    }
    let a = 16 * (pl(n as i32 - 1) + pt(n as i32 - 1));
    let (b, c) = if n == 16 {
        ((5 * h + 32) >> 6, (5 * v + 32) >> 6)
    } else {
        ((34 * h + 32) >> 6, (34 * v + 32) >> 6)
    };
    for y in 0..n as i32 {
        for x in 0..n as i32 {
            out[y as usize * n + x as usize] =
                clip1((a + b * (x - (half - 1)) + c * (y - (half - 1)) + 16) >> 5);
        }
    }
    Some(())
}

fn sum(v: &[u8]) -> u32 {
    v.iter().map(|&x| x as u32).sum()
}

/// Intra16x16PredMode values: 0 vertical, 1 horizontal, 2 DC, 3 plane.
pub fn predict16x16(mode: u8, e: &EdgesN<'_>) -> Option<[u8; 256]> {
    let mut out = [0u8; 256];
    match mode {
        0 => {
            let t = e.top?;
            for row in out.chunks_mut(16) {
                row.copy_from_slice(&t[..16]);
            }
        }
        1 => {
            let l = e.left?;
            for (row, &v) in out.chunks_mut(16).zip(l) {
                row.fill(v);
            }
        }
        2 => {
            let dc = match (e.top, e.left) {
                (Some(t), Some(l)) => (sum(&t[..16]) + sum(&l[..16]) + 16) >> 5,
                (Some(t), None) => (sum(&t[..16]) + 8) >> 4,
                (None, Some(l)) => (sum(&l[..16]) + 8) >> 4,
                (None, None) => 128,
            };
            out.fill(dc as u8);
        }
        3 => plane(e, 16, &mut out)?,
        _ => return None,
    }
    Some(out)
}

/// intra_chroma_pred_mode values: 0 DC, 1 horizontal, 2 vertical, 3 plane
/// (one 8x8 component of 4:2:0).
pub fn predict_chroma(mode: u8, e: &EdgesN<'_>) -> Option<[u8; 64]> {
    let mut out = [0u8; 64];
    match mode {
        0 => {
            for blk in 0..4 {
                let (xo, yo) = ((blk % 2) * 4, (blk / 2) * 4);
                let top = e.top.map(|t| sum(&t[xo..xo + 4]));
                let left = e.left.map(|l| sum(&l[yo..yo + 4]));
                // Clause 8.3.4.1-3: the off-diagonal blocks prefer the
                // neighbour on their own side.
                let dc = match (blk, top, left) {
                    (0 | 3, Some(t), Some(l)) => (t + l + 4) >> 3,
                    (1, Some(t), _) | (0 | 3, Some(t), None) | (2, Some(t), None) => (t + 2) >> 2,
                    (2, _, Some(l)) | (0 | 3, None, Some(l)) | (1, None, Some(l)) => (l + 2) >> 2,
                    _ => 128,
                };
                for y in yo..yo + 4 {
                    out[y * 8 + xo..y * 8 + xo + 4].fill(dc as u8);
                }
            }
        }
        1 => {
            let l = e.left?;
            for (row, &v) in out.chunks_mut(8).zip(l) {
                row.fill(v);
            }
        }
        2 => {
            let t = e.top?;
            for row in out.chunks_mut(8) {
                row.copy_from_slice(&t[..8]);
            }
        }
        3 => plane(e, 8, &mut out)?,
        _ => return None,
    }
    Some(out)
}
