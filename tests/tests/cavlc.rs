//! CAVLC across the layers: the frame layout's nC derivation against an
//! independent spatial formulation, frame-level round trips through the
//! decoder, and core (CPU) = GPU byte equality of whole slices.

use rand::Rng;
use wavelane::h264::encode::{unit_slots, CodedPicture, CpuEntropy, EntropyCoder};
use wavelane::h264::gpu::{code_table_words, GpuEntropy, CODE_TABLE_WORDS};
use wavelane::h264::{Picture, Plane};
use wavelane_core::bits::{BitReader, BitWriter};
use wavelane_core::cavlc::frame::{
    FrameResidual, MbInfo, MbKind, COEFFS_PER_UNIT, RESIDUAL_UNITS_PER_MB, UNITS_PER_MB,
    UNIT_CHROMA_AC, UNIT_HEADER, UNIT_LUMA, UNIT_LUMA_DC,
};
use wavelane_core::cavlc::nc::luma_block_index;
use wavelane_core::cavlc::{decode_block, encode_block, BlockKind, WordSlot};
use wavelane_tests::{assert_same, for_random_cases, gpu, TestRng};

/// A random picture of macroblock infos, levels and header bits: every
/// macroblock kind, random coded_block_pattern, slices of random lengths.
fn random_picture(rng: &mut TestRng, mb_width: usize, mb_height: usize) -> CodedPicture {
    let n = mb_width * mb_height;
    let mut slice = 0u16;
    let mut mbs = Vec::with_capacity(n);
    for _ in 0..n {
        if rng.random_bool(0.05) {
            slice += 1;
        }
        let kind = match rng.random_range(0..10) {
            0 => MbKind::Pcm,
            1..=4 => MbKind::Intra16x16,
            _ => MbKind::Intra4x4,
        };
        let luma = if kind == MbKind::Intra16x16 {
            if rng.random_bool(0.7) {
                15
            } else {
                0
            }
        } else {
            rng.random_range(0..16)
        };
        mbs.push(MbInfo {
            kind,
            cbp: luma | rng.random_range(0..3u8) << 4,
            slice,
        });
    }
    let density: f64 = rng.random_range(0.05..0.9);
    let coeffs = (0..n * RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT)
        .map(|_| {
            if !rng.random_bool(density) {
                0
            } else if rng.random_bool(0.05) {
                rng.random_range(-2063..=2063)
            } else {
                let m = if rng.random_bool(0.5) {
                    1
                } else {
                    rng.random_range(1..12)
                };
                if rng.random_bool(0.5) {
                    m
                } else {
                    -m
                }
            }
        })
        .collect::<Vec<i16>>();
    let headers = (0..n)
        .map(|_| {
            let len = rng.random_range(1..=130u32);
            let mut slot = WordSlot::default();
            for _ in 0..len {
                wavelane_core::cavlc::BitSink::put(&mut slot, rng.random_range(0..2), 1).unwrap();
            }
            slot
        })
        .collect();
    let blank = |w, h| Plane::filled(w, h, 0);
    CodedPicture {
        mb_width,
        mb_height,
        mbs,
        headers,
        coeffs,
        recon: Picture {
            y: blank(16, 16),
            cb: blank(8, 8),
            cr: blank(8, 8),
        },
    }
}

/// The unit of the block at (x, y) of a macroblock's block grid.
type UnitAt = Box<dyn Fn(usize, usize) -> usize>;

/// nC the plain way: TotalCoeff of every 4x4 block on a picture-wide grid
/// (luma 4 per macroblock side, chroma 2), neighbours looked up spatially.
fn reference_nc(
    f: &FrameResidual<'_>,
    mbs: &[MbInfo],
    mb_width: usize,
    mb: usize,
    unit: usize,
) -> i8 {
    let (mbx, mby) = (mb % mb_width, mb / mb_width);
    let count = |m: usize, u: usize| -> u8 {
        if mbs[m].kind == MbKind::Pcm {
            return 16;
        }
        match f.unit_kind(m, u) {
            None => 0,
            Some(k) => f.unit_coeffs(m, u, k).iter().filter(|&&c| c != 0).count() as u8,
        }
    };
    // (grid size per macroblock, block x/y in the macroblock, unit of block (x, y)).
    let (grid, x, y, unit_at): (usize, usize, usize, UnitAt) = if unit <= 17 {
        let blk = if unit == UNIT_LUMA_DC {
            0
        } else {
            unit - UNIT_LUMA
        };
        let (x, y) = wavelane_core::cavlc::nc::luma_block_xy(blk as u8);
        (
            4,
            x as usize,
            y as usize,
            Box::new(|x, y| UNIT_LUMA + luma_block_index(x as u8, y as u8) as usize),
        )
    } else if unit < UNIT_CHROMA_AC {
        return -1;
    } else {
        let first = UNIT_CHROMA_AC + (unit - UNIT_CHROMA_AC) / 4 * 4;
        let i = unit - first;
        (2, i % 2, i / 2, Box::new(move |x, y| first + x + 2 * y))
    };
    let (gx, gy) = (mbx * grid + x, mby * grid + y);
    let lookup = |gx: usize, gy: usize| -> Option<u8> {
        let m = gy / grid * mb_width + gx / grid;
        (mbs[m].slice == mbs[mb].slice).then(|| count(m, unit_at(gx % grid, gy % grid)))
    };
    let a = if gx > 0 { lookup(gx - 1, gy) } else { None };
    let b = if gy > 0 { lookup(gx, gy - 1) } else { None };
    match (a, b) {
        (Some(a), Some(b)) => ((a + b + 1) >> 1) as i8,
        (Some(a), None) => a as i8,
        (None, Some(b)) => b as i8,
        (None, None) => 0,
    }
}

