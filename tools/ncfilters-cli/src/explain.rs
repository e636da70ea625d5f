//! `ncfilters explain ID|NAME`: why a filter is usable or not, which implementation wins for
//! netCDF-4 and for NCZarr, and what to set or install to change that. Everything is derived from
//! the report; the order rules stated are the ones libnetcdf with ncfilters applies (README,
//! "Standard filters with no plugin path"): for netCDF-4 a class registered with HDF5, then a library
//! on the plugin path, then the filter built into libnetcdf.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::render::{libraries_in, path_variable, source_text, state_text, table};
use crate::report::{Filter, LibraryEntry, Report};

/// What the user asked about: an HDF5 filter id, or else a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    Id(u32),
    Name(String),
}

impl Query {
    /// A decimal number that fits an HDF5 filter id (unsigned int) is an id; anything else a name.
    pub fn parse(text: &str) -> Query {
        let text = text.trim();
        match text.parse::<u32>() {
            Ok(id) if text.bytes().all(|b| b.is_ascii_digit()) => Query::Id(id),
            _ => Query::Name(text.to_string()),
        }
    }
}

/// One filter explained. Indices point into the report's arrays (and the same positions of the
/// report's JSON, which `--json` passes through).
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub id: u32,
    /// The report's filter, None for an id nothing knows.
    pub filter: Option<usize>,
    /// Libraries that declare the id, in search order.
    pub libraries: Vec<usize>,
    /// Skipped libraries that declared no id (they could not be read, so any of them may be meant).
    pub unidentified: Vec<usize>,
    pub netcdf4: Vec<String>,
    pub nczarr: Vec<String>,
    pub advice: Vec<String>,
}

impl Explanation {
    pub fn usable_anywhere(&self, report: &Report) -> bool {
        self.filter.is_some_and(|index| report.filters[index].usable_anywhere())
    }
}

/// A name that no filter of the report has, as name or NCZarr codec id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName(pub String);

impl std::fmt::Display for UnknownName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown filter '{}': no filter known to this libnetcdf has that name or NCZarr codec id \
             (`ncfilters list` shows them; an HDF5 filter id is a decimal number)",
            self.0
        )
    }
}

/// Explains the filters `query` names: one for an id (known or not), every filter whose name or
/// codec id it is for a name.
pub fn explain(report: &Report, query: &str) -> Result<Vec<Explanation>, UnknownName> {
    match Query::parse(query) {
        Query::Id(id) => Ok(vec![explain_id(report, id)]),
        Query::Name(name) => {
            let ids: Vec<u32> =
                report.filters.iter().filter(|filter| filter.is_named(&name)).map(|filter| filter.id).collect();
            if ids.is_empty() {
                return Err(UnknownName(query.to_string()));
            }
            Ok(ids.into_iter().map(|id| explain_id(report, id)).collect())
        }
    }
}

/// Collects advice without repeating a line.
#[derive(Default)]
struct Advice(Vec<String>);

impl Advice {
    fn add(&mut self, line: String) {
        if !self.0.contains(&line) {
            self.0.push(line);
        }
    }
}

fn explain_id(report: &Report, id: u32) -> Explanation {
    let filter = report.filters.iter().position(|filter| filter.id == id);
    let libraries: Vec<usize> =
        (0..report.libraries.len()).filter(|&index| report.libraries[index].ids.contains(&id)).collect();
    let unidentified: Vec<usize> = (0..report.libraries.len())
        .filter(|&index| report.libraries[index].outcome == "skipped" && report.libraries[index].ids.is_empty())
        .collect();
    let declaring: Vec<&LibraryEntry> = libraries.iter().map(|&index| &report.libraries[index]).collect();
    let variable = report.plugin_path.variable.as_str();
    let path_now = match &report.plugin_path.value {
        Some(value) => format!("now {value}"),
        None => "now unset".to_string(),
    };
    let add_plugin = format!(
        "put an HDF5 plugin library for filter {id} in a directory and add that directory to {variable} ({path_now})"
    );
    let add_codec = format!(
        "add a library with an NCZarr codec for filter {id} to a directory on {variable} (for netcdf-c's \
         filters, a codec-defaults library: lib__nczhdf5filters.so or lib__nczstdfilters.so)"
    );

    let mut advice = Advice::default();
    let mut netcdf4 = Vec::new();
    let mut nczarr = Vec::new();
    match filter.map(|index| &report.filters[index]) {
        None => {
            let line = format!(
                "no filter {id} is known to this libnetcdf: HDF5 has no class for it, it is not built into \
                 libnetcdf, and no library on {variable} provides it"
            );
            netcdf4.push(line.clone());
            nczarr.push(line);
            advice.add(add_plugin.clone());
            advice.add(add_codec.clone());
        }
        Some(filter) => {
            netcdf4 = netcdf4_findings(filter, &declaring, variable, &add_plugin, &mut advice);
            nczarr = nczarr_findings(filter, variable, &add_plugin, &add_codec, &mut advice);
        }
    }
    for library in declaring.iter().filter(|library| library.outcome == "skipped") {
        let reason = library.reason.as_deref().unwrap_or("no reason given");
        advice.add(format!("{} declares filter {id} but was skipped ({reason}): fix or replace it", library.path));
        add_install_advice(reason, &mut advice);
    }
    let usable_everywhere = filter.is_some_and(|index| {
        let filter = &report.filters[index];
        filter.hdf5.usable && filter.nczarr.usable
    });
    if !usable_everywhere {
        // Only the directories the user set: a missing default directory is the normal case.
        let set_by_user = |origin: &str| origin == variable;
        for entry in
            report.plugin_path.entries.iter().filter(|entry| entry.state != "searched" && set_by_user(&entry.origin))
        {
            advice.add(format!("{} in {variable} is {}: correct it or take it out", entry.dir, entry.state));
        }
    }
    Explanation { id, filter, libraries, unidentified, netcdf4, nczarr, advice: advice.0 }
}

