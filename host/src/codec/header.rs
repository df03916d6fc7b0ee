//! The main header's coding parameters: the fixed 36-byte part, the
//! quantization steps and the optional embedded probability tables
//! (docs/format.md, sections 2-4). The codeblock index and the CRCs that
//! complete the main header are in [`super::index`] and [`super::file`].

use wavelane_core::bpc::{GroupTables, Mode, ProbabilityTables, GROUPS, TABLE_BITPLANES};
use wavelane_core::dwt::{max_levels, Wavelet};

use super::adapt;
use super::format::*;
use super::presets;

const PRESET_RULE: &str = "preset id 0, 3 or 4, 254 (adjusted preset) or 255 (embedded)";
const ROW_OFFSET_RULE: &str = "-14..=14 as a signed byte";

/// A quantization step in the header's 16-bit float form: 5 bits of
/// exponent `e` above 11 bits of mantissa `m`. Its exact value is the Q16
/// integer [`QuantStep::q16`] = `((2048 + m) << e) >> 11`, so the step is
/// `q16 / 65536` and every decoder sees the same number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct QuantStep(pub u16);

impl QuantStep {
    /// The step 1.0 (no quantization of integer coefficients).
    pub const ONE: QuantStep = QuantStep(16 << 11);

    /// The step in units of 2^-16 (at least 1, at most about 2^32).
    pub const fn q16(self) -> u64 {
        let e = (self.0 >> 11) as u32;
        let m = (self.0 & 0x7ff) as u64;
        ((2048 + m) << e) >> 11
    }

    /// The step as a real number.
    pub fn value(self) -> f64 {
        self.q16() as f64 / 65536.0
    }

    /// The representable step nearest to `step` from below (a finer step is
    /// the safe side for quality), clamped to the representable range.
    pub fn from_value(step: f64) -> QuantStep {
        let q = (step * 65536.0).clamp(1.0, 4095.0 * (1u64 << 20) as f64);
        // Largest e with 2^(e) <= q * 2^11 / 2048, i.e. e = floor(log2(q)).
        let e = (q.log2().floor() as i32).clamp(0, 31) as u32;
        let m = ((q / (1u64 << e) as f64 - 1.0) * 2048.0)
            .floor()
            .clamp(0.0, 2047.0) as u16;
        QuantStep(((e as u16) << 11) | m)
    }
}

/// Which probability tables the codeblocks were coded with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tables {
    /// A built-in preset (see `codec::presets`) with its rows moved by
    /// `row_offset` bitplanes.
    Preset {
        /// Preset id.
        id: u8,
        /// Bitplanes the preset's rows are moved up (down when negative).
        row_offset: i8,
        /// The preset's tables for the mode, rows moved.
        tables: Box<ProbabilityTables>,
    },
    /// A preset (rows moved by `row_offset`) with changes listed in the
    /// header ([`super::adapt`]).
    Adjusted {
        /// Id of the preset the changes apply to.
        base: u8,
        /// Bitplanes the preset's rows are moved before the changes.
        row_offset: i8,
        /// The tables after the changes.
        tables: Box<ProbabilityTables>,
    },
    /// Tables stored in the header.
    Embedded(Box<ProbabilityTables>),
}

impl Tables {
    /// Preset `id` of `mode` with its rows moved by `row_offset`, or `None`
    /// for an unknown id or an offset beyond
    /// [`MAX_ROW_OFFSET`](super::presets::MAX_ROW_OFFSET).
    pub fn preset(id: u8, mode: Mode, row_offset: i8) -> Option<Tables> {
        let max = presets::MAX_ROW_OFFSET;
        if !(-max..=max).contains(&row_offset) {
            return None;
        }
        let preset = presets::preset(id, mode)?;
        Some(Tables::Preset {
            id,
            row_offset,
            tables: Box::new(preset.with_row_offset(row_offset)),
        })
    }

    /// The tables themselves.
    pub fn probability_tables(&self) -> &ProbabilityTables {
        match self {
            Tables::Preset { tables, .. } | Tables::Adjusted { tables, .. } => tables,
            Tables::Embedded(t) => t,
        }
    }

