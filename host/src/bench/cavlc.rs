//! CAVLC throughput measurements shared by `wavelane bench cavlc` and the
//! criterion bench: pictures of a given size are macroblock-coded once
//! (not timed), then the CAVLC of all their residual blocks is timed — CPU
//! encode (all cores, slots + packing), CPU decode (one thread, the stream
//! parser) and GPU encode (encode + scan + pack dispatches).

use std::time::Instant;

use serde::Serialize;

use super::{stats, Stats};
use crate::backend::Backend;
use crate::h264::decode::parse_stream;
use crate::h264::encode::{
    code_picture, slice_header_bits, CodedPicture, CpuEntropy, EncodeOptions, EntropyCoder,
};
#[cfg(feature = "gpu")]
use crate::h264::gpu::GpuEntropy;
use crate::h264::nal::{write_nal, NAL_IDR_SLICE, NAL_PPS, NAL_SPS};
use crate::h264::params::{pps_rbsp, sps_rbsp, StreamParams};
use crate::h264::picture::{Picture, Plane};
use crate::h264::H264Error;

/// A deterministic test picture: gradients, a few hard edges and noise, so
/// that the block statistics resemble camera content at mid QPs.
pub fn synthetic_picture(width: usize, height: usize) -> Picture {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 59) as i32 - 16
    };
    let mut plane = |w: usize, h: usize, k: usize| {
        let mut p = Plane::filled(w, h, 0);
        for y in 0..h {
            for x in 0..w {
                let stripes = if (x / 37 + y / 53 + k).is_multiple_of(5) {
                    60
                } else {
                    0
                };
                let v = (x * 200 / w + y * 40 / h + k * 30) as i32 + stripes + noise();
                p.data[y * w + x] = v.clamp(0, 255) as u8;
            }
        }
        p
    };
    Picture {
        y: plane(width, height, 0),
        cb: plane(width / 2, height / 2, 1),
        cr: plane(width / 2, height / 2, 2),
    }
}

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub struct CavlcMeasurement {
    /// Picture size label, e.g. "1920x1080".
    pub size: String,
    /// "cpu-encode", "cpu-decode" or "gpu-encode".
    pub op: &'static str,
    /// Coded residual blocks in the picture.
    pub blocks: usize,
    /// Slice data bits.
    pub bits: usize,
    /// Best time in milliseconds.
    pub best_ms: f64,
    /// Median time in milliseconds.
    pub median_ms: f64,
    /// (slowest - best) / best of the repeats.
    pub spread: f64,
    /// Blocks per second at the best time.
    pub blocks_per_s: f64,
    /// For GPU runs: the best wall-clock time including uploads and downloads.
    pub wall_ms: Option<f64>,
}

/// Coded residual blocks (units that produce bits) of a picture.
pub fn coded_blocks(p: &CodedPicture) -> usize {
    let f = p.residual();
    (0..f.mb_count())
        .map(|mb| (1..28).filter(|&u| f.unit_kind(mb, u).is_some()).count())
        .sum()
}

fn measurement(
    size: &str,
    op: &'static str,
    p: &CodedPicture,
    bits: usize,
    ms: Vec<f64>,
    wall: Option<f64>,
) -> CavlcMeasurement {
    let Stats {
        best,
        median,
        spread,
    } = stats(ms);
    let blocks = coded_blocks(p);
    CavlcMeasurement {
        size: size.into(),
        op,
        blocks,
        bits,
        best_ms: best,
        median_ms: median,
        spread,
        blocks_per_s: blocks as f64 / (best / 1e3),
        wall_ms: wall,
    }
}

/// Measures CAVLC at each `(width, height)` with `repeats` timed runs
/// (after one warm-up). The CPU encode and decode always run; the GPU
/// encode runs on a GPU backend and must give the CPU's bytes.
pub fn run(
    sizes: &[(usize, usize)],
    qp: u8,
    repeats: usize,
    backend: &Backend,
    progress: &dyn Fn(&str),
) -> Result<Vec<CavlcMeasurement>, H264Error> {
    let repeats = repeats.max(1);
    let mut out = Vec::new();
    for &(w, h) in sizes {
        let size = format!("{w}x{h}");
        progress(&format!("{size}: macroblock coding"));
        let picture = code_picture(
            &synthetic_picture(w, h),
            &EncodeOptions {
                qp,
                ..Default::default()
            },
        );
        let params = StreamParams {
            width: w,
            height: h,
            qp,
        };
        let header = slice_header_bits(&params, 0);
        progress(&format!("{size}: cpu encode"));
        let mut ms = Vec::new();
        let mut rbsp = Vec::new();
        for i in 0..=repeats {
            let t = Instant::now();
            rbsp = CpuEntropy.slice_rbsp(&header, &picture)?;
            if i > 0 {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let bits = rbsp.len() * 8 - header.1;
        out.push(measurement(&size, "cpu-encode", &picture, bits, ms, None));
        progress(&format!("{size}: cpu decode"));
        let mut stream = Vec::new();
        write_nal(&mut stream, 3, NAL_SPS, &sps_rbsp(&params)?);
        write_nal(&mut stream, 3, NAL_PPS, &pps_rbsp()?);
        write_nal(&mut stream, 3, NAL_IDR_SLICE, &rbsp);
        let mut ms = Vec::new();
        for i in 0..=repeats {
            let t = Instant::now();
            let parsed = parse_stream(&stream)?;
            if i > 0 {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            if parsed.pictures[0].coeffs != picture.coeffs {
                return Err(H264Error::Stream(
                    "decoded levels differ from the encoded ones".into(),
                ));
            }
        }
        out.push(measurement(&size, "cpu-decode", &picture, bits, ms, None));
        #[cfg(not(feature = "gpu"))]
        let _ = backend;
        #[cfg(feature = "gpu")]
        if let Backend::Gpu(gpu) = backend {
            progress(&format!("{size}: gpu encode"));
            let entropy = GpuEntropy::new(gpu.clone());
            let (mut ms, mut wall) = (Vec::new(), Vec::new());
            for i in 0..=repeats {
                let (bytes, timing) = entropy.slice_rbsp_timed(&header, &picture)?;
                if bytes != rbsp {
                    return Err(H264Error::Gpu(
                        "GPU slice bytes differ from the CPU's".into(),
                    ));
                }
                if i > 0 {
                    ms.push(timing.total_ns() / 1e6);
                }
            }
            // End to end, without the benchmarks' clock warm-up.
            for _ in 0..repeats {
                let t = Instant::now();
                gpu.without_clock_warm_up(|| entropy.slice_rbsp_timed(&header, &picture))?;
                wall.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let wall_best = stats(wall).best;
            out.push(measurement(
                &size,
                "gpu-encode",
                &picture,
                bits,
                ms,
                Some(wall_best),
            ));
        }
    }
    Ok(out)
}
