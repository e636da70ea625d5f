// SPDX-License-Identifier: BSD-3-Clause
//! ncfilters' own C API (`include/ncfilters.h`, not part of netcdf-c): the filter report and
//! the spec and codec descriptions of [`crate::registry_report`], as JSON text on the C heap.

use crate::c_args::{FromRawArgument, Out, Text};
use crate::c_heap::c_string;
use crate::codec_json::Dialect;
use crate::error::{check, NcResult, NC_EFILTER, NC_EINTERNAL, NC_EINVAL, NC_NOERR};
use crate::ffi_boundary::Call;
use crate::filter_report::{Hdf5Facts, Refusal};
use crate::registry_report;
use serde_json::{json, Value};
use std::os::raw::{c_char, c_int};

/// Runs `body` inside its own panic boundary, so that `*json_out` is set even when it panics,
/// and stores its JSON, or `{"error": …}`, in `*json_out`.
fn answer(
    function: &str,
    mut json_out: Out<*mut c_char>,
    body: impl FnOnce() -> Result<Value, Refusal>,
) -> NcResult<()> {
    let outcome = crate::ffi_boundary::contained(function, || {
        Ok(match body() {
            Ok(value) => (NC_NOERR, value.to_string()),
            Err(refusal) => (refusal.status.code(), refusal.to_json().to_string()),
        })
    });
    let (status, text) = outcome.unwrap_or_else(|_| {
        let error = json!({ "error": format!("internal error in {function} (see stderr)") });
        (NC_EINTERNAL.code(), error.to_string())
    });
    // The caller owns the text from here.
    let status = match c_string(text.as_bytes()) {
        Ok(text) => {
            json_out.give_text(text);
            status
        }
        Err(error) => {
            json_out.write_null();
            error.code()
        }
    };
    check(status)
}

/// An input string, refused when NULL (`NC_EINVAL`) or not UTF-8.
fn text_arg<'a>(text: Text<'a>, what: &str) -> Result<&'a str, Refusal> {
    let bytes = text.0.ok_or_else(|| Refusal::new(NC_EINVAL, format!("{what} is NULL")))?;
    std::str::from_utf8(bytes)
        .map_err(|_| Refusal::new(NC_EFILTER, format!("{what} {:?} is not UTF-8", String::from_utf8_lossy(bytes))))
}

/// What HDF5 says about `id`: asked whether a class is registered before whether it is
/// available, which may load a plugin from HDF5's path. `None` without HDF5.
fn hdf5_facts(call: &Call<'_>, id: u32) -> Option<Hdf5Facts> {
    let registered = crate::hdf5_sys::filter_registered(call, id).ok()?;
    let available = crate::hdf5_sys::filter_avail(call, id).unwrap_or(false);
    Some(Hdf5Facts { registered, stand_in: registered && crate::hdf5_filters::is_stand_in(id), available })
}

