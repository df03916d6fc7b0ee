//! Just enough of an ELF32 little-endian reader to total the sections of
//! the firmware image by memory (what `size -A` prints), without binutils.

/// An allocated section of the image.
#[derive(Debug, Clone)]
pub struct Section {
    pub name: String,
    pub addr: u32,
    pub size: u32,
    /// `SHT_NOBITS` (.bss, .uninit): takes RAM but nothing in flash.
    pub nobits: bool,
}

const SHT_NOBITS: u32 = 8;
const SHF_ALLOC: u32 = 2;

fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| format!("ELF truncated at {at}"))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("ELF truncated at {at}"))
}

/// The allocated (loaded) sections of an ELF32 little-endian file.
pub fn allocated_sections(b: &[u8]) -> Result<Vec<Section>, String> {
    if b.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 1, 1][..]) {
        return Err("not an ELF32 little-endian file".into());
    }
    let shoff = u32_at(b, 0x20)? as usize;
    let shentsize = u16_at(b, 0x2e)? as usize;
    let shnum = u16_at(b, 0x30)? as usize;
    let shstrndx = u16_at(b, 0x32)? as usize;
    if shentsize < 40 || shstrndx >= shnum {
        return Err("bad section header table".into());
    }
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u32_at(b, header(shstrndx) + 0x10)? as usize;
    let name_at = |off: u32| -> Result<String, String> {
        let start = strtab + off as usize;
        let rest = b.get(start..).ok_or("section name out of range")?;
        let end = rest
            .iter()
            .position(|&c| c == 0)
            .ok_or("unterminated section name")?;
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    let mut sections = Vec::new();
    for i in 0..shnum {
        let h = header(i);
        let flags = u32_at(b, h + 0x08)?;
        if flags & SHF_ALLOC == 0 {
            continue;
        }
        sections.push(Section {
            name: name_at(u32_at(b, h)?)?,
            addr: u32_at(b, h + 0x0c)?,
            size: u32_at(b, h + 0x14)?,
            nobits: u32_at(b, h + 0x04)? == SHT_NOBITS,
        });
    }
    Ok(sections)
}

/// Flash and RAM totals of an image whose RAM starts at `ram_origin`:
/// flash holds every allocated section below RAM plus the initial values
/// of `.data`; RAM holds every allocated section at or above `ram_origin`.
pub fn memory_use(sections: &[Section], ram_origin: u32) -> (u64, u64) {
    let mut flash = 0u64;
    let mut ram = 0u64;
    for s in sections {
        let in_ram = s.addr >= ram_origin;
        if in_ram {
            ram += s.size as u64;
        }
        if !in_ram || !s.nobits {
            flash += s.size as u64;
        }
    }
    (flash, ram)
}
