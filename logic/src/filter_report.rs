// SPDX-License-Identifier: BSD-3-Clause
//! What `ncfilters_report`, `ncfilters_describe_spec` and `ncfilters_describe_codec` answer, as
//! typed JSON: which filters this process can use and why not, and how a filter spec maps to the
//! codec NCZarr writes and back. The `ncfilters` command reads the JSON back into these types.
//!
//! The report is made from facts handed in: the discovery log, what each plugin of the registry
//! has ([`PluginFacts`]) and what HDF5 says of each id ([`Hdf5Facts`]), so that its rules are
//! tested with neither HDF5 nor a plugin. Names and standard-ness come from the table of standard
//! filters only.

use crate::c_types::ids::{H5Z_FILTER_NBIT, H5Z_FILTER_SCALEOFFSET};
use crate::discovery_log::{DirState, DiscoveryLog, FileOutcome, PartSource};
use crate::error::{NcError, NC_EFILTER};
use crate::filterspec::{parse_spec_list, FilterSpecList, SpecError};
use crate::platform_names::Platform;
use crate::plugin_path::{DirOrigin, PLUGIN_PATH_ENV};
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

/// One plugin of the registry, as the report reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginFacts<'a> {
    pub id: u32,
    /// Its HDF5 filter part: the class's name, and where the part came from.
    pub filter: Option<PartFacts<'a>>,
    /// Its codec part: the codec id, and where the part came from.
    pub codec: Option<PartFacts<'a>>,
    /// The codec part came from a codec-defaults library (`NCZ_codec_info_defaults`).
    pub codec_defaulted: bool,
    /// Why its HDF5 filter cannot run: ncfilters' own, whose C library does not load.
    pub unavailable: Option<String>,
}

/// One part of a plugin: its name (class name or codec id) and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartFacts<'a> {
    pub name: &'a str,
    pub source: Option<&'a PartSource>,
}

