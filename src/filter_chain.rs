//! An NCZarr variable's filters and their application to chunks (replacing the `NCZ_Filter`
//! logic of `libnczarr/zfilter.c`).
//!
//! Each filter keeps its *visible* parameters (what `nc_def_var_filter` was given, or what the
//! codec JSON decodes to) and, once computed, its *working* parameters (what the HDF5 filter
//! function receives; `NCZ_modify_parameters` may derive them from the variable). Both are
//! C-heap vectors because codec plugins free and replace them.
//!
//! The chain follows the `H5Z_func_t` buffer protocol of netcdf-c 4.9.0 exactly: encode in
//! definition order, decode in reverse, each filter handed the previous one's block, byte count
//! and `*buf_size`. It copies nothing itself. The chain owns the chunk it is given: on failure
//! the current block is freed, never returned (netcdf-c's callers drop their pointer to it).
#![forbid(unsafe_code)]

use crate::c_heap::{CParams, ChunkBuffer};
use crate::codec_json::{self, Dialect};
use crate::error::{report, NcResult, NC_EFILTER, NC_ENOFILTER};
use crate::plugin_registry::{Plugin, Registry};
use std::os::raw::c_int;
use std::sync::Arc;

/// One filter of an NCZarr variable.
#[derive(Debug)]
pub struct ZarrFilter {
    /// The HDF5 filter id; 0 for a codec with no plugin (as 4.9.0 reports it).
    pub hdf5_id: u32,
    pub visible: CParams,
    /// Computed on first need (`NCZ_filter_setup`, or the first chunk).
    pub working: Option<CParams>,
    /// The codec's id and JSON text: as read from `.zarray`, or as last written.
    pub codec_id: Option<String>,
    pub codec_text: Option<String>,
    /// `None` when no complete plugin implements the filter: data access gives `NC_ENOFILTER`.
    pub plugin: Option<Arc<Plugin>>,
    /// Position in the chain read from the file (`filters…, compressor`); 0 for defined filters.
    pub chain_index: usize,
}

impl ZarrFilter {
    /// A filter defined through the API with a complete plugin.
    pub fn defined(plugin: Arc<Plugin>, params: &[u32]) -> NcResult<Self> {
        Ok(ZarrFilter {
            hdf5_id: plugin.id,
            visible: CParams::from_slice(params)?,
            working: None,
            codec_id: None,
            codec_text: None,
            plugin: Some(plugin),
            chain_index: 0,
        })
    }

    /// A filter defined through the API whose plugin lacks its HDF5 or codec part: kept aside,
    /// never applied (4.9.0's behaviour).
    pub fn defined_incomplete(id: u32) -> Self {
        ZarrFilter {
            hdf5_id: id,
            visible: CParams::empty(),
            working: None,
            codec_id: None,
            codec_text: None,
            plugin: None,
            chain_index: 0,
        }
    }

    pub fn is_complete(&self) -> bool {
        self.plugin.as_ref().is_some_and(|p| p.is_complete())
    }

    /// Re-definition: new visible parameters; the working ones are recomputed later.
    pub fn redefine(&mut self, params: &[u32]) -> NcResult<()> {
        self.visible = CParams::from_slice(params)?;
        self.working = None;
        Ok(())
    }

    /// A filter from one codec object of `.zarray` (`NCZ_filter_build`). A codec without a
    /// complete plugin becomes a filter with id 0 that fails data access with `NC_ENOFILTER`;
    /// a malformed codec, or one its plugin rejects, fails with a reason on stderr.
    pub fn from_codec(registry: &Registry, text: &str, chain_index: usize, type_size: usize) -> NcResult<Self> {
        let complain = |e: codec_json::CodecError| {
            report(format_args!("bad codec in .zarray: {e}"));
            e.status()
        };
        let (codec_id, _) = codec_json::parse_codec(text).map_err(complain)?;
        let mut filter = ZarrFilter {
            hdf5_id: 0,
            visible: CParams::empty(),
            working: None,
            codec_id: Some(codec_id.clone()),
            codec_text: Some(text.to_string()),
            plugin: None,
            chain_index,
        };
        match registry.by_codec_id(&codec_id) {
            Some(plugin) if plugin.is_complete() => {
                let codec = plugin.codec.as_ref().expect("complete plugin has a codec");
                let readable = codec_json::readable_codec(text, type_size).map_err(complain)?;
                filter.visible = codec.to_hdf5(&readable)?;
                filter.hdf5_id = codec.hdf5_id;
                filter.plugin = Some(plugin.clone());
            }
            Some(plugin) => crate::plugin_registry::note_missing(&codec_id, Some(plugin)),
            None => crate::plugin_registry::note_missing(&codec_id, None),
        }
        Ok(filter)
    }