    /// The preset's name (`"reference"`, `"natural-lossless"`,
    /// `"natural-lossy"`), `"adjusted"` or `"embedded"`.
    pub fn name(&self) -> &'static str {
        match self {
            Tables::Preset { id, .. } => presets::preset_name(*id),
            Tables::Adjusted { .. } => "adjusted",
            Tables::Embedded(_) => "embedded",
        }
    }

    /// The preset these tables start from (`None` for embedded tables).
    pub fn base_preset(&self) -> Option<u8> {
        match self {
            Tables::Preset { id, .. } => Some(*id),
            Tables::Adjusted { base, .. } => Some(*base),
            Tables::Embedded(_) => None,
        }
    }

    /// The header's table row offset (0 for embedded tables).
    pub fn row_offset(&self) -> i8 {
        match self {
            Tables::Preset { row_offset, .. } | Tables::Adjusted { row_offset, .. } => *row_offset,
            Tables::Embedded(_) => 0,
        }
    }

    /// The coding mode.
    pub fn mode(&self) -> Mode {
        self.probability_tables().mode()
    }
}

/// Everything a decoder needs to know besides the codeblock index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Columns, 1..=65535.
    pub width: u32,
    /// Rows, 1..=65535.
    pub height: u32,
    /// Components, 1..=4.
    pub components: u8,
    /// Bits per sample, 1..=16 (all components).
    pub bit_depth: u8,
    /// Samples are two's-complement signed (no level shift).
    pub signed: bool,
    /// Colour transform of the first three components.
    pub colour: ColourTransform,
    /// The wavelet.
    pub wavelet: Wavelet,
    /// Decomposition levels (0..=max for the size, at most 16).
    pub levels: u8,
    /// Codeblock height, 1..=256 (the width is always 64).
    pub codeblock_height: u16,
    /// Probability tables (and with them the BPC-PaCo mode).
    pub tables: Tables,
    /// Fractional bits the samples carry through the transform.
    pub fraction_bits: u8,
    /// Quality layers, 1..=32.
    pub layers: u8,
    /// Codeblocks carry a bitplane shift (early termination was on).
    pub block_shifts: bool,
    /// Quantization steps, `1 + 3 * levels` per list, subbands in the order
    /// of [`wavelane_core::dwt::subbands`] (LL, then coarsest to finest HL,
    /// LH, HH); one list shared by all components or one per component.
    pub steps: Vec<Vec<QuantStep>>,
}

impl Header {
    /// Number of subbands per component.
    pub fn subband_count(&self) -> usize {
        1 + 3 * self.levels as usize
    }

    /// Step of subband `band` (subbands order) of component `c`.
    pub fn step(&self, c: usize, band: usize) -> QuantStep {
        let list = if self.steps.len() == 1 {
            &self.steps[0]
        } else {
            &self.steps[c]
        };
        list[band]
    }

    /// The BPC-PaCo mode.
    pub fn mode(&self) -> Mode {
        self.tables.mode()
    }

    /// Samples of the image (width x height x components).
    pub fn samples(&self) -> u64 {
        self.width as u64 * self.height as u64 * self.components as u64
    }

