//! The firmware's bitstream: DC shift, DWT in place, (quantization,)
//! BPC-PaCo codeblock by codeblock, all in caller buffers.
//!
//! # Layout (all integers big-endian)
//!
//! | bytes | field |
//! |-------|-------|
//! | 4 | magic `WLFW` |
//! | 1 | version, 1 |
//! | 1 | wavelet: 0 = 5/3, 2 = fixed-point 9/7 (`dwt::Wavelet` order) |
//! | 1 | decomposition levels |
//! | 1 | BPC-PaCo passes per bitplane: 2 or 3 (reference probability tables) |
//! | 2 + 2 | width, height |
//! | 1 | bit depth |
//! | 1 + 1 | codeblock width, height |
//! | 1 | number of quantization steps that follow (16) |
//! | 2 each | quantization step code per BPC-PaCo table group ([`quant`]; `0x8000` = 1: none) |
//!
//! then one record per codeblock: subbands in [`dwt::subbands`] order (LL,
//! then each level from the coarsest, HL, LH, HH), codeblocks of a subband
//! in raster order:
//!
//! | bytes | field |
//! |-------|-------|
//! | 1 | table group of the subband ([`bpc::group_index`]) |
//! | 1 | most significant bitplane `M`, or 255 for an all-zero codeblock |
//! | 4 | codeword count `n` |
//! | 2n | the codewords ([`bpc::codewords_to_be_bytes`]) |

use core::fmt;

use wavelane_core::bpc::{self, Codeblock, CodingParams, Encoded, ProbabilityTables, Scratch};
use wavelane_core::dwt::{self, shift, Cdf53, DwtError, Fixed97, ImageLayout, Orientation, Rect};

use crate::quant;
use crate::test_image::{BIT_DEPTH, HEIGHT, WIDTH};

/// Stream magic.
pub const MAGIC: [u8; 4] = *b"WLFW";
/// Stream version.
pub const VERSION: u8 = 1;
/// Decomposition levels (256 -> LL of 8x8).
pub const LEVELS: u32 = 5;
/// Codeblock width and height.
pub const CODEBLOCK: usize = 64;
/// Capacity of the codeword buffer of one codeblock: 16 bits per coefficient
/// of a 64x64 codeblock, twice the raw sample depth (docs/firmware.md).
pub const MAX_CODEWORDS: usize = CODEBLOCK * CODEBLOCK;
/// Samples of the coefficient buffer.
pub const SAMPLES: usize = WIDTH * HEIGHT;

/// The two encodings the firmware produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Reversible 5/3, no quantization, 2-pass BPC-PaCo.
    Lossless,
    /// Fixed-point 9/7, dead-zone quantization ([`quant`]), 3-pass BPC-PaCo.
    Lossy,
}

impl Path {
    /// Short name, also the stem of the output file.
    pub const fn name(self) -> &'static str {
        match self {
            Path::Lossless => "lossless",
            Path::Lossy => "lossy",
        }
    }

    /// The wavelet id written in the header (0 = 5/3, 2 = fixed-point 9/7).
    pub const fn wavelet_id(self) -> u8 {
        match self {
            Path::Lossless => 0,
            Path::Lossy => 2,
        }
    }

    /// Probability tables (their mode is the pass count).
    pub fn tables(self) -> &'static ProbabilityTables {
        match self {
            Path::Lossless => &ProbabilityTables::REFERENCE_TWO_PASS,
            Path::Lossy => &ProbabilityTables::REFERENCE_THREE_PASS,
        }
    }

    /// Quantization step code ([`quant`]) of table group `group`.
    pub fn step_code(self, group: usize) -> u16 {
        match self {
            Path::Lossless => quant::STEP_ONE,
            Path::Lossy => quant::STEP_CODES[group],
        }
    }
}

/// The buffers of an encode; nothing else is written besides the stack.
pub struct Workspace<'a> {
    /// `WIDTH * HEIGHT` coefficients: the image, then its transform.
    pub coefficients: &'a mut [i32; SAMPLES],
    /// DWT scratch, [`dwt::scratch_len_2d`] samples.
    pub dwt_scratch: &'a mut [i32; WIDTH],
    /// BPC-PaCo coding state for codeblocks up to [`CODEBLOCK`] rows.
    pub bpc: &'a mut Scratch<CODEBLOCK>,
    /// Codewords of the codeblock being coded.
    pub words: &'a mut [u16; MAX_CODEWORDS],
}

