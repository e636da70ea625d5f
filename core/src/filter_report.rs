// SPDX-License-Identifier: BSD-3-Clause
//! What `ncfilters_report`, `ncfilters_describe_spec` and `ncfilters_describe_codec` answer, as
//! JSON: which filters this process can use and why not, and how a filter spec maps to the codec
//! NCZarr writes and back.
//!
//! Built from a [`Registry`] and facts about HDF5 handed in by the caller (the abi layer asks
//! HDF5), so that it is tested without HDF5. Names and standard-ness come from the table of
//! standard filters only.
#![forbid(unsafe_code)]

use crate::c_heap::CParams;
use crate::c_types::ids::{H5Z_FILTER_NBIT, H5Z_FILTER_SCALEOFFSET};
use crate::codec_json::{self, Dialect};
use crate::error::{NcError, NC_EFILTER, NC_ENOFILTER};
use crate::ffi_boundary::Call;
use crate::filter_chain::encode_codec;
use crate::filterspec::{parse_spec_list, SpecError};
use crate::platform_names::Platform;
use crate::plugin_registry::{DirOrigin, DirState, FileOutcome, PartSource, Plugin, Registry, PLUGIN_PATH_ENV};
use crate::standard_filter_table::{standard_filter, InHdf5, NativeLibrary, STANDARD_FILTERS};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::Path;

/// The netcdf-c release whose ABI this build implements.
pub const NETCDF_VERSION: &str = crate::NETCDF_RELEASE;

/// HDF5's predefined filters that are not standard filters of the table (names for the report).
const OTHER_HDF5_PREDEFINED: [(u32, &str); 2] = [(H5Z_FILTER_NBIT, "nbit"), (H5Z_FILTER_SCALEOFFSET, "scaleoffset")];

/// What HDF5 says about one filter id, asked in this order (asking availability may make HDF5
/// load a plugin from its path, which registers it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hdf5Facts {
    /// A class is registered for the id (HDF5's own, the application's, or ncfilters' stand-in).
    pub registered: bool,
    /// That class is ncfilters' stand-in, which runs the registry's filter for the id.
    pub stand_in: bool,
    /// `H5Zfilter_avail` (which also searches HDF5's plugin path).
    pub available: bool,
}

/// A refused request: the status to return and the message for `{"error": …}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: NcError,
    pub message: String,
}

impl Refusal {
    pub fn new(status: NcError, message: impl Into<String>) -> Self {
        Refusal { status, message: message.into() }
    }

    /// `{"error": message}`.
    pub fn to_json(&self) -> Value {
        json!({ "error": self.message })
    }
}

/// Whether HDF5 predefines filter `id` (deflate 1 to scaleoffset 6).
pub fn hdf5_predefined(id: u32) -> bool {
    (1..=H5Z_FILTER_SCALEOFFSET).contains(&id)
}

/// The ids the report lists: HDF5's predefined 1..=6, the standard filters and every id the
/// registry has, sorted.
pub fn report_ids(registry: &Registry) -> Vec<u32> {
    let mut ids: Vec<u32> = (1..=H5Z_FILTER_SCALEOFFSET).collect();
    ids.extend(STANDARD_FILTERS.iter().map(|row| row.id));
    ids.extend(registry.plugins().map(|plugin| plugin.id));
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// A filter's name: the standard table's, else its class's, else HDF5's for nbit/scaleoffset.
fn filter_name(id: u32, plugin: Option<&Plugin>) -> Option<String> {
    if let Some(row) = standard_filter(id) {
        return Some(row.name.to_string());
    }
    let class_name = plugin.and_then(|p| p.filter.as_ref()).map(|f| f.name().to_string()).filter(|n| !n.is_empty());
    class_name.or_else(|| OTHER_HDF5_PREDEFINED.iter().find(|(i, _)| *i == id).map(|(_, n)| n.to_string()))
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The report of `ncfilters_report`: what the library found, typed; its JSON is the serialised
/// form (field order is the JSON's), and the `ncfilters` command reads it back into these types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub ncfilters_version: String,
    /// [`crate::NCFILTERS_BUILD`]: the version and the source it was built from.
    pub ncfilters_build: String,
    pub netcdf_version: String,
    pub plugin_path: PluginPathReport,
    #[serde(default)]
    pub libraries: Vec<LibraryReport>,
    pub filters: Vec<FilterReport>,
}

/// How the plugin path was made and searched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginPathReport {
    /// `HDF5_PLUGIN_PATH`.
    pub variable: String,
    /// Its value, if set.
    pub value: Option<String>,
    #[serde(default)]
    pub entries: Vec<DirReport>,
}

/// One directory of the plugin path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirReport {
    pub dir: String,
    pub origin: DirOriginReport,
    /// Why it could not be read (state `unreadable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub state: DirStateReport,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DirOriginReport {
    #[serde(rename = "HDF5_PLUGIN_PATH")]
    PluginPath,
    #[serde(rename = "default")]
    Default,
    #[serde(rename = "nc_plugin_path_set")]
    Set,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirStateReport {
    Searched,
    Missing,
    Unreadable,
}

/// One file of a searched directory and what discovery made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryReport {
    pub path: String,
    pub outcome: LibraryOutcome,
    /// The filter ids it provides (used or skipped).
    #[serde(default)]
    pub ids: Vec<u32>,
    /// Why it was skipped or ignored, or what of a used one was skipped.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LibraryOutcome {
    Used,
    Skipped,
    Ignored,
}

