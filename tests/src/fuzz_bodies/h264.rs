//! H.264 target: the stream parser (`wavelane::h264::decode::parse_stream`)
//! on arbitrary bytes. It must return an error or a picture set that is
//! whole and consistent: every macroblock coded, the layout sizes right,
//! QPs in range, and every residual block it read re-encodable by the CAVLC
//! encoder under the nC the frame layout derives (the decoder accepted only
//! codes the encoder can write).

use wavelane::h264::decode::parse_stream;
use wavelane::h264::encode::{encode_sequence, CpuEntropy, EncodeOptions};
use wavelane::h264::{MbModes, Picture, Plane};
use wavelane_core::cavlc::frame::{
    FrameResidual, COEFFS_PER_UNIT, RESIDUAL_UNITS_PER_MB, UNITS_PER_MB,
};
use wavelane_core::cavlc::BitCounter;

/// Parses `data`; on success checks the properties in the module docs.
pub fn h264_parse(data: &[u8]) {
    let Ok(parsed) = parse_stream(data) else {
        return;
    };
    let sps = parsed.sps;
    assert!(sps.width <= sps.mb_width * 16 && sps.height <= sps.mb_height * 16);
    assert!(sps.width > 0 && sps.height > 0);
    for pic in &parsed.pictures {
        let n = pic.mb_width * pic.mb_height;
        assert_eq!(pic.mbs.len(), n, "macroblock count");
        assert_eq!(pic.qps.len(), n, "QP count");
        assert_eq!(
            pic.coeffs.len(),
            n * RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT,
            "level count"
        );
        assert!(pic.qps.iter().all(|&q| q <= 51), "QP out of range");
        assert!(
            pic.mbs.iter().all(|m| m.slice != u16::MAX),
            "a macroblock in no slice was accepted"
        );
        let frame = FrameResidual::new(pic.mb_width, pic.mb_height, &pic.mbs, &pic.coeffs)
            .expect("parsed layout has the frame's sizes");
        for mb in 0..n {
            for unit in 1..UNITS_PER_MB {
                let mut counter = BitCounter::default();
                frame
                    .encode_unit(mb, unit, &mut counter)
                    .unwrap_or_else(|e| panic!("mb {mb} unit {unit} does not re-encode: {e}"));
            }
        }
    }
}

/// A small picture with gradients and a hard edge, so that both luma mode
/// families and nonzero chroma occur.
fn seed_picture(w: usize, h: usize, k: usize) -> Picture {
    let plane = |pw: usize, ph: usize, s: usize| {
        let mut p = Plane::filled(pw, ph, 0);
        for y in 0..ph {
            for x in 0..pw {
                let edge = if x * 3 > pw + y { 90 } else { 0 };
                p.data[y * pw + x] = ((x * (3 + s) + y * (k + 1) + edge) % 256) as u8;
            }
        }
        p
    };
    Picture {
        y: plane(w, h, k),
        cb: plane(w / 2, h / 2, k + 1),
        cr: plane(w / 2, h / 2, k + 2),
    }
}

/// Seeds for [`h264_parse`]: small streams of our encoder at several QPs,
/// both luma mode families, one and two pictures, cropped sizes.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (k, (qp, modes, w, h, frames)) in [
        (0u8, MbModes::Auto, 16, 16, 1),
        (10, MbModes::Intra4x4, 32, 16, 1),
        (26, MbModes::Intra16x16, 34, 18, 2),
        (40, MbModes::Auto, 48, 32, 1),
        (51, MbModes::Auto, 16, 32, 2),
    ]
    .into_iter()
    .enumerate()
    {
        let pics: Vec<Picture> = (0..frames).map(|f| seed_picture(w, h, k + f)).collect();
        let opts = EncodeOptions { qp, modes };
        let encoded =
            encode_sequence(&pics, &opts, &CpuEntropy, &|| {}).expect("seed pictures encode");
        seeds.push(encoded.stream);
    }
    seeds
}
