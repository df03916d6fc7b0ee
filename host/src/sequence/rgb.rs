//! Frames as pictures for image outputs (`decode clip.wls -o f/%05d.png`):
//! a gray frame is its luma plane; a Y'CbCr frame becomes RGB at full
//! size. Y4M carries no colour matrix, so the matrix follows the usual
//! convention of players and ffmpeg: BT.709 for HD sizes (width >= 1280
//! or height > 576), BT.601 below; the range is limited unless the stream
//! says `XCOLORRANGE=FULL`. Subsampled chroma is repeated over the luma
//! pixels it covers (no interpolation: exact, and the frame's own samples
//! are what the `.y4m` output is for).

use super::frame::{ChromaLayout, Frame, FrameFormat};
use super::y4m::VideoParams;
use crate::codec::Image;

/// A colour matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Matrix {
    /// ITU-R BT.601 (Kr 0.299, Kb 0.114).
    Bt601,
    /// ITU-R BT.709 (Kr 0.2126, Kb 0.0722).
    Bt709,
}

impl Matrix {
    /// The matrix of a frame size (see the module documentation).
    pub fn for_size(width: u32, height: u32) -> Matrix {
        if width >= 1280 || height > 576 {
            Matrix::Bt709
        } else {
            Matrix::Bt601
        }
    }

    fn kr_kb(self) -> (f64, f64) {
        match self {
            Matrix::Bt601 => (0.299, 0.114),
            Matrix::Bt709 => (0.2126, 0.0722),
        }
    }
}

/// The picture of a frame: gray for `Cmono`, else RGB at the luma size,
/// both at the sequence's bit depth.
pub fn to_image(frame: &Frame, format: &FrameFormat, params: &VideoParams) -> Image {
    let (w, h) = (format.width as usize, format.height as usize);
    let b = format.bit_depth;
    if format.layout == ChromaLayout::Mono {
        return Image {
            width: w,
            height: h,
            bit_depth: b,
            signed: false,
            planes: vec![frame.planes[0].clone()],
        };
    }
    let (kr, kb) = Matrix::for_size(format.width, format.height).kr_kb();
    let kg = 1.0 - kr - kb;
    let max = ((1u32 << b) - 1) as f64;
    let s = (1u32 << b) as f64 / 256.0;
    let (y_off, y_scale, c_off, c_scale) = match params.full_range() {
        true => (0.0, max, (1u32 << (b - 1)) as f64, max),
        false => (16.0 * s, 219.0 * s, 128.0 * s, 224.0 * s),
    };
    let (sx, sy) = format.layout.shifts();
    let cw = w >> sx;
    let mut planes = vec![vec![0i32; w * h]; 3];
    let out = |v: f64| (v.clamp(0.0, 1.0) * max).round() as i32;
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            let ci = (y >> sy) * cw + (x >> sx);
            let luma = (frame.planes[0][i] as f64 - y_off) / y_scale;
            let pb = (frame.planes[1][ci] as f64 - c_off) / c_scale;
            let pr = (frame.planes[2][ci] as f64 - c_off) / c_scale;
            planes[0][i] = out(luma + 2.0 * (1.0 - kr) * pr);
            planes[1][i] =
                out(luma - 2.0 * kb * (1.0 - kb) / kg * pb - 2.0 * kr * (1.0 - kr) / kg * pr);
            planes[2][i] = out(luma + 2.0 * (1.0 - kb) * pb);
        }
    }
    Image {
        width: w,
        height: h,
        bit_depth: b,
        signed: false,
        planes,
    }
}
