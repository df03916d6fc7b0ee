//! The host side of the firmware check: the same image and parameters
//! through wavelane-core on the host, written in the firmware's stream
//! layout (documented in core/firmware/src/stream.rs and docs/firmware.md),
//! plus a parser and a decoder of that layout.
//!
//! Written independently of the firmware code: whole-image DWT scratch (the
//! vertical pass runs on all columns at once, the firmware's on one), each
//! codeblock copied out to its own compact buffer before quantization and
//! coding, steps computed from the subband norms in floating point.

use wavelane_core::bpc::{
    self, Codeblock, CodeblockMut, CodingParams, DecodeLimits, ProbabilityTables, Scratch,
};
use wavelane_core::dwt::{
    self, gains, shift, Cdf53, Fixed97, ImageLayout, Orientation, Rect, Wavelet,
};

pub const WIDTH: usize = 256;
pub const HEIGHT: usize = 256;
pub const LEVELS: u32 = 5;
pub const CODEBLOCK: usize = 64;
pub const BASE_STEP: f64 = 16.0;
/// The 16-bit code of step 1.0 (host/src/codec/header.rs, `QuantStep::ONE`).
pub const STEP_ONE: u16 = 16 << 11;
const MAX_INDEX: u64 = (1 << bpc::COEFFICIENT_BITS) - 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Lossless,
    Lossy,
}

impl Path {
    pub fn name(self) -> &'static str {
        match self {
            Path::Lossless => "lossless",
            Path::Lossy => "lossy",
        }
    }

    fn wavelet(self) -> Wavelet {
        match self {
            Path::Lossless => Wavelet::Cdf53,
            Path::Lossy => Wavelet::Fixed97,
        }
    }

    fn tables(self) -> &'static ProbabilityTables {
        match self {
            Path::Lossless => &ProbabilityTables::REFERENCE_TWO_PASS,
            Path::Lossy => &ProbabilityTables::REFERENCE_THREE_PASS,
        }
    }
}

/// `QuantStep::from_value` of host/src/codec/header.rs: the 16-bit step
/// code (5-bit exponent, 11-bit mantissa) nearest to `step` from below.
fn step_code(step: f64) -> u16 {
    let q = (step * 65536.0).clamp(1.0, 4095.0 * (1u64 << 20) as f64);
    let e = (q.log2().floor() as i32).clamp(0, 31) as u32;
    let m = ((q / (1u64 << e) as f64 - 1.0) * 2048.0)
        .floor()
        .clamp(0.0, 2047.0) as u16;
    ((e as u16) << 11) | m
}

/// The exact Q16 value of a step code.
pub fn q16(code: u16) -> u64 {
    let e = (code >> 11) as u32;
    let m = (code & 0x7ff) as u64;
    ((2048 + m) << e) >> 11
}

/// `quantize_i32` of host/src/codec/quant.rs.
fn quantize(c: i32, q16: u64) -> i32 {
    let mag = (((c.unsigned_abs() as u64) << 16) / q16).min(MAX_INDEX) as i32;
    if c < 0 {
        -mag
    } else {
        mag
    }
}

/// `dequantize_i32` of host/src/codec/quant.rs with no dropped bitplanes:
/// the middle of the bin.
fn dequantize(v: i32, q16: u64) -> i32 {
    if v == 0 {
        return 0;
    }
    let mag = (((2 * v.unsigned_abs() as u128 + 1) * q16 as u128 + (1 << 16)) >> 17) as i32;
    if v < 0 {
        -mag
    } else {
        mag
    }
}

/// Step code per table group: 1 for the lossless path; for the lossy path
/// `BASE_STEP / ‖b‖` with the fixed-point 9/7 synthesis norm of the band.
pub fn step_codes(path: Path) -> [u16; bpc::GROUPS] {
    let mut codes = [STEP_ONE; bpc::GROUPS];
    if path == Path::Lossy {
        for level in 0..LEVELS {
            for &orientation in &Orientation::DETAILS {
                let norm = gains::subband_norm(Wavelet::Fixed97, level, orientation);
                codes[bpc::group_index(level as u8, bpc_orientation(orientation))] =
                    step_code(BASE_STEP / norm);
            }
        }
        let norm = gains::subband_norm(Wavelet::Fixed97, LEVELS, Orientation::LL);
        codes[bpc::LL_GROUP] = step_code(BASE_STEP / norm);
    }
    codes
}

