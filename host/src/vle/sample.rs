//! Deterministic sample inputs for VLE tests and benchmarks: English-like
//! text, skewed bytes and uniform random bytes of any length, generated from
//! a seed (SplitMix64), so benchmarks on "100 MB of text" need no data files.

/// Kinds of generated input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleKind {
    /// Words drawn with Zipf-like frequencies, with punctuation and line breaks
    /// (about 4.3 bits per byte after Huffman coding).
    Text,
    /// Geometrically distributed bytes: a few very frequent values, a long
    /// tail of rare ones that get long codewords.
    Skewed,
    /// Uniform random bytes (incompressible: 8-bit codes).
    Random,
}

struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

const WORDS: &[&str] = &[
    "the", "of", "and", "to", "a", "in", "that", "it", "was", "he", "is", "for", "with", "as",
    "his", "on", "be", "at", "by", "had", "not", "but", "from", "this", "have", "they", "which",
    "she", "or", "you", "were", "her", "all", "one", "there", "an", "so", "said", "would", "been",
    "their", "we", "when", "who", "him", "no", "more", "will", "if", "out", "up", "into", "what",
    "them", "some", "time", "could", "about", "then", "only", "other", "than", "my", "over",
    "little", "before", "upon", "great", "water", "through", "where", "long", "after", "never",
    "thought", "Queen", "Alice", "looked", "wavelet", "lifting", "Huffman", "subgroup", "decoded",
    "quickly", "strange", "garden", "between", "another", "himself", "nothing", "against",
];

/// `len` bytes of the given kind from `seed`.
pub fn generate(kind: SampleKind, len: usize, seed: u64) -> Vec<u8> {
    let mut rng = SplitMix(seed);
    let mut out = Vec::with_capacity(len + 16);
    match kind {
        SampleKind::Random => {
            while out.len() < len {
                out.extend_from_slice(&rng.next().to_le_bytes());
            }
        }
        SampleKind::Skewed => {
            while out.len() < len {
                let r = rng.next();
                // Geometric value (trailing zeros) spread over a few residues.
                let v = (r.trailing_zeros() as u64 * 7 + (r >> 61)) as u8;
                out.push(v);
            }
        }
        SampleKind::Text => {
            let mut sentence = 0;
            while out.len() < len {
                let r = rng.next();
                // Zipf-like: the index is roughly exponential in a uniform draw.
                let u = (r >> 11) as f64 / (1u64 << 53) as f64;
                let idx = ((WORDS.len() as f64).powf(u) - 1.0) as usize;
                let word = WORDS[idx.min(WORDS.len() - 1)];
                if sentence == 0 {
                    let mut chars = word.chars();
                    if let Some(c) = chars.next() {
                        out.push(c.to_ascii_uppercase() as u8);
                        out.extend_from_slice(chars.as_str().as_bytes());
                    }
                } else {
                    out.extend_from_slice(word.as_bytes());
                }
                sentence += 1;
                match (r >> 4) % 64 {
                    0..=3 if sentence > 4 => {
                        out.extend_from_slice(if r & 1 == 0 { b".\n" } else { b". " });
                        sentence = 0;
                    }
                    4..=7 => out.extend_from_slice(b", "),
                    _ => out.push(b' '),
                }
            }
        }
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sized() {
        for kind in [SampleKind::Text, SampleKind::Skewed, SampleKind::Random] {
            let a = generate(kind, 1000, 5);
            assert_eq!(a.len(), 1000);
            assert_eq!(a, generate(kind, 1000, 5));
            assert_ne!(a, generate(kind, 1000, 6));
        }
        let text = generate(SampleKind::Text, 10_000, 1);
        assert!(text.iter().all(|b| b.is_ascii()));
        assert!(text.windows(4).any(|w| w == b"the "));
    }
}
