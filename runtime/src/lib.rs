// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters-runtime: the C runtime the rest of ncfilters rests on, and the only place besides
//! the plugin loader and the C exports where its unsafe code lives. Each module that holds unsafe
//! code says why where it is declared, and each type documents its invariants where it is defined.
//!
//! Its modules form layers, lowest first: a module uses only modules below it
//! (`tests/layers.rs` checks the order):
//! 1. [`large_blocks`]: the allocator of ncfilters' Rust code; [`c_heap`]: C-heap memory; [`ffi_boundary`]: the panic boundary and pointer helpers;
//!    [`c_args`]: the exports' pointer arguments as typed handles; [`filter_call`]: HDF5's
//!    filter-function protocol around a filter written in Rust;
//! 2. [`platform`]: what differs between ELF, PE and Mach-O; [`worker_pool`]: how many cores
//!    filters may use, and the threads that run a large chunk's pieces; [`zstd_context`]: a zstd
//!    context with libzstd's block pre-splitter off, and a large chunk's jobs;
//! 3. [`adler32`] and [`shuffle_simd`]: the checksum and SIMD kernels of ncfilters-filters.
#![deny(unsafe_code)]
// Public items' docs name the private helpers they rest on.
#![allow(rustdoc::private_intra_doc_links)]
#![deny(unsafe_op_in_unsafe_fn)]
// The plugin path trusts the environment (core's `plugin_path`): no allow may change it.
#![forbid(clippy::disallowed_methods)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The pure logic's modules under the names the rest of ncfilters uses.
use ncfilters_logic::{c_types, error};

// The layers, lowest first: `tests/layers.rs` reads this order (rustfmt keeps it:
// `reorder_modules = false`).
#[expect(unsafe_code, reason = "the allocator of Rust's own blocks: the system's, or mmap for large ones")]
pub mod large_blocks;
#[expect(unsafe_code, reason = "malloc'd buffers and strings that C frees")]
pub mod c_heap;
#[expect(unsafe_code, reason = "catch_unwind around every export, and pointer reads and writes for the exports")]
pub mod ffi_boundary;
#[expect(unsafe_code, reason = "the one conversion of each kind of pointer argument into its typed handle")]
pub mod c_args;
#[expect(unsafe_code, reason = "the H5Z_func_t protocol: its pointer arguments, on HDF5's thread")]
pub mod filter_call;
#[expect(unsafe_code, reason = "pthreads, getrlimit, dlopen and the unload hook, per platform")]
pub mod platform;
#[expect(unsafe_code, reason = "the library's destructor, and a borrowed batch of chunk pieces for the workers")]
pub mod worker_pool;
#[expect(unsafe_code, reason = "libzstd's thread pool and a context parameter the zstd crate does not wrap")]
pub mod zstd_context;
#[cfg_attr(feature = "system-libs", expect(unsafe_code, reason = "the system zlib's adler32 and adler32_combine"))]
pub mod adler32;
#[expect(unsafe_code, reason = "SIMD kernels: SSSE3 behind a run-time CPU check, NEON where the target has it")]
pub mod shuffle_simd;
