// SPDX-License-Identifier: BSD-3-Clause
//! The NULL policy of every export, as a table the tests hold the sources to: each pointer
//! argument of each `#[no_mangle]` function is either refused ([`reject_null!`]: `NC_EINVAL`, or
//! the return type's [`OnNull`] value) or accepted for a stated reason. Accepting NULL where
//! netcdf-c does is the documented exception; `tests/plugin_path_abi.rs` compares those answers
//! with a stock libnetcdf and `c_tests/filter_api.c` those of the ncid-first functions.
//!
//! [`reject_null!`]: crate::reject_null
//! [`OnNull`]: crate::ffi_boundary::OnNull

use super::{hdf5filter, ncaux_filterspec, ncfilters_api, plugin_path_api, zfilter};
use crate::c_types::NCPluginList;
use crate::error::{NC_EINVAL, NC_NOERR};
use std::collections::BTreeSet;
use std::os::raw::c_char;
use std::ptr::{null, null_mut};

/// What an export does with a NULL pointer argument.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OnNullArgument {
    /// Refused with `NC_EINVAL` (checked by a call below).
    Refused,
    /// An optional out-pointer: nothing is stored.
    Optional,
    /// Accepted as netcdf-c accepts it, with the answer it gives.
    AsNetcdfC(&'static str),
    /// An ncid function: netcdf-c checks the file first, then the argument (`filter_api.c`).
    AfterTheFile(&'static str),
    /// Read only after the variable, so answered as the C answers a bad value.
    AfterTheVariable(&'static str),
    /// Not used (netcdf-c passes it; ncfilters needs only the variable).
    Unused,
}
use OnNullArgument::*;

/// Every pointer argument of every export, by function.
const POLICY: &[(&str, &[(&str, OnNullArgument)])] = &[
    // filter_api.rs: the file is checked first, as dfilter.c does.
    ("nc_def_var_filter", &[("parms", AfterTheFile("NC_EINVAL when nparams > 0"))]),
    ("nc_inq_var_filter_ids", &[("nfilters", Optional), ("filterids", Optional)]),
    ("nc_inq_var_filter_info", &[("nparams", Optional), ("params", Optional)]),
    ("nc_inq_var_filter", &[("idp", Optional), ("nparams", Optional), ("params", Optional)]),
    ("nc_inq_var_bzip2", &[("hasfilterp", Optional), ("levelp", Optional)]),
    ("nc_inq_var_zstandard", &[("hasfilterp", Optional), ("levelp", Optional)]),
    (
        "nc_inq_var_blosc",
        &[
            ("hasfilterp", Optional),
            ("subcompressorp", Optional),
            ("levelp", Optional),
            ("blocksizep", Optional),
            ("addshufflep", Optional),
        ],
    ),
    // ncfilters_api.rs
    ("ncfilters_report", &[("json_out", Refused)]),
    ("ncfilters_describe_spec", &[("spec", Refused), ("json_out", Refused)]),
    ("ncfilters_describe_codec", &[("codec_json", Refused), ("json_out", Refused)]),
    // ncaux_filterspec.rs
    ("ncaux_h5filterspec_parse", &[("txt", Refused), ("idp", Optional), ("nparamsp", Optional), ("paramsp", Optional)]),
    (
        "ncaux_h5filterspec_parselist",
        &[("txt0", Refused), ("formatp", Optional), ("nspecsp", Optional), ("vectorp", Optional)],
    ),
    ("ncaux_h5filterspec_parse_parameter", &[("txt", Refused), ("nuiparamsp", Optional), ("uiparams", Refused)]),
    ("ncaux_h5filterspec_free", &[("f", AsNetcdfC("nothing to free"))]),
    ("ncaux_h5filterspec_fix8", &[("mem8", AsNetcdfC("nothing to convert"))]),
    // hdf5filter.rs
    ("NC4_hdf5_addfilter", &[("var", Refused), ("params", AfterTheVariable("NC_EINVAL when nparams > 0"))]),
    ("NC4_hdf5_def_var_filter", &[("params", AfterTheFile("NC_EINVAL when nparams > 0"))]),
    ("NC4_hdf5_inq_var_filter_ids", &[("nfiltersp", Optional), ("ids", Optional)]),
    ("NC4_hdf5_inq_var_filter_info", &[("nparamsp", Optional), ("params", Optional)]),
    ("NC4_hdf5_filter_lookup", &[("var", Refused), ("specp", Optional)]),
    ("NC4_hdf5_filter_remove", &[("var", Refused)]),
    ("NC4_hdf5_filter_freelist", &[("var", Refused)]),
    ("NC4_hdf5_find_missing_filter", &[("var", Refused), ("idp", Optional)]),
    // plugin_path_api.rs
    ("nc_plugin_path_ndirs", &[("ndirsp", Optional)]),
    ("nc_plugin_path_get", &[("dirs", AsNetcdfC("NC_NOERR, nothing to fill (dplugins.c)"))]),
    ("nc_plugin_path_set", &[("dirs", Refused)]),
    ("ncaux_plugin_path_parsen", &[("pathlist0", AsNetcdfC("no directories (daux.c)")), ("dirs", Refused)]),
    ("ncaux_plugin_path_parse", &[("pathlist0", AsNetcdfC("no directories (daux.c)")), ("dirs", Refused)]),
    ("ncaux_plugin_path_tostring", &[("dirs", Refused), ("catp", Optional)]),
    ("ncaux_plugin_path_clear", &[("dirs", AsNetcdfC("NC_NOERR, nothing to clear (daux.c)"))]),
    ("ncaux_plugin_path_reclaim", &[("dirs", AsNetcdfC("NC_NOERR, nothing to free (daux.c)"))]),
    ("ncaux_plugin_path_append", &[("dirs", Refused), ("dir", Refused)]),
    ("ncaux_plugin_path_prepend", &[("dirs", Refused), ("dir", Refused)]),
    ("ncaux_plugin_path_stringget", &[("path", Refused)]),
    ("ncaux_plugin_path_stringset", &[("path", Refused)]),
    ("NC4_hdf5_plugin_path_ndirs", &[("ndirsp", Optional)]),
    ("NC4_hdf5_plugin_path_get", &[("dirs", Refused)]),
    ("NC4_hdf5_plugin_path_set", &[("dirs", Refused)]),
    ("NCZ_plugin_path_ndirs", &[("ndirsp", Optional)]),
    ("NCZ_plugin_path_get", &[("dirs", Refused)]),
    ("NCZ_plugin_path_set", &[("dirs", Refused)]),
    // zfilter.rs
    (
        "NCZ_addfilter",
        &[("_file", Unused), ("var", Refused), ("params", AfterTheVariable("NC_EINVAL when nparams > 0"))],
    ),
    ("NCZ_def_var_filter", &[("params", AfterTheFile("NC_EINVAL when nparams > 0"))]),
    ("NCZ_inq_var_filter_ids", &[("nfiltersp", Optional), ("ids", Optional)]),
    ("NCZ_inq_var_filter_info", &[("nparamsp", Optional), ("params", Optional)]),
    ("NCZ_filter_setup", &[("var", Refused)]),
    ("NCZ_filter_freelists", &[("var", Refused)]),
    ("NCZ_plugin_loaded", &[("pp", Optional)]),
    ("NCZ_plugin_loaded_byname", &[("name", Refused), ("pp", Optional)]),
    ("NCZ_codec_freelist", &[("zvar", Refused)]),
    ("NCZ_filter_remove", &[("var", Refused)]),
    (
        "NCZ_applyfilterchain",
        &[
            ("_file", Unused),
            ("var", Refused),
            ("chain", Refused),
            ("indata", AfterTheVariable("NC_EINVAL when inlen > 0, else an empty chunk")),
            ("outlenp", Refused),
            ("outdatap", Refused),
        ],
    ),
    ("NCZ_filter_jsonize", &[("_file", Unused), ("var", Refused), ("filter", Refused), ("jfilterp", Optional)]),
    (
        "NCZ_filter_build",
        &[("_file", Unused), ("var", Refused), ("jfilter", AfterTheVariable("NC_EFILTER, as zfilter.c"))],
    ),
    (
        "ncfilters_zarr_codec",
        &[
            ("_file", Unused),
            ("var", Refused),
            ("key", AsNetcdfC("named \"codec\" in messages")),
            ("jcodec", AfterTheVariable("NC_EFILTER, a broken filter")),
        ],
    ),
    ("ncfilters_zarr_raw_chunk", &[("var", Refused)]),
    ("NCZ_codec_attr", &[("var", Refused), ("lenp", Optional), ("data", Optional)]),
];

/// The exports whose body may skip [`crate::ffi_export!`]: their `int` is not a status.
const NOT_A_STATUS: [&str; 2] = ["H5PLget_plugin_type", "ncaux_plugin_path_stringlen"];

/// Every `#[no_mangle]` function of the library's sources (`src/`) and of the plugin crate's export
/// macros (`plugins/common/src/`), read by the one source parser.
fn exports() -> Vec<ncfilters_source_scan::Export> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    [root.join("src"), root.join("plugins/common/src")]
        .iter()
        .flat_map(|dir| ncfilters_source_scan::exports(dir))
        .filter(|export| !export.file.ends_with("null_arguments.rs"))
        // A unit test's stand-in for a netcdf-c function (netcdf_api.rs) is not in the library.
        .filter(|export| !export.cfgs.iter().any(|cfg| cfg == "test"))
        .collect()
}

#[test]
fn every_export_runs_inside_the_one_boundary_form() {
    let exports = exports();
    assert!(exports.len() > 70, "found {} exports", exports.len());
    for export in &exports {
        let inside = if NOT_A_STATUS.contains(&export.name.as_str()) {
            export.invokes("ffi_export", Some("caught")) || !export.calls_anything
        } else {
            export.invokes("ffi_export", None)
        };
        assert!(inside, "{} ({}) does not run inside ffi_export!", export.name, export.file.display());
    }
}

#[test]
fn every_pointer_argument_of_every_export_has_a_null_policy() {
    let listed: BTreeSet<(String, String)> = POLICY
        .iter()
        .flat_map(|(function, arguments)| arguments.iter().map(|(a, _)| (function.to_string(), a.to_string())))
        .collect();
    let declared: BTreeSet<(String, String)> =
        exports().into_iter().flat_map(|e| e.pointer_arguments.into_iter().map(move |a| (e.name.clone(), a))).collect();
    let missing: Vec<_> = declared.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&declared).collect();
    assert!(missing.is_empty(), "pointer arguments without a NULL policy: {missing:?}");
    assert!(stale.is_empty(), "NULL policies of no export's argument: {stale:?}");
}