/// Reports which filters this process can use, for netCDF-4 (HDF5) files and for NCZarr, and
/// how the plugin path was searched. Initialises netCDF and discovers plugins if not done yet;
/// asks HDF5 about each listed id (`H5Zfilter_avail`, which may load plugins from HDF5's path).
///
/// Returns `NC_NOERR` or an `NC_E*` code; `NC_EINVAL` when `json_out` is NULL. Otherwise
/// `*json_out` is set to NUL-terminated UTF-8 JSON the caller frees with `free()`, on error
/// `{"error": "..."}`. The report:
/// `{"ncfilters_version", "ncfilters_build", "netcdf_version",
///   "plugin_path": {"variable": "HDF5_PLUGIN_PATH", "value": text|null,
///                   "entries": [{"dir", "origin": "HDF5_PLUGIN_PATH"|"default"|"nc_plugin_path_set",
///                                "state": "searched"|"missing"|"unreadable", "error"?}]},
///   "libraries": [{"path", "outcome": "used"|"skipped"|"ignored", "ids": [id], "reason": text|null}],
///   "filters": [{"id", "name": text|null, "standard": bool,
///                "hdf5": {"source": "hdf5"|"plugin"|"built-in"|"none", "path", "usable", "why_not"},
///                "nczarr": {"codec_id", "filter_source", "filter_path",
///                           "codec_source": "plugin"|"defaults"|"built-in"|"none", "codec_path",
///                           "usable", "why_not"}}]}`
/// with filters sorted by id (HDF5's predefined 1 to 6 always listed). A used library's reason
/// says what of it was skipped, if anything.
///
/// # Safety
/// `json_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncfilters_report(json_out: *mut *mut c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(json_out);
        let body = || {
            // Registers the built-in filters with HDF5 (nothing to do without netcdf-c).
            let _ = crate::netcdf_internals::initialize(call);
            Ok(registry_report::report(&crate::nczarr_filters::registry(call), |id| hdf5_facts(call, id)))
        };
        // SAFETY: `json_out` is NULL or valid for a write (the export's `# Safety`).
        answer(crate::function_name!(), unsafe { Out::<*mut c_char>::from_raw(call, json_out) }, body)
    })
}

/// Describes a filter spec (`ncaux_h5filterspec_parselist` syntax: `|` between filters, each
/// `id,param,...`; a standard filter's name or codec id, e.g. `zstd,3` or `bzip2`, may stand
/// for its id): `{"filters": [{"id", "name", "params": [word], "codec": object|null,
/// "codec_error": text|null}]}`. `codec` is the codec JSON NCZarr writes for the filter, in
/// the dialect it writes now (shuffle's `elementsize`, the variable's type size, is 0 here);
/// `codec_error` says why NCZarr would not write it, if so.
///
/// Returns `NC_NOERR`; `NC_EINVAL` for a NULL argument; `NC_EFILTER` for a bad spec. Unless
/// `json_out` is NULL, `*json_out` is set to JSON text (on error `{"error": "..."}`) the caller
/// frees with `free()`.
///
/// # Safety
/// `spec` is NULL or NUL-terminated; `json_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncfilters_describe_spec(spec: *const c_char, json_out: *mut *mut c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(json_out);
        // SAFETY: `spec` is NULL or NUL-terminated, alive for the call (the export's `# Safety`).
        let spec = unsafe { Text::from_raw(call, spec) };
        let body = || {
            let spec = text_arg(spec, "the filter spec")?;
            registry_report::describe_spec(call, &crate::nczarr_filters::registry(call), spec, Dialect::current())
        };
        // SAFETY: `json_out` is NULL or valid for a write (the export's `# Safety`).
        answer(crate::function_name!(), unsafe { Out::<*mut c_char>::from_raw(call, json_out) }, body)
    })
}

