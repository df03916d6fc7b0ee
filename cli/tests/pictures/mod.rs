//! Test pictures for the CLI tests that read what the binary writes: PNM
//! files written and parsed here (independently of the library's image
//! readers, so that a bug there cannot cancel out), and the library's view
//! of a picture for comparisons with `wavelane::codec`.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;

use wavelane::codec::Image;

/// A picture as the tests handle it: `channels` interleaved samples per
/// pixel (1 gray, 3 RGB), `maxval` 255 or 65535.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pnm {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub maxval: u32,
    pub samples: Vec<u32>,
}

impl Pnm {
    /// A deterministic picture with gradients, a disc, hashed noise and,
    /// in colour, different content per channel.
    pub fn test_picture(width: usize, height: usize, channels: usize, maxval: u32) -> Pnm {
        let mut samples = Vec::with_capacity(width * height * channels);
        for y in 0..height {
            for x in 0..width {
                for c in 0..channels {
                    let (xi, yi) = (x as i64, y as i64);
                    let disc = if (xi - width as i64 / 2).pow(2) + (yi - height as i64 / 3).pow(2)
                        < (width as i64 / 4).pow(2)
                    {
                        90
                    } else {
                        0
                    };
                    let i = ((y * width + x) * channels + c) as u32;
                    let noise = (i.wrapping_mul(2_654_435_761) >> 28) as i64;
                    let v = (xi * (3 + c as i64) + yi * (2 + 2 * c as i64) + disc + noise) % 256;
                    samples.push((v as u32 * maxval / 255).min(maxval));
                }
            }
        }
        Pnm {
            width,
            height,
            channels,
            maxval,
            samples,
        }
    }

    /// The PGM (P5) or PPM (P6) bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let magic = if self.channels == 1 { "P5" } else { "P6" };
        let mut out =
            format!("{magic}\n{} {}\n{}\n", self.width, self.height, self.maxval).into_bytes();
        for &v in &self.samples {
            if self.maxval > 255 {
                out.extend_from_slice(&(v as u16).to_be_bytes());
            } else {
                out.push(v as u8);
            }
        }
        out
    }

    pub fn write(&self, path: &Path) {
        std::fs::write(path, self.to_bytes()).expect("write PNM");
    }

    /// Parses a binary PGM/PPM as the binary writes it (single whitespace
    /// separators, no comments).
    pub fn read(path: &Path) -> Pnm {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut fields = Vec::new();
        let mut at = 0;
        while fields.len() < 4 {
            while bytes[at].is_ascii_whitespace() {
                at += 1;
            }
            let start = at;
            while !bytes[at].is_ascii_whitespace() {
                at += 1;
            }
            fields.push(std::str::from_utf8(&bytes[start..at]).unwrap().to_string());
        }
        at += 1;
        let channels = match fields[0].as_str() {
            "P5" => 1,
            "P6" => 3,
            m => panic!("{}: not a binary PGM/PPM ({m})", path.display()),
        };
        let width: usize = fields[1].parse().unwrap();
        let height: usize = fields[2].parse().unwrap();
        let maxval: u32 = fields[3].parse().unwrap();
        let data = &bytes[at..];
        let samples: Vec<u32> = if maxval > 255 {
            data.chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
                .collect()
        } else {
            data.iter().map(|&b| b as u32).collect()
        };
        assert_eq!(
            samples.len(),
            width * height * channels,
            "{}: sample count",
            path.display()
        );
        Pnm {
            width,
            height,
            channels,
            maxval,
            samples,
        }
    }

    /// Samples of channel `c`, row-major.
    pub fn plane(&self, c: usize) -> Vec<i32> {
        self.samples
            .iter()
            .skip(c)
            .step_by(self.channels)
            .map(|&v| v as i32)
            .collect()
    }

    /// PSNR of `other` against this picture over all samples, in dB
    /// (infinite when equal).
    pub fn psnr(&self, other: &Pnm) -> f64 {
        assert_eq!(
            (self.width, self.height, self.channels),
            (other.width, other.height, other.channels)
        );
        let se: f64 = self
            .samples
            .iter()
            .zip(&other.samples)
            .map(|(&a, &b)| (a as f64 - b as f64).powi(2))
            .sum();
        let mse = se / self.samples.len() as f64;
        10.0 * (self.maxval as f64 * self.maxval as f64 / mse).log10()
    }
}

/// Asserts that the picture the binary wrote holds the library's decoded
/// image sample for sample.
pub fn assert_pnm_equals_image(what: &str, pnm: &Pnm, image: &Image) {
    assert_eq!(
        (pnm.width, pnm.height, pnm.channels),
        (image.width, image.height, image.planes.len()),
        "{what}: geometry"
    );
    for (c, plane) in image.planes.iter().enumerate() {
        let got = pnm.plane(c);
        if let Some(i) = got.iter().zip(plane).position(|(a, b)| a != b) {
            panic!(
                "{what}: component {c} differs first at sample {i} (x {}, y {}): file {}, library {}",
                i % pnm.width,
                i / pnm.width,
                got[i],
                plane[i]
            );
        }
    }
}
