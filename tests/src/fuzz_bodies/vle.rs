//! VLE targets: `.wlv` parsing and decompression of arbitrary files, the
//! compress → decompress round trip, and the core sequential encoder vs its
//! lane-parallel (GPU-model) form vs the CPU backend.

use wavelane::backend::Backend;
use wavelane::vle::{self, cpu, VleCodecError, VleFile, VleOptions};
use wavelane_core::vle::lookback::{Cells32, Cells64};
use wavelane_core::vle::{
    self as core_vle, lanes, CodeTable, DecodeTable, VleError, DEFAULT_LUT_SIZE, SYMBOLS,
};

use super::input::{Input, SeedWriter};

/// Decodes a parsed file with the core decoder and a lookup table of `N`
/// entries (the table size changes speed, never the result).
fn core_decode<const N: usize>(file: &VleFile<'_>) -> Result<Vec<u8>, VleError> {
    let table = DecodeTable::<N>::new(&file.table)?;
    let mut out = vec![0u8; file.original_len as usize];
    core_vle::decode(
        &table,
        file.data,
        file.data_bits,
        &file.chunk_offsets(),
        file.chunk_symbols as usize,
        &mut out,
    )?;
    Ok(out)
}

/// Decode target: any bytes as a `.wlv` file. A file that parses must
/// serialize back to the same bytes (the container is canonical); the CPU
/// backend and the core decoder at two lookup sizes must agree; a file that
/// decompresses yields exactly `original_len` bytes.
pub fn vle_decode(data: &[u8]) {
    let parsed = match VleFile::parse(data) {
        Ok(p) => p,
        Err(_) => {
            assert!(vle::decompress(data, &Backend::Cpu).is_err());
            return;
        }
    };
    // The container is canonical: a current-version file serializes back
    // to itself; an older one is rewritten at the current version, which
    // parses to the same fields.
    let rewritten = parsed.to_bytes();
    if parsed.version == vle::format::VERSION {
        assert_eq!(rewritten, data, "parse -> to_bytes is not the identity");
    } else {
        let again = VleFile::parse(&rewritten).expect("a rewritten file parses");
        assert_eq!(again.version, vle::format::VERSION);
        assert_eq!(
            (
                again.original_len,
                again.crc32,
                &again.chunk_bits,
                again.data
            ),
            (
                parsed.original_len,
                parsed.crc32,
                &parsed.chunk_bits,
                parsed.data
            )
        );
    }
    let host = vle::decode(&parsed, &Backend::Cpu);
    let small = core_decode::<16>(&parsed);
    let default = core_decode::<DEFAULT_LUT_SIZE>(&parsed);
    assert_eq!(small, default, "lookup table size changed the result");
    match (&host, &default) {
        (Ok(h), Ok(c)) => assert_eq!(h, c, "CPU backend and core decode differ"),
        (Err(_), Err(_)) => {}
        _ => panic!(
            "CPU backend {:?} vs core {:?}",
            host.as_ref().err(),
            default.as_ref().err()
        ),
    }
    let whole = vle::decompress(data, &Backend::Cpu);
    if let Ok(out) = &whole {
        assert_eq!(out.len() as u64, parsed.original_len);
        assert_eq!(Ok(out), default.as_ref());
    }
    vle_partial(data, whole.ok());
}

/// `--partial` on any bytes: never a panic; what it restores has the
/// original length, and a file that decompresses whole is restored whole
/// with nothing left out.
fn vle_partial(data: &[u8], whole: Option<Vec<u8>>) {
    match vle::partial::decompress_partial(data) {
        Ok((out, damaged)) => {
            let parsed = VleFile::parse_prefix(data).expect("partial decode parsed it");
            assert_eq!(out.len() as u64, parsed.original_len);
            if let Some(w) = whole {
                assert!(damaged.is_empty(), "a whole file had damage: {damaged:?}");
                assert_eq!(out, w);
            }
        }
        Err(_) => {
            if let Some(w) = whole {
                // Only a version 1 file decompresses whole but not partially.
                let parsed = VleFile::parse(data).expect("it decompressed");
                assert!(
                    parsed.version < vle::format::VERSION_CHUNK_CRCS,
                    "{}",
                    w.len()
                );
            }
        }
    }
}

/// Options and payload from the input: max_len 1..=24, chunk size a
/// multiple of 32, and the payload repeated 1..=64 times (so inputs reach
/// several chunks and encoder blocks).
fn options_and_payload(inp: &mut Input<'_>) -> (VleOptions, Vec<u8>) {
    let max_len = inp.range(1, 24) as u32;
    let chunk_symbols = core_vle::CHUNK_ALIGN * inp.range(1, 256);
    let repeat = inp.range(1, 64);
    let payload = inp.rest().repeat(repeat);
    (
        VleOptions {
            max_len,
            chunk_symbols,
        },
        payload,
    )
}

