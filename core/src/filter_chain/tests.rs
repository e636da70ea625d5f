// SPDX-License-Identifier: BSD-3-Clause
//! The chain's tests, on filters defined here.

use super::*;
use crate::c_types::H5Z_func_t;
use crate::in_test_call;
use crate::plugin_loader::test_parts::{codec, keep_alive};
use crate::plugin_loader::LibraryContents;
use crate::plugin_registry::{LoadedLibrary, RegistryBuilder};
use fixtures::{add_one, claim_past_the_block};
use std::cell::Cell;
use std::os::raw::{c_uint, c_void};

/// Filters that rewrite the chunk: they must allocate and free C memory.
#[expect(unsafe_code, reason = "filters behind H5Z_func_t pointers free and allocate C memory")]
mod fixtures {
    use crate::c_types::{H5Z_func_t, H5Z_FLAG_REVERSE};
    use crate::plugin_loader::{test_parts::filter_with, FilterPart};
    use std::os::raw::{c_uint, c_void};

    /// A part of `function`: one of these tests' filters, which keep HDF5's filter contract.
    pub fn part(id: u32, function: H5Z_func_t) -> FilterPart {
        // SAFETY: these tests pass only their own filters (above and in the parent module).
        unsafe { filter_with(id, function) }
    }

    /// Encode: a new malloc'd block with every byte + 1 (old block freed); decode: the inverse.
    ///
    /// # Safety
    /// The `H5Z_func_t` contract: `*buf` is a malloc'd block holding `nbytes` bytes.
    pub unsafe extern "C" fn add_one(
        flags: c_uint,
        _: usize,
        _: *const c_uint,
        nbytes: usize,
        buf_size: *mut usize,
        buf: *mut *mut c_void,
    ) -> usize {
        // SAFETY: the H5Z_func_t contract: *buf holds nbytes bytes of a malloc'd block.
        unsafe {
            let out = libc::malloc(nbytes.max(1)).cast::<u8>();
            let input = (*buf).cast::<u8>();
            for i in 0..nbytes {
                let b = *input.add(i);
                *out.add(i) = if flags & H5Z_FLAG_REVERSE != 0 { b.wrapping_sub(1) } else { b.wrapping_add(1) };
            }
            libc::free(*buf);
            *buf = out.cast();
            *buf_size = nbytes;
        }
        nbytes
    }

    /// Claims one byte more than the block it leaves holds (HDF5 2.2 rejects such a result).
    pub extern "C" fn claim_past_the_block(
        _: c_uint,
        _: usize,
        _: *const c_uint,
        _: usize,
        buf_size: *mut usize,
        _: *mut *mut c_void,
    ) -> usize {
        // SAFETY: the H5Z_func_t contract: buf_size is valid.
        unsafe { *buf_size + 1 }
    }
}

/// Fails in both directions, leaving the block alone (0 = failure).
extern "C" fn fail(_: c_uint, _: usize, _: *const c_uint, _: usize, _: *mut usize, _: *mut *mut c_void) -> usize {
    0
}

/// Fails the way netcdf-c's HGOTO_ERROR plugins do: (size_t)-1.
extern "C" fn fail_minus_one(
    _: c_uint,
    _: usize,
    _: *const c_uint,
    _: usize,
    _: *mut usize,
    _: *mut *mut c_void,
) -> usize {
    usize::MAX
}

thread_local! {
    static SEEN_LIMIT: Cell<usize> = const { Cell::new(0) };
}

/// Identity that records the decode limit it sees.
extern "C" fn record_limit(
    _: c_uint,
    _: usize,
    _: *const c_uint,
    nbytes: usize,
    _: *mut usize,
    _: *mut *mut c_void,
) -> usize {
    SEEN_LIMIT.with(|seen| seen.set(crate::filters::decode_limit()));
    nbytes
}

fn registry(parts: &[(u32, H5Z_func_t)]) -> Registry {
    let mut builder = RegistryBuilder::default();
    for &(id, function) in parts {
        builder.add(LoadedLibrary {
            path: format!("/test/{id}.so").into(),
            keep_alive: keep_alive(),
            contents: LibraryContents::Plugin {
                filter: Some(fixtures::part(id, function)),
                codec: Some(codec(&format!("c{id}"), id)),
            },
        });
    }
    builder.finish()
}

fn ready(mut filter: ZarrFilter) -> ZarrFilter {
    if let Some(job) = filter.working_job().unwrap() {
        filter.finish_working(crate::in_test_call(|call| job.run(call, 0, 0))).unwrap();
    }
    filter
}

fn stages(registry: &Registry, ids: &[u32]) -> Vec<Stage> {
    ids.iter()
        .map(|&id| ready(ZarrFilter::defined(registry.get(id).unwrap().clone(), &[]).unwrap()).stage("v").unwrap())
        .collect()
}

fn chunk(bytes: &[u8]) -> ChunkBuffer {
    ChunkBuffer::from_bytes(bytes).unwrap()
}

