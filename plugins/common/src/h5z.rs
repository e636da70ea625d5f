// SPDX-License-Identifier: BSD-3-Clause
//! The standard filters behind HDF5's filter-function protocol (`H5Z_func_t`), as HDF5 and the
//! NCZarr chain call them: `*buf` is a `malloc`'d block holding `nbytes` bytes, `*buf_size` its
//! size; a filter returns the bytes it produced (0 on failure, leaving `*buf` alone) and may
//! replace the block. These functions are what `H5Z_class2_t.filter` points to, for the plugin
//! libraries and for the filters built into libnetcdf.

use crate::c_heap::CVec;
use crate::c_types::ids::{H5Z_FILTER_BLOSC, H5Z_FILTER_SZIP};
use crate::c_types::{H5Z_can_apply_func_t, H5Z_func_t, H5Z_set_local_func_t};
use crate::codecs::Codec;
use crate::error::report;
use crate::filters::{self, decode_limit, FilterResult};
use crate::hdf5_sys::{self, Hid};
use crate::standard_filters::{blosc_set_local_params, szip_bits_per_pixel, szip_local_params};
use ncfilters_core::ffi_boundary::{Call, CallersThread};
use ncfilters_core::filter_call::run_filter;
pub use ncfilters_core::filter_call::Filtered;
use std::os::raw::c_int;
use std::os::raw::{c_uint, c_void};

/// Types a filter body (closure) for [`run_filter`].
fn filter_body<F: FnOnce(bool, bool, &[u32], &[u8]) -> FilterResult<Filtered>>(body: F) -> F {
    body
}

fn one_param(name: &str, params: &[u32]) -> FilterResult<u32> {
    match params {
        [value] => Ok(*value),
        _ => filters::fail(format!("{name} takes 1 parameter, not {}", params.len())),
    }
}

