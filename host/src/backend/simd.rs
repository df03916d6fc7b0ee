//! Hot loops compiled for the CPU the program runs on.
//!
//! The release build targets baseline x86-64 (SSE2, no `popcnt`), so that
//! the binary runs on any x86-64 machine. The BPC-PaCo walks are portable
//! code written to vectorize (32 lanes per step, lane masks, popcounts);
//! [`fastest!`](crate::fastest) defines a function whose body is compiled
//! twice more, with the x86-64-v3 features (AVX2, BMI1/2, LZCNT, POPCNT;
//! x86-64 CPUs since 2013-2015) and with those plus AVX-512 F/BW/VL/DQ/CD
//! (x86-64-v4: its mask registers turn a 32-bit lane mask into a vector
//! predicate in one instruction, which is what the lane coder needs), and
//! runs the best copy the CPU can. The result is the same whichever runs:
//! only the instructions differ.
//!
//! `WAVELANE_SIMD=baseline|v3|v4` caps the copy used (read once, at the
//! first dispatch): the best the CPU has, but not above the named level, so
//! that the copies can be compared on one machine (`cli/tests/simd_cli.rs`
//! encodes the same image under every level and compares the bytes). A
//! level above the CPU's runs the CPU's best. A set level logs a one-line
//! notice (`log` facade, level `info`; the command-line tool prints it to
//! stderr as `wavelane: WAVELANE_SIMD=v4: the CPU lacks v4; the v3 copy of
//! the hot loops runs`). Unset or empty: no cap, no notice; any other value:
//! a `warn` notice that it is ignored, and no cap.

/// Defines `fn $name(args) -> R { body }` that runs `body` compiled with
/// the x86-64-v4 or -v3 features when the CPU has them (and
/// `WAVELANE_SIMD` does not cap the level below), as baseline code
/// otherwise. Only what is inlined into the body benefits: the core walks
/// it calls are `#[inline(always)]` down to their inner loops (a closure
/// would not do: LLVM inlines the callees into the closure and then keeps
/// the closure out of line, compiled without the features).
#[macro_export]
macro_rules! fastest {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $crate::fastest! {
            $(#[$attr])* $vis fn $name<>($($arg: $ty),*) -> $ret $body
        }
    };
    // Without a return type.
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $crate::fastest! {
            $(#[$attr])* $vis fn $name<>($($arg: $ty),*) -> () $body
        }
    };
    // With type parameters (`fn f<T: Bound>(...)`): each copy is generic
    // too, so every instantiation gets all three.
    ($(#[$attr:meta])* $vis:vis fn $name:ident<$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])*
        $vis fn $name<$($g: $bound),*>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
                fn v3<$($g: $bound),*>($($arg: $ty),*) -> $ret $body
                #[target_feature(
                    enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512cd"
                )]
                fn v4<$($g: $bound),*>($($arg: $ty),*) -> $ret $body
                if $crate::backend::simd::has_v4() {
                    // SAFETY: the CPU has every feature `v4` was compiled
                    // with (checked just above: the level is never above
                    // the CPU's).
                    return unsafe { v4::<$($g),*>($($arg),*) };
                }
                if $crate::backend::simd::has_v3() {
                    // SAFETY: as above, for `v3`.
                    return unsafe { v3::<$($g),*>($($arg),*) };
                }
            }
            $body
        }
    };
}

/// A copy of the [`fastest!`](crate::fastest) functions, in increasing order
/// of required CPU features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Baseline x86-64 (what the build targets; the only copy elsewhere).
    Baseline,
    /// x86-64-v3: AVX2, BMI1/2, LZCNT, POPCNT.
    V3,
    /// x86-64-v4: v3 plus AVX-512 F/BW/VL/DQ/CD.
    V4,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 3] = [Level::Baseline, Level::V3, Level::V4];

    /// The name `WAVELANE_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::V3 => "v3",
            Level::V4 => "v4",
        }
    }

    /// Parses a [`Level::name`] (ASCII case ignored).
    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// The environment variable that caps the level.
pub const ENV: &str = "WAVELANE_SIMD";

/// The best level the CPU has (the standard library caches the answers).
pub fn cpu_level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        let v3 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt");
        let v4 = v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512cd");
        if v4 {
            return Level::V4;
        }
        if v3 {
            return Level::V3;
        }
    }
    Level::Baseline
}

/// The cap `value` of [`ENV`] asks for: `Ok(None)` for no cap (unset or
/// empty), `Err` with the notice for a value that names no level.
pub fn parse_cap(value: Option<&std::ffi::OsStr>) -> Result<Option<Level>, String> {
    let Some(value) = value else {
        return Ok(None);
    };
    let text = value.to_string_lossy();
    if text.trim().is_empty() {
        return Ok(None);
    }
    Level::parse(&text).map(Some).ok_or_else(|| {
        format!(
            "{ENV}={text:?} is not baseline, v3 or v4; ignored (the CPU's best, {}, runs)",
            cpu_level().name()
        )
    })
}

/// The level the [`fastest!`](crate::fastest) functions run: the CPU's
/// best, capped by [`ENV`] (read once).
pub fn level() -> Level {
    static LEVEL: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| {
        let cap = match parse_cap(std::env::var_os(ENV).as_deref()) {
            Ok(cap) => cap,
            Err(notice) => {
                log::warn!("{notice}");
                None
            }
        };
        let cpu = cpu_level();
        let Some(cap) = cap else {
            return cpu;
        };
        let level = cap.min(cpu);
        // Only when asked for: a one-line notice of the copy that runs.
        let lacks = if cap > cpu {
            format!(" the CPU lacks {};", cap.name())
        } else {
            String::new()
        };
        log::info!(
            "{ENV}={}:{lacks} the {} copy of the hot loops runs",
            cap.name(),
            level.name()
        );
        level
    })
}

/// Whether the v3 copies run ([`level`]).
#[inline]
pub fn has_v3() -> bool {
    level() >= Level::V3
}

/// Whether the v4 copies run ([`level`]).
#[inline]
pub fn has_v4() -> bool {
    level() >= Level::V4
}

#[cfg(test)]
mod tests {
    crate::fastest! {
        fn popcount_sum(words: &[u32]) -> u32 {
            words.iter().map(|w| w.count_ones()).sum()
        }
    }

    use super::{parse_cap, Level};
    use std::ffi::OsStr;

    #[test]
    fn the_override_names_levels() {
        assert_eq!(parse_cap(None), Ok(None));
        assert_eq!(parse_cap(Some(OsStr::new(""))), Ok(None));
        assert_eq!(
            parse_cap(Some(OsStr::new("baseline"))),
            Ok(Some(Level::Baseline))
        );
        assert_eq!(parse_cap(Some(OsStr::new("V3"))), Ok(Some(Level::V3)));
        assert_eq!(parse_cap(Some(OsStr::new("v4"))), Ok(Some(Level::V4)));
        let notice = parse_cap(Some(OsStr::new("avx9"))).unwrap_err();
        assert!(
            notice.contains("WAVELANE_SIMD") && notice.contains("ignored"),
            "{notice}"
        );
        assert!(Level::Baseline < Level::V3 && Level::V3 < Level::V4);
    }

    #[test]
    fn both_copies_compute_the_same() {
        assert_eq!(popcount_sum(&[0xF0F0, 1, u32::MAX]), 8 + 1 + 32);
        assert_eq!(popcount_sum(&[]), 0);
    }
}
