// SPDX-License-Identifier: BSD-3-Clause
//! NCZarr's filter policy, in safe code below the exports (`abi::zfilter` converts the pointers
//! and calls these): the registry with the standard filters built in, defining a filter on a
//! variable, reading `.zarray`'s codecs, and a chain's stages.
#![deny(unsafe_code)]

use crate::c_args::Call;
use crate::c_heap::ChunkBuffer;
use crate::error::{NcResult, NC_EINVAL, NC_ENOFILTER};
use crate::filter_chain::{Stage, ZarrFilter};
use crate::filter_rules as rules;
use crate::netcdf_internals::nczarr::{FilterList, ZarrLocation, ZarrVar};
use crate::plugin_loader::{CodecPart, FilterPart};
use crate::plugin_registry::{self, Registry, MAX_FILTER_ID};
use ncfilters_plugin::plugin::{standard_filter_parts, working_parameters};
use std::os::raw::c_int;
use std::sync::Arc;

/// The standard filters as the NCZarr registry takes them: native parts, whose functions are
/// ncfilters' own Rust.
pub fn builtin_parts() -> Vec<(FilterPart, CodecPart)> {
    // No decode-limit setter: in this library, the chain's limit is already its own.
    standard_filter_parts()
        .map(|(standard, filter)| (filter, CodecPart::native(standard.codec, working_parameters)))
        .collect()
}

/// The NCZarr filter registry, discovered on first use with the standard filters built in.
pub fn registry(call: &Call<'_>) -> Arc<Registry> {
    plugin_registry::registry(call, builtin_parts)
}

/// `NC_EFILTER`, with its diagnostic, when a codec of the variable's `.zarray` is broken.
pub fn check_not_broken(var: &ZarrVar) -> NcResult<()> {
    var.check_chain_not_broken()
}

/// Where a complete filter with this id sits in the chain.
pub fn chain_position(var: &ZarrVar, id: u32) -> Option<usize> {
    var.complete_position(id)
}

/// `NCZ_addfilter`: adds filter `id`, or replaces the parameters of the one already there.
pub fn add_filter(call: &Call<'_>, var: &mut ZarrVar, id: u32, params: &[u32]) -> NcResult<()> {
    var.ensure_lists()?;
    if !(1..=MAX_FILTER_ID).contains(&id) {
        return Err(NC_EINVAL);
    }
    let registry = registry(call);
    let Some(plugin) = registry.get(id) else {
        crate::error::report(format_args!(
            "no NCZarr plugin provides filter {id} (HDF5_PLUGIN_PATH={:?})",
            std::env::var(plugin_registry::PLUGIN_PATH_ENV).unwrap_or_default()
        ));
        return Err(NC_ENOFILTER);
    };
    if let Some(why) = plugin.unavailable_reason() {
        crate::error::report(format_args!("filter {id} cannot be defined on variable {}: {why}", var.varid()));
        return Err(NC_ENOFILTER);
    }
    if let Some(index) = chain_position(var, id) {
        return var.redefine(index, params);
    }
    if plugin.is_complete() {
        let mut filter = ZarrFilter::defined(plugin.clone(), params)?;
        // netcdf-c 4.9.3 on: kept on a variable-length type, but never applied.
        if var.type_is_varsized() {
            crate::error::report(format_args!(
                "filter {id} on variable {}: filters cannot be applied to variable-length data types; ignored",
                var.varid()
            ));
            filter.suppressed = true;
        }
        var.push(FilterList::Chain, filter)
    } else {
        // As in 4.9.0 the definition succeeds but is never applied; say so.
        crate::error::report(format_args!(
            "filter {id} has {} but no {}: defined on variable {} but not applied",
            if plugin.filter.is_some() { "an HDF5 filter" } else { "a codec" },
            if plugin.filter.is_some() { "codec" } else { "HDF5 filter" },
            var.varid()
        ));
        var.push(FilterList::Incomplete, ZarrFilter::defined_incomplete(id))
    }
}

impl rules::FilterTarget for ZarrLocation<'_> {
    fn has_filter(&self, id: u32) -> bool {
        chain_position(&self.var, id).is_some()
    }
    fn dim_lengths(&self) -> Vec<usize> {
        self.var.dim_lengths()
    }
    fn make_chunked(&mut self) -> NcResult<()> {
        ZarrLocation::make_chunked(self)
    }
    fn add_filter(&mut self, id: u32, params: &[u32]) -> NcResult<()> {
        add_filter(self.call(), &mut self.var, id, params)
    }
}

