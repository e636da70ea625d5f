// SPDX-License-Identifier: BSD-3-Clause
//! An NCZarr variable's filters and their application to chunks (replacing the `NCZ_Filter`
//! logic of `libnczarr/zfilter.c`).
//!
//! Each filter keeps its *visible* parameters (what `nc_def_var_filter` was given, or what the
//! codec JSON decodes to) and, once computed, its *working* parameters (what the HDF5 filter
//! function receives; `NCZ_modify_parameters` may derive them from the variable). Both are
//! C-heap vectors because codec plugins free and replace them.
//!
//! The chain follows the `H5Z_func_t` buffer protocol of netcdf-c 4.9.0: encode in definition
//! order, decode in reverse, each filter handed the previous one's block, byte count and
//! `*buf_size`; a filter that replaces the block frees the one it was given. [`apply_chain`]
//! takes the chunk by value: it returns the last block on success, and on failure drops the
//! block current at that point, which frees it. Whether that chunk is C's own block is the
//! caller's choice: `NCZ_applyfilterchain` hands over C's block on decode, and on encode a copy
//! (or, when the first stage is built in, that stage's output, made from C's block in place),
//! freeing C's block only after the chain succeeded.
//!
//! No reference to a variable's filters lives across a call into a plugin (which may re-enter
//! netcdf-c on the same variable): [`WorkingJob`] and [`Stage`] carry owned copies of what a
//! plugin call needs, and the results are written back through a fresh access.
// Safe code only; the tests' fixture filters, which speak the C buffer protocol, are the exception.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]

use crate::c_heap::{CParams, ChunkBuffer};
pub use crate::chunk_bounds::{chunk_byte_size, codecs_json_array, decode_limit_for};
use crate::codec_json::{self, Dialect};
use crate::error::{report, NcResult, NC_EFILTER, NC_ENOFILTER};
use crate::ffi_boundary::Call;
use crate::filters::DecodeLimit;
use crate::plugin_loader::CodecPart;
use crate::plugin_registry::{note_missing, PartSource, Plugin, Registry};
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
    /// Why the codec read from `.zarray` is unusable (variable, key, problem): its variable's
    /// data and filter inquiries give `NC_EFILTER`; the rest of the dataset reads normally.
    pub broken: Option<String>,
    /// Its plugin's `NCZ_modify_parameters` is running (a re-entry must not start it again).
    computing: bool,
    /// Defined on a variable of variable-length type (netcdf-c 4.9.3 on): kept and written to
    /// the metadata, never applied to chunks (`FLAG_SUPPRESS`).
    pub suppressed: bool,
}

impl ZarrFilter {
    fn new(hdf5_id: u32, visible: CParams, plugin: Option<Arc<Plugin>>) -> Self {
        ZarrFilter {
            hdf5_id,
            visible,
            working: None,
            codec_id: None,
            codec_text: None,
            plugin,
            chain_index: 0,
            broken: None,
            computing: false,
            suppressed: false,
        }
    }

    /// A filter defined through the API with a complete plugin.
    pub fn defined(plugin: Arc<Plugin>, params: &[u32]) -> NcResult<Self> {
        Ok(Self::new(plugin.id, CParams::from_slice(params)?, Some(plugin)))
    }

    /// A filter defined through the API whose plugin lacks its HDF5 or codec part: kept aside,
    /// never applied (4.9.0's behaviour).
    pub fn defined_incomplete(id: u32) -> Self {
        Self::new(id, CParams::empty(), None)
    }

    pub fn is_complete(&self) -> bool {
        self.broken.is_none() && self.plugin.as_ref().is_some_and(|p| p.is_complete())
    }

    /// Re-definition: new visible parameters; the working ones are recomputed later.
    pub fn redefine(&mut self, params: &[u32]) -> NcResult<()> {
        self.visible = CParams::from_slice(params)?;
        self.working = None;
        Ok(())
    }

    /// A filter from one codec value of `.zarray` (`NCZ_filter_build`); `origin` names where it
    /// came from (variable and key) for diagnostics. A codec without a complete plugin becomes a
    /// filter with id 0 that fails data access with `NC_ENOFILTER`; a malformed codec, or one its
    /// plugin rejects, a broken filter (reported now, `NC_EFILTER` on use), so that one
    /// variable's bad metadata does not fail the whole dataset's open.
    pub fn from_codec(
        call: &Call<'_>,
        registry: &Registry,
        text: &str,
        chain_index: usize,
        type_size: usize,
        origin: &str,
    ) -> Self {
        let mut filter = Self::read(text, chain_index);
        let broken = |filter: Self, problem: String| filter.into_broken(origin, &problem);
        let codec_id = match codec_json::parse_codec(text) {
            Ok((codec_id, _)) => codec_id,
            Err(e) => return broken(filter, e.0),
        };
        filter.codec_id = Some(codec_id.clone());
        match registry.by_codec_id(&codec_id) {
            Some(plugin) if plugin.is_complete() => {
                let Some(codec) = plugin.codec.as_ref() else { return broken(filter, "plugin without codec".into()) };
                let readable = match codec_json::readable_codec(text, type_size) {
                    Ok(readable) => readable,
                    Err(e) => return broken(filter, e.0),
                };
                match codec.to_hdf5(call, &readable) {
                    Ok(visible) => filter.visible = visible,
                    Err(status) => {
                        return broken(
                            filter,
                            format!("codec {text} rejected by its plugin's NCZ_codec_to_hdf5 ({status})"),
                        )
                    }
                }
                filter.hdf5_id = codec.hdf5_id;
                filter.plugin = Some(plugin.clone());
            }
            Some(plugin) => note_missing(&codec_id, Some(plugin)),
            None => note_missing(&codec_id, None),
        }
        filter
    }

