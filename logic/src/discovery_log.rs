// SPDX-License-Identifier: BSD-3-Clause
//! What plugin discovery did, as data: each directory of the plugin path and what it held, each
//! file seen and what became of it, and where a plugin's parts came from. The registry records
//! it as it searches; the filter report reads it.

use crate::plugin_path::DirOrigin;
use std::path::{Path, PathBuf};

/// What discovery found at a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirState {
    Searched,
    /// No such directory (not an error: the default usually does not exist).
    Missing,
    /// Could not be read; the error.
    Unreadable(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirRecord {
    pub dir: PathBuf,
    pub origin: DirOrigin,
    pub state: DirState,
}

/// What became of a file in a searched directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// It provides (parts of) these ids; `partly` says what of it was skipped, if anything.
    Used { ids: Vec<u32>, partly: Option<String> },
    /// Bad or redundant: the loader's reason, with the ids it was for when known.
    Skipped { ids: Vec<u32>, reason: String },
    /// Not a candidate (name, no entry points) or nothing of it needed.
    Ignored { reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub path: PathBuf,
    pub outcome: FileOutcome,
}

/// What discovery did, for `ncfilters_report`: the directories searched and every file seen,
/// in search order. Recorded alongside the diagnostics, which stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryLog {
    /// `HDF5_PLUGIN_PATH` at discovery (`None` when unset).
    pub plugin_path: Option<String>,
    pub dirs: Vec<DirRecord>,
    pub files: Vec<FileRecord>,
}
/// Reasons a file is ignored.
pub const NOT_A_LIBRARY_NAME: &str = "not a shared library name";
pub const A_DIRECTORY: &str = "a directory";
pub const NO_ENTRY_POINTS: &str = "no HDF5 plugin or NCZarr codec entry points";

/// netcdf-c's name filter: some `.` in the file name starts `.so`, `.dll` or `.dylib`
/// (so `x.so.1` passes, `x.la` and `x.o` do not).
pub fn is_plugin_file_name(name: &str) -> bool {
    name.match_indices('.').any(|(i, _)| {
        let rest = &name[i..];
        rest.starts_with(".so") || rest.starts_with(".dll") || rest.starts_with(".dylib")
    })
}

/// Where a plugin's HDF5 filter or codec comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartSource {
    /// ncfilters' own, built into libnetcdf (or the plugin library itself).
    BuiltIn,
    /// A library on the plugin path.
    Library(PathBuf),
}

impl PartSource {
    /// The library's path; `None` for a built-in part.
    pub fn library(&self) -> Option<&Path> {
        match self {
            PartSource::BuiltIn => None,
            PartSource::Library(path) => Some(path),
        }
    }
}

/// As the pairing table shows it.
impl std::fmt::Display for PartSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PartSource::BuiltIn => f.write_str("(built in)"),
            PartSource::Library(path) => path.display().fmt(f),
        }
    }
}