/// Round-trip target: compress → file → decompress gives the payload back,
/// unless the length limit cannot hold the payload's distinct symbols.
pub fn vle_roundtrip(data: &[u8]) {
    let mut inp = Input::new(data);
    let (opts, payload) = options_and_payload(&mut inp);
    let distinct = {
        let mut seen = [false; SYMBOLS];
        payload.iter().for_each(|&b| seen[b as usize] = true);
        seen.iter().filter(|&&s| s).count() as u64
    };
    match vle::compress(&payload, &Backend::Cpu, &opts) {
        Ok(file) => {
            assert!(distinct <= 1 << opts.max_len);
            let back = vle::decompress(&file, &Backend::Cpu).expect("own file decompresses");
            assert!(back == payload, "round trip changed the data");
            let parsed = VleFile::parse(&file).expect("own file parses");
            assert_eq!(parsed.to_bytes(), file);
            assert!(parsed.table.max_len() <= opts.max_len);
        }
        Err(VleCodecError::Core(VleError::LengthLimitTooSmall { used, max_len })) => {
            assert_eq!((used as u64, max_len), (distinct, opts.max_len));
            assert!(distinct > 1 << opts.max_len);
        }
        Err(e) => panic!("compress failed: {e}"),
    }
}

/// Differential target: the core sequential encoder, the lane-parallel
/// encoder with both scan memories (64-bit cells and the 32-bit fallback)
/// and the CPU backend must write the same bits and chunk index.
pub fn vle_lanes_diff(data: &[u8]) {
    let mut inp = Input::new(data);
    let (opts, payload) = options_and_payload(&mut inp);
    let mut hist = [0u64; SYMBOLS];
    core_vle::histogram(&payload, &mut hist);
    assert_eq!(hist, cpu::histogram(&payload), "histograms differ");
    let Ok(table) = CodeTable::from_histogram(&hist, opts.max_len) else {
        return;
    };
    let chunk = opts.chunk_symbols;
    let bits = table.encoded_bits(&hist).expect("table covers the payload");
    let mut want = vec![0u8; bits.div_ceil(8) as usize];
    let mut want_index = vec![0u64; core_vle::chunk_count(payload.len(), chunk)];
    let end = core_vle::encode(&payload, &table, chunk, &mut want, &mut want_index)
        .expect("sequential encode");
    assert_eq!(end, bits);

    let blocks = payload.len().div_ceil(lanes::BLOCK_SYMBOLS);
    // Scan memory sized exactly as the GPU driver sizes it (one cell per
    // block, two prefix words per segment): an index past it panics here.
    let segments = blocks.div_ceil(core_vle::lookback::SEGMENT_BLOCKS);
    let cells = blocks;
    let mut shared = vec![0u32; lanes::STAGE_WORDS];
    for wide in [true, false] {
        let mut out = vec![0u32; bits.div_ceil(32) as usize];
        let mut index = vec![0u64; want_index.len()];
        let got = if wide {
            let mut c64 = vec![0u64; cells];
            lanes::encode_lanes(
                &payload,
                &table,
                chunk,
                &mut out,
                &mut index,
                &mut Cells64(&mut c64),
                &mut shared,
            )
        } else {
            let mut c32 = vec![0u32; cells];
            let mut prefix = vec![0u32; 2 * segments];
            let mut mem = Cells32 {
                cells: &mut c32,
                prefix: &mut prefix,
            };
            lanes::encode_lanes(
                &payload,
                &table,
                chunk,
                &mut out,
                &mut index,
                &mut mem,
                &mut shared,
            )
        };
        assert_eq!(got, Ok(bits), "lane encoder length (wide cells: {wide})");
        let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert!(
            bytes[..want.len()] == want[..],
            "lane encoder bits (wide cells: {wide})"
        );
        assert!(
            bytes[want.len()..].iter().all(|&b| b == 0),
            "lane encoder wrote past the end"
        );
        assert_eq!(
            index, want_index,
            "lane encoder chunk index (wide cells: {wide})"
        );
    }

    let host = cpu::encode(&payload, &table, chunk).expect("CPU backend encode");
    assert!(host.data == want, "CPU backend bits differ");
    assert_eq!(host.data_bits, bits);
    assert_eq!(
        host.chunk_offsets(),
        want_index,
        "CPU backend chunk lengths"
    );
}

/// Seed payloads: text, runs, every byte value, and a skewed source.
fn payloads() -> Vec<Vec<u8>> {
    let text = b"it was the best of times, it was the worst of times; ".repeat(8);
    let runs: Vec<u8> = (0..600).map(|i| (i / 50) as u8).collect();
    let all: Vec<u8> = (0..=255u8).collect();
    let skewed: Vec<u8> = (0..900u32).map(|i| (i * i % 7 + i % 3) as u8).collect();
    vec![text, runs, all, skewed, Vec::new(), vec![42]]
}

/// Seeds for [`vle_decode`]: files our encoder wrote with several options.
pub fn seeds_decode() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (i, p) in payloads().into_iter().enumerate() {
        let opts = VleOptions {
            max_len: [16, 9, 8, 12, 16, 1][i],
            chunk_symbols: [32, 64, 4096, 96, 32, 32][i],
        };
        seeds.push(vle::compress(&p, &Backend::Cpu, &opts).expect("seed compresses"));
    }
    seeds
}

/// Seeds for [`vle_roundtrip`] and [`vle_lanes_diff`].
pub fn seeds_roundtrip() -> Vec<Vec<u8>> {
    payloads()
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            SeedWriter::new()
                .u8([15, 8, 7, 11, 23, 0][i]) // max_len - 1
                .u8([0, 1, 127, 2, 0, 0][i]) // chunk / 32 - 1
                .u8([0, 3, 0, 20, 0, 63][i]) // repeat - 1
                .bytes(&p)
                .finish()
        })
        .collect()
}