    /// A broken filter for a `.zarray` value that is not a codec at all (e.g. `"filters"` that is
    /// not a list), reported now.
    pub fn malformed(text: &str, chain_index: usize, origin: &str, problem: &str) -> Self {
        Self::read(text, chain_index).into_broken(origin, &format!("{text} {problem}"))
    }

    /// A filter for codec value `text` at `chain_index` of `.zarray`, not resolved yet.
    fn read(text: &str, chain_index: usize) -> Self {
        let mut filter = Self::new(0, CParams::empty(), None);
        filter.codec_text = Some(text.to_string());
        filter.chain_index = chain_index;
        filter
    }

    /// This filter marked broken, `problem` reported now with where it came from (`origin`).
    fn into_broken(mut self, origin: &str, problem: &str) -> Self {
        let why = format!("{origin} in .zarray: {problem}; its data cannot be read (NC_EFILTER)");
        report(format_args!("{why}"));
        self.broken = Some(why);
        self
    }

    /// The broken filter's diagnostic, reported again, as `NC_EFILTER`.
    pub fn check_not_broken(&self) -> NcResult<()> {
        match &self.broken {
            Some(why) => {
                report(format_args!("{why}"));
                Err(NC_EFILTER)
            }
            None => Ok(()),
        }
    }

    /// What computing the working parameters needs, copied out (`None` when already computed).
    /// The caller runs it with no reference to this filter, then calls [`Self::finish_working`].
    pub fn working_job(&mut self) -> NcResult<Option<WorkingJob>> {
        if self.working.is_some() {
            return Ok(None);
        }
        self.check_not_broken()?;
        let Some(codec) = self.plugin.as_ref().filter(|p| p.is_complete()).and_then(|p| p.codec.clone()) else {
            return Err(NC_ENOFILTER);
        };
        if self.computing {
            report(format_args!(
                "codec \"{}\": NCZ_modify_parameters re-entered itself through netcdf-c",
                codec.codec_id
            ));
            return Err(NC_EFILTER);
        }
        self.computing = codec.modifies_parameters();
        Ok(Some(WorkingJob { codec, visible: CParams::from_slice(self.visible.as_slice())? }))
    }

    /// Stores what [`WorkingJob::run`] produced (or just ends the computation on failure).
    pub fn finish_working(&mut self, outcome: NcResult<(CParams, CParams)>) -> NcResult<()> {
        self.computing = false;
        let (visible, working) = outcome?;
        self.visible = visible;
        self.working = Some(working);
        Ok(())
    }

    /// What [`encode_codec`] needs to write this filter's codec JSON (`NCZ_filter_jsonize`).
    pub fn codec_job(&self) -> NcResult<(Arc<Plugin>, CParams)> {
        self.check_not_broken()?;
        let Some(plugin) = self.plugin.clone().filter(|p| p.is_complete()) else {
            return Err(NC_EFILTER);
        };
        Ok((plugin, CParams::from_slice(self.visible.as_slice())?))
    }

    /// Remembers the codec JSON written, for `_Codecs`.
    pub fn set_codec(&mut self, codec_id: String, text: String) {
        self.codec_id = Some(codec_id);
        self.codec_text = Some(text);
    }

    /// The stage this filter contributes to a chain application: its plugin and a copy of its
    /// working parameters (which must have been computed). Reports why it cannot run.
    pub fn stage(&self, varname: &str) -> NcResult<Stage> {
        self.check_not_broken()?;
        if !self.is_complete() {
            // The first sentence is netcdf-c 4.10's message (its tests look for it).
            let dirs: Vec<String> = crate::plugin_path::snapshot().dirs.into_iter().map(|d| d.dir).collect();
            report(format_args!(
                "Variable '{varname}' has unsupported codec: ({}). Not found in {} (filter id {}; put a plugin that provides it in a directory on the plugin path, HDF5_PLUGIN_PATH)",
                self.codec_id.as_deref().unwrap_or("?"),
                crate::plugin_path::join(&dirs, None),
                self.hdf5_id
            ));
            return Err(NC_ENOFILTER);
        }
        let (Some(plugin), Some(working)) = (self.plugin.clone(), self.working.as_ref()) else {
            return Err(NC_EFILTER);
        };
        Ok(Stage { plugin, working: CParams::from_slice(working.as_slice())? })
    }
}

