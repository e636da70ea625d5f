// SPDX-License-Identifier: BSD-3-Clause
//! SIMD kernels for ncfilters-filters' shuffle, for the element sizes netCDF data mostly has (2, 4 and 8
//! bytes): SSSE3 on x86-64, chosen at run time, and NEON on aarch64, which every aarch64 Linux
//! target has (the kernels are compiled only where the target enables it). Each kernel handles
//! whole blocks of 16 elements and returns how many elements it did; the portable code does the
//! rest, and all of it on other architectures.
//!
//! The idea, for 4-byte elements: a 16-byte load holds 4 elements; one byte shuffle groups their
//! bytes by plane (4 dwords: plane 0..3 of those 4 elements); a 4x4 dword transpose across four
//! such loads gives one 16-byte vector per plane, 16 elements long, stored contiguously. 2- and
//! 8-byte elements work the same way with an 8x2 / 2x8 grouping.
//!
//! Every function here with `#[target_feature(enable = "ssse3")]` is an `unsafe fn`: calling it
//! on a CPU without SSSE3 is undefined behaviour, and [`shuffle_blocks`] / [`unshuffle_blocks`]
//! call the kernels only after `is_x86_feature_detected!("ssse3")`, and only on slices as long
//! as they say (a shorter one panics). Inside them, the SSE2/SSSE3
//! intrinsics are `unsafe fn`s up to Rust 1.86 (1.85 is the oldest toolchain this builds with) and
//! safe in an SSSE3 function from 1.87 on, so a block of intrinsics alone needs `unsafe` on the
//! old compilers and is an unused `unsafe` on the new ones: those blocks allow `unused_unsafe`.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Shuffles whole blocks of 16 elements of `t` bytes (`n` elements in all) with this machine's
/// kernel, if it has one for `t`; returns the elements done.
///
/// # Panics
/// If `input` or `out` is shorter than `n * t` bytes.
pub fn shuffle_blocks(t: usize, input: &[u8], out: &mut [MaybeUninit<u8>], n: usize) -> usize {
    run_kernel(kernels(false), t, input, out, n)
}

/// Inverse of [`shuffle_blocks`].
pub fn unshuffle_blocks(t: usize, input: &[u8], out: &mut [MaybeUninit<u8>], n: usize) -> usize {
    run_kernel(kernels(true), t, input, out, n)
}

/// A kernel: `(input, out, n, blocks)`, for the first `blocks * 16` of `n` elements.
///
/// Its safety contract: the CPU has the kernel's features, `input.len() >= n * t`,
/// `out.len() >= n * t` and `blocks * 16 <= n`, for the element size `t` it is for.
type Kernel = unsafe fn(&[u8], &mut [MaybeUninit<u8>], usize, usize);

/// This machine's kernels for elements of 2, 4 and 8 bytes, shuffling or (`inverse`) not: only
/// where the CPU has SSSE3 (detected at run time).
#[cfg(target_arch = "x86_64")]
fn kernels(inverse: bool) -> Option<[Kernel; 3]> {
    if !std::is_x86_feature_detected!("ssse3") {
        return None;
    }
    Some(if inverse {
        [unshuffle2_ssse3, unshuffle4_ssse3, unshuffle8_ssse3]
    } else {
        [shuffle2_ssse3, shuffle4_ssse3, shuffle8_ssse3]
    })
}

/// The NEON kernels: the target enables NEON (every aarch64 Linux target does).
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
fn kernels(inverse: bool) -> Option<[Kernel; 3]> {
    Some(if inverse {
        [neon::unshuffle2, neon::unshuffle4, neon::unshuffle8]
    } else {
        [neon::shuffle2, neon::shuffle4, neon::shuffle8]
    })
}

/// None elsewhere: the portable code does it all.
#[cfg(not(any(target_arch = "x86_64", all(target_arch = "aarch64", target_feature = "neon"))))]
fn kernels(_inverse: bool) -> Option<[Kernel; 3]> {
    None
}