fn bpc_orientation(o: Orientation) -> bpc::Orientation {
    match o {
        Orientation::HL => bpc::Orientation::HL,
        Orientation::LH => bpc::Orientation::LH,
        Orientation::HH => bpc::Orientation::HH,
        Orientation::LL => bpc::Orientation::LL,
    }
}

/// Codeblocks in stream order with their table groups.
pub fn places() -> Vec<(Rect, usize)> {
    let mut out = Vec::new();
    for band in dwt::subbands(WIDTH, HEIGHT, LEVELS).unwrap() {
        let group = bpc::group_index(band.level, bpc_orientation(band.orientation));
        let r = band.rect;
        for y0 in (0..r.height).step_by(CODEBLOCK) {
            for x0 in (0..r.width).step_by(CODEBLOCK) {
                let rect = Rect {
                    x: r.x + x0,
                    y: r.y + y0,
                    width: CODEBLOCK.min(r.width - x0),
                    height: CODEBLOCK.min(r.height - y0),
                };
                out.push((rect, group));
            }
        }
    }
    out
}

/// The firmware's stream of `image`, computed on the host.
pub fn encode(path: Path, image: &[u8]) -> Vec<u8> {
    let samples: Vec<u16> = image.iter().map(|&s| s as u16).collect();
    let mut coefficients = vec![0i32; WIDTH * HEIGHT];
    shift::shift_in_u16(&samples, 8, &mut coefficients).unwrap();
    let layout = ImageLayout::new(WIDTH, HEIGHT);
    let mut scratch = vec![0i32; WIDTH * HEIGHT];
    match path.wavelet() {
        Wavelet::Cdf53 => dwt::forward_2d::<Cdf53>(&mut coefficients, layout, LEVELS, &mut scratch),
        _ => dwt::forward_2d::<Fixed97>(&mut coefficients, layout, LEVELS, &mut scratch),
    }
    .unwrap();

    let codes = step_codes(path);
    let mut out = Vec::new();
    out.extend_from_slice(b"WLFW");
    out.push(1);
    out.push(if path == Path::Lossless { 0 } else { 2 });
    out.push(LEVELS as u8);
    out.push(path.tables().mode().passes());
    out.extend_from_slice(&(WIDTH as u16).to_be_bytes());
    out.extend_from_slice(&(HEIGHT as u16).to_be_bytes());
    out.extend_from_slice(&[8, CODEBLOCK as u8, CODEBLOCK as u8, bpc::GROUPS as u8]);
    for code in codes {
        out.extend_from_slice(&code.to_be_bytes());
    }

    let mut bpc_scratch = Scratch::<CODEBLOCK>::new();
    for (r, group) in places() {
        let step = q16(codes[group]);
        let block: Vec<i32> = (r.y..r.y + r.height)
            .flat_map(|y| coefficients[y * WIDTH + r.x..y * WIDTH + r.x + r.width].iter())
            .map(|&c| quantize(c, step))
            .collect();
        let view = Codeblock::new(&block, r.width, r.width, r.height).unwrap();
        let params = CodingParams::new(path.tables(), group);
        let mut words = vec![0u16; bpc::max_codewords_any(r.width, r.height)];
        let enc =
            bpc::encode_sequential(&view, &params, &mut bpc_scratch, &mut words, None).unwrap();
        out.push(group as u8);
        out.push(enc.top_bitplane.unwrap_or(255));
        out.extend_from_slice(&(enc.codewords as u32).to_be_bytes());
        for w in &words[..enc.codewords] {
            out.extend_from_slice(&w.to_be_bytes());
        }
    }
    out
}

/// One parsed codeblock record.
#[derive(Debug, Clone)]
pub struct Record {
    pub offset: usize,
    pub group: u8,
    pub top: Option<u8>,
    pub words: Vec<u16>,
}

/// A parsed stream.
#[derive(Debug, Clone)]
pub struct Stream {
    pub wavelet: u8,
    pub passes: u8,
    pub steps: Vec<u16>,
    pub records: Vec<Record>,
}