/// A call of an export with one argument NULL.
type Call = Box<dyn Fn() -> i32>;

/// `call!(export(...))`: the export called with NULL where the row says.
macro_rules! call {
    ($call:expr) => {
        Box::new(move || {
            // SAFETY: NULL where the row says; every other pointer valid, or never read because
            // the export's NULL checks come first.
            unsafe { $call }
        }) as Call
    };
}

/// The policy of one argument.
fn policy(function: &str, argument: &str) -> OnNullArgument {
    POLICY
        .iter()
        .find(|(f, _)| *f == function)
        .and_then(|(_, arguments)| arguments.iter().find(|(a, _)| *a == argument))
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("no policy for {function}({argument})"))
}

/// Each refused argument, called with NULL there (and valid or unread values elsewhere), gets
/// `NC_EINVAL` with a message naming the function and the argument; each accepted one its answer.
#[test]
fn null_arguments_get_the_documented_answer() {
    let text = c"/a".as_ptr();
    let list = std::cell::UnsafeCell::new(NCPluginList { ndirs: 0, dirs: null_mut() });
    let list = list.get();
    let json = std::cell::UnsafeCell::new(null_mut::<c_char>());
    let json = json.get();
    // Never read: every NULL check of the call comes before the variable is used.
    let unread_var = std::ptr::NonNull::dangling().as_ptr();
    let (len, data) =
        (std::cell::UnsafeCell::new(0usize), std::cell::UnsafeCell::new(null_mut::<std::os::raw::c_void>()));
    let (len, data) = (len.get(), data.get());
    let chain = std::ptr::NonNull::dangling().as_ptr();
    #[allow(unused_mut)] // more in a release with netcdf-c's plugin-path API
    let mut refused: Vec<(&str, &str, Call)> = vec![
        ("ncfilters_report", "json_out", call!(ncfilters_api::ncfilters_report(null_mut()))),
        ("ncfilters_describe_spec", "json_out", call!(ncfilters_api::ncfilters_describe_spec(text, null_mut()))),
        ("ncfilters_describe_codec", "json_out", call!(ncfilters_api::ncfilters_describe_codec(text, null_mut()))),
        (
            "ncaux_h5filterspec_parse",
            "txt",
            call!(ncaux_filterspec::ncaux_h5filterspec_parse(null(), null_mut(), null_mut(), null_mut())),
        ),
        (
            "ncaux_h5filterspec_parselist",
            "txt0",
            call!(ncaux_filterspec::ncaux_h5filterspec_parselist(null(), null_mut(), null_mut(), null_mut())),
        ),
        (
            "ncaux_h5filterspec_parse_parameter",
            "txt",
            call!(ncaux_filterspec::ncaux_h5filterspec_parse_parameter(null(), null_mut(), null_mut())),
        ),
        (
            "ncaux_h5filterspec_parse_parameter",
            "uiparams",
            call!(ncaux_filterspec::ncaux_h5filterspec_parse_parameter(c"9".as_ptr(), null_mut(), null_mut())),
        ),
        ("NC4_hdf5_addfilter", "var", call!(hdf5filter::NC4_hdf5_addfilter(null_mut(), 1, 0, null(), 0))),
        ("NC4_hdf5_filter_lookup", "var", call!(hdf5filter::NC4_hdf5_filter_lookup(null_mut(), 1, null_mut()))),
        ("NC4_hdf5_filter_remove", "var", call!(hdf5filter::NC4_hdf5_filter_remove(null_mut(), 1))),
        ("NC4_hdf5_filter_freelist", "var", call!(hdf5filter::NC4_hdf5_filter_freelist(null_mut()))),
        (
            "NC4_hdf5_find_missing_filter",
            "var",
            call!(hdf5filter::NC4_hdf5_find_missing_filter(null_mut(), null_mut())),
        ),
        ("nc_plugin_path_set", "dirs", call!(plugin_path_api::nc_plugin_path_set(null_mut()))),
        ("ncaux_plugin_path_parsen", "dirs", call!(plugin_path_api::ncaux_plugin_path_parsen(2, text, 0, null_mut()))),
        ("ncaux_plugin_path_parse", "dirs", call!(plugin_path_api::ncaux_plugin_path_parse(text, 0, null_mut()))),
        (
            "ncaux_plugin_path_tostring",
            "dirs",
            call!(plugin_path_api::ncaux_plugin_path_tostring(null(), 0, null_mut())),
        ),
        ("ncaux_plugin_path_append", "dirs", call!(plugin_path_api::ncaux_plugin_path_append(null_mut(), text))),
        ("ncaux_plugin_path_prepend", "dirs", call!(plugin_path_api::ncaux_plugin_path_prepend(null_mut(), text))),
        ("ncaux_plugin_path_stringget", "path", call!(plugin_path_api::ncaux_plugin_path_stringget(4, null_mut()))),
        ("ncaux_plugin_path_stringset", "path", call!(plugin_path_api::ncaux_plugin_path_stringset(4, null()))),
        ("NCZ_addfilter", "var", call!(zfilter::NCZ_addfilter(null_mut(), null_mut(), 1, 0, null()))),
        ("NCZ_filter_setup", "var", call!(zfilter::NCZ_filter_setup(null_mut()))),
        ("NCZ_filter_freelists", "var", call!(zfilter::NCZ_filter_freelists(null_mut()))),
        ("NCZ_codec_freelist", "zvar", call!(zfilter::NCZ_codec_freelist(null_mut()))),
        ("NCZ_filter_remove", "var", call!(zfilter::NCZ_filter_remove(null_mut(), 1))),
        (
            "NCZ_applyfilterchain",
            "var",
            call!(zfilter::NCZ_applyfilterchain(
                null(),
                null_mut(),
                null_mut(),
                0,
                null_mut(),
                null_mut(),
                null_mut(),
                1
            )),
        ),
        ("NCZ_filter_jsonize", "var", call!(zfilter::NCZ_filter_jsonize(null(), null(), null_mut(), null_mut()))),
        ("NCZ_filter_build", "var", call!(zfilter::NCZ_filter_build(null(), null_mut(), null(), 0))),
        ("ncfilters_zarr_codec", "var", call!(zfilter::ncfilters_zarr_codec(null(), null_mut(), null(), null(), 0))),
        ("ncfilters_zarr_raw_chunk", "var", call!(zfilter::ncfilters_zarr_raw_chunk(null_mut(), 0))),
        ("NCZ_codec_attr", "var", call!(zfilter::NCZ_codec_attr(null(), null_mut(), null_mut()))),
        ("ncfilters_describe_spec", "spec", call!(ncfilters_api::ncfilters_describe_spec(null(), json))),
        ("ncfilters_describe_codec", "codec_json", call!(ncfilters_api::ncfilters_describe_codec(null(), json))),
        ("ncaux_plugin_path_append", "dir", call!(plugin_path_api::ncaux_plugin_path_append(list, null()))),
        ("ncaux_plugin_path_prepend", "dir", call!(plugin_path_api::ncaux_plugin_path_prepend(list, null()))),
        (
            "NCZ_applyfilterchain",
            "chain",
            call!(zfilter::NCZ_applyfilterchain(null(), unread_var, null_mut(), 0, null_mut(), len, data, 1)),
        ),
        (
            "NCZ_applyfilterchain",
            "outlenp",
            call!(zfilter::NCZ_applyfilterchain(null(), unread_var, chain, 0, null_mut(), null_mut(), data, 1)),
        ),
        (
            "NCZ_applyfilterchain",
            "outdatap",
            call!(zfilter::NCZ_applyfilterchain(null(), unread_var, chain, 0, null_mut(), len, null_mut(), 1)),
        ),
        (
            "NCZ_filter_jsonize",
            "filter",
            call!(zfilter::NCZ_filter_jsonize(null(), unread_var, null_mut(), null_mut())),
        ),
    ];
    #[cfg(ncf_plugin_path_release)]
    refused.extend::<[(&str, &str, Call); 5]>([
        (
            "NCZ_plugin_loaded_byname",
            "name",
            call!(zfilter::plugin_table::NCZ_plugin_loaded_byname(null(), null_mut())),
        ),
        ("NC4_hdf5_plugin_path_get", "dirs", call!(plugin_path_api::release::NC4_hdf5_plugin_path_get(null_mut()))),
        ("NC4_hdf5_plugin_path_set", "dirs", call!(plugin_path_api::release::NC4_hdf5_plugin_path_set(null_mut()))),
        ("NCZ_plugin_path_get", "dirs", call!(plugin_path_api::release::NCZ_plugin_path_get(null_mut()))),
        ("NCZ_plugin_path_set", "dirs", call!(plugin_path_api::release::NCZ_plugin_path_set(null_mut()))),
    ]);
    let mut checked = BTreeSet::new();
    for (function, argument, call) in &refused {
        assert_eq!(policy(function, argument), Refused, "{function}({argument})");
        let (status, reports) = crate::error::capture_reports(call);
        assert_eq!(status, NC_EINVAL.code(), "{function} with {argument} NULL");
        // The description functions say it in their JSON instead (`{"error": "... is NULL"}`).
        if !function.starts_with("ncfilters_describe") || *argument == "json_out" {
            assert_eq!(reports, [format!("{function}: argument `{argument}` is NULL")], "{function}");
        }
        // SAFETY: the slot holds NULL or the JSON text a description wrote, ours to free.
        unsafe { libc::free(json.replace(null_mut()).cast()) };
        checked.insert((function.to_string(), argument.to_string()));
    }
    // Accepted as netcdf-c accepts them.
    // SAFETY: NULL arguments the functions accept.
    unsafe {
        ncaux_filterspec::ncaux_h5filterspec_free(null_mut());
        ncaux_filterspec::ncaux_h5filterspec_fix8(null_mut(), 1);
        assert_eq!(plugin_path_api::nc_plugin_path_get(null_mut()), NC_NOERR);
        assert_eq!(plugin_path_api::ncaux_plugin_path_clear(null_mut()), NC_NOERR);
        assert_eq!(plugin_path_api::ncaux_plugin_path_reclaim(null_mut()), NC_NOERR);
        let mut list = NCPluginList { ndirs: 5, dirs: null_mut() };
        assert_eq!(plugin_path_api::ncaux_plugin_path_parse(null(), 0, &mut list), NC_NOERR);
        assert_eq!(list.ndirs, 0, "no directories");
    }
    // Every refused argument the unit tests can reach without netcdf-c is called above.
    let uncalled: Vec<_> = POLICY
        .iter()
        .flat_map(|(f, arguments)| arguments.iter().map(move |(a, p)| (*f, *a, *p)))
        .filter(|(f, a, p)| *p == Refused && !checked.contains(&(f.to_string(), a.to_string())))
        .map(|(f, a, _)| format!("{f}({a})"))
        .collect();
    let expected: &[&str] = if cfg!(ncf_plugin_path_release) {
        &[]
    } else {
        &[
            "NC4_hdf5_plugin_path_get(dirs)",
            "NC4_hdf5_plugin_path_set(dirs)",
            "NCZ_plugin_path_get(dirs)",
            "NCZ_plugin_path_set(dirs)",
            "NCZ_plugin_loaded_byname(name)",
        ]
    };
    assert_eq!(uncalled, expected, "netcdf-c's own plugin-path API is in 4.9.3 and later builds only");
}