/// An encoding chain's first stage run on the caller's chunk itself, when it is a built-in
/// filter that writes a new block: the chain then holds no copy of the chunk (a whole chunk less
/// at the peak). `None` when the stage needs the chunk's own block, is a plugin's (which may free
/// the block it is given), or fails: the chain then runs on a copy and reports the failure.
pub fn first_stage_on_borrowed(stages: &[Stage], chunk: Option<&[u8]>) -> Option<ChunkBuffer> {
    let (id, params) = stages.first()?.built_in()?;
    // The chunk is left unchanged while the built-in filter reads it: no plugin or netcdf-c call
    // runs meanwhile.
    ncfilters_plugin::h5z::encode_into_new_block(id, params, chunk?)?.ok().map(ChunkBuffer::from)
}

/// The stages of a variable's chain, each filter checked usable and its working parameters
/// computed, copied out so that no reference to the filters lives while the filters run.
pub fn chain_stages(call: &Call<'_>, var: &mut ZarrVar, ncid: c_int, varid: c_int, name: &str) -> NcResult<Vec<Stage>> {
    // Suppressed filters (on variable-length types) are never applied.
    let mut ptrs = Vec::new();
    for ptr in var.filter_handles(FilterList::Chain) {
        if !var.is_suppressed(ptr)? {
            ptrs.push(ptr);
        }
    }
    // Every filter's problem is reported before any plugin runs.
    for &ptr in &ptrs {
        var.check_usable(ptr, name)?;
    }
    for &ptr in &ptrs {
        var.ensure_working(call, ptr, ncid, varid)?;
    }
    ptrs.iter().map(|&ptr| var.stage(ptr, name)).collect()
}

/// Adds the codec `text` of `.zarray`'s `key` to the variable's chain (see `abi::zfilter::ncfilters_zarr_codec`).
pub fn build_codec(call: &Call<'_>, mut var: ZarrVar, key: &str, text: String, chainindex: c_int) -> NcResult<()> {
    var.ensure_lists()?;
    let registry = registry(call);
    let chain_index = usize::try_from(chainindex).map_err(|_| NC_EINVAL)?;
    let quoted = match key.strip_suffix("[]") {
        Some(list) => format!("\"{list}\"[{chain_index}]"),
        None => format!("\"{key}\""),
    };
    let origin = format!("variable \"{}\", key {quoted}", var.name());
    let filter = if key == "filters" {
        // zsync.c passes the whole "filters" value only when it is not a list.
        ZarrFilter::malformed(&text, chain_index, &origin, "is not a list of codec objects (or null)")
    } else {
        ZarrFilter::from_codec(call, &registry, &text, chain_index, var.type_size(), &origin)
    };
    var.push(FilterList::Chain, filter)
}

// Not under Miri: the built-in filters call libzstd.
#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::filter_chain::{apply_chain, Direction};
    use crate::plugin_registry::RegistryBuilder;

    fn stage(registry: &plugin_registry::Registry, id: u32, params: &[u32]) -> Stage {
        let mut filter = ZarrFilter::defined(registry.get(id).unwrap().clone(), params).unwrap();
        if let Some(job) = filter.working_job().unwrap() {
            filter.finish_working(crate::in_test_call(|call| job.run(call, 0, 0))).unwrap();
        }
        filter.stage("v").unwrap()
    }

    /// A built-in first stage encodes the caller's chunk where it is, leaving it as it was; the
    /// filters that work on the chunk's own block get a copy.
    #[test]
    fn a_built_in_first_stage_reads_the_chunk_in_place() {
        let mut builder = RegistryBuilder::default();
        builder.add_builtins(builtin_parts());
        let registry = builder.finish();
        let chunk: Vec<u8> = (0..100_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let kept = chunk.clone();
        let zstd = [stage(&registry, 32015, &[3])];
        let encoded = first_stage_on_borrowed(&zstd, Some(&chunk)).expect("built in");
        assert_eq!(chunk, kept, "the caller's chunk is unchanged");
        let decode = Direction::Decode { chunk_bytes: chunk.len() };
        let decoded = crate::in_test_call(|call| apply_chain(call, &zstd, "v", encoded, decode)).unwrap();
        assert!(decoded.bytes() == chunk.as_slice());
        assert!(first_stage_on_borrowed(&[stage(&registry, 3, &[])], Some(&chunk)).is_none());
        assert!(first_stage_on_borrowed(&[stage(&registry, 1, &[1])], Some(&chunk)).is_some());
        assert!(first_stage_on_borrowed(&zstd, None).is_none());
        assert!(first_stage_on_borrowed(&[], Some(&chunk)).is_none());
    }
}