macro_rules! h5z_function {
    ($(#[$doc:meta])* $name:ident, $body_name:ident, $label:literal, $body:expr) => {
        /// The filter's work on a chunk (a [`FilterBody`]).
        fn $body_name(reverse: bool, skip_check: bool, params: &[u32], input: &[u8]) -> FilterResult<Filtered> {
            filter_body($body)(reverse, skip_check, params, input)
        }

        $(#[$doc])*
        ///
        /// # Safety
        /// The `H5Z_func_t` contract (see the module documentation).
        pub unsafe extern "C" fn $name(
            flags: c_uint,
            cd_nelmts: usize,
            cd_values: *const c_uint,
            nbytes: usize,
            buf_size: *mut usize,
            buf: *mut *mut c_void,
        ) -> usize {
            // SAFETY: forwarded contract.
            unsafe { run_filter($label, flags, cd_nelmts, cd_values, nbytes, buf_size, buf, $body_name) }
        }
    };
}

h5z_function!(
    /// deflate (1): `cd_values = {level}`, level 0..9.
    h5z_deflate, deflate_body, "deflate", |reverse, _, params, input| {
        // Checked in both directions, as H5Zdeflate does: a level over 9 is bad metadata.
        let level = one_param("deflate", params)?;
        if level > 9 {
            return filters::fail(format!("deflate level {level} is not 0..9"));
        }
        Ok(Filtered::Replaced(if reverse { filters::deflate::decode(input, decode_limit())? } else { filters::deflate::encode(level, input)? }))
    }
);

h5z_function!(
    /// shuffle (2): `cd_values = {element size}`, non-zero.
    h5z_shuffle, shuffle_body, "shuffle", |reverse, _, params, input| {
        let element_size = one_param("shuffle", params)? as usize;
        if element_size == 0 {
            return filters::fail("shuffle element size 0");
        }
        if element_size == 1 || input.len() / element_size <= 1 {
            return Ok(Filtered::Shrunk(input.len()));
        }
        let mut out = filters::output_uninit(input.len())?;
        let target = &mut out.spare_uninit()[..input.len()];
        if reverse {
            filters::shuffle::unshuffle(element_size, input, target)
        } else {
            filters::shuffle::shuffle(element_size, input, target)
        }
        // SAFETY: (un)shuffle writes every byte of its output, here the first input.len().
        unsafe { out.assume_init_len(input.len()) };
        Ok(Filtered::Replaced(out))
    }
);

h5z_function!(
    /// fletcher32 (3): appends the checksum; on read checks it (unless `H5Z_FLAG_SKIP_EDC`) and drops it.
    h5z_fletcher32, fletcher32_body, "fletcher32", |reverse, skip_check, _, input| {
        if !reverse {
            return Ok(Filtered::Appended(filters::fletcher32::checksum(input).to_le_bytes()));
        }
        let Some(data_len) = input.len().checked_sub(4) else {
            return filters::fail("chunk shorter than its checksum");
        };
        let stored = [input[data_len], input[data_len + 1], input[data_len + 2], input[data_len + 3]];
        if !skip_check && !filters::fletcher32::verify(&input[..data_len], stored) {
            return filters::fail("data error detected by the Fletcher32 checksum");
        }
        Ok(Filtered::Shrunk(data_len))
    }
);

h5z_function!(
    /// bzip2 (307): `cd_values = {block size}` (1..9; 9 when absent).
    h5z_bzip2, bzip2_body, "bzip2", |reverse, _, params, input| {
        Ok(Filtered::Replaced(if reverse {
            filters::bzip2::decode(input, decode_limit())?
        } else {
            filters::bzip2::encode(filters::bzip2::block_size(params)?, input)?
        }))
    }
);

h5z_function!(
    /// zstd (32015): `cd_values = {level}` (a signed level as its 32-bit pattern).
    h5z_zstd, zstd_body, "zstd", |reverse, _, params, input| {
        let level = filters::zstd::level(params)?;
        Ok(Filtered::Replaced(if reverse { filters::zstd::decode(input, decode_limit())? } else { filters::zstd::encode(level, input)? }))
    }
);

h5z_function!(
    /// blosc (32001): `cd_values = {_, _, type size, _, level, shuffle, compressor}` (H5Zblosc.c).
    h5z_blosc, blosc_body, "blosc", |reverse, _, params, input| {
        // Parameters are checked on write only: a frame decodes whatever the writer's were.
        Ok(Filtered::Replaced(if reverse {
            filters::blosc::decode(input, decode_limit())?
        } else {
            filters::blosc::encode(filters::blosc::settings(params)?, input)?
        }))
    }
);

h5z_function!(
    /// szip (4): `cd_values = {mask, pixels per block, bits per pixel, pixels per scanline}`.
    h5z_szip, szip_body, "szip", |reverse, _, params, input| {
        Ok(Filtered::Replaced(if reverse { filters::szip::decode(params, input, decode_limit())? } else { filters::szip::encode(params, input)? }))
    }
);

/// A standard filter's encoder run on a chunk the caller keeps (the NCZarr chain's first stage,
/// so that the chain needs no copy of the chunk): its new block, or `None` for the filters that
/// work on the chunk's own block (fletcher32, shuffle of 1-byte elements) and ids that are no
/// standard filter.
pub fn encode_into_new_block(id: u32, params: &[u32], input: &[u8]) -> Option<FilterResult<CVec>> {
    let codec = crate::standard_filter_table::standard_filter(id)?.codec;
    if codec == Codec::Fletcher32 {
        return None;
    }
    match (hdf5_functions(codec).body)(false, false, params, input) {
        Ok(Filtered::Replaced(out)) => Some(Ok(out)),
        Ok(Filtered::Shrunk(_) | Filtered::Appended(_)) => None,
        Err(why) => Some(Err(why)),
    }
}

/// A filter's work on a chunk: `(reverse, skip the checksum check, params, chunk)`.
type FilterBody = fn(bool, bool, &[u32], &[u8]) -> FilterResult<Filtered>;

/// A standard filter's functions in its `H5Z_class2_t`.
pub struct Hdf5Functions {
    pub filter: H5Z_func_t,
    /// What `filter` runs, called as Rust.
    body: FilterBody,
    /// HDF5 callbacks run when a dataset is created.
    pub can_apply: H5Z_can_apply_func_t,
    pub set_local: H5Z_set_local_func_t,
}

impl Hdf5Functions {
    const fn filter(filter: H5Z_func_t, body: FilterBody) -> Self {
        Hdf5Functions { filter, body, can_apply: None, set_local: None }
    }
}

/// Each standard filter's functions (the classes are built from the table in `plugin`).
pub const fn hdf5_functions(codec: Codec) -> Hdf5Functions {
    match codec {
        Codec::Zlib => Hdf5Functions::filter(Some(h5z_deflate), deflate_body),
        Codec::Shuffle => Hdf5Functions::filter(Some(h5z_shuffle), shuffle_body),
        Codec::Fletcher32 => Hdf5Functions::filter(Some(h5z_fletcher32), fletcher32_body),
        Codec::Szip => Hdf5Functions {
            can_apply: Some(szip_can_apply),
            set_local: Some(szip_set_local),
            ..Hdf5Functions::filter(Some(h5z_szip), szip_body)
        },
        Codec::Bz2 => Hdf5Functions::filter(Some(h5z_bzip2), bzip2_body),
        Codec::Zstd => Hdf5Functions::filter(Some(h5z_zstd), zstd_body),
        Codec::Blosc => {
            Hdf5Functions { set_local: Some(blosc_set_local), ..Hdf5Functions::filter(Some(h5z_blosc), blosc_body) }
        }
    }
}

/// Runs a `can_apply`/`set_local` body on the callback's `thread`: its error (or a panic)
/// becomes HDF5's -1, reported.
fn callback_status(
    name: &str,
    thread: CallersThread,
    body: impl for<'call> FnOnce(&Call<'call>) -> Result<c_int, String>,
) -> c_int {
    crate::ffi_export!(caught name, thread, |call| {
        body(call).unwrap_or_else(|why| {
            report(format_args!("{name}: {why}"));
            -1
        })
    })
}

fn hdf5_error(e: hdf5_sys::Hdf5Error) -> String {
    format!("{} failed", e.0)
}

/// blosc's `set_local` (as H5Zblosc.c's): stores `{2, 2, type size, chunk bytes}` in `cd[0..4]`
/// (`{0, 0, …}` from netcdf-c 4.9.3 on).
///
/// # Safety
/// HDF5 calls it, on the thread that uses HDF5, with its property list, type and space.
pub unsafe extern "C" fn blosc_set_local(dcpl: Hid, type_id: Hid, _space: Hid) -> c_int {
    // SAFETY: HDF5 calls this callback on its caller's thread, for this call.
    let thread = unsafe { CallersThread::promise() };
    callback_status("blosc set_local", thread, |call| {
        let (flags, user) = hdf5_sys::filter_params(call, dcpl, H5Z_FILTER_BLOSC).map_err(hdf5_error)?;
        let chunk = hdf5_sys::chunk_dims(call, dcpl).map_err(hdf5_error)?;
        let type_size = hdf5_sys::type_size(call, type_id).map_err(hdf5_error)?;
        let base_size = hdf5_sys::base_type_size(call, type_id).map_err(hdf5_error)?;
        let params = blosc_set_local_params(&user, type_size, base_size, &chunk)
            .map_err(|_| format!("a chunk of {chunk:?} x {type_size} bytes is over 4 GiB"))?;
        hdf5_sys::modify_filter(call, dcpl, H5Z_FILTER_BLOSC, flags, &params).map_err(hdf5_error)?;
        Ok(1)
    })
}

/// szip's `can_apply` (as H5Zszip.c's): types of at most 32 bits or exactly 64, in little- or
/// big-endian order.
///
/// # Safety
/// HDF5 calls it, on the thread that uses HDF5, with its property list, type and space.
pub unsafe extern "C" fn szip_can_apply(_dcpl: Hid, type_id: Hid, _space: Hid) -> c_int {
    // SAFETY: HDF5 calls this callback on its caller's thread, for this call.
    let thread = unsafe { CallersThread::promise() };
    callback_status("szip can_apply", thread, |call| {
        let bits = 8 * hdf5_sys::type_size(call, type_id).map_err(hdf5_error)?;
        if bits > 32 && bits != 64 {
            return Ok(0);
        }
        Ok(c_int::from(hdf5_sys::type_little_endian(call, type_id).map_err(hdf5_error)?.is_some()))
    })
}

/// szip's `set_local` (as H5Zszip.c's): bits per pixel, pixels per scanline and byte order.
///
/// # Safety
/// HDF5 calls it, on the thread that uses HDF5, with its property list, type and space.
pub unsafe extern "C" fn szip_set_local(dcpl: Hid, type_id: Hid, space: Hid) -> c_int {
    // SAFETY: HDF5 calls this callback on its caller's thread, for this call.
    let thread = unsafe { CallersThread::promise() };
    callback_status("szip set_local", thread, |call| {
        let (flags, user) = hdf5_sys::filter_params(call, dcpl, H5Z_FILTER_SZIP).map_err(hdf5_error)?;
        let bits = szip_bits_per_pixel(hdf5_sys::type_bits(call, type_id).map_err(hdf5_error)?);
        let dims = hdf5_sys::space_dims(call, space).map_err(hdf5_error)?;
        let scanline = *dims.last().ok_or("a scalar dataspace")?;
        let npoints = hdf5_sys::space_points(call, space).map_err(hdf5_error)?;
        let little_endian = hdf5_sys::type_little_endian(call, type_id)
            .map_err(hdf5_error)?
            .ok_or("the type has no byte order szip knows")?;
        let params = szip_local_params(&user, bits, scanline, npoints, little_endian)
            .map_err(|_| "bad szip parameters for this chunk".to_string())?;
        hdf5_sys::modify_filter(call, dcpl, H5Z_FILTER_SZIP, flags, &params).map_err(hdf5_error)?;
        Ok(0)
    })
}

#[cfg(test)]
mod byte_order;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c_types::{H5Z_FLAG_REVERSE, H5Z_FLAG_SKIP_EDC};

    /// Runs a filter on a malloc'd copy of `data`: (returned size, resulting bytes).
    pub(super) fn call(filter: H5Z_func_t, flags: c_uint, params: &[u32], data: &[u8]) -> (usize, Vec<u8>) {
        let filter = filter.expect("a filter function");
        let (block, len, _) = CVec::from_slice(data).unwrap().into_raw();
        let (mut buf, mut buf_size) = (block, len);
        // SAFETY: a malloc'd block of len bytes, valid out-pointers.
        let produced = unsafe { filter(flags, params.len(), params.as_ptr(), len, &mut buf_size, &mut buf) };
        // SAFETY: buf holds at least `produced` bytes (or the untouched input on failure).
        let bytes = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), if produced == 0 { len } else { produced }) }
            .to_vec();
        // SAFETY: the block is ours again.
        unsafe { libc::free(buf) };
        (produced, bytes)
    }

    #[test]
    fn every_filter_round_trips_through_the_protocol() {
        let data: Vec<u8> = (0..50_000u32).flat_map(|i| ((i as f32).cos() * 100.0).to_le_bytes()).collect();
        let cases: [(H5Z_func_t, Vec<u32>); 6] = [
            (Some(h5z_deflate), vec![6]),
            (Some(h5z_shuffle), vec![4]),
            (Some(h5z_fletcher32), vec![]),
            (Some(h5z_bzip2), vec![9]),
            (Some(h5z_bzip2), vec![]),
            (Some(h5z_zstd), vec![3]),
        ];
        for (filter, params) in cases {
            let (n, encoded) = call(filter, 0, &params, &data);
            assert!(n > 0);
            let (m, decoded) = call(filter, H5Z_FLAG_REVERSE, &params, &encoded);
            assert_eq!((m, decoded), (data.len(), data.clone()));
        }
    }

    h5z_function!(
        /// A filter claiming a result longer than the chunk it was given.
        overlong, overlong_body, "overlong", |_, _, _, input: &[u8]| Ok(Filtered::Shrunk(input.len() + 100))
    );

    #[test]
    fn a_shrunk_result_longer_than_the_chunk_fails_and_keeps_it() {
        assert_eq!(call(Some(overlong), 0, &[], b"abcd"), (0, b"abcd".to_vec()));
    }

    /// HDF5 2.2 rejects a filter whose result is larger than the `*buf_size` it leaves; fletcher32
    /// used to grow the block without saying so when `realloc` kept its address.
    #[test]
    fn every_result_fits_the_size_the_filter_leaves() {
        let data: Vec<u8> = (0..50_000u32).flat_map(|i| ((i as f32).sin() * 100.0).to_le_bytes()).collect();
        let cases: [(H5Z_func_t, Vec<u32>); 5] = [
            (Some(h5z_deflate), vec![6]),
            (Some(h5z_shuffle), vec![4]),
            (Some(h5z_fletcher32), vec![]),
            (Some(h5z_bzip2), vec![9]),
            (Some(h5z_zstd), vec![3]),
        ];
        for (filter, params) in cases {
            for size in [data.len(), data.len() + 1, data.len() + 100] {
                let run = filter.expect("a filter function");
                // SAFETY: a malloc'd block of `size` bytes holding the data, valid out-pointers.
                let (mut buf, mut buf_size) = unsafe {
                    let block = libc::malloc(size);
                    std::ptr::copy_nonoverlapping(data.as_ptr(), block.cast::<u8>(), data.len());
                    (block, size)
                };
                // SAFETY: as above.
                let produced = unsafe { run(0, params.len(), params.as_ptr(), data.len(), &mut buf_size, &mut buf) };
                assert!(
                    produced > 0 && produced <= buf_size,
                    "{params:?}: {produced} > *buf_size {buf_size} (block of {size})"
                );
                // SAFETY: the block is ours again.
                unsafe { libc::free(buf) };
            }
        }
    }

    #[test]
    fn bad_parameters_and_chunks_return_0() {
        let data = vec![1u8; 1000];
        let cases: [(H5Z_func_t, Vec<u32>, c_uint); 10] = [
            (Some(h5z_deflate), vec![10], 0),
            (Some(h5z_deflate), vec![], 0),
            (Some(h5z_shuffle), vec![0], 0),
            (Some(h5z_bzip2), vec![0], 0),
            (Some(h5z_zstd), vec![1, 2], 0),
            (Some(h5z_deflate), vec![1], H5Z_FLAG_REVERSE),
            (Some(h5z_deflate), vec![10], H5Z_FLAG_REVERSE),
            (Some(h5z_bzip2), vec![9], H5Z_FLAG_REVERSE),
            (Some(h5z_zstd), vec![1], H5Z_FLAG_REVERSE),
            (Some(h5z_fletcher32), vec![], H5Z_FLAG_REVERSE),
        ];
        for (filter, params, flags) in cases {
            let (n, untouched) = call(filter, flags, &params, &data);
            assert_eq!((n, untouched), (0, data.clone()), "{params:?} flags {flags:#x}");
        }
        let (n, _) = call(Some(h5z_blosc), 0, &[2, 2, 4, 0, 10, 1, 1], &data);
        assert_eq!(n, 0, "blosc level 10 is refused on write");
        let (n, _) = call(Some(h5z_fletcher32), H5Z_FLAG_REVERSE | H5Z_FLAG_SKIP_EDC, &[], &data);
        assert_eq!(n, 996, "SKIP_EDC drops the checksum unchecked");
        let (n, _) = call(Some(h5z_fletcher32), H5Z_FLAG_REVERSE, &[], &[1, 2]);
        assert_eq!(n, 0, "shorter than a checksum");
    }

    /// A valid stream of no bytes decodes to nothing, which the protocol cannot return: the filter
    /// fails, and the caller's block and size are as they were.
    #[test]
    fn an_empty_result_fails_and_leaves_the_caller_s_block() {
        let cases: [(H5Z_func_t, u32, Vec<u32>); 5] = [
            (Some(h5z_deflate), 1, vec![6]),
            (Some(h5z_bzip2), 307, vec![9]),
            (Some(h5z_zstd), 32015, vec![3]),
            (Some(h5z_blosc), 32001, vec![2, 2, 4, 0, 5, 1, 1]),
            (Some(h5z_szip), 4, vec![141, 32, 4, 1000]),
        ];
        for (filter, id, params) in cases {
            let encoded = match encode_into_new_block(id, &params, &[]) {
                Some(Ok(block)) => block.as_slice().to_vec(),
                // szip encodes no empty chunk; its stream of no bytes is the size header alone.
                _ if id == 4 => vec![0; 4],
                other => panic!("filter {id}: no empty stream ({:?})", other.map(|r| r.err())),
            };
            let (block, len, capacity) = CVec::from_slice(&encoded).unwrap().into_raw();
            let (mut buf, mut buf_size) = (block, capacity);
            let run = filter.expect("a filter function");
            // SAFETY: a malloc'd block of `capacity` bytes holding `len`, valid out-pointers.
            let produced =
                unsafe { run(H5Z_FLAG_REVERSE, params.len(), params.as_ptr(), len, &mut buf_size, &mut buf) };
            assert_eq!((produced, buf, buf_size), (0, block, capacity), "filter {id}");
            // SAFETY: the caller's block, still ours.
            let kept = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) }.to_vec();
            assert_eq!(kept, encoded, "filter {id}");
            // SAFETY: as above.
            unsafe { libc::free(buf) };
        }
    }

    #[test]
    fn blosc_decodes_whatever_parameters_the_writer_left() {
        let data: Vec<u8> = (0..50_000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        let (n, encoded) = call(Some(h5z_blosc), 0, &[2, 2, 4, 0, 5, 1, 1], &data);
        assert!(n > 0);
        // H5Zblosc.c ignores level and shuffle on read; the frame names its own compressor.
        for params in
            [vec![2, 2, 4, 0, 10, 1, 1], vec![2, 2, 4, 0, 5, 7, 1], vec![2, 2, 4, 0, 5, 1, 99], vec![2, 2], vec![]]
        {
            let (m, decoded) = call(Some(h5z_blosc), H5Z_FLAG_REVERSE, &params, &encoded);
            assert_eq!((m, decoded == data), (data.len(), true), "{params:?}");
        }
        for params in [vec![2, 2, 4, 0, 10, 1, 1], vec![2, 2, 4, 0, 5, 7, 1], vec![2, 2, 4, 0, 5, 1, 99], vec![2, 2]] {
            assert_eq!(call(Some(h5z_blosc), 0, &params, &data).0, 0, "refused on write: {params:?}");
        }
    }
}