/// One filter id: its netCDF-4 (HDF5) and its NCZarr side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterReport {
    pub id: u32,
    pub name: Option<String>,
    /// One of the standard filters (the table's).
    pub standard: bool,
    pub hdf5: Hdf5Side,
    pub nczarr: NczarrSide,
}

/// An enum of the report as the word its JSON uses (`"searched"`, `"HDF5_PLUGIN_PATH"`, …).
pub fn json_word(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(word)) => word,
        other => format!("{other:?}"),
    }
}

impl DirStateReport {
    pub fn word(self) -> String {
        json_word(&self)
    }
}

impl DirOriginReport {
    pub fn word(self) -> String {
        json_word(&self)
    }
}

impl LibraryOutcome {
    pub fn word(self) -> String {
        json_word(&self)
    }
}

/// Where an implementation of `id` comes from, in words (`path`: its library).
impl Hdf5Source {
    pub fn describe(self, id: u32, path: Option<&str>) -> String {
        match self {
            Hdf5Source::Hdf5 if hdf5_predefined(id) => "HDF5 predefined".to_string(),
            Hdf5Source::Hdf5 => "registered with HDF5".to_string(),
            Hdf5Source::Plugin => format!("plugin {}", path.unwrap_or(PATH_NOT_REPORTED)),
            Hdf5Source::BuiltIn => BUILT_IN_WORDS.to_string(),
            Hdf5Source::None => "none".to_string(),
        }
    }
}

impl NczarrSource {
    pub fn describe(self, path: Option<&str>) -> String {
        match self {
            NczarrSource::Plugin => format!("plugin {}", path.unwrap_or(PATH_NOT_REPORTED)),
            NczarrSource::Defaults => format!("codec defaults {}", path.unwrap_or(PATH_NOT_REPORTED)),
            NczarrSource::BuiltIn => BUILT_IN_WORDS.to_string(),
            NczarrSource::None => "none".to_string(),
        }
    }
}

/// A library source whose path the report left out.
pub const PATH_NOT_REPORTED: &str = "(path not reported)";
const BUILT_IN_WORDS: &str = "built into libnetcdf";

impl FilterReport {
    /// Whether `query` is this filter's name or NCZarr codec id (ASCII case-insensitive).
    pub fn is_named(&self, query: &str) -> bool {
        let matches = |name: &Option<String>| name.as_deref().is_some_and(|name| name.eq_ignore_ascii_case(query));
        matches(&self.name) || matches(&self.nczarr.codec_id)
    }

    pub fn usable_anywhere(&self) -> bool {
        self.hdf5.usable || self.nczarr.usable
    }
}

impl LibraryReport {
    /// The library's directory (the text before the last '/').
    pub fn dir(&self) -> &str {
        self.path.rsplit_once('/').map_or("", |(dir, _)| dir)
    }
}

/// What HDF5 applies for an id: its own class, a plugin library, ncfilters' built-in, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Hdf5Source {
    #[serde(rename = "hdf5")]
    Hdf5,
    #[serde(rename = "plugin")]
    Plugin,
    #[serde(rename = "built-in")]
    BuiltIn,
    #[serde(rename = "none")]
    None,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hdf5Side {
    pub source: Hdf5Source,
    /// The plugin library, when it is one.
    pub path: Option<String>,
    pub usable: bool,
    /// Why not, and what to do.
    pub why_not: Option<String>,
}

impl Hdf5Side {
    fn new(source: Hdf5Source, path: Option<String>, why_not: Option<String>) -> Self {
        Hdf5Side { source, path, usable: why_not.is_none(), why_not }
    }
}

/// Where an NCZarr part comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NczarrSource {
    #[serde(rename = "plugin")]
    Plugin,
    /// A codec-defaults library (`NCZ_codec_info_defaults`).
    #[serde(rename = "defaults")]
    Defaults,
    #[serde(rename = "built-in")]
    BuiltIn,
    #[serde(rename = "none")]
    None,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NczarrSide {
    pub codec_id: Option<String>,
    pub filter_source: NczarrSource,
    pub filter_path: Option<String>,
    pub codec_source: NczarrSource,
    pub codec_path: Option<String>,
    pub usable: bool,
    pub why_not: Option<String>,
}

impl NczarrSide {
    /// No filter and no codec: unusable (`why_not` None only in tests of the schema).
    pub fn nothing(why_not: Option<String>) -> Self {
        NczarrSide {
            codec_id: None,
            filter_source: NczarrSource::None,
            filter_path: None,
            codec_source: NczarrSource::None,
            codec_path: None,
            usable: false,
            why_not,
        }
    }
}

/// `(source, path)` of a registry part: built in, or a library on the path, or none.
fn part_source(source: Option<&PartSource>, defaulted: bool) -> (NczarrSource, Option<String>) {
    match source {
        Some(PartSource::BuiltIn) => (NczarrSource::BuiltIn, None),
        Some(PartSource::Library(path)) if defaulted => (NczarrSource::Defaults, Some(display(path))),
        Some(PartSource::Library(path)) => (NczarrSource::Plugin, Some(display(path))),
        None => (NczarrSource::None, None),
    }
}

/// What to do when ncfilters' own filter lacks its C library.
fn install_hint(library: NativeLibrary) -> String {
    install_hint_on(Platform::CURRENT, library)
}

