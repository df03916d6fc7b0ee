//! The test image: a deterministic 256x256 8-bit grayscale picture computed
//! by a `const fn`, so the firmware keeps it in flash (a `static` of 64 KiB
//! in `.rodata`) and the host test computes the very same bytes by including
//! this file (`tests/tests/firmware.rs`).
//!
//! It has what makes wavelet coding non-trivial: a smooth gradient, a disc
//! with a sharp edge and a soft shading, fine stripes (high-frequency
//! energy), a dark rectangle, and low-amplitude hashed noise everywhere so
//! that every subband has non-zero, non-repeating coefficients.

/// Image width in samples.
pub const WIDTH: usize = 256;
/// Image height in samples.
pub const HEIGHT: usize = 256;
/// Bits per sample.
pub const BIT_DEPTH: u32 = 8;

/// A 32-bit integer hash of a position (for the noise).
const fn hash(x: u32, y: u32) -> u32 {
    let mut h = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h = h.wrapping_mul(0x297A_2D39);
    h ^= h >> 15;
    h
}

/// The sample at column `x`, row `y` (both below 256).
const fn sample(x: i32, y: i32) -> u8 {
    // Diagonal gradient, 16..=240.
    let mut v = 16 + (x + y) * 224 / 510;
    // A disc of radius 56 around (92, 100), shaded towards its rim.
    let (dx, dy) = (x - 92, y - 100);
    let r2 = dx * dx + dy * dy;
    if r2 < 56 * 56 {
        v = 230 - r2 / 40;
    }
    // Vertical stripes, period 6, in the upper right.
    if x >= 160 && x < 240 && y >= 24 && y < 120 {
        v += if (x / 3) % 2 == 0 { 36 } else { -36 };
    }
    // A dark rectangle with a one-sample bright border, lower right.
    if x >= 150 && x < 230 && y >= 160 && y < 230 {
        v = if x == 150 || x == 229 || y == 160 || y == 229 {
            250
        } else {
            20
        };
    }
    // Hashed noise in -6..=6.
    v += (hash(x as u32, y as u32) % 13) as i32 - 6;
    if v < 0 {
        0
    } else if v > 255 {
        255
    } else {
        v as u8
    }
}

/// All samples, row-major.
pub const fn generate() -> [u8; WIDTH * HEIGHT] {
    let mut image = [0u8; WIDTH * HEIGHT];
    let mut y = 0;
    while y < HEIGHT {
        let mut x = 0;
        while x < WIDTH {
            image[y * WIDTH + x] = sample(x as i32, y as i32);
            x += 1;
        }
        y += 1;
    }
    image
}
