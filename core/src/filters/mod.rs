// SPDX-License-Identifier: BSD-3-Clause
//! The standard filters: the pure-Rust ones are ncfilters-filters' (re-exported here under their
//! names of before the split), and the ones that call C libraries loaded at run time (blosc on
//! libblosc, szip on libsz) are here.

pub use ncfilters_filters::*;

// The modules that call C libraries say so.
#[expect(unsafe_code, reason = "calls into libblosc, loaded by `native`")]
pub mod blosc;
#[expect(unsafe_code, reason = "dlopen of libblosc and libsz, and their functions' pointers")]
mod native;
#[expect(unsafe_code, reason = "calls into libsz (libaec), loaded by `native`")]
pub mod szip;

pub use native::load_error as native_library_error;

#[cfg(test)]
#[expect(unsafe_code, reason = "CVec's assume_init_len after the shuffle kernels wrote the bytes")]
mod tests {
    use super::*;
    use crate::c_heap::CVec;

    /// HDF5's definition of the shuffle, byte by byte (H5Zshuffle.c).
    fn shuffle_reference(t: usize, input: &[u8]) -> Vec<u8> {
        let n = input.len() / t;
        let mut out = input.to_vec();
        if t > 1 && n > 1 {
            for i in 0..n {
                for j in 0..t {
                    out[j * n + i] = input[i * t + j];
                }
            }
        }
        out
    }

    #[test]
    fn shuffle_matches_the_hdf5_definition_and_inverts() {
        for t in 1..=17 {
            // Miri: enough for several SIMD blocks of every element size and a remainder.
            let lengths: &[usize] = if cfg!(miri) { &[0, 1, 7, 33, 300] } else { &[0, 1, 2, 7, 16, 33, 1000, 4099] };
            for &len in lengths {
                let input: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
                let (shuffled, back) = shuffled_and_back(t, &input);
                assert_eq!(shuffled, shuffle_reference(t, &input), "t={t} len={len}");
                assert_eq!(back, input, "t={t} len={len}");
            }
        }
    }

    /// Shuffles and unshuffles `input` (elements of `t` bytes) through the public functions.
    fn shuffled_and_back(t: usize, input: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let len = input.len();
        let mut shuffled = CVec::with_capacity(len).unwrap();
        shuffle::shuffle(t, input, &mut shuffled.spare_uninit()[..len]);
        // SAFETY: shuffle writes every byte of its output, here the first `len`.
        unsafe { shuffled.assume_init_len(len) };
        let mut back = CVec::with_capacity(len).unwrap();
        shuffle::unshuffle(t, shuffled.as_slice(), &mut back.spare_uninit()[..len]);
        // SAFETY: as above, unshuffle writes all `len` bytes.
        unsafe { back.assume_init_len(len) };
        (shuffled.as_slice().to_vec(), back.as_slice().to_vec())
    }

    /// The SIMD kernels exist where they should: SSSE3 on x86-64 (where the CPU has it) and NEON
    /// on aarch64 take whole blocks of 16 elements of 2, 4 and 8 bytes. Without this, a kernel
    /// compiled out by a wrong cfg would leave every test passing on the portable code.
    #[test]
    fn the_simd_kernels_take_whole_blocks_where_the_architecture_has_them() {
        #[cfg(target_arch = "x86_64")]
        let expected = std::is_x86_feature_detected!("ssse3");
        #[cfg(not(target_arch = "x86_64"))]
        let expected = cfg!(all(target_arch = "aarch64", target_feature = "neon"));
        for t in [2, 4, 8] {
            let n = 40;
            let input = vec![7u8; n * t];
            let mut out = CVec::with_capacity(n * t).unwrap();
            let done = ncfilters_runtime::shuffle_simd::shuffle_blocks(t, &input, &mut out.spare_uninit()[..n * t], n);
            assert_eq!(done, if expected { 32 } else { 0 }, "t={t}");
            let done =
                ncfilters_runtime::shuffle_simd::unshuffle_blocks(t, &input, &mut out.spare_uninit()[..n * t], n);
            assert_eq!(done, if expected { 32 } else { 0 }, "t={t}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        /// The SIMD paths give HDF5's bytes, for any data, element size and length (the 16-element
        /// blocks and the portable remainder alike), and invert.
        #[test]
        fn shuffle_of_any_chunk_is_the_hdf5_definition(
            t in proptest::sample::select(vec![2usize, 4, 8, 3, 16]),
            input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000),
        ) {
            let (shuffled, back) = shuffled_and_back(t, &input);
            proptest::prop_assert_eq!(shuffled, shuffle_reference(t, &input));
            proptest::prop_assert_eq!(back, input);
        }
    }
}