/// Describes one codec JSON object (e.g. `{"id": "zstd", "level": 3}`) as the HDF5 filter
/// NCZarr reads from it: `{"id", "name", "params": [word]}`.
///
/// Returns `NC_NOERR`; `NC_EINVAL` for a NULL argument; `NC_EFILTER` for bad JSON or a codec
/// its plugin rejects; `NC_ENOFILTER` for an unknown codec id. Unless `json_out` is NULL,
/// `*json_out` is set to JSON text (on error `{"error": "..."}`) the caller frees with `free()`.
///
/// # Safety
/// `codec_json` is NULL or NUL-terminated; `json_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ncfilters_describe_codec(codec_json: *const c_char, json_out: *mut *mut c_char) -> c_int {
    // SAFETY: called from C on the thread that uses netcdf-c and HDF5, for this call.
    let thread = unsafe { crate::ffi_boundary::CallersThread::promise() };
    crate::ffi_export!(thread, |call| {
        crate::reject_null!(json_out);
        // SAFETY: `codec_json` is NULL or NUL-terminated, alive for the call (the export's `# Safety`).
        let codec_json = unsafe { Text::from_raw(call, codec_json) };
        let body = || {
            let text = text_arg(codec_json, "the codec JSON")?;
            registry_report::describe_codec(call, &crate::nczarr_filters::registry(call), text)
        };
        // SAFETY: `json_out` is NULL or valid for a write (the export's `# Safety`).
        answer(crate::function_name!(), unsafe { Out::<*mut c_char>::from_raw(call, json_out) }, body)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NC_ENOFILTER;
    use std::ffi::{CStr, CString};

    /// Every object key of a JSON value, and every string value.
    fn words_of(value: &Value, words: &mut std::collections::BTreeSet<String>) {
        match value {
            Value::Object(map) => map.iter().for_each(|(key, value)| {
                words.insert(key.clone());
                words_of(value, words);
            }),
            Value::Array(items) => items.iter().for_each(|item| words_of(item, words)),
            Value::String(text) => drop(words.insert(text.clone())),
            _ => {}
        }
    }

    /// The schema in `ncfilters_report`'s documentation names exactly the report types' keys and
    /// their enums' values, so that neither can change without the other.
    #[test]
    fn the_documented_report_schema_is_the_report_types() {
        use crate::filter_report::*;
        let source = include_str!("ncfilters_api.rs");
        let doc = &source[source.find("The report:").unwrap()..source.find("with filters sorted by id").unwrap()];
        let documented: std::collections::BTreeSet<String> =
            doc.split('"').skip(1).step_by(2).map(str::to_string).collect();
        let side = Hdf5Side { source: Hdf5Source::None, path: None, usable: false, why_not: None };
        let nczarr = NczarrSide::nothing(None);
        // Every optional key present; the string values are the enums', listed below.
        let report = Report {
            ncfilters_version: String::new(),
            ncfilters_build: String::new(),
            netcdf_version: String::new(),
            plugin_path: PluginPathReport {
                variable: String::new(),
                value: None,
                entries: vec![DirReport {
                    dir: String::new(),
                    origin: DirOriginReport::Default,
                    error: Some(String::new()),
                    state: DirStateReport::Missing,
                }],
            },
            libraries: vec![LibraryReport {
                path: String::new(),
                outcome: LibraryOutcome::Used,
                ids: vec![],
                reason: None,
            }],
            filters: vec![FilterReport { id: 0, name: None, standard: false, hdf5: side, nczarr }],
        };
        let mut typed = std::collections::BTreeSet::new();
        words_of(&serde_json::to_value(&report).unwrap(), &mut typed);
        let values = serde_json::json!([
            [DirOriginReport::PluginPath, DirOriginReport::Default, DirOriginReport::Set],
            [DirStateReport::Searched, DirStateReport::Missing, DirStateReport::Unreadable],
            [LibraryOutcome::Used, LibraryOutcome::Skipped, LibraryOutcome::Ignored],
            [Hdf5Source::Hdf5, Hdf5Source::Plugin, Hdf5Source::BuiltIn, Hdf5Source::None],
            [NczarrSource::Plugin, NczarrSource::Defaults, NczarrSource::BuiltIn, NczarrSource::None],
        ]);
        words_of(&values, &mut typed);
        typed.remove("");
        assert_eq!(documented, typed, "the schema in ncfilters_report's documentation");
    }

    /// Calls an export with a C string argument (`None`: NULL) and takes back its JSON.
    fn call(
        function: unsafe extern "C" fn(*const c_char, *mut *mut c_char) -> c_int,
        input: Option<&str>,
    ) -> (c_int, Value) {
        let input = input.map(|text| CString::new(text).unwrap());
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string or NULL, and a writable out-pointer.
        let status = unsafe { function(input.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()), &mut out) };
        assert!(!out.is_null(), "*json_out is always set");
        // SAFETY: the export's malloc'd NUL-terminated text, ours to free.
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_string();
        // SAFETY: as above, freed once.
        unsafe { libc::free(out.cast()) };
        (status, serde_json::from_str(&text).unwrap())
    }

    #[test]
    fn null_arguments_give_nc_einval() {
        // SAFETY: NULL arguments are part of the contract.
        unsafe {
            assert_eq!(ncfilters_report(std::ptr::null_mut()), NC_EINVAL.code());
            assert_eq!(ncfilters_describe_spec(c"1".as_ptr(), std::ptr::null_mut()), NC_EINVAL.code());
            assert_eq!(ncfilters_describe_codec(c"{}".as_ptr(), std::ptr::null_mut()), NC_EINVAL.code());
        }
        let (status, json) = call(ncfilters_describe_spec, None);
        assert_eq!((status, json), (NC_EINVAL.code(), json!({"error": "the filter spec is NULL"})));
        let (status, json) = call(ncfilters_describe_codec, None);
        assert_eq!((status, json), (NC_EINVAL.code(), json!({"error": "the codec JSON is NULL"})));
    }

    #[test]
    #[cfg_attr(miri, ignore = "the built-in registry asks whether libblosc and libsz load")]
    fn every_standard_filter_round_trips_through_the_c_functions() {
        for spec in
            ["zstd,3", "32015,-1", "bzip2,9", "deflate,5", "shuffle", "fletcher32", "blosc,0,0,0,1,5,1,4", "szip,32,32"]
        {
            let (status, described) = call(ncfilters_describe_spec, Some(spec));
            assert_eq!(status, NC_NOERR, "{spec}: {described}");
            let filter = &described["filters"][0];
            assert!(filter["codec"].is_object(), "{spec}: {described}");
            let (status, back) = call(ncfilters_describe_codec, Some(&filter["codec"].to_string()));
            assert_eq!(status, NC_NOERR, "{spec}: {back}");
            assert_eq!(back, json!({"id": filter["id"], "name": filter["name"], "params": filter["params"]}), "{spec}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "the built-in registry asks whether libblosc and libsz load")]
    fn bad_input_gives_its_status_and_an_error_naming_it() {
        let (status, json) = call(ncfilters_describe_spec, Some("zstd,1.5x"));
        assert_eq!(status, NC_EFILTER.code());
        assert!(json["error"].as_str().unwrap().contains("zstd,1.5x"), "{json}");
        let (status, json) = call(ncfilters_describe_codec, Some("{\"id\": "));
        assert_eq!(status, NC_EFILTER.code());
        assert!(json["error"].as_str().unwrap().contains("{\"id\": "), "{json}");
        let (status, json) = call(ncfilters_describe_codec, Some("{\"id\": \"nosuchcodec\"}"));
        assert_eq!(status, NC_ENOFILTER.code());
        assert!(json["error"].as_str().unwrap().contains("nosuchcodec"), "{json}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "calls the C shim")]
    fn the_report_lists_hdf5_s_predefined_and_the_standard_filters() {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: a writable out-pointer.
        let status = unsafe { ncfilters_report(&mut out) };
        // SAFETY: the export's malloc'd NUL-terminated text, ours to free.
        let text = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_string();
        // SAFETY: as above, freed once.
        unsafe { libc::free(out.cast()) };
        assert_eq!(status, NC_NOERR, "{text}");
        let report: Value = serde_json::from_str(&text).unwrap();
        let ids: Vec<u64> = report["filters"].as_array().unwrap().iter().map(|f| f["id"].as_u64().unwrap()).collect();
        for id in [1, 2, 3, 4, 5, 6, 307, 32001, 32015] {
            assert!(ids.contains(&id), "{id} in {ids:?}");
        }
        let bzip2 = report["filters"].as_array().unwrap().iter().find(|f| f["id"] == 307).unwrap();
        assert_eq!(bzip2["nczarr"]["usable"], true, "{bzip2}");
        assert_eq!(report["netcdf_version"], crate::NETCDF_RELEASE);
    }
}