/// What to do on `platform` when ncfilters' own filter lacks its C library: Debian's package on
/// unix, elsewhere the files tried and where the loader looks for them.
pub fn install_hint_on(platform: Platform, library: NativeLibrary) -> String {
    let files = library.sonames_on(platform).join(" or ");
    match platform {
        Platform::Unix => {
            let package = library.sonames_on(platform).first().and_then(|soname| debian_package(soname));
            let package = package.map(|package| format!(" (Debian/Ubuntu: {package})")).unwrap_or_default();
            format!("install {}{package}", library.project())
        }
        Platform::Windows => {
            format!(
                "install {} so that Windows finds {files} (in the program's directory or on PATH)",
                library.project()
            )
        }
        Platform::Apple => format!(
            "install {} so that the dynamic loader finds {files} (on DYLD_LIBRARY_PATH or \
             DYLD_FALLBACK_LIBRARY_PATH, e.g. Homebrew's lib directory)",
            library.project()
        ),
    }
}

/// Debian's name for the runtime package of a shared library: `libblosc.so.1` → `libblosc1`,
/// `libfoo2.so.3` → `libfoo2-3` (the library packaging policy's rule; a guess, not a lookup).
pub fn debian_package(soname: &str) -> Option<String> {
    let (stem, version) = soname.split_once(".so.")?;
    let major = version.split('.').next()?;
    let valid_stem = stem.len() > 3
        && stem.starts_with("lib")
        && stem.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'));
    if !valid_stem || major.is_empty() || !version.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let stem = stem.to_ascii_lowercase().replace('_', "-");
    Some(if stem.ends_with(|c: char| c.is_ascii_digit()) {
        format!("{stem}-{major}")
    } else {
        format!("{stem}{major}")
    })
}

/// Why ncfilters' built-in filter cannot run, with what to do.
fn builtin_unavailable(id: u32, plugin: &Plugin) -> Option<String> {
    let why = plugin.unavailable_reason()?;
    let hint = standard_filter(id).and_then(|row| row.native_library).map(install_hint);
    Some(match hint {
        Some(hint) => {
            format!("{why}: {hint}, or put a plugin library providing filter {id} in a directory on {PLUGIN_PATH_ENV}")
        }
        None => why,
    })
}

/// The netCDF-4/HDF5 side of one id (the stand-in's rule in `abi::builtin`: a class HDF5 has,
/// then a plugin library on the path, then ncfilters' built-in).
fn hdf5_side(id: u32, plugin: Option<&Plugin>, facts: Option<Hdf5Facts>) -> Hdf5Side {
    let Some(facts) = facts else {
        let why = "HDF5 is not loaded in this process: netCDF-4 files need a libnetcdf built with HDF5";
        return Hdf5Side::new(Hdf5Source::None, None, Some(why.into()));
    };
    let filter_source = plugin.filter(|p| p.filter.is_some()).and_then(|p| p.filter_source.as_ref());
    let library = filter_source.and_then(PartSource::library);
    if facts.stand_in {
        return match filter_source {
            Some(PartSource::BuiltIn) => {
                Hdf5Side::new(Hdf5Source::BuiltIn, None, plugin.and_then(|p| builtin_unavailable(id, p)))
            }
            Some(PartSource::Library(path)) => Hdf5Side::new(Hdf5Source::Plugin, Some(display(path)), None),
            None => Hdf5Side::new(
                Hdf5Source::None,
                None,
                Some(format!(
                    "ncfilters' stand-in for filter {id} found no implementation: put a plugin library providing it in a directory on {PLUGIN_PATH_ENV}"
                )),
            ),
        };
    }
    if facts.registered {
        let why = (!facts.available).then(|| format!("HDF5 has a class for filter {id} but reports it unavailable"));
        return Hdf5Side::new(Hdf5Source::Hdf5, None, why);
    }
    let path = library.map(display);
    if facts.available {
        // HDF5 found it on its own plugin path.
        return Hdf5Side::new(Hdf5Source::Plugin, path, None);
    }
    let why = match (standard_filter(id), filter_source) {
        (Some(row), _) if row.in_hdf5 == InHdf5::Predefined => format!(
            "HDF5 was built without {}, and ncfilters' built-in is registered only when netCDF initialises (nc_initialize)",
            row.name
        ),
        (Some(row), _) => {
            format!("ncfilters' built-in {} is registered with HDF5 only when netCDF initialises (nc_initialize)", row.name)
        }
        (None, Some(source)) => {
            let shown = source.to_string();
            let dir = library.and_then(Path::parent).map_or_else(|| shown.clone(), display);
            format!(
                "HDF5 does not find filter {id}, which {shown} provides: add {dir} to {PLUGIN_PATH_ENV}{}",
                match crate::plugin_path::default_plugin_dir() {
                    // On Windows HDF5's own default is the same %ALLUSERSPROFILE%/hdf5/lib/plugin.
                    Some(dir) if !crate::plugin_path::RELEASE_RULES && Platform::CURRENT != Platform::Windows => {
                        format!(" (HDF5 does not search netcdf-c's default {dir})")
                    }
                    _ => String::new(),
                }
            )
        }
        (None, None) => format!(
            "HDF5 has no filter {id}: put an HDF5 plugin library providing it in a directory on {PLUGIN_PATH_ENV}"
        ),
    };
    Hdf5Side::new(Hdf5Source::None, path, Some(why))
}