#[test]
fn cavlc_frame_nc_matches_spatial_reference() {
    for_random_cases("cavlc frame nC", 40, |rng| {
        let (w, h) = (rng.random_range(1..7), rng.random_range(1..6));
        let p = random_picture(rng, w, h);
        let f = p.residual();
        for mb in 0..w * h {
            for unit in 1..UNITS_PER_MB {
                assert_eq!(
                    f.nc(mb, unit),
                    reference_nc(&f, &p.mbs, w, mb, unit),
                    "mb {mb} unit {unit}"
                );
            }
        }
    });
}

#[test]
fn cavlc_frame_round_trips_through_the_decoder() {
    for_random_cases("cavlc frame round trip", 20, |rng| {
        let (w, h) = (rng.random_range(1..6), rng.random_range(1..5));
        let p = random_picture(rng, w, h);
        let f = p.residual();
        let mut buf = vec![0u8; w * h * 28 * 64];
        let mut wr = BitWriter::new(&mut buf);
        for mb in 0..w * h {
            for unit in 1..UNITS_PER_MB {
                f.encode_unit(mb, unit, &mut wr).unwrap();
            }
        }
        let len = wr.bit_position();
        // Decode in stream order; nC comes from what has been decoded so far.
        let mut decoded = vec![0i16; p.coeffs.len()];
        let mut r = BitReader::with_bit_len(&buf, len);
        for mb in 0..w * h {
            for unit in 1..UNITS_PER_MB {
                let df = FrameResidual::new(w, h, &p.mbs, &decoded).unwrap();
                let Some(kind) = df.unit_kind(mb, unit) else {
                    continue;
                };
                let nc = df.nc(mb, unit);
                let n = kind.max_coeffs();
                let mut out = vec![0i16; n];
                decode_block(&mut r, kind, nc, &mut out).unwrap();
                let start = (mb * RESIDUAL_UNITS_PER_MB + unit - 1) * COEFFS_PER_UNIT
                    + usize::from(n == 15);
                decoded[start..start + n].copy_from_slice(&out);
                assert_eq!(out, f.unit_coeffs(mb, unit, kind), "mb {mb} unit {unit}");
            }
        }
        assert_eq!(r.remaining_bits(), 0);
    });
}

#[test]
fn cavlc_frame_units_equal_plain_block_encoding() {
    // encode_unit = encode_block with the derived nC; core's
    // macroblock_slots (the model of shaders/cavlc/cavlc_encode.comp) holds
    // the header then exactly those bits, and so do the slots the CPU
    // backend packs.
    for_random_cases("cavlc units", 10, |rng| {
        let p = random_picture(rng, 4, 3);
        let f = p.residual();
        let slots = unit_slots(&f, &p.headers).unwrap();
        for mb in 0..12 {
            let mut core_slots = [WordSlot::default(); UNITS_PER_MB];
            f.macroblock_slots(mb, p.headers[mb], &mut core_slots)
                .unwrap();
            assert_eq!(
                &slots[mb * UNITS_PER_MB..(mb + 1) * UNITS_PER_MB],
                &core_slots[..],
                "mb {mb}: host slots against core"
            );
            for (unit, slot) in core_slots.iter().enumerate().skip(1) {
                let mut expected = WordSlot::default();
                if let Some(kind) = f.unit_kind(mb, unit) {
                    encode_block(
                        &mut expected,
                        kind,
                        f.nc(mb, unit),
                        f.unit_coeffs(mb, unit, kind),
                    )
                    .unwrap();
                }
                assert_eq!(*slot, expected, "mb {mb} unit {unit}");
            }
            assert_eq!(core_slots[UNIT_HEADER], p.headers[mb]);
        }
    });
}