fn decode(chunk_bytes: usize) -> Direction {
    Direction::Decode { chunk_bytes }
}

/// Plugin code runs only in [`WorkingJob::run`], never while the caller holds the filter
/// (`ZarrVar::with_filter`): NCZ_codec_initialize may re-enter netcdf-c on the same variable.
#[test]
fn a_codec_is_initialized_by_the_job_not_while_the_filter_is_borrowed() {
    let registry = registry(&[(1, Some(add_one))]);
    let mut filter = ZarrFilter::defined(registry.get(1).unwrap().clone(), &[]).unwrap();
    let job = filter.working_job().unwrap().expect("a job");
    let codec = registry.get(1).unwrap().codec.clone().unwrap();
    assert!(!codec.is_initialized(), "NCZ_codec_initialize ran inside working_job");
    filter.finish_working(in_test_call(|call| job.run(call, 0, 0))).unwrap();
    assert!(codec.is_initialized());
}

/// [`apply_chain`] on variable "v", within a test's call.
fn apply(stages: &[Stage], chunk: ChunkBuffer, direction: Direction) -> NcResult<ChunkBuffer> {
    in_test_call(|call| apply_chain(call, stages, "v", chunk, direction))
}

#[test]
fn encode_runs_forward_and_decode_inverts_it() {
    let registry = registry(&[(1, Some(add_one)), (2, Some(add_one))]);
    let chain = stages(&registry, &[1, 2]);
    let encoded = apply(&chain, chunk(&[1, 2, 3]), Direction::Encode).unwrap();
    assert_eq!(encoded.bytes(), [3, 4, 5]);
    let decoded = apply(&chain, encoded, decode(3)).unwrap();
    assert_eq!(decoded.bytes(), [1, 2, 3]);
}

#[test]
fn a_stage_failure_is_efilter_in_both_directions() {
    let registry =
        registry(&[(1, Some(add_one)), (3, Some(fail)), (4, Some(fail_minus_one)), (6, Some(claim_past_the_block))]);
    for failing in [3, 4, 6] {
        let chain = stages(&registry, &[1, failing]);
        for direction in [Direction::Encode, decode(3)] {
            assert_eq!(apply(&chain, chunk(&[7, 8, 9]), direction).unwrap_err(), NC_EFILTER);
        }
    }
}

#[test]
fn a_decoded_chunk_shorter_than_the_chunk_is_efilter() {
    let registry = registry(&[(1, Some(add_one))]);
    let chain = stages(&registry, &[1]);
    assert_eq!(apply(&chain, chunk(&[1, 2, 3]), decode(4)).unwrap_err(), NC_EFILTER);
    assert_eq!(apply(&chain, chunk(&[1, 2, 3]), decode(2)).unwrap().bytes(), [0, 1, 2], "longer: as netcdf-c");
}

#[test]
fn decoding_with_a_known_chunk_size_bounds_the_decoders() {
    let registry = registry(&[(5, Some(record_limit))]);
    let chain = stages(&registry, &[5]);
    apply(&chain, chunk(&[0; 8]), decode(8)).unwrap();
    assert_eq!(SEEN_LIMIT.with(|s| s.get()), decode_limit_for(8));
    apply(&chain, chunk(&[0; 8]), Direction::Encode).unwrap();
    assert_eq!(SEEN_LIMIT.with(|s| s.get()), crate::filters::MAX_DECODED, "encoding is not bounded");
    assert_eq!(crate::filters::decode_limit(), crate::filters::MAX_DECODED, "the limit ends with the chain");
    assert!(decode_limit_for(1 << 20) >= (1 << 20) + 4 + 16, "fletcher32 and blosc headers fit");
}

#[test]
fn malformed_codecs_make_broken_filters_not_errors() {
    let registry = registry(&[(1, Some(add_one))]);
    for (text, problem) in
        [(r#"{"level": 1}"#, "has no \"id\""), (r#""zlib""#, "not a JSON object"), (r#"{"id": 3}"#, "non-empty string")]
    {
        let mut filter = in_test_call(|call| {
            ZarrFilter::from_codec(call, &registry, text, 0, 4, "variable \"v\", key \"compressor\"")
        });
        let why = filter.broken.clone().expect("broken");
        assert!(why.contains("variable \"v\", key \"compressor\"") && why.contains(problem), "{why}");
        assert!(!filter.is_complete());
        assert_eq!(filter.working_job().err(), Some(NC_EFILTER));
        assert_eq!(filter.stage("v").err(), Some(NC_EFILTER));
        assert_eq!(filter.codec_text.as_deref(), Some(text), "_Codecs still shows it");
    }
    let unknown = in_test_call(|call| ZarrFilter::from_codec(call, &registry, r#"{"id": "nosuch"}"#, 0, 4, "v"));
    assert!(
        unknown.broken.is_none() && unknown.stage("v").err() == Some(NC_ENOFILTER),
        "a missing plugin stays ENOFILTER"
    );
}