fn netcdf4_findings(
    filter: &Filter,
    declaring: &[&LibraryEntry],
    variable: &str,
    add_plugin: &str,
    advice: &mut Advice,
) -> Vec<String> {
    let id = filter.id;
    let hdf5 = &filter.hdf5;
    let mut findings = Vec::new();
    match hdf5.source.as_str() {
        "hdf5" if (1..=6).contains(&id) => findings.push(format!(
            "HDF5 predefines filter {id}: its own class is used, before any plugin library or the filter built \
             into libnetcdf"
        )),
        "hdf5" => findings.push(format!(
            "a class for filter {id} is registered with HDF5 (by the application): it is used, before any plugin \
             library or the filter built into libnetcdf"
        )),
        "plugin" => {
            let winner = hdf5.path.as_deref().unwrap_or("(path not reported)");
            findings.push(format!(
                "{winner} provides it: a library on {variable} comes before the filter built into libnetcdf"
            ));
            let winner_dir = winner.rsplit_once('/').map_or("", |(dir, _)| dir);
            if filter.standard {
                advice.add(format!(
                    "to use the filter built into libnetcdf instead, take {winner_dir} out of {variable} (or unset it)"
                ));
            }
            for other in declaring.iter().filter(|library| library.outcome == "used" && library.path != winner) {
                findings.push(format!("{} provides it too but comes later on {variable}", other.path));
                if other.dir() != winner_dir {
                    advice.add(format!(
                        "to use {} instead, put {} before {winner_dir} in {variable}",
                        other.path,
                        other.dir()
                    ));
                }
            }
        }
        "built-in" => {
            findings.push(format!(
                "no class is registered with HDF5 for it and no library on {variable} provides it, so the filter \
                 built into libnetcdf is used"
            ));
            advice.add(format!("to use a plugin library instead, add its directory to {variable}"));
        }
        "none" => {
            findings.push(format!(
                "nothing provides it: HDF5 has no class for it, it is not built into libnetcdf, and no library on \
                 {variable} provides it"
            ));
            advice.add(add_plugin.to_string());
        }
        other => findings.push(format!("implementation: {other}")),
    }
    for library in declaring.iter().filter(|library| library.outcome == "skipped") {
        findings.push(format!("{} declares it but was skipped, so it cannot be used", library.path));
    }
    if !hdf5.usable {
        findings.push(format!("not usable: {}", hdf5.why_not.as_deref().unwrap_or("no reason given")));
        if let Some(why_not) = &hdf5.why_not {
            add_install_advice(why_not, advice);
        }
    }
    findings
}

fn nczarr_findings(
    filter: &Filter,
    variable: &str,
    add_plugin: &str,
    add_codec: &str,
    advice: &mut Advice,
) -> Vec<String> {
    let id = filter.id;
    let nczarr = &filter.nczarr;
    let mut findings = Vec::new();
    match &nczarr.codec_id {
        Some(codec_id) => findings.push(format!("codec id: {codec_id}")),
        None => findings.push(format!("no NCZarr codec is known for filter {id}")),
    }
    findings.push(format!("filter: {}", source_text(id, &nczarr.filter_source, nczarr.filter_path.as_deref())));
    findings.push(format!("codec: {}", source_text(id, &nczarr.codec_source, nczarr.codec_path.as_deref())));
    if nczarr.filter_source == "none" {
        advice.add(add_plugin.to_string());
    }
    if nczarr.codec_source == "none" || nczarr.codec_id.is_none() {
        advice.add(add_codec.to_string());
    }
    let from_path = [&nczarr.filter_source, &nczarr.codec_source].iter().any(|source| *source == "plugin")
        || nczarr.codec_source == "defaults";
    if from_path && filter.standard {
        advice.add(format!(
            "NCZarr uses a library on {variable} for it; without that library on {variable} it uses the one built \
             into libnetcdf"
        ));
    }
    if !nczarr.usable {
        findings.push(format!("not usable: {}", nczarr.why_not.as_deref().unwrap_or("no reason given")));
        if let Some(why_not) = &nczarr.why_not {
            add_install_advice(why_not, advice);
        }
    }
    findings
}