    /// Checks every field against docs/format.md.
    pub fn validate(&self) -> Result<(), FormatError> {
        let dim = |v: u32| (1..=MAX_DIMENSION).contains(&v);
        check_field("width", self.width as u64, dim(self.width), "1..=65535")?;
        check_field("height", self.height as u64, dim(self.height), "1..=65535")?;
        let c = self.components;
        check_field(
            "components",
            c as u64,
            (1..=MAX_COMPONENTS).contains(&c),
            "1..=4",
        )?;
        let b = self.bit_depth;
        check_field(
            "bit_depth",
            b as u64,
            (1..=MAX_BIT_DEPTH).contains(&b),
            "1..=16",
        )?;
        check_field(
            "colour",
            self.colour.code() as u64,
            self.colour == ColourTransform::None || c >= 3,
            "a colour transform needs at least 3 components",
        )?;
        let max = max_levels(self.width as usize, self.height as usize).min(MAX_LEVELS as u32);
        check_field(
            "levels",
            self.levels as u64,
            self.levels as u32 <= max,
            "at most ceil(log2(max(width, height))) and 16",
        )?;
        let h = self.codeblock_height;
        check_field(
            "codeblock_height",
            h as u64,
            (1..=MAX_CODEBLOCK_HEIGHT).contains(&h),
            "1..=256",
        )?;
        let f = self.fraction_bits;
        check_field("fraction_bits", f as u64, f <= MAX_FRACTION_BITS, "0..=8")?;
        let l = self.layers;
        check_field("layers", l as u64, (1..=MAX_LAYERS).contains(&l), "1..=32")?;
        if let Some(id) = self.tables.base_preset() {
            let row_offset = self.tables.row_offset();
            check_field(
                "tables",
                id as u64,
                presets::preset(id, self.mode()).is_some(),
                PRESET_RULE,
            )?;
            let max = presets::MAX_ROW_OFFSET;
            check_field(
                "table_row_offset",
                row_offset as u8 as u64,
                (-max..=max).contains(&row_offset),
                ROW_OFFSET_RULE,
            )?;
        }
        let lists = self.steps.len();
        let lists_ok = lists == 1 || lists == c as usize;
        check_field(
            "steps",
            lists as u64,
            lists_ok,
            "one list, or one per component",
        )?;
        for list in &self.steps {
            let n = list.len() as u64;
            check_field(
                "steps",
                n,
                list.len() == self.subband_count(),
                "1 + 3 * levels steps per list",
            )?;
        }
        Ok(())
    }

