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

/// Defines `fn $name(args) -> R { body }` that runs `body` compiled with
/// the x86-64-v3 features when the CPU has them, as baseline code
/// otherwise. Only what is inlined into the body benefits: the core walks
/// it calls are `#[inline(always)]` down to their inner loops (a closure
/// would not do: LLVM inlines the callees into the closure and then keeps
/// the closure out of line, compiled without the features).
#[macro_export]
macro_rules! fastest {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])*
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
                fn v3($($arg: $ty),*) -> $ret $body
                #[target_feature(
                    enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512cd"
                )]
                fn v4($($arg: $ty),*) -> $ret $body
                if $crate::backend::simd::has_v4() {
                    // SAFETY: the CPU has every feature `v4` was compiled
                    // with (checked just above).
                    return unsafe { v4($($arg),*) };
                }
                if $crate::backend::simd::has_v3() {
                    // SAFETY: as above, for `v3`.
                    return unsafe { v3($($arg),*) };
                }
            }
            $body
        }
    };
}

/// Whether the CPU has the features [`fastest!`](crate::fastest) compiles
/// for (the answer is cached by the standard library).
#[cfg(target_arch = "x86_64")]
pub fn has_v3() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("popcnt")
}

/// Whether the CPU also has the AVX-512 features of the v4 copy.
#[cfg(target_arch = "x86_64")]
pub fn has_v4() -> bool {
    has_v3()
        && std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vl")
        && std::is_x86_feature_detected!("avx512dq")
        && std::is_x86_feature_detected!("avx512cd")
}

#[cfg(test)]
mod tests {
    crate::fastest! {
        fn popcount_sum(words: &[u32]) -> u32 {
            words.iter().map(|w| w.count_ones()).sum()
        }
    }

    #[test]
    fn both_copies_compute_the_same() {
        assert_eq!(popcount_sum(&[0xF0F0, 1, u32::MAX]), 8 + 1 + 32);
        assert_eq!(popcount_sum(&[]), 0);
    }
}