/// Where the stream bytes go.
pub trait Sink {
    /// Writes all of `bytes`.
    fn write(&mut self, bytes: &[u8]) -> Result<(), SinkError>;
}

/// A sink could not take the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkError;

/// What can go wrong in an encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwError {
    /// The transform refused its arguments.
    Dwt(DwtError),
    /// A codeblock view could not be made.
    Geometry(bpc::GeometryError),
    /// The coder failed (e.g. the codeword buffer is too small).
    Encode(bpc::EncodeError),
    /// The sink failed.
    Sink,
    /// The stack reached the bottom of its region.
    StackOverflow,
}

impl fmt::Display for FwError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FwError::Dwt(e) => write!(f, "DWT: {e}"),
            FwError::Geometry(e) => write!(f, "codeblock: {e}"),
            FwError::Encode(e) => write!(f, "BPC-PaCo: {e}"),
            FwError::Sink => f.write_str("semihosting write failed"),
            FwError::StackOverflow => f.write_str("stack overflowed its region"),
        }
    }
}

impl From<SinkError> for FwError {
    fn from(_: SinkError) -> Self {
        FwError::Sink
    }
}

/// Totals of one stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamStats {
    /// Codeblocks coded.
    pub codeblocks: usize,
    /// Stream bytes, header included.
    pub bytes: usize,
    /// Largest codeword count of a codeblock.
    pub max_codewords: usize,
}

/// One codeblock: where it is and which table group codes it.
#[derive(Debug, Clone, Copy)]
pub struct CodeblockPlace {
    /// Rectangle in the coefficient image.
    pub rect: Rect,
    /// BPC-PaCo table group of its subband.
    pub group: usize,
}

/// Every codeblock of the transformed image, in stream order.
pub fn codeblocks() -> impl Iterator<Item = CodeblockPlace> {
    // LEVELS is valid for 256x256, so `subbands` cannot fail.
    dwt::subbands(WIDTH, HEIGHT, LEVELS)
        .into_iter()
        .flatten()
        .flat_map(|band| {
            let group = bpc::group_index(band.level, bpc_orientation(band.orientation));
            let r = band.rect;
            let across = r.width.div_ceil(CODEBLOCK);
            let down = r.height.div_ceil(CODEBLOCK);
            (0..across * down).map(move |i| {
                let (x0, y0) = ((i % across) * CODEBLOCK, (i / across) * CODEBLOCK);
                CodeblockPlace {
                    rect: Rect {
                        x: r.x + x0,
                        y: r.y + y0,
                        width: CODEBLOCK.min(r.width - x0),
                        height: CODEBLOCK.min(r.height - y0),
                    },
                    group,
                }
            })
        })
}

/// The BPC-PaCo orientation of a DWT subband (same numbering).
fn bpc_orientation(o: Orientation) -> bpc::Orientation {
    match o {
        Orientation::HL => bpc::Orientation::HL,
        Orientation::LH => bpc::Orientation::LH,
        Orientation::HH => bpc::Orientation::HH,
        Orientation::LL => bpc::Orientation::LL,
    }
}

/// Encodes `image` (8-bit, `WIDTH x HEIGHT`) along `path` into `sink`.
pub fn encode_stream(
    path: Path,
    image: &[u8; SAMPLES],
    ws: &mut Workspace<'_>,
    sink: &mut impl Sink,
) -> Result<StreamStats, FwError> {
    load_shifted(image, ws.coefficients)?;
    transform(path, ws)?;
    let mut stats = StreamStats {
        bytes: write_header(path, sink)?,
        ..StreamStats::default()
    };
    for place in codeblocks() {
        let code = path.step_code(place.group);
        // Step 1 leaves every coefficient as it is: skip the pass.
        if code != quant::STEP_ONE {
            quantize_rect(ws.coefficients, place.rect, quant::q16(code));
        }
        let enc = encode_codeblock(path, place, ws)?;
        stats.bytes += write_codeblock(place.group, &enc, &ws.words[..enc.codewords], sink)?;
        stats.codeblocks += 1;
        stats.max_codewords = stats.max_codewords.max(enc.codewords);
    }
    Ok(stats)
}

