// SPDX-License-Identifier: BSD-3-Clause
//! HDF5's shuffle: the byte transpose `out[j*N + i] = in[i*T + j]` of N elements of T bytes,
//! with the `nbytes % T` leftover bytes kept unchanged at the end (H5Zshuffle.c). Blocks of 16
//! elements of 2, 4 or 8 bytes go through SIMD kernels (ncfilters-runtime's `shuffle_simd`) when the CPU
//! has them; the rest, and other sizes, through the portable code here.
//!
//! The output may be uninitialised memory (a fresh `malloc` block): every byte of it is written.
#![forbid(unsafe_code)]

use std::mem::MaybeUninit;

/// Transposes `input` into `out` (same length): byte j of element i goes to plane j.
pub fn shuffle(element_size: usize, input: &[u8], out: &mut [MaybeUninit<u8>]) {
    transpose(element_size, input, out, false)
}

/// The inverse of [`shuffle`].
pub fn unshuffle(element_size: usize, input: &[u8], out: &mut [MaybeUninit<u8>]) {
    transpose(element_size, input, out, true)
}

fn copy(input: &[u8], out: &mut [MaybeUninit<u8>]) {
    for (dst, &byte) in out.iter_mut().zip(input) {
        *dst = MaybeUninit::new(byte);
    }
}

fn transpose(element_size: usize, input: &[u8], out: &mut [MaybeUninit<u8>], inverse: bool) {
    assert_eq!(input.len(), out.len(), "shuffle: input and output lengths differ");
    let t = element_size.max(1);
    let n = input.len() / t;
    let body = n * t;
    if t == 1 || n <= 1 {
        copy(input, out);
        return;
    }
    // Whole blocks of 16 elements with SIMD where available, the rest portably.
    let done = if inverse {
        super::shuffle_simd::unshuffle_blocks(t, input, out, n)
    } else {
        super::shuffle_simd::shuffle_blocks(t, input, out, n)
    };
    match (t, inverse) {
        (2, false) => planes_from_elements::<2>(&input[..body], &mut out[..body], n, done),
        (4, false) => planes_from_elements::<4>(&input[..body], &mut out[..body], n, done),
        (8, false) => planes_from_elements::<8>(&input[..body], &mut out[..body], n, done),
        (2, true) => elements_from_planes::<2>(&input[..body], &mut out[..body], n, done),
        (4, true) => elements_from_planes::<4>(&input[..body], &mut out[..body], n, done),
        (8, true) => elements_from_planes::<8>(&input[..body], &mut out[..body], n, done),
        (_, false) => {
            for (i, element) in input[..body].chunks_exact(t).enumerate() {
                for (j, &byte) in element.iter().enumerate() {
                    out[j * n + i] = MaybeUninit::new(byte);
                }
            }
        }
        (_, true) => {
            for (i, element) in out[..body].chunks_exact_mut(t).enumerate() {
                for (j, byte) in element.iter_mut().enumerate() {
                    *byte = MaybeUninit::new(input[j * n + i]);
                }
            }
        }
    }
    copy(&input[body..], &mut out[body..]);
}

/// Shuffle of elements `start..n` for a fixed element size: one pass per plane.
fn planes_from_elements<const T: usize>(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, start: usize) {
    for (j, plane) in out.chunks_exact_mut(n).enumerate() {
        for (dst, element) in plane[start..].iter_mut().zip(input[start * T..].chunks_exact(T)) {
            *dst = MaybeUninit::new(element[j]);
        }
    }
}

/// Unshuffle of elements `start..n`: gathers byte j of each element from plane j.
fn elements_from_planes<const T: usize>(input: &[u8], out: &mut [MaybeUninit<u8>], n: usize, start: usize) {
    let planes: Vec<&[u8]> = input.chunks_exact(n).collect();
    for (i, element) in out.chunks_exact_mut(T).enumerate().skip(start) {
        for (j, byte) in element.iter_mut().enumerate() {
            *byte = MaybeUninit::new(planes[j][i]);
        }
    }
}