/// The ids the report lists: HDF5's predefined 1..=6, the standard filters and every id of
/// `plugin_ids`, sorted.
pub fn report_ids(plugin_ids: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut ids: Vec<u32> = (1..=H5Z_FILTER_SCALEOFFSET).collect();
    ids.extend(STANDARD_FILTERS.iter().map(|row| row.id));
    ids.extend(plugin_ids);
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// A filter's name: the standard table's, else its HDF5 class's (`class_name`), else HDF5's for
/// nbit/scaleoffset.
pub fn filter_name(id: u32, class_name: Option<&str>) -> Option<String> {
    if let Some(row) = standard_filter(id) {
        return Some(row.name.to_string());
    }
    let class_name = class_name.filter(|n| !n.is_empty()).map(str::to_string);
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

/// Why ncfilters' built-in filter `id` cannot run (`unavailable`, the plugin's reason), with what
/// to do.
pub fn builtin_unavailable(id: u32, unavailable: Option<String>) -> Option<String> {
    let why = unavailable?;
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
fn hdf5_side(id: u32, plugin: Option<&PluginFacts<'_>>, facts: Option<Hdf5Facts>) -> Hdf5Side {
    let Some(facts) = facts else {
        let why = "HDF5 is not loaded in this process: netCDF-4 files need a libnetcdf built with HDF5";
        return Hdf5Side::new(Hdf5Source::None, None, Some(why.into()));
    };
    let filter_source = plugin.and_then(|p| p.filter).and_then(|f| f.source);
    let library = filter_source.and_then(PartSource::library);
    if facts.stand_in {
        return match filter_source {
            Some(PartSource::BuiltIn) => {
                Hdf5Side::new(Hdf5Source::BuiltIn, None, plugin.and_then(|p| builtin_unavailable(id, p.unavailable.clone())))
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
fn nczarr_side(id: u32, plugin: Option<&PluginFacts<'_>>) -> NczarrSide {
    let Some(plugin) = plugin else {
        let why = format!(
            "no NCZarr plugin for filter {id}: put a library providing its HDF5 filter (H5PLget_plugin_info) and its codec (NCZ_get_codec_info, or a codec-defaults library) in a directory on {PLUGIN_PATH_ENV}"
        );
        return NczarrSide::nothing(Some(why));
    };
    let (filter_source, filter_path) = part_source(plugin.filter.and_then(|f| f.source), false);
    let (codec_source, codec_path) = part_source(plugin.codec.and_then(|c| c.source), plugin.codec_defaulted);
    let codec_id = plugin.codec.map(|c| c.name.to_string());
    let why_not = match (&plugin.filter, &codec_id) {
        (None, Some(codec_id)) => Some(format!(
            "codec \"{codec_id}\" has no HDF5 filter {id}: put a plugin library providing HDF5 filter {id} (H5PLget_plugin_info) in a directory on {PLUGIN_PATH_ENV}"
        )),
        (Some(_), None) => Some(format!(
            "no codec for id {id}: put a codec library (NCZ_get_codec_info) or a codec-defaults library (NCZ_codec_info_defaults) providing it in a directory on {PLUGIN_PATH_ENV}"
        )),
        (None, None) => Some(format!("nothing provides filter {id}")),
        (Some(_), Some(_)) => builtin_unavailable(id, plugin.unavailable.clone()),
    };
    NczarrSide { codec_id, filter_source, filter_path, codec_source, codec_path, usable: why_not.is_none(), why_not }
}

/// The report of `ncfilters_report`, from discovery's `log` and the registry's `plugins`;
/// `hdf5` is asked once per id, in id order (`None`: HDF5 is not in the process).
pub fn typed_report(
    log: &DiscoveryLog,
    plugins: &[PluginFacts<'_>],
    mut hdf5: impl FnMut(u32) -> Option<Hdf5Facts>,
) -> Report {
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
    let filters = report_ids(plugins.iter().map(|plugin| plugin.id))
        .into_iter()
        .map(|id| {
            let plugin = plugins.iter().find(|plugin| plugin.id == id);
            FilterReport {
                id,
                name: filter_name(id, plugin.and_then(|p| p.filter).map(|f| f.name)),
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
pub fn report(log: &DiscoveryLog, plugins: &[PluginFacts<'_>], hdf5: impl FnMut(u32) -> Option<Hdf5Facts>) -> Value {
    to_json(&typed_report(log, plugins, hdf5))
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

/// A description (or report) as the JSON the C functions hand out.
pub fn to_json(description: &impl Serialize) -> Value {
    serde_json::to_value(description).unwrap_or_else(|e| json!({ "error": e.to_string() }))
}

/// The filters of `spec` (ids or standard filters' names, as `ncfilters_describe_spec` takes
/// them), or why not, naming the spec.
pub fn parse_named_spec(spec: &str) -> Result<FilterSpecList, Refusal> {
    parse_spec_list(numeric_spec(spec).as_bytes()).map_err(|error| {
        let hint = match error {
            SpecError::BadId { .. } => {
                let names: Vec<&str> = STANDARD_FILTERS.iter().map(|row| row.name).collect();
                format!(" (a filter is a number, or one of {})", names.join(", "))
            }
            _ => String::new(),
        };
        Refusal::new(NC_EFILTER, format!("filter spec {spec:?}: {error}{hint}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The report's rules read only the facts handed in: a codec with no filter half, ncfilters'
    /// own filter without its C library, and a plugin library that HDF5 does not find.
    #[test]
    fn each_side_follows_the_facts_handed_in() {
        let library = PartSource::Library("/p/lib__nch5x.so".into());
        let plugins = [
            PluginFacts {
                id: 32001,
                filter: Some(PartFacts { name: "blosc", source: Some(&PartSource::BuiltIn) }),
                codec: Some(PartFacts { name: "blosc", source: Some(&PartSource::BuiltIn) }),
                codec_defaulted: false,
                unavailable: Some("libblosc does not load".into()),
            },
            PluginFacts {
                id: 40000,
                filter: None,
                codec: Some(PartFacts { name: "x", source: Some(&library) }),
                codec_defaulted: true,
                unavailable: None,
            },
            PluginFacts {
                id: 40001,
                filter: Some(PartFacts { name: "y", source: Some(&library) }),
                codec: None,
                codec_defaulted: false,
                unavailable: None,
            },
        ];
        let plain = |_| Some(Hdf5Facts { registered: false, stand_in: false, available: false });
        let report = typed_report(&DiscoveryLog::default(), &plugins, plain);
        let filter = |id| report.filters.iter().find(|f| f.id == id).unwrap();

        let blosc = filter(32001);
        let why = blosc.nczarr.why_not.as_deref().unwrap();
        assert!(why.starts_with("libblosc does not load: install c-blosc"), "{why}");
        let codec_only = &filter(40000).nczarr;
        assert_eq!(
            (codec_only.codec_source, codec_only.codec_path.as_deref()),
            (NczarrSource::Defaults, Some("/p/lib__nch5x.so"))
        );
        assert!(codec_only.why_not.as_deref().unwrap().starts_with("codec \"x\" has no HDF5 filter 40000"));
        let filter_only = filter(40001);
        assert_eq!(filter_only.name.as_deref(), Some("y"));
        let why = filter_only.hdf5.why_not.as_deref().unwrap();
        assert!(
            why.starts_with("HDF5 does not find filter 40001, which /p/lib__nch5x.so provides: add /p to"),
            "{why}"
        );
        assert!(filter_only.nczarr.why_not.as_deref().unwrap().starts_with("no codec for id 40001"));
    }
}
