// SPDX-License-Identifier: BSD-3-Clause
//! The filter report and the spec and codec descriptions made from this process's registry
//! ([`crate::filter_report`] has their types and rules): what `ncfilters_report`,
//! `ncfilters_describe_spec` and `ncfilters_describe_codec` answer. The facts about HDF5 are
//! handed in by the caller (the abi layer asks HDF5), so that it is tested without HDF5.
#![forbid(unsafe_code)]

use crate::c_heap::CParams;
use crate::codec_json::{self, Dialect};
use crate::error::NC_ENOFILTER;
use crate::ffi_boundary::Call;
use crate::filter_chain::encode_codec;
use crate::filter_report::{
    builtin_unavailable, filter_name, parse_named_spec, to_json, typed_report, CodecDescription, Hdf5Facts, PartFacts,
    PluginFacts, Refusal, Report, SpecDescription, SpecFilter,
};
use crate::plugin_registry::{Plugin, Registry, PLUGIN_PATH_ENV};
use serde_json::Value;

/// What the report reads of a registry plugin.
pub fn plugin_facts(plugin: &Plugin) -> PluginFacts<'_> {
    PluginFacts {
        id: plugin.id,
        filter: plugin
            .filter
            .as_ref()
            .map(|filter| PartFacts { name: filter.name(), source: plugin.filter_source.as_ref() }),
        codec: plugin
            .codec
            .as_ref()
            .map(|codec| PartFacts { name: &codec.codec_id, source: plugin.codec_source.as_ref() }),
        codec_defaulted: plugin.codec_defaulted,
        unavailable: plugin.unavailable_reason(),
    }
}

/// The name of a plugin's HDF5 class, if it has an HDF5 filter.
fn class_name(plugin: &Plugin) -> Option<&str> {
    plugin.filter.as_ref().map(|filter| filter.name())
}

/// The report of `ncfilters_report` for `registry`; `hdf5` is asked once per id, in id order
/// (`None`: HDF5 is not in the process).
pub fn registry_report(registry: &Registry, hdf5: impl FnMut(u32) -> Option<Hdf5Facts>) -> Report {
    let plugins: Vec<PluginFacts<'_>> = registry.plugins().map(|plugin| plugin_facts(plugin)).collect();
    typed_report(registry.discovery_log(), &plugins, hdf5)
}

/// [`registry_report`] as the JSON `ncfilters_report` hands out.
pub fn report(registry: &Registry, hdf5: impl FnMut(u32) -> Option<Hdf5Facts>) -> Value {
    to_json(&registry_report(registry, hdf5))
}

/// `ncfilters_describe_spec`: each filter of a spec list with the codec JSON NCZarr writes for it
/// (in `dialect`; shuffle's `elementsize`, the variable's type size, is 0 as there is none).
pub fn describe_spec(call: &Call<'_>, registry: &Registry, spec: &str, dialect: Dialect) -> Result<Value, Refusal> {
    let list = parse_named_spec(spec)?;
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
                name: filter_name(filter.id, plugin.and_then(|p| class_name(p))),
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
        Some(_) => builtin_unavailable(id, plugin.unavailable_reason()),
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
        name: filter_name(plugin.id, class_name(plugin)),
        params: params.as_slice().to_vec(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NC_EFILTER;
    use crate::plugin_loader::test_parts::{codec, filter, keep_alive};
    use crate::plugin_loader::{CodecPart, LibraryContents};
    use crate::plugin_registry::{
        DirOrigin, DirState, LoadedLibrary, RegistryBuilder, DEFAULT_PLUGIN_DIR, NOT_A_LIBRARY_NAME,
    };
    use crate::standard_filter_table::Codec;
    use crate::standard_filter_table::{standard_filter, STANDARD_FILTERS};
    use serde_json::json;
    use std::os::raw::c_int;
    use std::path::Path;

    /// [`describe_spec`] within a test's call.
    fn described_spec(registry: &Registry, spec: &str, dialect: Dialect) -> Result<Value, Refusal> {
        crate::in_test_call(|call| describe_spec(call, registry, spec, dialect))
    }

    /// [`describe_codec`] within a test's call.
    fn described_codec(registry: &Registry, text: &str) -> Result<Value, Refusal> {
        crate::in_test_call(|call| describe_codec(call, registry, text))
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
