//! The JSON of `ncfilters_report`, `ncfilters_describe_spec` and `ncfilters_describe_codec` (the
//! contract of issue 14), read into structs for the text output. Fields the text does not need are
//! not read; missing optional fields default, so a library that adds fields or leaves out a null
//! one is still understood. `--json` passes the library's own objects through (see `lib.rs`).

use serde::Deserialize;

/// `ncfilters_report`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct Report {
    #[serde(default)]
    pub ncfilters_version: Option<String>,
    #[serde(default)]
    pub netcdf_version: Option<String>,
    pub plugin_path: PluginPath,
    #[serde(default)]
    pub libraries: Vec<LibraryEntry>,
    pub filters: Vec<Filter>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct PluginPath {
    #[serde(default = "default_variable")]
    pub variable: String,
    /// The variable's value; None when unset.
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub entries: Vec<PathEntry>,
}

fn default_variable() -> String {
    "HDF5_PLUGIN_PATH".to_string()
}

/// One directory of the plugin path.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct PathEntry {
    pub dir: String,
    /// "HDF5_PLUGIN_PATH", "default", …
    pub origin: String,
    /// "searched", "missing", "unreadable", …
    pub state: String,
    #[serde(default)]
    pub error: Option<String>,
}

/// One file seen in a searched directory.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct LibraryEntry {
    pub path: String,
    /// "used", "skipped" or "ignored".
    pub outcome: String,
    #[serde(default)]
    pub ids: Vec<u32>,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct Filter {
    pub id: u32,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub standard: bool,
    pub hdf5: Hdf5Use,
    pub nczarr: NczarrUse,
}

/// netCDF-4 (HDF5 files).
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct Hdf5Use {
    /// "hdf5", "plugin", "built-in" or "none".
    pub source: String,
    #[serde(default)]
    pub path: Option<String>,
    pub usable: bool,
    #[serde(default)]
    pub why_not: Option<String>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct NczarrUse {
    #[serde(default)]
    pub codec_id: Option<String>,
    /// "plugin", "built-in" or "none".
    pub filter_source: String,
    #[serde(default)]
    pub filter_path: Option<String>,
    /// "plugin", "defaults", "built-in" or "none".
    pub codec_source: String,
    #[serde(default)]
    pub codec_path: Option<String>,
    pub usable: bool,
    #[serde(default)]
    pub why_not: Option<String>,
}

/// `ncfilters_describe_spec`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct SpecDescription {
    pub filters: Vec<SpecFilter>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct SpecFilter {
    pub id: u32,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub params: Vec<u32>,
    /// The codec JSON object NCZarr writes, kept as the library wrote it (key order included).
    #[serde(default)]
    pub codec: Option<serde_json::Value>,
    #[serde(default)]
    pub codec_error: Option<String>,
}

/// `ncfilters_describe_codec`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct CodecDescription {
    pub id: u32,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub params: Vec<u32>,
}

impl Filter {
    /// Whether `query` is this filter's name or NCZarr codec id (ASCII case-insensitive).
    pub fn is_named(&self, query: &str) -> bool {
        let matches = |name: &Option<String>| name.as_deref().is_some_and(|name| name.eq_ignore_ascii_case(query));
        matches(&self.name) || matches(&self.nczarr.codec_id)
    }

    pub fn usable_anywhere(&self) -> bool {
        self.hdf5.usable || self.nczarr.usable
    }
}

impl LibraryEntry {
    /// The directory of the library (the text before the last '/').
    pub fn dir(&self) -> &str {
        self.path.rsplit_once('/').map_or("", |(dir, _)| dir)
    }
}