    /// Appends the fixed part, the steps and any embedded tables to `out`
    /// (the header-length field is written as 0; the file writer patches it).
    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), FormatError> {
        self.validate()?;
        let mut flags = 0u8;
        if self.steps.len() > 1 {
            flags |= FLAG_STEPS_PER_COMPONENT;
        }
        if self.block_shifts {
            flags |= FLAG_BLOCK_SHIFTS;
        }
        let start = out.len();
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // header length, patched later
        out.extend_from_slice(&self.width.to_le_bytes());
        out.extend_from_slice(&self.height.to_le_bytes());
        out.extend_from_slice(&[
            self.components,
            self.bit_depth,
            self.signed as u8,
            self.colour.code(),
            wavelet_code(self.wavelet),
            self.levels,
        ]);
        out.extend_from_slice(&self.codeblock_height.to_le_bytes());
        let table_code = match self.tables {
            Tables::Preset { id, .. } => id,
            Tables::Adjusted { .. } => TABLES_ADJUSTED,
            Tables::Embedded(_) => TABLES_EMBEDDED,
        };
        out.extend_from_slice(&[
            self.mode().passes(),
            table_code,
            self.fraction_bits,
            self.layers,
            flags,
            self.tables.row_offset() as u8,
        ]);
        debug_assert_eq!(out.len() - start, FIXED_HEADER_BYTES);
        for list in &self.steps {
            for s in list {
                out.extend_from_slice(&s.0.to_le_bytes());
            }
        }
        match &self.tables {
            Tables::Embedded(t) => write_tables(t, out),
            Tables::Adjusted {
                base,
                row_offset,
                tables,
            } => {
                let base_tables =
                    Tables::preset(*base, self.mode(), *row_offset).expect("validated above");
                let changes = adapt::write_changes(base_tables.probability_tables(), tables);
                let len = u16::try_from(changes.len()).map_err(|_| {
                    FormatError::Unrepresentable("a table change list over 64 KB".into())
                })?;
                out.push(*base);
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&changes);
            }
            Tables::Preset { .. } => {}
        }
        Ok(())
    }

    /// Parses the fixed part, steps and tables from the front of `bytes`;
    /// returns the header, the header-length field and the bytes consumed.
    pub fn parse(bytes: &[u8]) -> Result<(Header, u32, usize), FormatError> {
        let mut r = Cursor::new(bytes, "main header");
        if r.take(8)? != MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = r.u16()?;
        if !(OLDEST_READABLE_VERSION..=VERSION).contains(&version) {
            return Err(FormatError::UnsupportedVersion(version));
        }
        let header_length = r.u32()?;
        let width = r.u32()?;
        let height = r.u32()?;
        let [components, bit_depth, signed, colour, wavelet, levels] = r.array::<6>()?;
        let codeblock_height = r.u16()?;
        let [passes, table_code, fraction_bits, layers, flags, last] = r.array::<6>()?;
        check_field("signed", signed as u64, signed <= 1, "0 or 1")?;
        let colour = ColourTransform::from_code(colour).ok_or(FormatError::BadField {
            field: "colour",
            value: colour as u64,
            rule: "0, 1 or 2",
        })?;
        let wavelet = wavelet_from_code(wavelet).ok_or(FormatError::BadField {
            field: "wavelet",
            value: wavelet as u64,
            rule: "0, 1 or 2",
        })?;
        let mode = mode_from_code(passes).ok_or(FormatError::BadField {
            field: "passes",
            value: passes as u64,
            rule: "2 or 3",
        })?;
        check_field(
            "flags",
            flags as u64,
            flags & !KNOWN_FLAGS == 0,
            "unknown flag bits set",
        )?;
        let row_offset = if version == 1 {
            // Version 1 knew preset 0 only, and this byte was reserved.
            check_field("reserved", last as u64, last == 0, "must be 0")?;
            let ok = table_code == presets::PRESET_REFERENCE || table_code == TABLES_EMBEDDED;
            let rule = "preset id 0 or 255 (embedded) in version 1";
            check_field("tables", table_code as u64, ok, rule)?;
            0
        } else {
            last as i8
        };
        let tables = if table_code == TABLES_EMBEDDED {
            let rule = "0 with embedded tables";
            check_field("table_row_offset", last as u64, row_offset == 0, rule)?;
            None
        } else if table_code == TABLES_ADJUSTED && version >= 2 {
            // The base preset and the changes follow the steps.
            None
        } else {
            let known = presets::preset(table_code, mode).is_some();
            check_field("tables", table_code as u64, known, PRESET_RULE)?;
            let bad_offset = FormatError::BadField {
                field: "table_row_offset",
                value: last as u64,
                rule: ROW_OFFSET_RULE,
            };
            Some(Tables::preset(table_code, mode, row_offset).ok_or(bad_offset)?)
        };
        // Validate the sizes before allocating anything that depends on them.
        let mut header = Header {
            width,
            height,
            components,
            bit_depth,
            signed: signed == 1,
            colour,
            wavelet,
            levels,
            codeblock_height,
            // Uniform tables stand in until embedded tables are read below.
            tables: tables
                .unwrap_or_else(|| Tables::Embedded(Box::new(ProbabilityTables::uniform(mode)))),
            fraction_bits,
            layers,
            block_shifts: flags & FLAG_BLOCK_SHIFTS != 0,
            steps: Vec::new(),
        };
        let lists = if flags & FLAG_STEPS_PER_COMPONENT != 0 {
            components.max(1)
        } else {
            1
        };
        let bands = header.subband_count();
        header.steps = vec![vec![QuantStep::ONE; bands]; lists as usize];
        header.validate()?;
        for list in header.steps.iter_mut() {
            for s in list.iter_mut() {
                *s = QuantStep(r.u16()?);
            }
        }
        if table_code == TABLES_ADJUSTED {
            header.tables = read_adjusted(&mut r, mode, row_offset, last)?;
        }
        if table_code == TABLES_EMBEDDED {
            header.tables = Tables::Embedded(Box::new(read_tables(&mut r, mode)?));
        }
        Ok((header, header_length, r.pos))
    }
}