#[test]
fn cavlc_code_table_buffer_layout() {
    let words = code_table_words();
    assert_eq!(words.len(), CODE_TABLE_WORDS);
    // Spot checks at the offsets shaders/cavlc/cavlc.glsl uses.
    let code = |w: u32| (w >> 16, w & 0xffff);
    assert_eq!(code(words[0]), (1, 1)); // T_CT_NC0: TotalCoeff 0
    assert_eq!(code(words[68]), (2, 3)); // T_CT_NC2: "11"
    assert_eq!(code(words[136]), (4, 15)); // T_CT_NC4: "1111"
    assert_eq!(code(words[204]), (2, 1)); // T_CT_CDC: "01"
    assert_eq!(code(words[224 + 15]), (9, 1)); // T_TZ_4X4: TC 1, TZ 15 "000000001"
    assert_eq!(code(words[464 + 3]), (3, 0)); // T_TZ_CDC: TC 1, TZ 3 "000"
    assert_eq!(code(words[476 + 6 * 15 + 14]), (11, 1)); // T_RUN: ZL > 6, run 14
}

#[test]
fn cavlc_gpu_slices_equal_cpu_on_random_pictures() {
    let gpu = GpuEntropy::new(gpu());
    for_random_cases("cavlc gpu = cpu", 6, |rng| {
        let (w, h) = (rng.random_range(1..9), rng.random_range(1..7));
        let p = random_picture(rng, w, h);
        let header_len = rng.random_range(1..60usize);
        let header: Vec<u8> = (0..8).map(|_| rng.random()).collect();
        let mut hbuf = vec![0u8; 8];
        let mut hw = BitWriter::new(&mut hbuf);
        let mut hr = BitReader::with_bit_len(&header, header_len);
        while hr.remaining_bits() > 0 {
            hw.write_bit(hr.read_bit().unwrap()).unwrap();
        }
        let header = (hbuf, header_len);
        let cpu = CpuEntropy.slice_rbsp(&header, &p).unwrap();
        let gpu_bytes = gpu.slice_rbsp(&header, &p).unwrap();
        assert_same("slice RBSP", &cpu, &gpu_bytes);
        // Independently of the CPU backend's slot packing: the header bits,
        // then per macroblock its header slot and each unit coded straight
        // into one writer in stream order, then rbsp_slice_trailing_bits.
        let f = p.residual();
        let mut buf = vec![0u8; 8 + w * h * UNITS_PER_MB * 64];
        let mut wr = BitWriter::new(&mut buf);
        let mut hr = BitReader::with_bit_len(&header.0, header.1);
        while hr.remaining_bits() > 0 {
            wr.write_bit(hr.read_bit().unwrap()).unwrap();
        }
        for mb in 0..w * h {
            p.headers[mb].write_to(&mut wr).unwrap();
            for unit in 1..UNITS_PER_MB {
                f.encode_unit(mb, unit, &mut wr).unwrap();
            }
        }
        wr.write_bit(true).unwrap();
        while !wr.bit_position().is_multiple_of(8) {
            wr.write_bit(false).unwrap();
        }
        let len = wr.bit_position() / 8;
        assert_same("slice RBSP against direct coding", &buf[..len], &cpu);
    });
}

#[test]
fn cavlc_gpu_handles_extreme_blocks() {
    // Dense maximal levels in every unit (the longest blocks), nC >= 8 everywhere.
    let gpu = GpuEntropy::new(gpu());
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(7);
    let mut p = random_picture(&mut rng, 3, 2);
    for (i, c) in p.coeffs.iter_mut().enumerate() {
        *c = if i % 3 == 0 { 2063 } else { -2063 };
    }
    for m in &mut p.mbs {
        *m = MbInfo {
            kind: m.kind,
            cbp: 0x2f,
            slice: 0,
        };
    }
    let header = (vec![0xa5u8; 4], 29usize);
    assert_same(
        "slice RBSP",
        &CpuEntropy.slice_rbsp(&header, &p).unwrap(),
        &gpu.slice_rbsp(&header, &p).unwrap(),
    );
    // A level that cannot be coded is an error on both sides, not wrong bits.
    p.coeffs[COEFFS_PER_UNIT + 1] = i16::MIN;
    p.mbs[0] = MbInfo {
        kind: MbKind::Intra4x4,
        cbp: 0x0f,
        slice: 0,
    };
    assert!(CpuEntropy.slice_rbsp(&header, &p).is_err());
    assert!(gpu.slice_rbsp(&header, &p).is_err());
    let _ = BlockKind::ALL;
}
