// SPDX-License-Identifier: BSD-3-Clause
//! `ncfilters explain ID|NAME`, printed: the findings and advice of ncfilters-logic's
//! `filter_explain` for the report, with the directories searched and the libraries that declare
//! the filter.

use std::fmt::Write as _;

use ncfilters_logic::filter_explain::Explanation;
use ncfilters_logic::filter_report::{LibraryReport, Report};
use serde_json::{json, Value};

use crate::render::{libraries_in, path_variable, state_text, table};

/// The text of `explain`.
pub fn text(report: &Report, explanations: &[Explanation]) -> String {
    let mut text = String::new();
    for (index, explanation) in explanations.iter().enumerate() {
        if index > 0 {
            text.push_str("\n\n");
        }
        one_text(report, explanation, &mut text);
    }
    text
}

fn one_text(report: &Report, explanation: &Explanation, text: &mut String) {
    let id = explanation.id;
    let filter = explanation.filter.map(|index| &report.filters[index]);
    match filter {
        Some(filter) => {
            let name = filter.name.as_deref().map(|name| format!(" ({name})")).unwrap_or_default();
            let standard = if filter.standard { ", one of the standard filters" } else { "" };
            let _ = writeln!(text, "Filter {id}{name}{standard}");
        }
        None => {
            let _ = writeln!(text, "Filter {id}: not known to this libnetcdf");
        }
    }
    let usable = |usable: Option<bool>| if usable == Some(true) { "usable" } else { "not usable" };
    let _ = writeln!(text, "\nnetCDF-4 (HDF5 files): {}", usable(filter.map(|filter| filter.hdf5.usable)));
    if let Some(filter) = filter {
        let _ = writeln!(text, "  wins: {}", filter.hdf5.source.describe(id, filter.hdf5.path.as_deref()));
    }
    for line in &explanation.netcdf4 {
        let _ = writeln!(text, "  - {line}");
    }
    let _ = writeln!(text, "NCZarr: {}", usable(filter.map(|filter| filter.nczarr.usable)));
    for line in &explanation.nczarr {
        let _ = writeln!(text, "  - {line}");
    }

    let _ = writeln!(text, "\nSearched: {}", path_variable(&report.plugin_path));
    let rows: Vec<Vec<String>> = report
        .plugin_path
        .entries
        .iter()
        .map(|entry| {
            let libraries = libraries_in(report, &entry.dir);
            vec![
                format!("  {}", entry.dir),
                entry.origin.word(),
                state_text(entry.state, entry.error.as_deref(), &libraries),
            ]
        })
        .collect();
    if rows.is_empty() {
        text.push_str("  no directory\n");
    } else {
        // The table without its header line.
        let table = table(&["", "", ""], &rows);
        text.push_str(table.split_once('\n').map_or("", |(_, rows)| rows));
    }

    let library_line = |library: &LibraryReport| match &library.reason {
        Some(reason) => format!("  {}: {}: {reason}", library.path, library.outcome.word()),
        None => format!("  {}: {}", library.path, library.outcome.word()),
    };
    if explanation.libraries.is_empty() {
        let _ = writeln!(text, "No library on the path declares filter {id}.");
    } else {
        let _ = writeln!(text, "Libraries that declare filter {id}, in search order:");
        for &index in &explanation.libraries {
            let _ = writeln!(text, "{}", library_line(&report.libraries[index]));
        }
    }
    // Listed even when the filter is usable: one of them may be the build the user meant to use.
    if !explanation.unidentified.is_empty() {
        let _ = writeln!(text, "Skipped libraries whose filters could not be read (one may be meant to provide it):");
        for &index in &explanation.unidentified {
            let _ = writeln!(text, "{}", library_line(&report.libraries[index]));
        }
    }

    if !explanation.advice.is_empty() {
        text.push_str("\nTo change this:\n");
        for line in &explanation.advice {
            let _ = writeln!(text, "  - {line}");
        }
    }
}