/// The NCZarr side of one id: the registry's plugin.
fn nczarr_side(id: u32, plugin: Option<&Plugin>) -> NczarrSide {
    let Some(plugin) = plugin else {
        let why = format!(
            "no NCZarr plugin for filter {id}: put a library providing its HDF5 filter (H5PLget_plugin_info) and its codec (NCZ_get_codec_info, or a codec-defaults library) in a directory on {PLUGIN_PATH_ENV}"
        );
        return NczarrSide::nothing(Some(why));
    };
    let (filter_source, filter_path) = part_source(plugin.filter.as_ref().and(plugin.filter_source.as_ref()), false);
    let (codec_source, codec_path) =
        part_source(plugin.codec.as_ref().and(plugin.codec_source.as_ref()), plugin.codec_defaulted);
    let codec_id = plugin.codec.as_ref().map(|c| c.codec_id.clone());
    let why_not = match (&plugin.filter, &codec_id) {
        (None, Some(codec_id)) => Some(format!(
            "codec \"{codec_id}\" has no HDF5 filter {id}: put a plugin library providing HDF5 filter {id} (H5PLget_plugin_info) in a directory on {PLUGIN_PATH_ENV}"
        )),
        (Some(_), None) => Some(format!(
            "no codec for id {id}: put a codec library (NCZ_get_codec_info) or a codec-defaults library (NCZ_codec_info_defaults) providing it in a directory on {PLUGIN_PATH_ENV}"
        )),
        (None, None) => Some(format!("nothing provides filter {id}")),
        (Some(_), Some(_)) => builtin_unavailable(id, plugin),
    };
    NczarrSide { codec_id, filter_source, filter_path, codec_source, codec_path, usable: why_not.is_none(), why_not }
}

/// The report of `ncfilters_report`; `hdf5` is asked once per id, in id order (`None`: HDF5 is
/// not in the process).
pub fn typed_report(registry: &Registry, mut hdf5: impl FnMut(u32) -> Option<Hdf5Facts>) -> Report {
    let log = registry.discovery_log();
    let entries = log
        .dirs
        .iter()
        .map(|dir| {
            let origin = match dir.origin {
                DirOrigin::PluginPath => DirOriginReport::PluginPath,
                DirOrigin::Default => DirOriginReport::Default,
                DirOrigin::Set => DirOriginReport::Set,
            };
            let (state, error) = match &dir.state {
                DirState::Searched => (DirStateReport::Searched, None),
                DirState::Missing => (DirStateReport::Missing, None),
                DirState::Unreadable(error) => (DirStateReport::Unreadable, Some(error.clone())),
            };
            DirReport { dir: display(&dir.dir), origin, error, state }
        })
        .collect();
    let libraries = log
        .files
        .iter()
        .map(|file| {
            let (outcome, ids, reason) = match &file.outcome {
                FileOutcome::Used { ids, partly } => (LibraryOutcome::Used, ids.clone(), partly.clone()),
                FileOutcome::Skipped { ids, reason } => (LibraryOutcome::Skipped, ids.clone(), Some(reason.clone())),
                FileOutcome::Ignored { reason } => (LibraryOutcome::Ignored, Vec::new(), Some(reason.clone())),
            };
            LibraryReport { path: display(&file.path), outcome, ids, reason }
        })
        .collect();
    let filters = report_ids(registry)
        .into_iter()
        .map(|id| {
            let plugin = registry.get(id).map(|p| &**p);
            FilterReport {
                id,
                name: filter_name(id, plugin),
                standard: standard_filter(id).is_some(),
                hdf5: hdf5_side(id, plugin, hdf5(id)),
                nczarr: nczarr_side(id, plugin),
            }
        })
        .collect();
    Report {
        ncfilters_version: env!("CARGO_PKG_VERSION").to_string(),
        ncfilters_build: crate::NCFILTERS_BUILD.to_string(),
        netcdf_version: NETCDF_VERSION.to_string(),
        plugin_path: PluginPathReport {
            variable: PLUGIN_PATH_ENV.to_string(),
            value: log.plugin_path.clone(),
            entries,
        },
        libraries,
        filters,
    }
}

/// [`typed_report`] as the JSON `ncfilters_report` hands out.
pub fn report(registry: &Registry, hdf5: impl FnMut(u32) -> Option<Hdf5Facts>) -> Value {
    to_json(&typed_report(registry, hdf5))
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// A standard filter's id from its name or codec id (`zstd`, `zlib`, `bz2`, …), any case.
fn id_of_name(name: &str) -> Option<u32> {
    STANDARD_FILTERS
        .iter()
        .find(|row| row.name.eq_ignore_ascii_case(name) || row.codec_id.eq_ignore_ascii_case(name))
        .map(|row| row.id)
}

/// The spec with standard filters' names replaced by their ids, for the numeric parser.
fn numeric_spec(spec: &str) -> String {
    let (prefix, body) = match spec.find(']') {
        Some(close) if spec.starts_with('[') => spec.split_at(close + 1),
        _ => ("", spec),
    };
    let items: Vec<String> = body
        .split('|')
        .map(|item| {
            let (head, tail) = item.split_once(',').map_or((item, None), |(h, t)| (h, Some(t)));
            match id_of_name(head.trim_matches(is_blank)) {
                Some(id) => tail.map_or_else(|| id.to_string(), |tail| format!("{id},{tail}")),
                None => item.to_string(),
            }
        })
        .collect();
    format!("{prefix}{}", items.join("|"))
}

/// What `ncfilters_describe_spec` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecDescription {
    pub filters: Vec<SpecFilter>,
}

/// One filter of a spec list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecFilter {
    pub id: u32,
    pub name: Option<String>,
    #[serde(default)]
    pub params: Vec<u32>,
    /// The codec JSON object NCZarr writes, in the codec's key order.
    pub codec: Option<Value>,
    /// Why NCZarr would not write or apply it.
    pub codec_error: Option<String>,
}

/// What `ncfilters_describe_codec` answers: the HDF5 filter NCZarr reads from a codec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodecDescription {
    pub id: u32,
    pub name: Option<String>,
    #[serde(default)]
    pub params: Vec<u32>,
}