fn run_kernel(kernels: Option<[Kernel; 3]>, t: usize, input: &[u8], out: &mut [MaybeUninit<u8>], n: usize) -> usize {
    let kernel = match (kernels, t) {
        (Some([two, _, _]), 2) => two,
        (Some([_, four, _]), 4) => four,
        (Some([_, _, eight]), 8) => eight,
        _ => return 0,
    };
    let bytes = n.checked_mul(t).expect("n elements of t bytes fit in memory");
    assert!(input.len() >= bytes && out.len() >= bytes, "shuffle: {n} elements of {t} bytes, slices too short");
    let blocks = n / 16;
    // SAFETY: `kernels` gave only kernels whose CPU features are present; the slices hold n*t
    // bytes (checked above) and blocks*16 <= n: the kernel reads input[..blocks*16*t] and writes
    // out[j*n .. j*n + blocks*16] for every plane j < t, all within them.
    unsafe { kernel(input, out, n, blocks) };
    blocks * 16
}

/// The aarch64 kernels. NEON's structure loads de-interleave and its structure stores interleave:
/// `vld4q_u8` of 16 four-byte elements gives their four byte planes directly, `vld2q_u8` the two
/// of 2-byte elements; 8-byte elements take two `vld4q_u8` and an unzip of each pair of halves.
/// The intrinsics that only move lanes are `unsafe fn`s up to Rust 1.86 and safe on a NEON
/// target from 1.87 on, hence the `unused_unsafe` allowances, as on x86-64.
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod neon {
    use std::arch::aarch64::*;
    use std::mem::MaybeUninit;

    /// Stores `v` at `out[at..at + 16]`.
    ///
    /// # Safety
    /// `at + 16 <= out.len()`.
    #[inline(always)]
    unsafe fn store(out: &mut [MaybeUninit<u8>], at: usize, v: uint8x16_t) {
        debug_assert!(at + 16 <= out.len());
        // SAFETY: the caller keeps at + 16 within the slice; MaybeUninit<u8> is laid out as u8.
        unsafe { vst1q_u8(out.as_mut_ptr().add(at).cast(), v) }
    }

    /// Loads `bytes[at..at + 16]`.
    ///
    /// # Safety
    /// `at + 16 <= bytes.len()`.
    #[inline(always)]
    unsafe fn load(bytes: &[u8], at: usize) -> uint8x16_t {
        debug_assert!(at + 16 <= bytes.len());
        // SAFETY: the caller keeps at + 16 within the slice.
        unsafe { vld1q_u8(bytes.as_ptr().add(at)) }
    }

    /// # Safety
    /// `input.len() >= n * 2`, `out.len() >= n * 2` and `blocks * 16 <= n`.
    pub unsafe fn shuffle2(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
        for block in 0..blocks {
            debug_assert!(block * 32 + 32 <= input.len());
            // SAFETY: block*32 + 32 <= blocks*32 <= 2n <= input.len().
            let planes = unsafe { vld2q_u8(input.as_ptr().add(block * 32)) };
            // SAFETY: plane j's 16 bytes at j*n + block*16 lie within out (block*16 + 16 <= n).
            unsafe {
                store(out, block * 16, planes.0);
                store(out, n + block * 16, planes.1);
            }
        }
    }

    /// # Safety
    /// As [`shuffle2`], the input being the planes.
    pub unsafe fn unshuffle2(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
        for block in 0..blocks {
            // SAFETY: plane j's 16 bytes at j*n + block*16 lie within input (block*16 + 16 <= n).
            let planes = unsafe { uint8x16x2_t(load(input, block * 16), load(input, n + block * 16)) };
            debug_assert!(block * 32 + 32 <= out.len());
            // SAFETY: block*32 + 32 <= 2n <= out.len(); MaybeUninit<u8> is laid out as u8.
            unsafe { vst2q_u8(out.as_mut_ptr().add(block * 32).cast(), planes) };
        }
    }

    /// # Safety
    /// `input.len() >= n * 4`, `out.len() >= n * 4` and `blocks * 16 <= n`.
    pub unsafe fn shuffle4(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
        for block in 0..blocks {
            debug_assert!(block * 64 + 64 <= input.len());
            // SAFETY: block*64 + 64 <= 4n <= input.len().
            let planes = unsafe { vld4q_u8(input.as_ptr().add(block * 64)) };
            // SAFETY: plane j's 16 bytes at j*n + block*16 lie within out (block*16 + 16 <= n).
            unsafe {
                store(out, block * 16, planes.0);
                store(out, n + block * 16, planes.1);
                store(out, 2 * n + block * 16, planes.2);
                store(out, 3 * n + block * 16, planes.3);
            }
        }
    }

    /// # Safety
    /// As [`shuffle4`], the input being the planes.
    pub unsafe fn unshuffle4(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
        for block in 0..blocks {
            let at = block * 16;
            // SAFETY: plane j's 16 bytes at j*n + at lie within input (at + 16 <= n).
            let planes = unsafe {
                uint8x16x4_t(load(input, at), load(input, n + at), load(input, 2 * n + at), load(input, 3 * n + at))
            };
            debug_assert!(block * 64 + 64 <= out.len());
            // SAFETY: block*64 + 64 <= 4n <= out.len(); MaybeUninit<u8> is laid out as u8.
            unsafe { vst4q_u8(out.as_mut_ptr().add(block * 64).cast(), planes) };
        }
    }

    /// Lane k of a `vld4q_u8` of eight 8-byte elements holds bytes k and k+4 of each element in
    /// turn; of two such loads (elements 0-7, 8-15) the even lanes are plane k, the odd plane k+4.
    ///
    /// # Safety
    /// `input.len() >= n * 8`, `out.len() >= n * 8` and `blocks * 16 <= n`.
    #[allow(unused_unsafe)] // vuzp*q_u8 are unsafe before Rust 1.87 (see the module docs)
    pub unsafe fn shuffle8(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
        for block in 0..blocks {
            debug_assert!(block * 128 + 128 <= input.len());
            // SAFETY: block*128 + 128 <= 8n <= input.len().
            let (a, b) =
                unsafe { (vld4q_u8(input.as_ptr().add(block * 128)), vld4q_u8(input.as_ptr().add(block * 128 + 64))) };
            let halves = [(a.0, b.0), (a.1, b.1), (a.2, b.2), (a.3, b.3)];
            for (k, (low, high)) in halves.into_iter().enumerate() {
                // SAFETY: planes k and k+4 (k < 4) at their j*n + block*16 lie within out; the
                // unzips only move lanes between registers.
                unsafe {
                    store(out, k * n + block * 16, vuzp1q_u8(low, high));
                    store(out, (k + 4) * n + block * 16, vuzp2q_u8(low, high));
                }
            }
        }
    }

    /// The inverse of [`shuffle8`]: zipping planes k and k+4 gives lane k of both loads.
    ///
    /// # Safety
    /// As [`shuffle8`], the input being the planes.
    #[allow(unused_unsafe)] // vzip*q_u8 are unsafe before Rust 1.87 (see the module docs)
    pub unsafe fn unshuffle8(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
        for block in 0..blocks {
            let at = block * 16;
            let zipped: [(uint8x16_t, uint8x16_t); 4] = std::array::from_fn(|k| {
                // SAFETY: planes k and k+4 (k < 4) at their j*n + at lie within input
                // (at + 16 <= n); the zips only move lanes between registers.
                unsafe {
                    let (p, q) = (load(input, k * n + at), load(input, (k + 4) * n + at));
                    (vzip1q_u8(p, q), vzip2q_u8(p, q))
                }
            });
            let [z0, z1, z2, z3] = zipped;
            debug_assert!(block * 128 + 128 <= out.len());
            // SAFETY: block*128 + 128 <= 8n <= out.len(); MaybeUninit<u8> is laid out as u8.
            unsafe {
                let first = out.as_mut_ptr().add(block * 128).cast::<u8>();
                vst4q_u8(first, uint8x16x4_t(z0.0, z1.0, z2.0, z3.0));
                vst4q_u8(first.add(64), uint8x16x4_t(z0.1, z1.1, z2.1, z3.1));
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn load(bytes: &[u8], at: usize) -> __m128i {
    debug_assert!(at + 16 <= bytes.len());
    // SAFETY: the caller keeps at + 16 within the slice.
    unsafe { _mm_loadu_si128(bytes.as_ptr().add(at).cast()) }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn store(bytes: &mut [MaybeUninit<u8>], at: usize, v: __m128i) {
    debug_assert!(at + 16 <= bytes.len());
    // SAFETY: the caller keeps at + 16 within the slice.
    unsafe { _mm_storeu_si128(bytes.as_mut_ptr().add(at).cast(), v) }
}

/// Groups the bytes of 4 four-byte elements by plane (and back: a 4x4 byte transpose is its own inverse).
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[allow(unused_unsafe)] // An unsafe intrinsic before Rust 1.87 (see the module docs).
unsafe fn group4() -> __m128i {
    // SAFETY: the caller ensures the CPU has SSSE3 (it was detected at run time before any kernel
    // ran); the intrinsic only builds a register value, no memory is touched.
    unsafe { _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15) }
}

/// 4x4 transpose of 32-bit lanes across four vectors. The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[allow(unused_unsafe)] // Unsafe intrinsics before Rust 1.87 (see the module docs).
unsafe fn transpose32(a: __m128i, b: __m128i, c: __m128i, d: __m128i) -> [__m128i; 4] {
    // SAFETY: the caller ensures the CPU has SSSE3 (it was detected at run time before any kernel
    // ran); the intrinsics only move lanes between registers, no memory is touched.
    unsafe {
        let ab_lo = _mm_unpacklo_epi32(a, b);
        let ab_hi = _mm_unpackhi_epi32(a, b);
        let cd_lo = _mm_unpacklo_epi32(c, d);
        let cd_hi = _mm_unpackhi_epi32(c, d);
        [
            _mm_unpacklo_epi64(ab_lo, cd_lo),
            _mm_unpackhi_epi64(ab_lo, cd_lo),
            _mm_unpacklo_epi64(ab_hi, cd_hi),
            _mm_unpackhi_epi64(ab_hi, cd_hi),
        ]
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn shuffle4_ssse3(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time by `kernels`).
    let group = unsafe { group4() };
    for block in 0..blocks {
        let base = block * 64;
        // SAFETY: base + 64 <= blocks * 64 <= input.len(); the CPU has SSSE3, as above.
        let planes = unsafe {
            let v = [load(input, base), load(input, base + 16), load(input, base + 32), load(input, base + 48)];
            let g = [
                _mm_shuffle_epi8(v[0], group),
                _mm_shuffle_epi8(v[1], group),
                _mm_shuffle_epi8(v[2], group),
                _mm_shuffle_epi8(v[3], group),
            ];
            transpose32(g[0], g[1], g[2], g[3])
        };
        for (j, plane) in planes.into_iter().enumerate() {
            // SAFETY: j*n + block*16 + 16 <= j*n + n <= 4n <= out.len().
            unsafe { store(out, j * n + block * 16, plane) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn unshuffle4_ssse3(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time by `kernels`).
    let group = unsafe { group4() };
    for block in 0..blocks {
        // SAFETY: j*n + block*16 + 16 <= 4n <= input.len(); the CPU has SSSE3, as above.
        let rows = unsafe {
            let p = [
                load(input, block * 16),
                load(input, n + block * 16),
                load(input, 2 * n + block * 16),
                load(input, 3 * n + block * 16),
            ];
            transpose32(p[0], p[1], p[2], p[3])
        };
        for (k, row) in rows.into_iter().enumerate() {
            // SAFETY: block*64 + k*16 + 16 <= blocks*64 <= out.len(); the CPU has SSSE3.
            unsafe { store(out, block * 64 + k * 16, _mm_shuffle_epi8(row, group)) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn shuffle2_ssse3(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
    // Even bytes (plane 0) to the low half, odd bytes (plane 1) to the high half.
    #[allow(unused_unsafe)] // An unsafe intrinsic before Rust 1.87 (see the module docs).
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time by `kernels`); the
    // intrinsic only builds a register value.
    let group = unsafe { _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15) };
    for block in 0..blocks {
        // SAFETY: block*32 + 32 <= input.len(); the CPU has SSSE3, as above.
        let (a, b) = unsafe {
            (_mm_shuffle_epi8(load(input, block * 32), group), _mm_shuffle_epi8(load(input, block * 32 + 16), group))
        };
        // SAFETY: plane j's 16 bytes at j*n + block*16 lie within out; the CPU has SSSE3.
        unsafe {
            store(out, block * 16, _mm_unpacklo_epi64(a, b));
            store(out, n + block * 16, _mm_unpackhi_epi64(a, b));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn unshuffle2_ssse3(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
    for block in 0..blocks {
        // SAFETY: the planes' 16 bytes at block*16 and n + block*16 lie within input.
        let (p0, p1) = unsafe { (load(input, block * 16), load(input, n + block * 16)) };
        // SAFETY: block*32 + 32 <= out.len(); the CPU has SSSE3 (detected by `kernels`).
        unsafe {
            store(out, block * 32, _mm_unpacklo_epi8(p0, p1));
            store(out, block * 32 + 16, _mm_unpackhi_epi8(p0, p1));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn shuffle8_ssse3(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
    // Per 16-byte load (2 elements): bytes grouped by plane pairs: [e0b0 e1b0 e0b1 e1b1 ...].
    #[allow(unused_unsafe)] // Unsafe intrinsics before Rust 1.87 (see the module docs).
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time by `kernels`); the
    // intrinsics only build register values.
    let (group, zero) =
        unsafe { (_mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15), _mm_setzero_si128()) };
    for block in 0..blocks {
        let base = block * 128;
        let mut v = [zero; 8];
        for (k, slot) in v.iter_mut().enumerate() {
            // SAFETY: base + 128 <= input.len(); the CPU has SSSE3, as above.
            *slot = unsafe { _mm_shuffle_epi8(load(input, base + k * 16), group) };
        }
        // v[k] holds elements 2k, 2k+1 as 16-bit pairs per plane: transpose 8x8 of 16-bit lanes.
        // SAFETY: the CPU has SSSE3, as above.
        let t = unsafe { transpose16x8(v) };
        for (j, plane) in t.into_iter().enumerate() {
            // SAFETY: j*n + block*16 + 16 <= 8n <= out.len().
            unsafe { store(out, j * n + block * 16, plane) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn unshuffle8_ssse3(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, blocks: usize) {
    // Inverse of shuffle8: transpose back, then ungroup with the inverse byte permutation.
    #[allow(unused_unsafe)] // Unsafe intrinsics before Rust 1.87 (see the module docs).
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time by `kernels`); the
    // intrinsics only build register values.
    let (ungroup, zero) =
        unsafe { (_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15), _mm_setzero_si128()) };
    for block in 0..blocks {
        let mut p = [zero; 8];
        for (j, slot) in p.iter_mut().enumerate() {
            // SAFETY: j*n + block*16 + 16 <= 8n <= input.len().
            *slot = unsafe { load(input, j * n + block * 16) };
        }
        // SAFETY: the CPU has SSSE3, as above.
        let rows = unsafe { transpose16x8(p) };
        for (k, row) in rows.into_iter().enumerate() {
            // SAFETY: block*128 + k*16 + 16 <= out.len(); the CPU has SSSE3, as above.
            unsafe { store(out, block * 128 + k * 16, _mm_shuffle_epi8(row, ungroup)) };
        }
    }
}

/// 8x8 transpose of 16-bit lanes across eight vectors. The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[allow(unused_unsafe)] // Unsafe intrinsics before Rust 1.87 (see the module docs).
unsafe fn transpose16x8(v: [__m128i; 8]) -> [__m128i; 8] {
    // SAFETY: the caller ensures the CPU has SSSE3 (it was detected at run time before any kernel
    // ran); the intrinsics only move lanes between registers, no memory is touched.
    unsafe {
        let a0 = _mm_unpacklo_epi16(v[0], v[1]);
        let a1 = _mm_unpackhi_epi16(v[0], v[1]);
        let a2 = _mm_unpacklo_epi16(v[2], v[3]);
        let a3 = _mm_unpackhi_epi16(v[2], v[3]);
        let a4 = _mm_unpacklo_epi16(v[4], v[5]);
        let a5 = _mm_unpackhi_epi16(v[4], v[5]);
        let a6 = _mm_unpacklo_epi16(v[6], v[7]);
        let a7 = _mm_unpackhi_epi16(v[6], v[7]);
        let b0 = _mm_unpacklo_epi32(a0, a2);
        let b1 = _mm_unpackhi_epi32(a0, a2);
        let b2 = _mm_unpacklo_epi32(a1, a3);
        let b3 = _mm_unpackhi_epi32(a1, a3);
        let b4 = _mm_unpacklo_epi32(a4, a6);
        let b5 = _mm_unpackhi_epi32(a4, a6);
        let b6 = _mm_unpacklo_epi32(a5, a7);
        let b7 = _mm_unpackhi_epi32(a5, a7);
        [
            _mm_unpacklo_epi64(b0, b4),
            _mm_unpackhi_epi64(b0, b4),
            _mm_unpacklo_epi64(b1, b5),
            _mm_unpackhi_epi64(b1, b5),
            _mm_unpacklo_epi64(b2, b6),
            _mm_unpackhi_epi64(b2, b6),
            _mm_unpacklo_epi64(b3, b7),
            _mm_unpackhi_epi64(b3, b7),
        ]
    }
}
