//! The command line's `log` backend: the library prints nothing and sends
//! its notices (`auto` falling back to the CPU, a `WAVELANE_SIMD` cap, Vulkan
//! validation messages) through the `log` facade; the tool prints each as one
//! line on stderr, `wavelane: <message>`, as users have always seen them.
//! Level `info` and above: the library logs nothing below that a user needs.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= Level::Info
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!("wavelane: {}", record.args());
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Installs the stderr logger (once; a second call changes nothing).
pub fn init_logger() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(LevelFilter::Info);
    }
}
