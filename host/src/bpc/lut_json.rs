//! Probability tables as JSON, in the layout of the reference tables
//! (`core/data/bpc/lut-{2,3}pass.json`, docs/bpc-paco.md):
//! `{passes, lanes, codeword_bits, probability_bits, bitplanes, groups:
//! [{level, subband, ref: [15], sig: [15][9], sign: [15][4], (cp_sig,
//! cp_sign in 3-pass)}]}`, 16 groups in the order (0, HL), (0, LH), (0, HH),
//! ..., (4, HH), (5, LL).

use serde::{Deserialize, Serialize};
use wavelane_core::bpc::{GroupTables, Mode, ProbabilityTables, GROUPS, TABLE_BITPLANES};

use super::BpcError;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LutFile {
    passes: u8,
    lanes: u32,
    codeword_bits: u32,
    probability_bits: u32,
    bitplanes: u32,
    groups: Vec<GroupJson>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupJson {
    level: u8,
    subband: String,
    #[serde(rename = "ref")]
    refine: Vec<u8>,
    sig: Vec<Vec<u8>>,
    sign: Vec<Vec<u8>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cp_sig: Option<Vec<Vec<u8>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cp_sign: Option<Vec<Vec<u8>>>,
}

/// `(level, subband)` of each group, in table order.
pub fn group_names() -> [(u8, &'static str); GROUPS] {
    let mut out = [(5, "LL"); GROUPS];
    for (g, slot) in out.iter_mut().take(GROUPS - 1).enumerate() {
        *slot = ((g / 3) as u8, ["HL", "LH", "HH"][g % 3]);
    }
    out
}

fn rows<const N: usize>(
    name: &str,
    g: usize,
    v: &[Vec<u8>],
) -> Result<[[u8; N]; TABLE_BITPLANES], BpcError> {
    let bad = || {
        BpcError::Tables(format!(
            "group {g}: `{name}` must be {TABLE_BITPLANES} rows of {N} values"
        ))
    };
    if v.len() != TABLE_BITPLANES {
        return Err(bad());
    }
    let mut out = [[0u8; N]; TABLE_BITPLANES];
    for (dst, src) in out.iter_mut().zip(v) {
        *dst = src.as_slice().try_into().map_err(|_| bad())?;
    }
    Ok(out)
}

/// Parses tables; checks the header, group order, shapes and that every
/// value is at most 127.
pub fn tables_from_json(text: &str) -> Result<ProbabilityTables, BpcError> {
    let f: LutFile = serde_json::from_str(text).map_err(|e| BpcError::Tables(e.to_string()))?;
    let mode = Mode::from_passes(f.passes)
        .ok_or_else(|| BpcError::Tables(format!("passes must be 2 or 3, not {}", f.passes)))?;
    if (f.lanes, f.codeword_bits, f.probability_bits, f.bitplanes)
        != (32, 16, 7, TABLE_BITPLANES as u32)
    {
        return Err(BpcError::Tables(
            "lanes, codeword_bits, probability_bits, bitplanes must be 32, 16, 7, 15".into(),
        ));
    }
    if f.groups.len() != GROUPS {
        return Err(BpcError::Tables(format!(
            "{} groups, not {GROUPS}",
            f.groups.len()
        )));
    }
    let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
    for (g, (src, name)) in f.groups.iter().zip(group_names()).enumerate() {
        if (src.level, src.subband.as_str()) != name {
            return Err(BpcError::Tables(format!(
                "group {g} is level {} {}; expected level {} {}",
                src.level, src.subband, name.0, name.1
            )));
        }
        let dst = &mut groups[g];
        dst.refine = src.refine.as_slice().try_into().map_err(|_| {
            BpcError::Tables(format!(
                "group {g}: `ref` must have {TABLE_BITPLANES} values"
            ))
        })?;
        dst.sig = rows("sig", g, &src.sig)?;
        dst.sign = rows("sign", g, &src.sign)?;
        match (mode, &src.cp_sig, &src.cp_sign) {
            (Mode::ThreePass, Some(cs), Some(cn)) => {
                dst.cp_sig = rows("cp_sig", g, cs)?;
                dst.cp_sign = rows("cp_sign", g, cn)?;
            }
            (Mode::TwoPass, None, None) => {}
            _ => {
                return Err(BpcError::Tables(format!(
                    "group {g}: `cp_sig` and `cp_sign` are required in 3-pass tables and not allowed in 2-pass ones"
                )))
            }
        }
    }
    ProbabilityTables::new(mode, groups).map_err(|e| BpcError::Tables(e.to_string()))
}

/// Serializes tables in the reference layout.
pub fn tables_to_json(tables: &ProbabilityTables) -> String {
    let three = tables.mode() == Mode::ThreePass;
    let to_rows = |r: &[[u8; 9]]| r.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
    let to_rows4 = |r: &[[u8; 4]]| r.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
    let groups = tables
        .groups()
        .iter()
        .zip(group_names())
        .map(|(g, (level, subband))| GroupJson {
            level,
            subband: subband.into(),
            refine: g.refine.to_vec(),
            sig: to_rows(&g.sig),
            sign: to_rows4(&g.sign),
            cp_sig: three.then(|| to_rows(&g.cp_sig)),
            cp_sign: three.then(|| to_rows4(&g.cp_sign)),
        })
        .collect();
    let file = LutFile {
        passes: tables.mode().passes(),
        lanes: 32,
        codeword_bits: 16,
        probability_bits: 7,
        bitplanes: TABLE_BITPLANES as u32,
        groups,
    };
    serde_json::to_string_pretty(&file).expect("tables serialize")
}

/// `reference` (the compiled-in preset of `mode`) or a JSON file, which
/// must be for `mode`.
pub fn load_tables(spec: &str, mode: Mode) -> Result<ProbabilityTables, BpcError> {
    if spec == "reference" {
        return Ok(ProbabilityTables::reference(mode).clone());
    }
    let text = std::fs::read_to_string(spec)
        .map_err(|e| BpcError::Tables(format!("cannot read {spec}: {e}")))?;
    let t = tables_from_json(&text)?;
    if t.mode() != mode {
        return Err(BpcError::Tables(format!(
            "{spec} holds {}-pass tables; {}-pass coding was asked for",
            t.mode().passes(),
            mode.passes()
        )));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_tables_round_trip_through_json() {
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let t = ProbabilityTables::reference(mode);
            let text = tables_to_json(t);
            assert_eq!(&tables_from_json(&text).unwrap(), t);
        }
    }

    #[test]
    fn malformed_tables_are_rejected() {
        let text = tables_to_json(&ProbabilityTables::REFERENCE_TWO_PASS);
        assert!(tables_from_json(&text.replace("\"passes\": 2", "\"passes\": 4")).is_err());
        assert!(tables_from_json(&text.replacen("\"LH\"", "\"HH\"", 1)).is_err());
        assert!(tables_from_json(&text.replacen("68", "128", 1)).is_err());
        assert!(tables_from_json(&text.replace("\"passes\": 2", "\"passes\": 3")).is_err());
    }
}
