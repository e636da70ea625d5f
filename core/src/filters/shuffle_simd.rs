// SPDX-License-Identifier: BSD-3-Clause
//! SIMD kernels for [`super::shuffle`], chosen at run time (SSSE3 on x86-64), for the element
//! sizes netCDF data mostly has (2, 4 and 8 bytes). Each kernel handles whole blocks of 16
//! elements and returns how many elements it did; the portable code does the rest.
//!
//! The idea, for 4-byte elements: a 16-byte load holds 4 elements; one byte shuffle groups their
//! bytes by plane (4 dwords: plane 0..3 of those 4 elements); a 4x4 dword transpose across four
//! such loads gives one 16-byte vector per plane, 16 elements long, stored contiguously. 2- and
//! 8-byte elements work the same way with an 8x2 / 2x8 grouping.
//!
//! Every function here with `#[target_feature(enable = "ssse3")]` is an `unsafe fn`: calling it
//! on a CPU without SSSE3 is undefined behaviour, and [`shuffle_blocks`] / [`unshuffle_blocks`]
//! call the kernels only after `is_x86_feature_detected!("ssse3")`. Inside them, the SSE2/SSSE3
//! intrinsics are `unsafe fn`s up to Rust 1.86 (1.85 is the oldest toolchain this builds with) and
//! safe in an SSSE3 function from 1.87 on, so a block of intrinsics alone needs `unsafe` on the
//! old compilers and is an unused `unsafe` on the new ones: those blocks allow `unused_unsafe`.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Shuffles the first `blocks * 16` elements of `T`-byte size; returns the elements done.
pub fn shuffle_blocks(t: usize, input: &[u8], out: &mut [MaybeUninit<u8>], n: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("ssse3") {
        let blocks = n / 16;
        match t {
            // SAFETY: SSSE3 is present; the kernels read input[..blocks*16*t] and write
            // out[j*n .. j*n + blocks*16] for every plane j < t, all within the slices
            // (input.len() >= n*t, out.len() >= n*t).
            4 => unsafe { shuffle4_ssse3(input, out, n, blocks) },
            // SAFETY: as for 4-byte elements.
            2 => unsafe { shuffle2_ssse3(input, out, n, blocks) },
            // SAFETY: as for 4-byte elements.
            8 => unsafe { shuffle8_ssse3(input, out, n, blocks) },
            _ => return 0,
        }
        return blocks * 16;
    }
    let _ = (t, input, out, n);
    0
}

/// Inverse of [`shuffle_blocks`].
pub fn unshuffle_blocks(t: usize, input: &[u8], out: &mut [MaybeUninit<u8>], n: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("ssse3") {
        let blocks = n / 16;
        match t {
            // SAFETY: as in shuffle_blocks, with input and output roles swapped.
            4 => unsafe { unshuffle4_ssse3(input, out, n, blocks) },
            // SAFETY: as for 4-byte elements.
            2 => unsafe { unshuffle2_ssse3(input, out, n, blocks) },
            // SAFETY: as for 4-byte elements.
            8 => unsafe { unshuffle8_ssse3(input, out, n, blocks) },
            _ => return 0,
        }
        return blocks * 16;
    }
    let _ = (t, input, out, n);
    0
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
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time in shuffle_blocks).
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
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time in unshuffle_blocks).
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
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time in shuffle_blocks); the
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
        // SAFETY: block*32 + 32 <= out.len(); the CPU has SSSE3 (detected in unshuffle_blocks).
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
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time in shuffle_blocks); the
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
    // SAFETY: the caller ensures the CPU has SSSE3 (detected at run time in unshuffle_blocks); the
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