/// DC level shift of the 8-bit samples into the coefficient buffer.
fn load_shifted(image: &[u8; SAMPLES], coefficients: &mut [i32; SAMPLES]) -> Result<(), FwError> {
    for (c, &s) in coefficients.iter_mut().zip(image) {
        *c = s as i32;
    }
    shift::shift_forward(coefficients, BIT_DEPTH).map_err(FwError::Dwt)
}

/// The forward DWT of the path, in place.
fn transform(path: Path, ws: &mut Workspace<'_>) -> Result<(), FwError> {
    let layout = ImageLayout::new(WIDTH, HEIGHT);
    match path {
        Path::Lossless => dwt::forward_2d::<Cdf53>(ws.coefficients, layout, LEVELS, ws.dwt_scratch),
        Path::Lossy => dwt::forward_2d::<Fixed97>(ws.coefficients, layout, LEVELS, ws.dwt_scratch),
    }
    .map_err(FwError::Dwt)
}

/// Quantizes the coefficients of `rect` in place.
fn quantize_rect(coefficients: &mut [i32; SAMPLES], rect: Rect, q16: u64) {
    for y in rect.y..rect.y + rect.height {
        for c in &mut coefficients[y * WIDTH + rect.x..y * WIDTH + rect.x + rect.width] {
            *c = quant::quantize(*c, q16);
        }
    }
}

/// Codes the (already quantized) codeblock at `place` into `ws.words`.
pub fn encode_codeblock(
    path: Path,
    place: CodeblockPlace,
    ws: &mut Workspace<'_>,
) -> Result<Encoded, FwError> {
    let r = place.rect;
    let block = Codeblock::new(
        &ws.coefficients[r.y * WIDTH + r.x..],
        WIDTH,
        r.width,
        r.height,
    )
    .map_err(FwError::Geometry)?;
    let params = CodingParams::new(path.tables(), place.group);
    bpc::encode_sequential(&block, &params, ws.bpc, ws.words, None).map_err(FwError::Encode)
}

fn write_header(path: Path, sink: &mut impl Sink) -> Result<usize, FwError> {
    let mut h = [0u8; 16 + 2 * bpc::GROUPS];
    h[..4].copy_from_slice(&MAGIC);
    h[4] = VERSION;
    h[5] = path.wavelet_id();
    h[6] = LEVELS as u8;
    h[7] = path.tables().mode().passes();
    h[8..10].copy_from_slice(&(WIDTH as u16).to_be_bytes());
    h[10..12].copy_from_slice(&(HEIGHT as u16).to_be_bytes());
    h[12] = BIT_DEPTH as u8;
    h[13] = CODEBLOCK as u8;
    h[14] = CODEBLOCK as u8;
    h[15] = bpc::GROUPS as u8;
    for (g, pair) in h[16..].chunks_exact_mut(2).enumerate() {
        pair.copy_from_slice(&path.step_code(g).to_be_bytes());
    }
    sink.write(&h)?;
    Ok(h.len())
}

fn write_codeblock(
    group: usize,
    enc: &Encoded,
    words: &[u16],
    sink: &mut impl Sink,
) -> Result<usize, FwError> {
    let mut head = [0u8; 6];
    head[0] = group as u8;
    head[1] = enc.top_bitplane.unwrap_or(u8::MAX);
    head[2..].copy_from_slice(&(words.len() as u32).to_be_bytes());
    sink.write(&head)?;
    // Big-endian bytes through a small staging buffer (the core is little-endian).
    let mut bytes = [0u8; 128];
    for chunk in words.chunks(bytes.len() / 2) {
        let n = bpc::codewords_to_be_bytes(chunk, &mut bytes).ok_or(FwError::Sink)?;
        sink.write(&bytes[..n])?;
    }
    Ok(head.len() + 2 * words.len())
}
