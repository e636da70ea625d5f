// SPDX-License-Identifier: BSD-3-Clause
//! Adler-32 and `adler32_combine` from the zlib that deflate runs on: zlib-rs by default, the
//! system's zlib in the distribution build (feature `system-libs`), so that one implementation
//! serves both the compressor and the checksum of a stream joined from parallel blocks.

/// The Adler-32 of `data` (RFC 1950), starting from 1.
#[cfg(not(feature = "system-libs"))]
pub fn adler32(data: &[u8]) -> u32 {
    zlib_rs::adler32::adler32(1, data)
}

/// The Adler-32 of `A` followed by `B`, from theirs and `B`'s length.
#[cfg(not(feature = "system-libs"))]
pub fn combine(adler_a: u32, adler_b: u32, length_b: u64) -> u32 {
    zlib_rs::adler32::adler32_combine(adler_a, adler_b, length_b)
}

/// Adler-32's modulus: `combine` reduces the length by it, so any length fits zlib's `z_off_t`
/// (32 bits on 32-bit Linux) with the same result.
#[cfg(feature = "system-libs")]
const BASE: u64 = 65521;

/// The Adler-32 of `data` (RFC 1950), starting from 1.
#[cfg(feature = "system-libs")]
pub fn adler32(data: &[u8]) -> u32 {
    // zlib takes at most 4 GiB less one byte per call (uInt).
    data.chunks(libz_sys::uInt::MAX as usize).fold(1, |adler, piece| {
        // SAFETY: `piece` is readable for its length, which fits uInt; zlib only reads it.
        unsafe { libz_sys::adler32(adler as libz_sys::uLong, piece.as_ptr(), piece.len() as libz_sys::uInt) as u32 }
    })
}

/// The Adler-32 of `A` followed by `B`, from theirs and `B`'s length.
#[cfg(feature = "system-libs")]
pub fn combine(adler_a: u32, adler_b: u32, length_b: u64) -> u32 {
    let length = (length_b % BASE) as libz_sys::z_off_t;
    // SAFETY: a pure function of its three numbers.
    unsafe { libz_sys::adler32_combine(adler_a as libz_sys::uLong, adler_b as libz_sys::uLong, length) as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_is_rfc_1950s() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn combine_joins_two_checksums() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 + i / 3) as u8).collect();
        for split in [0, 1, 5552, 65521, 65522, 131_043, 199_999, 200_000] {
            let (a, b) = data.split_at(split);
            assert_eq!(combine(adler32(a), adler32(b), b.len() as u64), adler32(&data), "split at {split}");
        }
        // A length past 32 bits: only its remainder modulo 65521 counts.
        assert_eq!(combine(7, 9, (1 << 40) + 3), combine(7, 9, ((1u64 << 40) + 3) % 65521));
    }
}
