//! wavelane-core on a Cortex-M4F: encodes a 256x256 8-bit image held in
//! flash twice (lossless 5/3 + 2-pass BPC-PaCo; lossy fixed-point 9/7 +
//! dead-zone quantization + 3-pass BPC-PaCo) in static buffers, with no
//! heap, writes each bitstream to a host file through semihosting, measures
//! the stack by painting, and reports through semihosting (and defmt with
//! the `defmt` feature). See docs/firmware.md.
//!
//! Outputs, in QEMU's current directory: `lossless.wlfw`, `lossy.wlfw` (the
//! streams, layout in [`stream`]) and `report.txt` (the report lines, also
//! printed on the semihosting console).
#![no_std]
#![no_main]

mod quant;
mod semihost;
mod stack;
mod stream;
mod test_image;

use core::fmt::Write as _;
use core::{fmt, mem};

use cortex_m_rt::{entry, exception, ExceptionFrame};
use wavelane_core::bpc::Scratch;

#[cfg(feature = "defmt")]
use defmt_semihosting as _;

#[cfg(not(feature = "defmt"))]
use semihost::Console;
use semihost::HostFile;
use stack::StackUse;
use stream::{FwError, Path, Sink, Workspace, CODEBLOCK, MAX_CODEWORDS, SAMPLES};
use test_image::{BIT_DEPTH, HEIGHT, WIDTH};

/// The image, in flash (`.rodata`), computed at compile time.
static IMAGE: [u8; SAMPLES] = test_image::generate();

#[entry]
fn main() -> ! {
    // cortex-m-rt turns these into `&'static mut` references, safely: they
    // are all zero, so they live in .bss.
    static mut COEFFICIENTS: [i32; SAMPLES] = [0; SAMPLES];
    static mut DWT_SCRATCH: [i32; WIDTH] = [0; WIDTH];
    static mut BPC_SCRATCH: Scratch<CODEBLOCK> = Scratch::new();
    static mut WORDS: [u16; MAX_CODEWORDS] = [0; MAX_CODEWORDS];

    let mut ws = Workspace {
        coefficients: COEFFICIENTS,
        dwt_scratch: DWT_SCRATCH,
        bpc: BPC_SCRATCH,
        words: WORDS,
    };
    let ok = match run(&mut ws) {
        Ok(()) => true,
        Err(e) => {
            semihost::diagnostic(format_args!("error: {e}"));
            false
        }
    };
    semihost::exit(ok)
}

/// The report: each line goes to `report.txt` and to the console.
struct Report {
    file: HostFile,
    #[cfg(not(feature = "defmt"))]
    console: Console,
}

impl Report {
    fn create() -> Result<Self, FwError> {
        Ok(Report {
            file: HostFile::create(c"report.txt")?,
            #[cfg(not(feature = "defmt"))]
            console: Console::open()?,
        })
    }

    fn line(&mut self, args: fmt::Arguments<'_>) -> Result<(), FwError> {
        let mut s = heapless::String::<256>::new();
        s.write_fmt(args).map_err(|_| FwError::Sink)?;
        #[cfg(feature = "defmt")]
        defmt::println!("{=str}", s.as_str());
        #[cfg(not(feature = "defmt"))]
        writeln!(self.console, "{s}").map_err(|_| FwError::Sink)?;
        self.file.write(s.as_bytes())?;
        self.file.write(b"\n")?;
        Ok(())
    }
}

fn run(ws: &mut Workspace<'_>) -> Result<(), FwError> {
    let mut report = Report::create()?;
    report.line(format_args!(
        "image width={WIDTH} height={HEIGHT} bit_depth={BIT_DEPTH} image_bytes={}",
        IMAGE.len()
    ))?;
    for path in [Path::Lossless, Path::Lossy] {
        let mut file = HostFile::create(match path {
            Path::Lossless => c"lossless.wlfw",
            Path::Lossy => c"lossy.wlfw",
        })?;
        let (stats, used) = stack::measure(|| stream::encode_stream(path, &IMAGE, ws, &mut file));
        let stats = stats?;
        let used = used.ok_or(FwError::StackOverflow)?;
        drop(file);
        report.line(format_args!(
            "stream path={} passes={} base_step={} codeblocks={} bytes={} max_codewords={} stack_call_bytes={} stack_depth_bytes={}",
            path.name(),
            path.tables().mode().passes(),
            match path {
                Path::Lossless => 0,
                Path::Lossy => quant::BASE_STEP,
            },
            stats.codeblocks,
            stats.bytes,
            stats.max_codewords,
            used.call,
            used.depth
        ))?;
        let (count, worst) = probe_codeblocks(path, ws)?;
        report.line(format_args!(
            "codeblock path={} width={CODEBLOCK} height={CODEBLOCK} codeblocks={count} stack_call_bytes={} stack_depth_bytes={}",
            path.name(),
            worst.call,
            worst.depth
        ))?;
    }
    let (bottom, top) = stack::region();
    report.line(format_args!(
        "ram image_buffer_bytes={} dwt_scratch_bytes={} bpc_scratch_bytes={} codeword_buffer_bytes={} stack_region_bytes={} stack_peak_bytes={}",
        mem::size_of_val(ws.coefficients),
        mem::size_of_val(ws.dwt_scratch),
        mem::size_of_val(ws.bpc),
        mem::size_of_val(ws.words),
        top - bottom,
        stack::deepest()
    ))?;
    report.line(format_args!("done"))
}

/// Stack use of coding one 64x64 codeblock: every full-size codeblock of the
/// last stream is coded again (the buffer still holds its quantized
/// coefficients) under its own measurement; returns how many and the worst.
fn probe_codeblocks(path: Path, ws: &mut Workspace<'_>) -> Result<(usize, StackUse), FwError> {
    let mut count = 0;
    let mut worst = StackUse { call: 0, depth: 0 };
    let full =
        stream::codeblocks().filter(|p| p.rect.width == CODEBLOCK && p.rect.height == CODEBLOCK);
    for place in full {
        let (enc, used) = stack::measure(|| stream::encode_codeblock(path, place, ws));
        enc?;
        let used = used.ok_or(FwError::StackOverflow)?;
        if used.call > worst.call {
            worst = used;
        }
        count += 1;
    }
    Ok((count, worst))
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    semihost::diagnostic(format_args!("panic: {info}"));
    semihost::exit(false)
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    semihost::diagnostic(format_args!("hard fault at pc={:#010x}", frame.pc()));
    semihost::exit(false)
}
