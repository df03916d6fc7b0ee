//! The probability tables compiled into core (generated from the JSON
//! copies by scripts/gen_bpc_tables.py) equal those JSON copies, read here
//! with a plain JSON parser, independently of wavelane's own table reader.

use serde_json::Value;
use wavelane::bpc::lut_json;
use wavelane_core::bpc::{Mode, ProbabilityTables, TABLE_BITPLANES};

fn json(file: &str) -> Value {
    let path = format!("{}/../core/data/bpc/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn values(v: &Value) -> Vec<u8> {
    match v {
        Value::Array(a) => a.iter().flat_map(values).collect(),
        Value::Number(n) => vec![u8::try_from(n.as_u64().unwrap()).unwrap()],
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn compiled_reference_tables_equal_json() {
    for (passes, mode) in [(2, Mode::TwoPass), (3, Mode::ThreePass)] {
        let file = format!("lut-{passes}pass.json");
        compiled_equal_json(&file, passes, ProbabilityTables::reference(mode));
    }
}

#[test]
fn compiled_natural_tables_equal_json() {
    for (passes, mode) in [(2, Mode::TwoPass), (3, Mode::ThreePass)] {
        let lossless = format!("natural-lossless-{passes}pass.json");
        compiled_equal_json(&lossless, passes, ProbabilityTables::natural_lossless(mode));
        let lossy = format!("natural-lossy-{passes}pass.json");
        compiled_equal_json(&lossy, passes, ProbabilityTables::natural_lossy(mode));
    }
}

fn compiled_equal_json(name: &str, passes: u8, compiled: &ProbabilityTables) {
    let mode = compiled.mode();
    let file = json(name);
    assert_eq!(file["passes"], passes);
    assert_eq!(file["bitplanes"], TABLE_BITPLANES);
    let groups = file["groups"].as_array().unwrap();
    assert_eq!(groups.len(), compiled.groups().len());
    for (g, (json_group, tables)) in groups.iter().zip(compiled.groups()).enumerate() {
        let flat = |rows: &[[u8; 9]]| rows.iter().flatten().copied().collect::<Vec<_>>();
        let flat4 = |rows: &[[u8; 4]]| rows.iter().flatten().copied().collect::<Vec<_>>();
        assert_eq!(
            values(&json_group["sig"]),
            flat(&tables.sig),
            "group {g} sig"
        );
        assert_eq!(
            values(&json_group["sign"]),
            flat4(&tables.sign),
            "group {g} sign"
        );
        assert_eq!(
            values(&json_group["ref"]),
            tables.refine.to_vec(),
            "group {g} ref"
        );
        if mode == Mode::ThreePass {
            assert_eq!(
                values(&json_group["cp_sig"]),
                flat(&tables.cp_sig),
                "group {g} cp_sig"
            );
            assert_eq!(
                values(&json_group["cp_sign"]),
                flat4(&tables.cp_sign),
                "group {g} cp_sign"
            );
        } else {
            assert!(json_group.get("cp_sig").is_none());
        }
    }
    // wavelane's own reader agrees.
    let text = serde_json::to_string(&file).unwrap();
    assert_eq!(&lut_json::tables_from_json(&text).unwrap(), compiled);
}
