// SPDX-License-Identifier: BSD-3-Clause
//! Why a filter is usable or not, read from a [`Report`]: which implementation wins for
//! netCDF-4 and for NCZarr, and what to set or install to change that. The order stated is the one
//! the report's sources follow (`hdf5_side`): for netCDF-4 a class registered with HDF5, then a
//! library on the plugin path, then the filter built into libnetcdf. The `ncfilters` command
//! renders the result; nothing here is text the command re-reads.

use crate::filter_report::{
    debian_package, hdf5_predefined, DirOriginReport, DirStateReport, FilterReport, Hdf5Source, LibraryOutcome,
    LibraryReport, NczarrSource, Report, PATH_NOT_REPORTED,
};
use crate::platform_names::Platform;
use crate::standard_filter_table::CodecDefaults;

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

/// One filter explained. Indices point into the report's arrays.
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

/// The advice lines more than one finding gives.
struct Remedies {
    variable: String,
    add_plugin: String,
    add_codec: String,
}

impl Remedies {
    fn new(report: &Report, id: u32) -> Remedies {
        let variable = report.plugin_path.variable.clone();
        let path_now = match &report.plugin_path.value {
            Some(value) => format!("now {value}"),
            None => "now unset".to_string(),
        };
        let defaults: Vec<String> = CodecDefaults::ALL.iter().map(|defaults| defaults.file()).collect();
        Remedies {
            add_plugin: format!(
                "put an HDF5 plugin library for filter {id} in a directory and add that directory to {variable} \
                 ({path_now})"
            ),
            add_codec: format!(
                "add a library with an NCZarr codec for filter {id} to a directory on {variable} (for netcdf-c's \
                 filters, a codec-defaults library: {})",
                defaults.join(" or ")
            ),
            variable,
        }
    }
}

fn explain_id(report: &Report, id: u32) -> Explanation {
    let filter = report.filters.iter().position(|filter| filter.id == id);
    let libraries: Vec<usize> =
        (0..report.libraries.len()).filter(|&index| report.libraries[index].ids.contains(&id)).collect();
    let unidentified: Vec<usize> = (0..report.libraries.len())
        .filter(|&index| {
            let library = &report.libraries[index];
            library.outcome == LibraryOutcome::Skipped && library.ids.is_empty()
        })
        .collect();
    let declaring: Vec<&LibraryReport> = libraries.iter().map(|&index| &report.libraries[index]).collect();
    let remedies = Remedies::new(report, id);
    let variable = remedies.variable.as_str();

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
            advice.add(remedies.add_plugin.clone());
            advice.add(remedies.add_codec.clone());
        }
        Some(filter) => {
            netcdf4 = netcdf4_findings(filter, &declaring, &remedies, &mut advice);
            nczarr = nczarr_findings(filter, &remedies, &mut advice);
        }
    }
    for library in declaring.iter().filter(|library| library.outcome == LibraryOutcome::Skipped) {
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
        for entry in report
            .plugin_path
            .entries
            .iter()
            .filter(|entry| entry.state != DirStateReport::Searched && entry.origin == DirOriginReport::PluginPath)
        {
            advice.add(format!("{} in {variable} is {}: correct it or take it out", entry.dir, entry.state.word()));
        }
    }
    Explanation { id, filter, libraries, unidentified, netcdf4, nczarr, advice: advice.0 }
}

