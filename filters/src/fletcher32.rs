// SPDX-License-Identifier: BSD-3-Clause
//! HDF5's Fletcher-32 checksum (H5checksum.c): sums of big-endian 16-bit words starting at 0,
//! folded every 360 words, an odd last byte counted as `b << 8`; stored after the data as
//! 4 little-endian bytes. On read the byte-pair-swapped value (HDF5 before 1.6.3) is accepted too.
#![forbid(unsafe_code)]

/// Words per block between folds, as HDF5 does (the folds make the result exact).
const BLOCK_WORDS: usize = 360;

fn fold(x: u32) -> u32 {
    (x & 0xffff) + (x >> 16)
}

/// 16-bit words summed side by side: one lane per word position, in u32 vectors the compiler
/// vectorises (16 lanes: two AVX2 or four SSE2 registers).
const LANES: usize = 16;

/// The checksum of `data`, bit-identical to `H5_checksum_fletcher32`.
pub fn checksum(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let words = data.len() / 2;
    for block in data[..words * 2].chunks(BLOCK_WORDS * 2) {
        // Within a block of n words: sum1 += Σw, sum2 += n·sum1 + Σ(n-i)·w. HDF5's uint32_t
        // arithmetic wraps, and wrapping adds and multiplies agree modulo 2^32 in any order, so
        // these are exactly the values its word-by-word loop reaches before each fold.
        let n = (block.len() / 2) as u32;
        let (plain, weighted) = block_sums(block);
        sum2 = sum2.wrapping_add(n.wrapping_mul(sum1)).wrapping_add(weighted);
        sum1 = sum1.wrapping_add(plain);
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if data.len() % 2 == 1 {
        sum1 = sum1.wrapping_add(u32::from(data[data.len() - 1]) << 8);
        sum2 = sum2.wrapping_add(sum1);
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

/// (Σw, Σ(n-i)·w) over the n big-endian words of `block`, modulo 2^32.
///
/// Lane l sums the words at l, l+LANES, l+2·LANES, … (`plain`) and, after each vector, adds its
/// running sum into `running`, so `running[l]` = Σ_j (J-j)·w[j·LANES+l] over J full vectors. A
/// word at j·LANES+l weighs n-j·LANES-l = r + LANES·(J-j) - l, with r words after the vectors.
fn block_sums(block: &[u8]) -> (u32, u32) {
    let vectors = block.chunks_exact(2 * LANES);
    let rest = vectors.remainder();
    let (mut plain, mut running) = ([0u32; LANES], [0u32; LANES]);
    for vector in vectors {
        for lane in 0..LANES {
            let word = u32::from(u16::from_be_bytes([vector[2 * lane], vector[2 * lane + 1]]));
            plain[lane] = plain[lane].wrapping_add(word);
            running[lane] = running[lane].wrapping_add(plain[lane]);
        }
    }
    let r = (rest.len() / 2) as u32;
    let (mut total, mut weighted) = (0u32, 0u32);
    for lane in 0..LANES {
        total = total.wrapping_add(plain[lane]);
        weighted = weighted
            .wrapping_add(running[lane].wrapping_mul(LANES as u32))
            .wrapping_sub(plain[lane].wrapping_mul(lane as u32));
    }
    weighted = weighted.wrapping_add(total.wrapping_mul(r));
    for (k, pair) in rest.chunks_exact(2).enumerate() {
        let word = u32::from(u16::from_be_bytes([pair[0], pair[1]]));
        total = total.wrapping_add(word);
        weighted = weighted.wrapping_add(word.wrapping_mul(r - k as u32));
    }
    (total, weighted)
}

/// Whether the 4 bytes after `data` are its checksum (or HDF5 < 1.6.3's byte-swapped form).
pub fn verify(data: &[u8], stored: [u8; 4]) -> bool {
    let stored = u32::from_le_bytes(stored);
    let computed = checksum(data);
    let c = computed.to_ne_bytes();
    let reversed = u32::from_ne_bytes([c[1], c[0], c[3], c[2]]);
    stored == computed || stored == reversed
}

/// HDF5's own loop (H5checksum.c's `H5_checksum_fletcher32`), word by word: the reference that
/// [`checksum`]'s block sums are tested against, here and by the fuzz targets.
#[doc(hidden)]
pub fn word_by_word(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let mut len = data.len() / 2;
    let mut p = 0;
    while len > 0 {
        let tlen = len.min(360);
        len -= tlen;
        for _ in 0..tlen {
            sum1 = sum1.wrapping_add((u32::from(data[p]) << 8) | u32::from(data[p + 1]));
            p += 2;
            sum2 = sum2.wrapping_add(sum1);
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    if data.len() % 2 == 1 {
        sum1 = sum1.wrapping_add(u32::from(data[p]) << 8);
        sum2 = sum2.wrapping_add(sum1);
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_hdf5_on_all_lengths_and_extreme_data() {
        // Miri interprets: it checks the block boundaries (360 words) on the short lengths only.
        let lengths: &[usize] = if cfg!(miri) {
            &[0, 1, 2, 3, 719, 720, 721, 722]
        } else {
            &[0, 1, 2, 3, 31, 32, 33, 719, 720, 721, 722, 1440, 5000, 100_001, 1 << 20]
        };
        for &len in lengths {
            for fill in [0u8, 0xff, 0x80] {
                let data: Vec<u8> = vec![fill; len];
                assert_eq!(checksum(&data), word_by_word(&data), "len={len} fill={fill:#x}");
            }
            let data: Vec<u8> = (0..len).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
            assert_eq!(checksum(&data), word_by_word(&data), "len={len}");
        }
    }

    #[test]
    fn verify_accepts_both_byte_orders_and_rejects_damage() {
        let data = b"netCDF fletcher32 check".to_vec();
        let sum = checksum(&data);
        assert!(verify(&data, sum.to_le_bytes()));
        let c = sum.to_le_bytes();
        assert!(verify(&data, [c[1], c[0], c[3], c[2]]));
        assert!(!verify(&data, (sum ^ 1).to_le_bytes()));
    }
}