/// Reads the base preset and change list of adjusted tables.
fn read_adjusted(
    r: &mut Cursor<'_>,
    mode: Mode,
    row_offset: i8,
    offset_byte: u8,
) -> Result<Tables, FormatError> {
    let [base] = r.array::<1>()?;
    let known = base != TABLES_ADJUSTED && presets::preset(base, mode).is_some();
    check_field("tables", base as u64, known, PRESET_RULE)?;
    let base_tables = Tables::preset(base, mode, row_offset).ok_or(FormatError::BadField {
        field: "table_row_offset",
        value: offset_byte as u64,
        rule: ROW_OFFSET_RULE,
    })?;
    let len = r.u16()? as usize;
    let tables = adapt::read_changes(r.take(len)?, base_tables.probability_tables())?;
    Ok(Tables::Adjusted {
        base,
        row_offset,
        tables: Box::new(tables),
    })
}

/// Appends tables in the header's embedded layout (docs/format.md).
pub(crate) fn write_tables(t: &ProbabilityTables, out: &mut Vec<u8>) {
    let three = t.mode() == Mode::ThreePass;
    for g in t.groups() {
        g.sig.iter().for_each(|row| out.extend_from_slice(row));
        g.sign.iter().for_each(|row| out.extend_from_slice(row));
        out.extend_from_slice(&g.refine);
        if three {
            g.cp_sig.iter().for_each(|row| out.extend_from_slice(row));
            g.cp_sign.iter().for_each(|row| out.extend_from_slice(row));
        }
    }
}

/// Bytes of embedded tables for `mode`.
pub fn embedded_tables_len(mode: Mode) -> usize {
    let per_group = TABLE_BITPLANES * (9 + 4 + 1);
    let cp = TABLE_BITPLANES * (9 + 4);
    GROUPS * (per_group + if mode == Mode::ThreePass { cp } else { 0 })
}

/// Reads tables in the header's embedded layout.
pub(crate) fn read_tables(
    r: &mut Cursor<'_>,
    mode: Mode,
) -> Result<ProbabilityTables, FormatError> {
    let mut groups: [GroupTables; GROUPS] = core::array::from_fn(|_| GroupTables::UNIFORM);
    for g in groups.iter_mut() {
        for row in g.sig.iter_mut() {
            row.copy_from_slice(r.take(9)?);
        }
        for row in g.sign.iter_mut() {
            row.copy_from_slice(r.take(4)?);
        }
        g.refine.copy_from_slice(r.take(TABLE_BITPLANES)?);
        if mode == Mode::ThreePass {
            for row in g.cp_sig.iter_mut() {
                row.copy_from_slice(r.take(9)?);
            }
            for row in g.cp_sign.iter_mut() {
                row.copy_from_slice(r.take(4)?);
            }
        }
    }
    ProbabilityTables::new(mode, groups).map_err(|e| FormatError::BadField {
        field: "tables",
        value: e.group as u64,
        rule: "probabilities must be <= 127 (value is the offending group)",
    })
}

/// A bounds-checked little-endian reader over a byte slice.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pub(crate) pos: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Cursor {
            bytes,
            pos: 0,
            what,
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(FormatError::Truncated {
                what: self.what,
                needed: self.pos as u64 + n as u64,
                available: self.bytes.len() as u64,
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], FormatError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, FormatError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, FormatError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quant_step_codes_are_exact_and_monotone() {
        assert_eq!(QuantStep::ONE.q16(), 65536);
        assert_eq!(QuantStep::ONE.value(), 1.0);
        assert_eq!(QuantStep(0).q16(), 1);
        let mut last = 0;
        for code in 0..=u16::MAX {
            let q = QuantStep(code).q16();
            assert!(q >= last, "code {code}");
            last = q;
        }
        for v in [0.05, 0.37, 1.0, 1.5, 3.999, 17.25, 1000.0] {
            let s = QuantStep::from_value(v);
            assert!(
                s.value() <= v && s.value() > v * (1.0 - 1.0 / 1024.0),
                "{v} -> {}",
                s.value()
            );
        }
    }
}