    /// Computes the working parameters if not done yet (`ensure_working` of 4.9.0): the codec's
    /// `NCZ_modify_parameters` for variable `(ncid, varid)`, else a copy of the visible ones.
    pub fn ensure_working(&mut self, ncid: c_int, varid: c_int) -> NcResult<()> {
        if self.working.is_some() {
            return Ok(());
        }
        let Some(codec) = self.plugin.as_ref().filter(|p| p.is_complete()).and_then(|p| p.codec.clone()) else {
            return Err(NC_ENOFILTER);
        };
        // Its first use: the filter may rely on what NCZ_codec_initialize sets up.
        codec.ensure_initialized();
        let mut working = CParams::empty();
        if codec.modifies_parameters() {
            codec.modify_parameters(ncid, varid, &mut self.visible, &mut working)?;
        } else {
            working = CParams::from_slice(self.visible.as_slice())?;
        }
        self.working = Some(working);
        Ok(())
    }

    /// The codec JSON to write for this filter (`NCZ_filter_jsonize`), remembered for `_Codecs`.
    pub fn codec_json(&mut self, dialect: Dialect, type_size: usize) -> NcResult<String> {
        let Some(plugin) = self.plugin.clone().filter(|p| p.is_complete()) else {
            return Err(NC_EFILTER);
        };
        let codec = plugin.codec.as_ref().expect("complete plugin has a codec");
        let plugin_text = codec.to_codec(&self.visible)?;
        let text = codec_json::written_codec(&plugin_text, dialect, type_size)?;
        self.codec_id = Some(codec.codec_id.clone());
        self.codec_text = Some(text.clone());
        Ok(text)
    }
}

/// `_Codecs`: the codec texts of a variable's filters in chain order, as a JSON array
/// (`None` when the variable has no filter at all). Filters whose codec text is not known yet
/// (defined but not written) are left out.
pub fn codecs_attribute(filters: &[&ZarrFilter]) -> Option<String> {
    if filters.is_empty() {
        return None;
    }
    let mut ordered: Vec<&ZarrFilter> = filters.to_vec();
    ordered.sort_by_key(|f| f.chain_index);
    let texts: Vec<&str> = ordered.iter().filter_map(|f| f.codec_text.as_deref()).collect();
    Some(format!("[{}]", texts.join(",")))
}

/// A failed chain application. On encode the unfiltered chunk is handed back when it could be
/// kept or restored (by decoding the stages already applied), so the caller's cache entry stays
/// valid; on decode, or if restoring fails, the chunk has been freed.
#[derive(Debug)]
pub struct ChainFailure {
    pub status: i32,
    pub unfiltered: Option<ChunkBuffer>,
}

/// Applies the chain to a chunk (`NCZ_applyfilterchain`), taking ownership of it. Every filter
/// must be complete (else `NC_ENOFILTER`); working parameters are computed first.
pub fn apply_chain(
    filters: &mut [&mut ZarrFilter],
    ncid: c_int,
    varid: c_int,
    chunk: ChunkBuffer,
    encode: bool,
) -> Result<ChunkBuffer, ChainFailure> {
    let fail = |status, chunk| Err(ChainFailure { status, unfiltered: if encode { Some(chunk) } else { None } });
    for filter in filters.iter_mut() {
        if !filter.is_complete() {
            report(format_args!(
                "variable {varid}: codec \"{}\" (filter id {}) has no plugin; set HDF5_PLUGIN_PATH to a directory that provides it",
                filter.codec_id.as_deref().unwrap_or("?"),
                filter.hdf5_id
            ));
            return fail(NC_ENOFILTER, chunk);
        }
        if let Err(status) = filter.ensure_working(ncid, varid) {
            return fail(status, chunk);
        }
    }
    let stages: Vec<(&crate::plugin_loader::FilterPart, &CParams)> = filters
        .iter()
        .filter_map(|f| Some((f.plugin.as_ref()?.filter.as_ref()?, f.working.as_ref()?)))
        .collect();
    let mut chunk = chunk;
    let order: Vec<usize> = if encode { (0..stages.len()).collect() } else { (0..stages.len()).rev().collect() };
    for (done, &index) in order.iter().enumerate() {
        let (part, working) = stages[index];
        if let Err(why) = part.apply(!encode, working, &mut chunk) {
            report(format_args!("variable {varid}: {why}"));
            if !encode {
                return Err(ChainFailure { status: NC_EFILTER, unfiltered: None });
            }
            // Undo the stages already applied, newest first, to give the caller its data back.
            let restored = order[..done].iter().rev().try_for_each(|&undo| {
                let (part, working) = stages[undo];
                part.apply(true, working, &mut chunk)
            });
            let unfiltered = match restored {
                Ok(()) => Some(chunk),
                Err(why) => {
                    report(format_args!("variable {varid}: cannot restore the unfiltered chunk: {why}"));
                    None
                }
            };
            return Err(ChainFailure { status: NC_EFILTER, unfiltered });
        }
    }
    Ok(chunk)
}