/// Computing a filter's working parameters, detached from the filter: the codec and an owned
/// copy of the visible parameters, which its `NCZ_modify_parameters` may free and replace.
pub struct WorkingJob {
    codec: CodecPart,
    visible: CParams,
}

impl WorkingJob {
    /// `(visible, working)`: the codec's `NCZ_modify_parameters` for variable `(ncid, varid)`,
    /// within `call`, else the visible parameters copied.
    pub fn run(self, call: &Call<'_>, ncid: c_int, varid: c_int) -> NcResult<(CParams, CParams)> {
        let WorkingJob { codec, mut visible } = self;
        // The codec's first use, here with no reference to the filter alive: NCZ_codec_initialize
        // may re-enter netcdf-c on this very variable, as NCZ_modify_parameters may.
        codec.ensure_initialized(call);
        let mut working = CParams::empty();
        if codec.modifies_parameters() {
            codec.modify_parameters(call, ncid, varid, &mut visible, &mut working)?;
        } else {
            working = CParams::from_slice(visible.as_slice())?;
        }
        Ok((visible, working))
    }
}

/// The codec JSON of a filter's visible parameters, in `dialect`: `(codec id, text)`.
pub fn encode_codec(
    call: &Call<'_>,
    plugin: &Plugin,
    visible: &CParams,
    dialect: Dialect,
    type_size: usize,
) -> NcResult<(String, String)> {
    let codec = plugin.codec.as_ref().ok_or(NC_EFILTER)?;
    let plugin_text = codec.to_codec(call, visible)?;
    let text = codec_json::written_codec(&plugin_text, dialect, type_size)?;
    Ok((codec.codec_id.clone(), text))
}

/// `_Codecs` of a variable's filters ([`codecs_json_array`] of their chain positions and codec
/// texts; `None` when the variable has no filter at all).
pub fn codecs_attribute(filters: &[&ZarrFilter]) -> Option<String> {
    codecs_json_array(filters.iter().map(|f| (f.chain_index, f.codec_text.as_deref())))
}

/// One stage of a chain application, owned: nothing in it refers to the variable.
pub struct Stage {
    plugin: Arc<Plugin>,
    working: CParams,
}

impl Stage {
    /// This stage's HDF5 id and working parameters when its filter is ncfilters' own (built into
    /// this library, not a plugin library), which the caller may run on a chunk it only borrows.
    pub fn built_in(&self) -> Option<(u32, &[u32])> {
        let built_in = self.plugin.filter_source == Some(PartSource::BuiltIn);
        built_in.then(|| (self.plugin.id, self.working.as_slice()))
    }
}

/// Which way [`apply_chain`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Encode,
    /// Decoding a chunk of `chunk_bytes` bytes: it bounds every decoder, so it must be known.
    Decode {
        chunk_bytes: usize,
    },
}

/// Applies the stages to a chunk (`NCZ_applyfilterchain`), taking ownership of it: on failure
/// the current block (the chunk, or what a stage replaced it with) is freed. On decode the
/// built-in decoders and ncfilters' own plugin libraries are bounded by [`decode_limit_for`]
/// the chunk's byte size, and the result must be at least that size (else the stored chunk
/// cannot come from the declared chain). `varname` names the variable in diagnostics.
pub fn apply_chain(
    call: &Call<'_>,
    stages: &[Stage],
    varname: &str,
    chunk: ChunkBuffer,
    direction: Direction,
) -> NcResult<ChunkBuffer> {
    let mut chunk = chunk;
    let (encode, chunk_bytes) = match direction {
        Direction::Encode => (true, None),
        Direction::Decode { chunk_bytes } => (false, Some(chunk_bytes)),
    };
    let _limit = chunk_bytes.map(|size| DecodeLimit::set(decode_limit_for(size)));
    let run = |stage: &Stage, chunk: &mut ChunkBuffer| {
        let part = stage.plugin.filter.as_ref().ok_or(NC_ENOFILTER)?;
        part.apply(call, !encode, &stage.working, chunk).map_err(|why| {
            report(format_args!("variable \"{varname}\": {why}"));
            NC_EFILTER
        })
    };
    if encode {
        stages.iter().try_for_each(|stage| run(stage, &mut chunk))?;
    } else {
        stages.iter().rev().try_for_each(|stage| run(stage, &mut chunk))?;
        // Shorter would be read past its end; longer netcdf-c accepts (its first bytes are
        // used; nczarr_test's testfilter_misc relies on it).
        if let Some(size) = chunk_bytes.filter(|&size| chunk.len() < size) {
            report(format_args!(
                "variable \"{varname}\": a chunk decodes to {} bytes, fewer than the chunk's {size}: it does not match the declared filters",
                chunk.len()
            ));
            return Err(NC_EFILTER);
        }
    }
    Ok(chunk)
}

#[cfg(test)]
mod tests;