/// The JSON of `explain`: the query, the plugin path, and per filter the report's own objects
/// (filter, libraries) with the findings and advice.
pub fn json(report_json: &Value, report: &Report, query: &str, explanations: &[Explanation]) -> Value {
    let item = |array: &str, index: usize| report_json[array].get(index).cloned().unwrap_or(Value::Null);
    let explanations: Vec<Value> = explanations
        .iter()
        .map(|explanation| {
            let filter = explanation.filter.map(|index| &report.filters[index]);
            json!({
                "id": explanation.id,
                "known": filter.is_some(),
                "usable": {
                    "netcdf4": filter.is_some_and(|filter| filter.hdf5.usable),
                    "nczarr": filter.is_some_and(|filter| filter.nczarr.usable),
                },
                "filter": explanation.filter.map_or(Value::Null, |index| item("filters", index)),
                "netcdf4": explanation.netcdf4,
                "nczarr": explanation.nczarr,
                "libraries": explanation.libraries.iter().map(|&index| item("libraries", index)).collect::<Vec<_>>(),
                "skipped_unidentified": explanation.unidentified.iter().map(|&index| item("libraries", index)).collect::<Vec<_>>(),
                "advice": explanation.advice,
            })
        })
        .collect();
    json!({
        "query": query,
        "plugin_path": report_json.get("plugin_path").cloned().unwrap_or(Value::Null),
        "explanations": explanations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::fixture_report;
    use ncfilters_logic::filter_explain::explain;

    #[test]
    fn names_match_the_report_name_and_codec_id_case_insensitively() {
        let report = fixture_report();
        let ids = |query: &str| explain(&report, query).unwrap().iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(ids("deflate"), [1]);
        assert_eq!(ids("ZLIB"), [1]);
        assert_eq!(ids("bz2"), [307]);
        assert_eq!(ids("Bzip2"), [307]);
        assert_eq!(ids("nbit"), [5]);
        assert_eq!(ids("scaleoffset"), [6]);
        assert_eq!(ids("BLOSC"), [32001]);
        let error = explain(&report, "lz4").unwrap_err();
        assert!(error.to_string().starts_with("unknown filter 'lz4':"), "{error}");
    }

    #[test]
    fn a_plugin_winning_over_the_built_in_filter() {
        let report = fixture_report();
        let explanations = explain(&report, "zstd").unwrap();
        let text = text(&report, &explanations);
        assert!(text.starts_with("Filter 32015 (zstd), one of the standard filters\n"), "{text}");
        assert!(text.contains("  wins: plugin /a/lib__nch5zstd.so\n"), "{text}");
        assert!(text.contains("a library on HDF5_PLUGIN_PATH comes before the filter built into libnetcdf"), "{text}");
        assert!(text.contains("take /a out of HDF5_PLUGIN_PATH"), "{text}");
        assert!(text.contains("  - filter: built into libnetcdf\n"), "{text}");
        assert!(text.contains("Searched: HDF5_PLUGIN_PATH=/a:/b\n  /a "), "{text}");
        assert!(text.contains("  /a/lib__nch5zstd.so: used\n"), "{text}");
        assert!(text.contains("Skipped libraries whose filters could not be read"), "{text}");
        assert!(text.contains("  /a/libempty.so: skipped: not an ELF file\n"), "{text}");
        assert!(explanations[0].usable_anywhere(&report));
    }

    #[test]
    fn a_filter_missing_its_c_library_says_what_to_install() {
        // The fixture's loader message, in this platform's library name (libblosc.dll on Windows).
        use ncfilters_logic::platform_names::Platform;
        use ncfilters_logic::standard_filter_table::NativeLibrary;
        let library = NativeLibrary::Libblosc.sonames_on(Platform::CURRENT)[0];
        let report: Report =
            serde_json::from_str(&crate::tests::FIXTURE_REPORT.replace("libblosc.so.1", library)).unwrap();
        let explanations = explain(&report, "32001").unwrap();
        let text = text(&report, &explanations);
        assert!(text.contains("netCDF-4 (HDF5 files): not usable\n"), "{text}");
        assert!(text.contains(&format!("not usable: {library} not found")), "{text}");
        let package = if Platform::CURRENT == Platform::Unix { " (on Debian and Ubuntu: libblosc1)" } else { "" };
        let advice = format!("install the package that provides {library}{package}\n");
        assert!(text.contains(&advice), "{text}");
        assert!(text.contains("/a/libbad.so declares filter 32001 but was skipped"), "{text}");
        assert!(text.contains("/b in HDF5_PLUGIN_PATH is missing: correct it or take it out\n"), "{text}");
        assert!(!text.contains("/usr/local/hdf5/plugin in"), "{text}");
        assert!(!explanations[0].usable_anywhere(&report));
    }

    #[test]
    fn a_filter_without_codec_says_to_add_codec_defaults() {
        let report = fixture_report();
        let explanations = explain(&report, "szip").unwrap();
        let text = text(&report, &explanations);
        assert!(text.contains("netCDF-4 (HDF5 files): usable\n  wins: HDF5 predefined\n"), "{text}");
        assert!(text.contains("NCZarr: not usable\n"), "{text}");
        assert!(text.contains("codec-defaults library"), "{text}");
        assert!(explanations[0].usable_anywhere(&report));
    }

    #[test]
    fn an_id_nothing_provides() {
        let report = fixture_report();
        let explanations = explain(&report, "31999").unwrap();
        assert_eq!(explanations[0].filter, None);
        let text = text(&report, &explanations);
        assert!(text.starts_with("Filter 31999: not known to this libnetcdf\n"), "{text}");
        assert!(text.contains("no library on HDF5_PLUGIN_PATH provides it"), "{text}");
        assert!(text.contains("No library on the path declares filter 31999.\n"), "{text}");
        assert!(text.contains("Skipped libraries whose filters could not be read"), "{text}");
        assert!(text.contains("  /a/libempty.so: skipped: not an ELF file\n"), "{text}");
        assert!(text.contains("add that directory to HDF5_PLUGIN_PATH (now /a:/b)"), "{text}");
        assert!(!explanations[0].usable_anywhere(&report));
    }

    #[test]
    fn json_passes_the_report_objects_through() {
        let report_json: Value = serde_json::from_str(crate::tests::FIXTURE_REPORT).unwrap();
        let report = fixture_report();
        let explanations = explain(&report, "zstd").unwrap();
        let value = json(&report_json, &report, "zstd", &explanations);
        assert_eq!(value["query"], "zstd");
        assert_eq!(value["plugin_path"], report_json["plugin_path"]);
        let one = &value["explanations"][0];
        assert_eq!(one["id"], 32015);
        assert_eq!(one["known"], true);
        assert_eq!(one["usable"], json!({"netcdf4": true, "nczarr": true}));
        assert_eq!(
            one["filter"],
            report_json["filters"].as_array().unwrap().iter().find(|f| f["id"] == 32015).unwrap().clone()
        );
        assert_eq!(one["libraries"][0]["path"], "/a/lib__nch5zstd.so");
        assert!(one["advice"].as_array().unwrap().iter().any(|a| a.as_str().unwrap().contains("take /a out")));
        let unknown = json(&report_json, &report, "31999", &explain(&report, "31999").unwrap());
        assert_eq!(unknown["explanations"][0]["filter"], Value::Null);
        assert_eq!(unknown["explanations"][0]["known"], false);
    }
}
