//! Annex B byte stream: NAL unit headers, start codes and emulation
//! prevention (clause 7.4.1).

/// nal_unit_type of an IDR slice.
pub const NAL_IDR_SLICE: u8 = 5;
/// nal_unit_type of a sequence parameter set.
pub const NAL_SPS: u8 = 7;
/// nal_unit_type of a picture parameter set.
pub const NAL_PPS: u8 = 8;

/// Appends one NAL unit to an Annex B stream: a 4-byte start code, the NAL
/// header (forbidden_zero_bit 0, `ref_idc`, `unit_type`) and the RBSP with
/// an emulation_prevention_three_byte inserted after every two zero bytes
/// that precede a byte <= 3.
pub fn write_nal(out: &mut Vec<u8>, ref_idc: u8, unit_type: u8, rbsp: &[u8]) {
    out.extend_from_slice(&[0, 0, 0, 1, (ref_idc & 3) << 5 | (unit_type & 31)]);
    let mut zeros = 0;
    for &b in rbsp {
        if zeros >= 2 && b <= 3 {
            out.push(3);
            zeros = 0;
        }
        out.push(b);
        zeros = if b == 0 { zeros + 1 } else { 0 };
    }
}

/// One NAL unit found in an Annex B stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nal {
    /// nal_ref_idc.
    pub ref_idc: u8,
    /// nal_unit_type.
    pub unit_type: u8,
    /// The RBSP, emulation prevention bytes removed.
    pub rbsp: Vec<u8>,
}

/// Splits an Annex B stream into NAL units (the inverse of [`write_nal`]).
/// Bytes before the first start code are ignored; a NAL unit with a set
/// forbidden_zero_bit or no header byte is skipped.
pub fn split_nals(stream: &[u8]) -> Vec<Nal> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i] == 0 && stream[i + 1] == 0 && stream[i + 2] == 1 {
            starts.push(i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut nals = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let mut end = starts.get(k + 1).map_or(stream.len(), |&n| n - 3);
        // Trailing zero bytes belong to the next start code (zero_byte).
        while end > s && stream[end - 1] == 0 {
            end -= 1;
        }
        let Some((&header, payload)) = stream[s..end].split_first() else {
            continue;
        };
        if header & 0x80 != 0 {
            continue;
        }
        let mut rbsp = Vec::with_capacity(payload.len());
        let mut zeros = 0;
        for &b in payload {
            if zeros >= 2 && b == 3 {
                zeros = 0;
                continue;
            }
            rbsp.push(b);
            zeros = if b == 0 { zeros + 1 } else { 0 };
        }
        nals.push(Nal {
            ref_idc: header >> 5 & 3,
            unit_type: header & 31,
            rbsp,
        });
    }
    nals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulation_prevention_round_trip() {
        let rbsp = [0u8, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0x80];
        let mut out = Vec::new();
        write_nal(&mut out, 3, NAL_SPS, &rbsp);
        assert_eq!(
            out,
            [0, 0, 0, 1, 0x67, 0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 3, 2, 0, 0, 3, 3, 0, 0, 4, 0x80]
        );
        // No start code prefix survives inside the payload.
        assert!(!out[4..].windows(3).any(|w| w == [0, 0, 1]));
        let nals = split_nals(&out);
        assert_eq!(
            nals,
            vec![Nal {
                ref_idc: 3,
                unit_type: NAL_SPS,
                rbsp: rbsp.to_vec()
            }]
        );
    }
}
