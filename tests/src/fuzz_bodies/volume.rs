//! Volume targets: the volume container parser with the full decoder, and
//! the NIfTI-1 reader (plain and gzip), on arbitrary bytes.

use wavelane::backend::Backend;
use wavelane::volume::format::VolumeContainer;
use wavelane::volume::io::{self, nifti, VolumeFormat};
use wavelane::volume::{
    self, SampleType, Volume, VolumeDecodeOptions, VolumeOptions, VolumeTarget,
};

/// A small voxel budget keeps every fuzz input cheap to decode.
const MAX_VOXELS: u64 = 1 << 14;

/// Container target: any bytes as a volume file. A file that parses has a
/// header whose fields write back to the same bytes, a canonical index,
/// segments that tile the data exactly; decoding (whole, one layer, one
/// slice) never succeeds where parsing fails and gives a volume of the
/// header's size with every sample in range.
pub fn volume_container(data: &[u8]) {
    let parsed = VolumeContainer::parse(data, MAX_VOXELS);
    let opts = VolumeDecodeOptions {
        max_voxels: MAX_VOXELS,
        ..VolumeDecodeOptions::default()
    };
    let full = volume::decode_volume(data, &opts, &Backend::Cpu);
    // `partial` reads cut and damaged files too, never more strictly: a
    // file that decodes whole decodes the same with it.
    let partial = VolumeDecodeOptions {
        partial: true,
        ..opts
    };
    match (volume::decode_volume(data, &partial, &Backend::Cpu), &full) {
        (Err(_), Ok(_)) => panic!("partial refused a file that decodes whole"),
        (Ok(p), Ok(f)) => assert_eq!(p.volume, f.volume),
        (Ok(p), Err(_)) => p.volume.validate().expect("decoded samples are in range"),
        (Err(_), Err(_)) => {}
    }
    let c = match (parsed, &full) {
        (Err(_), Ok(_)) => panic!("decode accepted a file the container parser rejects"),
        (Err(_), Err(_)) => return,
        (Ok(c), _) => c,
    };
    let mut fields = Vec::new();
    c.header
        .write_fields(&mut fields, c.header_len as u32)
        .expect("a parsed header is writable");
    assert_eq!(
        &data[..fields.len()],
        &fields[..],
        "header fields not canonical"
    );
    let packed = c.index.pack(false).expect("a parsed index packs");
    let at = fields.len() + 4;
    assert_eq!(
        data.get(at..at + packed.len()),
        Some(&packed[..]),
        "index not canonical"
    );
    let mut offset = c.header_len;
    for s in &c.segments {
        assert_eq!(s.offset, offset, "segments must be contiguous");
        offset += s.len;
    }
    assert_eq!(offset, data.len());
    let dims = c.header.dims_usize();
    if let Ok(d) = &full {
        assert_eq!([d.volume.width, d.volume.height, d.volume.depth], dims);
        d.volume.validate().expect("decoded samples are in range");
    }
    let one = VolumeDecodeOptions {
        slices: Some((dims[2] / 2, dims[2] / 2)),
        layers: Some(1),
        ..opts
    };
    if let Ok(d) = volume::decode_volume(data, &one, &Backend::Cpu) {
        assert_eq!(d.volume.depth, 1);
        d.volume.validate().expect("decoded samples are in range");
        // A slice reads fewer blocks, so it may decode where a damaged
        // block elsewhere fails the whole; where both decode they agree.
        if let (1, Ok(full)) = (c.header.layers, &full) {
            assert_eq!(d.volume.samples, full.volume.slice(dims[2] / 2));
        }
    }
}

/// NIfTI target: any bytes as a `.nii` file, and as a `.nii.gz` one when
/// they start with the gzip magic. A volume read is valid, and writes and
/// reads back unchanged.
pub fn nifti_read(data: &[u8]) {
    let format = match data.starts_with(&[0x1f, 0x8b]) {
        true => VolumeFormat::NiftiGz,
        false => VolumeFormat::Nifti,
    };
    let Ok(v) = io::read_bytes(data, format, MAX_VOXELS) else {
        return;
    };
    v.validate().expect("a volume read is valid");
    assert!(v.voxels() as u64 <= MAX_VOXELS);
    let mut out = Vec::new();
    nifti::write(&v, &mut out).expect("a volume read writes");
    let back = nifti::read(&out[..], MAX_VOXELS).expect("a written volume reads");
    assert_eq!(back, v, "NIfTI write + read changed the volume");
}

fn small(t: SampleType, w: usize, h: usize, d: usize) -> Volume {
    let (lo, hi) = t.range();
    Volume::from_fn(w, h, d, t, |x, y, z| {
        let v = (x * 37 + y * 11 + z * 101) as i32 % (hi - lo + 1).min(4096);
        lo.max(-2048) + v
    })
}

/// Volume files of the encoder: lossless, lossy with layers, signed 16-bit
/// with a NIfTI header and Z levels.
pub fn seeds_container() -> Vec<Vec<u8>> {
    let mut nii = Vec::new();
    let mut ct = small(SampleType::I16, 12, 9, 8);
    nifti::write(&ct, &mut nii).expect("writes");
    ct.nifti_header = Some(nii[..nifti::HEADER_LEN].to_vec());
    let cases = [
        (small(SampleType::U8, 9, 7, 5), VolumeOptions::lossless()),
        (
            small(SampleType::U16, 20, 6, 9),
            VolumeOptions {
                layers: 2,
                codeblock_height: Some(4),
                ..VolumeOptions::bpp(3.0)
            },
        ),
        (
            ct,
            VolumeOptions {
                levels: Some([2, 2, 2]),
                target: VolumeTarget::Lossless,
                ..VolumeOptions::lossless()
            },
        ),
    ];
    cases
        .iter()
        .map(|(v, o)| {
            volume::encode_volume(v, o, &Backend::Cpu)
                .expect("seed encodes")
                .bytes
        })
        .collect()
}

/// NIfTI files of every sample type, one big-endian, one gzip-compressed.
pub fn seeds_nifti() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for t in [
        SampleType::U8,
        SampleType::I8,
        SampleType::U16,
        SampleType::I16,
    ] {
        let mut b = Vec::new();
        nifti::write(&small(t, 5, 4, 3), &mut b).expect("writes");
        out.push(b);
    }
    // Big-endian: the header's size field and one 16-bit sample type.
    let mut be = out[3].clone();
    be[0..4].copy_from_slice(&348i32.to_be_bytes());
    out.push(be);
    let gz = io::write_bytes(&small(SampleType::U16, 6, 3, 4), VolumeFormat::NiftiGz);
    out.push(gz.expect("writes"));
    out
}