/// A description as the JSON the C functions hand out.
fn to_json(description: &impl Serialize) -> Value {
    serde_json::to_value(description).unwrap_or_else(|e| json!({ "error": e.to_string() }))
}

/// `ncfilters_describe_spec`: each filter of a spec list with the codec JSON NCZarr writes for it
/// (in `dialect`; shuffle's `elementsize`, the variable's type size, is 0 as there is none).
pub fn describe_spec(call: &Call<'_>, registry: &Registry, spec: &str, dialect: Dialect) -> Result<Value, Refusal> {
    let list = parse_spec_list(numeric_spec(spec).as_bytes()).map_err(|error| {
        let hint = match error {
            SpecError::BadId { .. } => {
                let names: Vec<&str> = STANDARD_FILTERS.iter().map(|row| row.name).collect();
                format!(" (a filter is a number, or one of {})", names.join(", "))
            }
            _ => String::new(),
        };
        Refusal::new(NC_EFILTER, format!("filter spec {spec:?}: {error}{hint}"))
    })?;
    let filters = list
        .specs
        .iter()
        .map(|filter| {
            let plugin = registry.get(filter.id);
            let (codec, codec_error) = match codec_of(call, filter.id, plugin.map(|p| &**p), &filter.params, dialect) {
                Ok((codec, problem)) => (Some(codec).filter(|codec| !codec.is_null()), problem),
                Err(problem) => (None, Some(problem)),
            };
            SpecFilter {
                id: filter.id,
                name: filter_name(filter.id, plugin.map(|p| &**p)),
                params: filter.params.to_vec(),
                codec,
                codec_error,
            }
        })
        .collect();
    Ok(to_json(&SpecDescription { filters }))
}

/// The codec JSON NCZarr writes for filter `id` with `params` (as `NCZ_filter_jsonize`), and why
/// NCZarr would not write it, if it would not.
fn codec_of(
    call: &Call<'_>,
    id: u32,
    plugin: Option<&Plugin>,
    params: &[u32],
    dialect: Dialect,
) -> Result<(Value, Option<String>), String> {
    let plugin = plugin.filter(|p| p.codec.is_some()).ok_or_else(|| {
        format!("no NCZarr codec for filter {id}: put a library providing it in a directory on {PLUGIN_PATH_ENV}")
    })?;
    let visible = CParams::from_slice(params).map_err(|status| format!("out of memory ({status})"))?;
    let (codec_id, text) = encode_codec(call, plugin, &visible, dialect, 0)
        .map_err(|status| format!("codec of filter {id} rejects parameters {params:?} (error {status})"))?;
    let codec = serde_json::from_str(&text).map_err(|e| format!("codec \"{codec_id}\" wrote bad JSON {text}: {e}"))?;
    let problem = match &plugin.filter {
        None => Some(format!("codec \"{codec_id}\" has no HDF5 filter {id}, so NCZarr does not apply it")),
        Some(_) => builtin_unavailable(id, plugin),
    };
    Ok((codec, problem))
}