/// Parses (and checks) a stream of the firmware's layout for this image.
pub fn parse(bytes: &[u8]) -> Result<Stream, String> {
    let header_len = 16 + 2 * bpc::GROUPS;
    let h = bytes
        .get(..header_len)
        .ok_or("stream shorter than its header")?;
    if &h[..5] != b"WLFW\x01" {
        return Err(format!("bad magic/version {:?}", &h[..5]));
    }
    let want = [LEVELS as u8];
    let dims = [(WIDTH as u16).to_be_bytes(), (HEIGHT as u16).to_be_bytes()].concat();
    if h[6..7] != want || h[8..12] != dims[..] || h[12..16] != [8, 64, 64, 16] {
        return Err(format!("unexpected geometry in header {h:02x?}"));
    }
    let steps = h[16..]
        .chunks_exact(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]))
        .collect();
    let mut at = header_len;
    let mut records = Vec::new();
    while at < bytes.len() {
        let head = bytes
            .get(at..at + 6)
            .ok_or(format!("record header truncated at {at}"))?;
        let n = u32::from_be_bytes([head[2], head[3], head[4], head[5]]) as usize;
        let body = bytes
            .get(at + 6..at + 6 + 2 * n)
            .ok_or(format!("record at {at} truncated"))?;
        records.push(Record {
            offset: at,
            group: head[0],
            top: (head[1] != 255).then_some(head[1]),
            words: body
                .chunks_exact(2)
                .map(|p| u16::from_be_bytes([p[0], p[1]]))
                .collect(),
        });
        at += 6 + 2 * n;
    }
    Ok(Stream {
        wavelet: h[5],
        passes: h[7],
        steps,
        records,
    })
}

/// Decodes a parsed stream back to 8-bit samples.
pub fn decode(stream: &Stream) -> Result<Vec<u8>, String> {
    let places = places();
    if stream.records.len() != places.len() {
        return Err(format!(
            "{} records, {} codeblocks",
            stream.records.len(),
            places.len()
        ));
    }
    let tables = match stream.passes {
        2 => &ProbabilityTables::REFERENCE_TWO_PASS,
        3 => &ProbabilityTables::REFERENCE_THREE_PASS,
        p => return Err(format!("{p} passes")),
    };
    let mut coefficients = vec![0i32; WIDTH * HEIGHT];
    let mut scratch = Scratch::<CODEBLOCK>::new();
    for (rec, &(r, group)) in stream.records.iter().zip(&places) {
        if rec.group as usize != group {
            return Err(format!(
                "record at {} has group {}, expected {group}",
                rec.offset, rec.group
            ));
        }
        let mut block = vec![0i32; r.width * r.height];
        let params = CodingParams::new(tables, group);
        let out = CodeblockMut::new(&mut block, r.width, r.width, r.height).unwrap();
        let dec = bpc::decode_sequential(
            &params,
            rec.top,
            &rec.words,
            DecodeLimits::ALL,
            out,
            &mut scratch,
        )
        .map_err(|e| format!("record at {}: {e}", rec.offset))?;
        if !dec.complete || dec.codewords_used != rec.words.len() {
            return Err(format!(
                "record at {}: incomplete decode {dec:?}",
                rec.offset
            ));
        }
        let step = q16(stream.steps[group]);
        for y in 0..r.height {
            for x in 0..r.width {
                let v = block[y * r.width + x];
                let c = if stream.steps[group] == STEP_ONE {
                    v
                } else {
                    dequantize(v, step)
                };
                coefficients[(r.y + y) * WIDTH + r.x + x] = c;
            }
        }
    }
    let layout = ImageLayout::new(WIDTH, HEIGHT);
    let mut dwt_scratch = vec![0i32; WIDTH];
    match stream.wavelet {
        0 => dwt::inverse_2d::<Cdf53>(&mut coefficients, layout, LEVELS, &mut dwt_scratch),
        2 => dwt::inverse_2d::<Fixed97>(&mut coefficients, layout, LEVELS, &mut dwt_scratch),
        w => return Err(format!("wavelet id {w}")),
    }
    .map_err(|e| e.to_string())?;
    let mut samples = vec![0u16; WIDTH * HEIGHT];
    shift::shift_out_u16(&coefficients, 8, &mut samples).map_err(|e| e.to_string())?;
    Ok(samples.into_iter().map(|s| s as u8).collect())
}

/// PSNR of 8-bit images in dB (infinite when equal).
pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    let se: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (x as f64 - y as f64).powi(2))
        .sum();
    10.0 * (255.0f64.powi(2) * a.len() as f64 / se).log10()
}
