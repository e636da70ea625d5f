// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters-logic: the part of ncfilters that is pure logic, for the netcdf-c release chosen by
//! `build.rs` ([`NETCDF_RELEASE`]). No line here touches a pointer, C memory, a thread or a
//! library: the crate forbids unsafe code, so the compiler, not a module attribute, keeps it so.
//! ncfilters-runtime (the C runtime: C heap, handles, the panic boundary, worker threads, libzstd's
//! context), ncfilters-filters and ncfilters-core (plugin loading, the registry, the chain) build on
//! it; core re-exports every module under the same name.
//!
//! The modules form layers, lowest first: a module uses only modules below it (`tests/layers.rs`
//! checks the order):
//! 1. [`error`]: status codes and diagnostics; [`c_types`]: the `repr(C)` types of netcdf-c's
//!    public filter headers;
//! 2. [`platform_names`]: the names and path rules netcdf-c picks per platform;
//!    [`filterspec`]: the filter-spec parser; [`plugin_path`]: the plugin path's directories and
//!    rules; [`discovery_log`]: what plugin discovery found; [`filter_rules`]: ordering and conflict rules of a variable's filter list;
//!    [`standard_filter_table`]: the table of standard filters (ids, names, codecs, libraries);
//!    [`standard_filters`]: parameters of the bzip2/zstd/blosc helpers; [`codec_json`]: NCZarr
//!    codec JSON, its numeric and legacy dialects; then [`codecs`]: the standard filters' Zarr
//!    codecs; [`chunk_bounds`]: a chunk filter chain's bounds and its `_Codecs` order;
//! 3. [`filter_report`]: the typed report behind `ncfilters_report` and the `ncfilters` command,
//!    and its rules; then [`filter_explain`]: why a filter is usable or not, and what to change,
//!    read from that report.
#![forbid(unsafe_code)]
// The plugin path trusts the environment (core's `plugin_path`): no allow may change it.
#![forbid(clippy::disallowed_methods)]
// Public items' docs name the private helpers they rest on.
#![allow(rustdoc::private_intra_doc_links)]

/// The netcdf-c release whose ABI and behaviour this build has (`NCFILTERS_NETCDF_VERSION`).
pub const NETCDF_RELEASE: &str = env!("NCFILTERS_NETCDF_VERSION");

/// What this build of ncfilters is: its version and its source, e.g. `0.3.0 (git 1a2b3c4d5e6f)` or
/// `0.3.0 (release)`, as libnetcdf.settings and `nc-config --all` of the same build say.
pub const NCFILTERS_BUILD: &str = env!("NCFILTERS_BUILD");

/// Whether that release has its own plugin-path code (dplugins.c and the rest, 4.9.3 on), whose
/// internal functions ncfilters then exports too.
pub const PLUGIN_PATH_RELEASE: bool = cfg!(ncf_plugin_path_release);

// The layers, lowest first: `tests/layers.rs` reads this order (rustfmt keeps it:
// `reorder_modules = false`).
pub mod error;
pub mod c_types;
pub mod platform_names;
pub mod filterspec;
pub mod plugin_path;
pub mod discovery_log;
pub mod filter_rules;
pub mod standard_filter_table;
pub mod standard_filters;
pub mod codec_json;
pub mod codecs;
pub mod chunk_bounds;
pub mod filter_report;
pub mod filter_explain;