/// Advice to install the package of each versioned shared library (`libblosc.so.1`) a loader
/// message says is missing.
fn add_install_advice(message: &str, advice: &mut Advice) {
    for soname in missing_sonames(message) {
        let package = match debian_package(&soname) {
            Some(package) => format!(" (on Debian and Ubuntu: {package})"),
            None => String::new(),
        };
        advice.add(format!("install the package that provides {soname}{package}"));
    }
}

/// The versioned shared-library names (`libX.so.N…`) in a message that says something was not found.
pub fn missing_sonames(message: &str) -> Vec<String> {
    let lower = message.to_ascii_lowercase();
    let says_missing = ["not found", "cannot open shared object", "no such file"].iter().any(|m| lower.contains(m));
    if !says_missing {
        return Vec::new();
    }
    let mut names = Vec::new();
    for token in
        message.split(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | ';' | '\'' | '"' | '(' | ')' | '`'))
    {
        let name = token.rsplit('/').next().unwrap_or(token);
        if debian_package(name).is_some() && !names.iter().any(|known| known == name) {
            names.push(name.to_string());
        }
    }
    names
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
        let _ = writeln!(text, "  wins: {}", source_text(id, &filter.hdf5.source, filter.hdf5.path.as_deref()));
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
                entry.origin.clone(),
                state_text(&entry.state, entry.error.as_deref(), &libraries),
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

    let library_line = |library: &LibraryEntry| match &library.reason {
        Some(reason) => format!("  {}: {}: {reason}", library.path, library.outcome),
        None => format!("  {}: {}", library.path, library.outcome),
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

    #[test]
    fn queries() {
        assert_eq!(Query::parse("32015"), Query::Id(32015));
        assert_eq!(Query::parse(" 4 "), Query::Id(4));
        assert_eq!(Query::parse("+4"), Query::Name("+4".into()));
        assert_eq!(Query::parse("4294967296"), Query::Name("4294967296".into()));
        assert_eq!(Query::parse("zstd"), Query::Name("zstd".into()));
    }

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
        let report = fixture_report();
        let explanations = explain(&report, "32001").unwrap();
        let text = text(&report, &explanations);
        assert!(text.contains("netCDF-4 (HDF5 files): not usable\n"), "{text}");
        assert!(text.contains("not usable: libblosc.so.1 not found"), "{text}");
        assert!(text.contains("install the package that provides libblosc.so.1 (on Debian and Ubuntu: libblosc1)"));
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

    #[test]
    fn sonames_and_debian_packages() {
        assert_eq!(missing_sonames("libblosc.so.1 not found"), ["libblosc.so.1"]);
        assert_eq!(
            missing_sonames(
                "/a/lib__nch5szip.so: libsz.so.2: cannot open shared object file: No such file or directory"
            ),
            ["libsz.so.2"]
        );
        assert_eq!(missing_sonames("dlopen failed: libaec.so.0.0.12 not found"), ["libaec.so.0.0.12"]);
        assert!(missing_sonames("/a/libbad.so: undefined symbol: H5Z_foo").is_empty());
        assert!(missing_sonames("libblosc.so.1 has no symbol blosc_init").is_empty());
        assert_eq!(debian_package("libblosc.so.1").as_deref(), Some("libblosc1"));
        assert_eq!(debian_package("libaec.so.0.0.12").as_deref(), Some("libaec0"));
        assert_eq!(debian_package("libsz.so.2").as_deref(), Some("libsz2"));
        assert_eq!(debian_package("libhdf5_serial.so.103").as_deref(), Some("libhdf5-serial103"));
        assert_eq!(debian_package("libfoo2.so.3").as_deref(), Some("libfoo2-3"));
        assert_eq!(debian_package("libfoo.so"), None);
        assert_eq!(debian_package("lib__nch5zstd.so"), None);
        assert_eq!(debian_package("foo.so.1"), None);
        assert_eq!(debian_package("libfoo.so.x"), None);
    }
}