/// `ncfilters_describe_codec`: the HDF5 filter and parameters NCZarr reads from one codec object
/// (as `NCZ_filter_build`; blosc's automatic shuffle taken for a type of more than one byte).
pub fn describe_codec(call: &Call<'_>, registry: &Registry, text: &str) -> Result<Value, Refusal> {
    let (codec_id, _) = codec_json::parse_codec(text).map_err(|e| Refusal::new(e.status(), e.0))?;
    let plugin = registry.by_codec_id(&codec_id).ok_or_else(|| {
        Refusal::new(
            NC_ENOFILTER,
            format!("no NCZarr codec \"{codec_id}\": put a library providing it in a directory on {PLUGIN_PATH_ENV}"),
        )
    })?;
    let codec = plugin.codec.as_ref().ok_or_else(|| Refusal::new(NC_ENOFILTER, "codec vanished"))?;
    let readable = codec_json::readable_codec(text, 0).map_err(|e| Refusal::new(e.status(), e.0))?;
    let params = codec.to_hdf5(call, &readable).map_err(|status| {
        Refusal::new(status, format!("codec {text} rejected by its NCZ_codec_to_hdf5 (error {status})"))
    })?;
    Ok(to_json(&CodecDescription {
        id: plugin.id,
        name: filter_name(plugin.id, Some(plugin)),
        params: params.as_slice().to_vec(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin_loader::test_parts::{codec, filter, keep_alive};
    use crate::plugin_loader::{CodecPart, LibraryContents};
    use crate::plugin_registry::{
        DirOrigin, DirState, LoadedLibrary, RegistryBuilder, DEFAULT_PLUGIN_DIR, NOT_A_LIBRARY_NAME,
    };
    use crate::standard_filter_table::Codec;
    use std::os::raw::c_int;

    /// [`describe_spec`] within a test's call.
    fn described_spec(registry: &Registry, spec: &str, dialect: Dialect) -> Result<Value, Refusal> {
        crate::ffi_boundary::tests::in_test_call(|call| describe_spec(call, registry, spec, dialect))
    }

    /// [`describe_codec`] within a test's call.
    fn described_codec(registry: &Registry, text: &str) -> Result<Value, Refusal> {
        crate::ffi_boundary::tests::in_test_call(|call| describe_codec(call, registry, text))
    }

    #[test]
    fn install_hints_per_platform() {
        let hint = |platform| install_hint_on(platform, NativeLibrary::Libblosc);
        assert_eq!(hint(Platform::Unix), "install c-blosc 1.x (Debian/Ubuntu: libblosc1)");
        assert_eq!(
            hint(Platform::Windows),
            "install c-blosc 1.x so that Windows finds libblosc.dll or blosc.dll (in the program's directory or on PATH)"
        );
        assert!(
            hint(Platform::Apple).starts_with("install c-blosc 1.x so that the dynamic loader finds libblosc.1.dylib")
        );
        assert!(!hint(Platform::Apple).contains("Debian"));
        assert!(
            install_hint_on(Platform::Windows, NativeLibrary::Libsz).contains("libsz.dll or libsz-2.dll or szip.dll")
        );
    }

    fn keep_visible(
        _: &crate::ffi_boundary::Call<'_>,
        _: Codec,
        _: c_int,
        _: c_int,
        visible: &[u32],
    ) -> crate::error::NcResult<Vec<u32>> {
        Ok(visible.to_vec())
    }

    /// ncfilters' standard filters as native parts, as `abi::builtin` hands them to the registry.
    fn builtins() -> Vec<(crate::plugin_loader::FilterPart, CodecPart)> {
        STANDARD_FILTERS.iter().map(|row| (filter(row.id), CodecPart::native(row.codec, keep_visible))).collect()
    }

    fn standard_registry() -> Registry {
        let mut b = RegistryBuilder::default();
        b.add_builtins(builtins());
        b.finish()
    }

    fn library(path: &str, contents: LibraryContents) -> LoadedLibrary {
        LoadedLibrary { path: path.into(), keep_alive: keep_alive(), contents }
    }

    /// HDF5 as in libnetcdf with HDF5's szip: 1..=6 its own, the other standard ids stand-ins.
    fn usual_hdf5(id: u32) -> Option<Hdf5Facts> {
        let own = (1..=6).contains(&id);
        let stand_in = standard_filter(id).is_some() && !own;
        Some(Hdf5Facts { registered: own || stand_in, stand_in, available: own || stand_in })
    }

    fn filter_entry(report: &Value, id: u32) -> &Value {
        report["filters"].as_array().unwrap().iter().find(|f| f["id"] == id).unwrap_or_else(|| panic!("no {id}"))
    }

    #[test]
    #[cfg_attr(miri, ignore = "asks whether libblosc and libsz load")]
    fn the_report_shows_the_search_the_libraries_and_each_side() {
        let mut b = RegistryBuilder::default();
        b.add_builtins(builtins());
        b.set_plugin_path(Some("/p:/missing".into()));
        b.searched_dir(Path::new("/p"), DirOrigin::PluginPath, DirState::Searched);
        b.searched_dir(Path::new("/missing"), DirOrigin::PluginPath, DirState::Missing);
        b.searched_dir(Path::new(DEFAULT_PLUGIN_DIR), DirOrigin::Default, DirState::Unreadable("denied".into()));
        b.ignore_file(Path::new("/p/readme.txt"), NOT_A_LIBRARY_NAME);
        b.add(library("/p/h5zstd.so", LibraryContents::Plugin { filter: Some(filter(32015)), codec: None }));
        b.skip_library(Path::new("/p/bad.so"), Some(307), "H5Z_class2_t version 2 (expected 1)");
        b.add(library("/p/h5only.so", LibraryContents::Plugin { filter: Some(filter(40000)), codec: None }));
        let registry = b.finish();
        let asked = std::cell::RefCell::new(Vec::new());
        let report = report(&registry, |id| {
            asked.borrow_mut().push(id);
            if id == 40000 {
                return Some(Hdf5Facts { registered: false, stand_in: false, available: false });
            }
            usual_hdf5(id)
        });

        assert_eq!(report["ncfilters_version"], env!("CARGO_PKG_VERSION"));
        assert!(report["ncfilters_build"].as_str().unwrap().starts_with(concat!(env!("CARGO_PKG_VERSION"), " (")));
        assert_eq!(report["plugin_path"]["value"], "/p:/missing");
        let entries = &report["plugin_path"]["entries"];
        assert_eq!(entries[0], json!({"dir": "/p", "origin": "HDF5_PLUGIN_PATH", "state": "searched"}));
        assert_eq!(entries[1]["state"], "missing");
        assert_eq!(
            entries[2],
            json!({"dir": DEFAULT_PLUGIN_DIR, "origin": "default", "state": "unreadable", "error": "denied"})
        );

        let libraries = report["libraries"].as_array().unwrap();
        let paths: Vec<&str> = libraries.iter().map(|l| l["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["/p/readme.txt", "/p/h5zstd.so", "/p/h5only.so", "/p/bad.so"]);
        assert_eq!(
            libraries[0],
            json!({"path": "/p/readme.txt", "outcome": "ignored", "ids": [], "reason": NOT_A_LIBRARY_NAME})
        );
        assert_eq!(libraries[1], json!({"path": "/p/h5zstd.so", "outcome": "used", "ids": [32015], "reason": null}));
        assert_eq!(libraries[3]["outcome"], "skipped");
        assert_eq!(libraries[3]["ids"], json!([307]));
        assert_eq!(
            libraries[3]["reason"],
            "H5Z_class2_t version 2 (expected 1); ncfilters' built-in filter serves id 307"
        );

        let ids: Vec<u64> = report["filters"].as_array().unwrap().iter().map(|f| f["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5, 6, 307, 32001, 32015, 40000]);
        assert_eq!(*asked.borrow(), ids.iter().map(|&id| id as u32).collect::<Vec<_>>(), "HDF5 asked once per id");

        let bzip2 = filter_entry(&report, 307);
        assert_eq!((&bzip2["name"], &bzip2["standard"]), (&json!("bzip2"), &json!(true)));
        assert_eq!(bzip2["hdf5"], json!({"source": "built-in", "path": null, "usable": true, "why_not": null}));
        assert_eq!(
            bzip2["nczarr"],
            json!({"codec_id": "bz2", "filter_source": "built-in", "filter_path": null, "codec_source": "built-in",
                   "codec_path": null, "usable": true, "why_not": null})
        );

        let zstd = filter_entry(&report, 32015);
        assert_eq!(zstd["hdf5"], json!({"source": "plugin", "path": "/p/h5zstd.so", "usable": true, "why_not": null}));
        assert_eq!(
            (&zstd["nczarr"]["filter_source"], &zstd["nczarr"]["filter_path"]),
            (&json!("plugin"), &json!("/p/h5zstd.so"))
        );
        assert_eq!(zstd["nczarr"]["codec_source"], "built-in", "the built-in codec fills in the missing half");

        let deflate = filter_entry(&report, 1);
        assert_eq!(deflate["hdf5"]["source"], "hdf5");
        assert_eq!(deflate["nczarr"]["usable"], true);

        let nbit = filter_entry(&report, 5);
        assert_eq!((&nbit["name"], &nbit["standard"]), (&json!("nbit"), &json!(false)));
        assert_eq!(nbit["hdf5"], json!({"source": "hdf5", "path": null, "usable": true, "why_not": null}));
        assert_eq!(nbit["nczarr"]["usable"], false);
        assert!(nbit["nczarr"]["why_not"].as_str().unwrap().contains("HDF5_PLUGIN_PATH"));

        let only_hdf5 = filter_entry(&report, 40000);
        assert_eq!(only_hdf5["name"], "f40000", "the class's name");
        assert_eq!(only_hdf5["nczarr"]["usable"], false);
        assert_eq!(only_hdf5["nczarr"]["codec_id"], Value::Null);
        let why = only_hdf5["nczarr"]["why_not"].as_str().unwrap();
        assert!(why.starts_with("no codec for id 40000") && why.contains("HDF5_PLUGIN_PATH"), "{why}");
        assert_eq!(only_hdf5["hdf5"]["source"], "none");
        assert_eq!(only_hdf5["hdf5"]["path"], "/p/h5only.so");
        let why = only_hdf5["hdf5"]["why_not"].as_str().unwrap();
        assert!(why.contains("add /p to HDF5_PLUGIN_PATH"), "{why}");

        // Usable exactly when ncfilters' filter can load its C library.
        for id in [4, 32001] {
            let entry = filter_entry(&report, id);
            let reason = crate::filters::native_library_error(id);
            assert_eq!(entry["nczarr"]["usable"], reason.is_none(), "{id}");
            if let Some(reason) = reason {
                let why = entry["nczarr"]["why_not"].as_str().unwrap();
                assert!(why.starts_with(&reason) && why.contains("install"), "{why}");
            }
        }
    }

    #[test]
    fn without_hdf5_or_any_plugin_nothing_is_usable_and_the_report_says_what_to_do() {
        let registry = RegistryBuilder::default().finish();
        let report = report(&registry, |_| None);
        assert_eq!(report["plugin_path"]["value"], Value::Null);
        let zstd = filter_entry(&report, 32015);
        assert_eq!(zstd["hdf5"]["source"], "none");
        assert!(zstd["hdf5"]["why_not"].as_str().unwrap().contains("HDF5 is not loaded"));
        assert_eq!(zstd["nczarr"]["filter_source"], "none");
        assert_eq!(zstd["nczarr"]["usable"], false);
        assert!(zstd["nczarr"]["why_not"].as_str().unwrap().contains("HDF5_PLUGIN_PATH"));
        let unregistered = report_with_plain_hdf5(&registry, 307);
        assert!(unregistered["why_not"].as_str().unwrap().contains("nc_initialize"), "{unregistered}");
    }

    fn report_with_plain_hdf5(registry: &Registry, id: u32) -> Value {
        let report = report(registry, |_| Some(Hdf5Facts { registered: false, stand_in: false, available: false }));
        filter_entry(&report, id)["hdf5"].clone()
    }

    #[test]
    fn hdf5_finding_a_plugin_itself_or_an_application_class_wins() {
        let mut b = RegistryBuilder::default();
        b.add_builtins(builtins());
        b.add(library(
            "/p/x.so",
            LibraryContents::Plugin { filter: Some(filter(41000)), codec: Some(codec("x", 41000)) },
        ));
        let registry = b.finish();
        let found =
            report(&registry, |id| Some(Hdf5Facts { registered: false, stand_in: false, available: id == 41000 }));
        assert_eq!(
            filter_entry(&found, 41000)["hdf5"],
            json!({"source": "plugin", "path": "/p/x.so", "usable": true, "why_not": null})
        );
        let application =
            report(&registry, |id| Some(Hdf5Facts { registered: true, stand_in: false, available: id != 32001 }));
        assert_eq!(filter_entry(&application, 32015)["hdf5"]["source"], "hdf5");
        assert_eq!(filter_entry(&application, 32001)["hdf5"]["usable"], false);
    }

    /// Spec → codec → spec, through the same registry (native codecs, numeric dialect).
    #[test]
    fn specs_and_codecs_round_trip_for_every_standard_filter() {
        let registry = standard_registry();
        let cases: [(&str, u32, &[u32], Value); 9] = [
            ("zstd,3", 32015, &[3], json!({"id": "zstd", "level": 3})),
            ("32015,-3", 32015, &[(-3i32) as u32], json!({"id": "zstd", "level": -3})),
            ("bzip2,9", 307, &[9], json!({"id": "bz2", "level": 9})),
            ("bz2,1", 307, &[1], json!({"id": "bz2", "level": 1})),
            ("deflate,5", 1, &[5], json!({"id": "zlib", "level": 5})),
            ("shuffle", 2, &[], json!({"id": "shuffle", "elementsize": 0})),
            ("3", 3, &[], json!({"id": "fletcher32"})),
            (
                "blosc,0,0,0,1,5,1,4",
                32001,
                &[0, 0, 0, 1, 5, 1, 4],
                json!({"id": "blosc", "clevel": 5, "blocksize": 1, "cname": "zlib", "shuffle": 1}),
            ),
            ("SZIP, 32, 32", 4, &[32, 32], json!({"id": "szip", "mask": 32, "pixels-per-block": 32})),
        ];
        for (spec, id, params, codec) in cases {
            let described = described_spec(&registry, spec, Dialect::Numeric).unwrap();
            let filter = &described["filters"][0];
            assert_eq!(filter["id"], id, "{spec}");
            assert_eq!(filter["name"], standard_filter(id).unwrap().name, "{spec}");
            assert_eq!(filter["params"], json!(params), "{spec}");
            assert_eq!(filter["codec"], codec, "{spec}");
            let back = described_codec(&registry, &filter["codec"].to_string()).unwrap();
            assert_eq!(back, json!({"id": id, "name": filter["name"], "params": params}), "{spec}");
        }
    }

    #[test]
    fn a_list_describes_each_filter_in_the_dialect_asked() {
        let registry = standard_registry();
        let described = described_spec(&registry, "[4] shuffle|32015,3|40001,1", Dialect::Legacy).unwrap();
        let filters = described["filters"].as_array().unwrap();
        assert_eq!(filters.len(), 3);
        assert_eq!(filters[1]["codec"], json!({"id": "zstd", "level": "3"}), "4.9.0's text");
        assert_eq!(filters[1]["codec_error"], Value::Null);
        assert_eq!((&filters[2]["codec"], &filters[2]["name"]), (&Value::Null, &Value::Null));
        assert!(filters[2]["codec_error"].as_str().unwrap().contains("HDF5_PLUGIN_PATH"));
        assert_eq!(described_spec(&registry, "", Dialect::Numeric).unwrap(), json!({"filters": []}));
    }

    #[test]
    fn a_codec_with_no_filter_half_is_described_with_why_nczarr_does_not_apply_it() {
        let mut b = RegistryBuilder::default();
        let native = CodecPart::native(Codec::Zstd, keep_visible);
        b.add(library("/p/ncz.so", LibraryContents::Plugin { filter: None, codec: Some(native) }));
        let registry = b.finish();
        let described = described_spec(&registry, "32015,1", Dialect::Numeric).unwrap();
        assert_eq!(described["filters"][0]["codec"], json!({"id": "zstd", "level": 1}));
        assert!(described["filters"][0]["codec_error"].as_str().unwrap().contains("no HDF5 filter 32015"));
        let report = report(&registry, usual_hdf5);
        let why = filter_entry(&report, 32015)["nczarr"]["why_not"].as_str().unwrap().to_string();
        assert!(why.contains("has no HDF5 filter 32015"), "{why}");
        let mut b = RegistryBuilder::default();
        b.add(library(
            "/p/x.so",
            LibraryContents::Plugin { filter: Some(filter(41000)), codec: Some(codec("x", 41000)) },
        ));
        let described = described_spec(&b.finish(), "41000", Dialect::Numeric).unwrap();
        assert!(described["filters"][0]["codec_error"].as_str().unwrap().contains("rejects parameters"));
    }

    #[test]
    fn bad_input_is_refused_naming_it() {
        let registry = standard_registry();
        let refused = |result: Result<Value, Refusal>| result.unwrap_err();
        let bad = refused(described_spec(&registry, "zstd,x", Dialect::Numeric));
        assert_eq!(bad.status, NC_EFILTER);
        assert!(bad.message.contains("\"zstd,x\"") && bad.message.contains("\"x\""), "{}", bad.message);
        let unknown = refused(described_spec(&registry, "lz4,1", Dialect::Numeric));
        assert!(unknown.message.contains("\"lz4\"") && unknown.message.contains("zstd"), "{}", unknown.message);
        assert_eq!(refused(described_spec(&registry, "1,5|", Dialect::Numeric)).status, NC_EFILTER);

        let not_json = refused(described_codec(&registry, "{\"id\": \"zstd\""));
        assert_eq!(not_json.status, NC_EFILTER);
        assert!(not_json.message.contains("{\"id\": \"zstd\""), "{}", not_json.message);
        let no_id = refused(described_codec(&registry, "{\"level\": 1}"));
        assert_eq!(no_id.status, NC_EFILTER);
        let unknown = refused(described_codec(&registry, "{\"id\": \"lz4\"}"));
        assert_eq!(unknown.status, NC_ENOFILTER);
        assert!(unknown.message.contains("\"lz4\""), "{}", unknown.message);
        let no_level = refused(described_codec(&registry, "{\"id\": \"zstd\"}"));
        assert_eq!(no_level.status, NC_EFILTER);
        assert!(no_level.message.contains("level"), "{}", no_level.message);
        let bad_cname = refused(described_codec(&registry, "{\"id\": \"blosc\", \"cname\": \"nope\"}"));
        assert_eq!(bad_cname.status, NC_EFILTER);
        assert!(bad_cname.message.contains("nope"), "{}", bad_cname.message);
    }
}
