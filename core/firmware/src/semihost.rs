//! Host I/O over Arm semihosting: the console (QEMU's standard output or
//! error, depending on how QEMU routes its semihosting console), files on the
//! host in QEMU's current directory, and exit with a status.

use core::fmt;

use cortex_m_semihosting::{debug, hio, nr, syscall};

use crate::stream::{Sink, SinkError};

/// The semihosting console (`:tt`), for text.
#[cfg_attr(feature = "defmt", allow(dead_code))]
pub struct Console(hio::HostStream);

#[cfg_attr(feature = "defmt", allow(dead_code))]
impl Console {
    /// Opens the console.
    pub fn open() -> Result<Self, SinkError> {
        hio::hstdout().map(Console).map_err(|()| SinkError)
    }
}

impl fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write_all(s.as_bytes()).map_err(|()| fmt::Error)
    }
}

/// A host file opened for writing (`"wb"`), closed on drop.
pub struct HostFile {
    handle: usize,
}

impl HostFile {
    /// Creates or truncates the file `name` (NUL-terminated) on the host.
    pub fn create(name: &core::ffi::CStr) -> Result<Self, SinkError> {
        let bytes = name.to_bytes();
        // SAFETY: SYS_OPEN reads `len` bytes of the name (plus its NUL) from
        // a pointer that stays valid for the call.
        let handle =
            unsafe { syscall!(OPEN, bytes.as_ptr(), nr::open::W_TRUNC_BINARY, bytes.len()) };
        if handle as isize == -1 {
            Err(SinkError)
        } else {
            Ok(HostFile { handle })
        }
    }
}

impl Sink for HostFile {
    fn write(&mut self, mut bytes: &[u8]) -> Result<(), SinkError> {
        while !bytes.is_empty() {
            // SAFETY: SYS_WRITE reads `len` bytes from a live slice; it
            // returns how many were NOT written.
            let left = unsafe { syscall!(WRITE, self.handle, bytes.as_ptr(), bytes.len()) };
            if left == 0 {
                return Ok(());
            }
            if left >= bytes.len() {
                return Err(SinkError);
            }
            bytes = &bytes[bytes.len() - left..];
        }
        Ok(())
    }
}

impl fmt::Write for HostFile {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        Sink::write(self, s.as_bytes()).map_err(|_| fmt::Error)
    }
}

impl Drop for HostFile {
    fn drop(&mut self) {
        // SAFETY: closes the handle SYS_OPEN returned; it is not used again.
        unsafe {
            syscall!(CLOSE, self.handle);
        }
    }
}

/// Prints a diagnostic line: on the semihosting console, or as a defmt
/// error with the `defmt` feature (whose frames own the console then).
pub fn diagnostic(args: fmt::Arguments<'_>) {
    #[cfg(not(feature = "defmt"))]
    if let Ok(mut console) = Console::open() {
        let _ = fmt::Write::write_fmt(&mut console, format_args!("wavelane-firmware: {args}\n"));
    }
    #[cfg(feature = "defmt")]
    defmt::error!("wavelane-firmware: {}", defmt::Display2Format(&args));
}

/// Ends the program (QEMU exits with status 0 or 1).
pub fn exit(success: bool) -> ! {
    debug::exit(if success {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Only reached when no debugger or emulator honours the exit request.
    loop {
        cortex_m::asm::wfi();
    }
}