fn netcdf4_findings(
    filter: &FilterReport,
    declaring: &[&LibraryReport],
    remedies: &Remedies,
    advice: &mut Advice,
) -> Vec<String> {
    let id = filter.id;
    let hdf5 = &filter.hdf5;
    let variable = remedies.variable.as_str();
    let mut findings = Vec::new();
    match hdf5.source {
        Hdf5Source::Hdf5 if hdf5_predefined(id) => findings.push(format!(
            "HDF5 predefines filter {id}: its own class is used, before any plugin library or the filter built \
             into libnetcdf"
        )),
        Hdf5Source::Hdf5 => findings.push(format!(
            "a class for filter {id} is registered with HDF5 (by the application): it is used, before any plugin \
             library or the filter built into libnetcdf"
        )),
        Hdf5Source::Plugin => {
            let winner = hdf5.path.as_deref().unwrap_or(PATH_NOT_REPORTED);
            findings.push(format!(
                "{winner} provides it: a library on {variable} comes before the filter built into libnetcdf"
            ));
            let winner_dir = winner.rsplit_once('/').map_or("", |(dir, _)| dir);
            if filter.standard {
                advice.add(format!(
                    "to use the filter built into libnetcdf instead, take {winner_dir} out of {variable} (or unset it)"
                ));
            }
            let others = declaring.iter().filter(|library| library.outcome == LibraryOutcome::Used);
            for other in others.filter(|library| library.path != winner) {
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
        Hdf5Source::BuiltIn => {
            findings.push(format!(
                "no class is registered with HDF5 for it and no library on {variable} provides it, so the filter \
                 built into libnetcdf is used"
            ));
            advice.add(format!("to use a plugin library instead, add its directory to {variable}"));
        }
        Hdf5Source::None => {
            findings.push(format!(
                "nothing provides it: HDF5 has no class for it, it is not built into libnetcdf, and no library on \
                 {variable} provides it"
            ));
            advice.add(remedies.add_plugin.clone());
        }
    }
    for library in declaring.iter().filter(|library| library.outcome == LibraryOutcome::Skipped) {
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

fn nczarr_findings(filter: &FilterReport, remedies: &Remedies, advice: &mut Advice) -> Vec<String> {
    let id = filter.id;
    let nczarr = &filter.nczarr;
    let variable = remedies.variable.as_str();
    let mut findings = Vec::new();
    match &nczarr.codec_id {
        Some(codec_id) => findings.push(format!("codec id: {codec_id}")),
        None => findings.push(format!("no NCZarr codec is known for filter {id}")),
    }
    findings.push(format!("filter: {}", nczarr.filter_source.describe(nczarr.filter_path.as_deref())));
    findings.push(format!("codec: {}", nczarr.codec_source.describe(nczarr.codec_path.as_deref())));
    if nczarr.filter_source == NczarrSource::None {
        advice.add(remedies.add_plugin.clone());
    }
    if nczarr.codec_source == NczarrSource::None || nczarr.codec_id.is_none() {
        advice.add(remedies.add_codec.clone());
    }
    let from_path = [nczarr.filter_source, nczarr.codec_source]
        .iter()
        .any(|source| matches!(source, NczarrSource::Plugin | NczarrSource::Defaults));
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
    for soname in missing_libraries(Platform::CURRENT, message) {
        let package = match debian_package(&soname) {
            Some(package) => format!(" (on Debian and Ubuntu: {package})"),
            None => String::new(),
        };
        advice.add(format!("install the package that provides {soname}{package}"));
    }
}

/// The versioned shared-library names (`libX.so.N…`) in a message that says something was not
/// found. The dynamic loader's messages are text, so this is where they are read.
pub fn missing_sonames(message: &str) -> Vec<String> {
    missing_libraries(Platform::Unix, message)
}

/// The shared-library names of `platform` in a message that says something was not found: on
/// unix versioned sonames (`libX.so.N…`, those with a Debian package), on macOS `libX….dylib`,
/// on Windows `X.dll`.
pub fn missing_libraries(platform: Platform, message: &str) -> Vec<String> {
    let lower = message.to_ascii_lowercase();
    let says_missing = ["not found", "cannot open shared object", "no such file"].iter().any(|m| lower.contains(m))
        || (platform == Platform::Windows && lower.contains("could not be found"));
    if !says_missing {
        return Vec::new();
    }
    let mut names = Vec::new();
    for token in
        message.split(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | ';' | '\'' | '"' | '(' | ')' | '`'))
    {
        let name = match platform {
            Platform::Windows => token.rsplit(['/', '\\']).next(),
            Platform::Unix | Platform::Apple => token.rsplit('/').next(),
        };
        let name = name.unwrap_or(token);
        if is_library_name(platform, name) && !names.iter().any(|known| known == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Whether `name` is a system library's file name on `platform`, as [`missing_libraries`] reads:
/// not a plugin of netcdf-c's (`lib__nc…`, `__nc…`), which the message names as the one loading.
fn is_library_name(platform: Platform, name: &str) -> bool {
    let plain = |stem: &str| {
        !stem.is_empty()
            && !stem.starts_with("__nc")
            && stem.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-+.".contains(&b))
    };
    match platform {
        Platform::Unix => debian_package(name).is_some(),
        Platform::Apple => name.strip_prefix("lib").and_then(|rest| rest.strip_suffix(".dylib")).is_some_and(plain),
        Platform::Windows => {
            let dll = name.len() > 4 && name.is_char_boundary(name.len() - 4);
            dll && name[name.len() - 4..].eq_ignore_ascii_case(".dll") && plain(&name[..name.len() - 4])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// A report with every kind of entry (the `ncfilters` command's tests render it too).
    fn fixture() -> Report {
        serde_json::from_str(include_str!("../testdata/report.json")).unwrap()
    }

    #[test]
    fn queries() {
        assert_eq!(Query::parse("32015"), Query::Id(32015));
        assert_eq!(Query::parse(" 4 "), Query::Id(4));
        assert_eq!(Query::parse("+4"), Query::Name("+4".into()));
        assert_eq!(Query::parse("4294967296"), Query::Name("4294967296".into()));
        assert_eq!(Query::parse("zstd"), Query::Name("zstd".into()));
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

    #[test]
    fn missing_libraries_per_platform() {
        let apple = "dlopen(libblosc.1.dylib, 0x0005): tried: '/usr/lib/libblosc.1.dylib' (no such file)";
        assert_eq!(missing_libraries(Platform::Apple, apple), ["libblosc.1.dylib"]);
        assert!(missing_libraries(Platform::Unix, apple).is_empty());
        let windows = r"C:\plugins\__nch5szip.dll: libsz.dll could not be found";
        assert_eq!(missing_libraries(Platform::Windows, windows), ["libsz.dll"]);
        assert!(missing_libraries(Platform::Windows, "libsz.dll has no symbol SZ_BufftoBuffCompress").is_empty());
        let linux = "libblosc.so.1: cannot open shared object file";
        assert_eq!(missing_libraries(Platform::Unix, linux), missing_sonames(linux));
        assert!(missing_libraries(Platform::Windows, linux).is_empty());
    }

    #[test]
    fn findings_follow_the_typed_sources() {
        let report = fixture();
        let zstd = &explain(&report, "zstd").unwrap()[0];
        assert!(zstd.netcdf4[0].starts_with("/a/lib__nch5zstd.so provides it"), "{zstd:?}");
        assert!(zstd.advice.iter().any(|line| line.contains("take /a out of HDF5_PLUGIN_PATH")), "{zstd:?}");
        let nbit = &explain(&report, "5").unwrap()[0];
        assert!(nbit.netcdf4[0].starts_with("HDF5 predefines filter 5"), "{nbit:?}");
        let codec_defaults = CodecDefaults::ALL.map(|defaults| defaults.file()).join(" or ");
        assert!(nbit.advice.iter().any(|line| line.ends_with(&format!("{codec_defaults})"))), "{nbit:?}");
        let blosc = &explain(&report, "blosc").unwrap()[0];
        assert_eq!(report.libraries[blosc.libraries[0]].path, "/a/libbad.so");
        assert_eq!(
            blosc.unidentified.iter().map(|&i| report.libraries[i].path.as_str()).collect::<Vec<_>>(),
            ["/a/libempty.so"]
        );
        assert!(blosc.advice.contains(&"/b in HDF5_PLUGIN_PATH is missing: correct it or take it out".to_string()));
        assert!(!blosc.usable_anywhere(&report));
    }

    #[test]
    fn the_report_reads_back_as_written() {
        let report = fixture();
        let written = serde_json::to_value(&report).unwrap();
        let read: Value = serde_json::from_str(include_str!("../testdata/report.json")).unwrap();
        assert_eq!(written, read, "the fixture is the serialised form of the report types");
    }
}
