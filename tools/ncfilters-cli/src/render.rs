// SPDX-License-Identifier: BSD-3-Clause
//! Text output of `list`, `path`, `spec` and `codec`.

use std::fmt::Write as _;

use ncfilters_logic::filter_report::{
    CodecDescription, DirStateReport, FilterReport, LibraryOutcome, LibraryReport, PluginPathReport, Report,
    SpecDescription,
};

/// Columns padded to their widest cell, two spaces apart; the last column is not padded.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|cell| cell.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut text = String::new();
    let header: Vec<String> = header.iter().map(|cell| cell.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[column] - cell.chars().count();
                let _ = write!(line, "{cell}{:pad$}  ", "");
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

fn yes_no(usable: bool) -> String {
    if usable { "yes" } else { "no" }.to_string()
}

fn or_dash(text: Option<&str>) -> String {
    text.unwrap_or("-").to_string()
}

/// `ncfilters list`.
pub fn list(report: &Report) -> String {
    let rows: Vec<Vec<String>> = report
        .filters
        .iter()
        .map(|filter| {
            vec![
                filter.id.to_string(),
                or_dash(filter.name.as_deref()),
                or_dash(filter.nczarr.codec_id.as_deref()),
                yes_no(filter.hdf5.usable),
                yes_no(filter.nczarr.usable),
                list_source(filter),
            ]
        })
        .collect();
    let mut text = table(&["ID", "NAME", "NCZARR CODEC", "NETCDF-4", "NCZARR", "SOURCE"], &rows);
    if report.filters.iter().any(|filter| !filter.hdf5.usable || !filter.nczarr.usable) {
        text.push_str("\n`ncfilters explain ID` tells why a filter is not usable and what to change.\n");
    }
    text
}

/// The netCDF-4 source, and NCZarr's filter source when it differs.
fn list_source(filter: &FilterReport) -> String {
    let hdf5 = filter.hdf5.source.describe(filter.id, filter.hdf5.path.as_deref());
    let nczarr = filter.nczarr.filter_source.describe(filter.nczarr.filter_path.as_deref());
    if nczarr == hdf5 {
        hdf5
    } else {
        format!("{hdf5}; NCZarr: {nczarr}")
    }
}

/// The first line of `path` and of explain's search section: the variable and its value.
pub(crate) fn path_variable(path: &PluginPathReport) -> String {
    match &path.value {
        Some(value) => format!("{}={value}", path.variable),
        None => format!("{} is not set: the default directories are searched", path.variable),
    }
}

/// A directory's state, with its error and, for a searched one, what was found in it.
pub(crate) fn state_text(state: DirStateReport, error: Option<&str>, libraries: &[&LibraryReport]) -> String {
    let mut text = match state {
        DirStateReport::Missing => "missing (no such directory)".to_string(),
        other => other.word(),
    };
    if let Some(error) = error {
        let _ = write!(text, ": {error}");
    }
    if state == DirStateReport::Searched {
        let count = |outcome: LibraryOutcome| libraries.iter().filter(|library| library.outcome == outcome).count();
        let (used, skipped, ignored) =
            (count(LibraryOutcome::Used), count(LibraryOutcome::Skipped), count(LibraryOutcome::Ignored));
        let _ = write!(text, " ({used} used, {skipped} skipped, {ignored} ignored)");
    }
    text
}

/// The libraries seen in `dir`.
pub(crate) fn libraries_in<'a>(report: &'a Report, dir: &str) -> Vec<&'a LibraryReport> {
    let dir = dir.trim_end_matches('/');
    report.libraries.iter().filter(|library| library.dir().trim_end_matches('/') == dir).collect()
}

/// `ncfilters path`.
pub fn path(report: &Report) -> String {
    let path = &report.plugin_path;
    let mut text = path_variable(path);
    text.push('\n');
    if path.entries.is_empty() {
        text.push_str("No directory is searched.\n");
        return text;
    }
    let rows: Vec<Vec<String>> = path
        .entries
        .iter()
        .map(|entry| {
            let libraries = libraries_in(report, &entry.dir);
            vec![entry.dir.clone(), entry.origin.word(), state_text(entry.state, entry.error.as_deref(), &libraries)]
        })
        .collect();
    text.push_str(&table(&["DIRECTORY", "ORIGIN", "STATE"], &rows));
    text
}

fn params_text(params: &[u32]) -> String {
    if params.is_empty() {
        "none".to_string()
    } else {
        params.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
    }
}

fn id_and_name(id: u32, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{id} ({name})"),
        None => id.to_string(),
    }
}

/// The spec form of one filter: `id,p1,p2`.
fn spec_form(id: u32, params: &[u32]) -> String {
    std::iter::once(id).chain(params.iter().copied()).map(|n| n.to_string()).collect::<Vec<_>>().join(",")
}

/// `ncfilters spec`.
pub fn spec(description: &SpecDescription) -> String {
    let mut text = String::new();
    let count = description.filters.len();
    if count == 0 {
        text.push_str("No filter.\n");
    }
    for (index, filter) in description.filters.iter().enumerate() {
        let _ = writeln!(text, "filter {} of {count}: {}", index + 1, id_and_name(filter.id, filter.name.as_deref()));
        let _ = writeln!(text, "  parameters: {}", params_text(&filter.params));
        match (&filter.codec, &filter.codec_error) {
            (Some(codec), _) => {
                let codec = serde_json::to_string(codec).unwrap_or_else(|_| codec.to_string());
                let _ = writeln!(text, "  NCZarr codec: {codec}");
            }
            (None, Some(error)) => {
                let _ = writeln!(text, "  NCZarr codec: none ({error})");
            }
            (None, None) => text.push_str("  NCZarr codec: none\n"),
        }
    }
    text
}

/// `ncfilters codec`.
pub fn codec(description: &CodecDescription) -> String {
    format!(
        "HDF5 filter id: {}\nparameters: {}\nfilter spec: {}\n",
        id_and_name(description.id, description.name.as_deref()),
        params_text(&description.params),
        spec_form(description.id, &description.params)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{fixture_report, FIXTURE_REPORT};

    #[test]
    fn table_pads_all_but_the_last_column() {
        let rows = vec![vec!["1".to_string(), "deflate".to_string(), "x".to_string()]];
        assert_eq!(table(&["ID", "N", "LAST"], &rows), "ID  N        LAST\n1   deflate  x\n");
    }

    #[test]
    fn list_has_one_row_per_filter_with_sources() {
        let text = list(&fixture_report());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0].split_whitespace().collect::<Vec<_>>(),
            ["ID", "NAME", "NCZARR", "CODEC", "NETCDF-4", "NCZARR", "SOURCE"]
        );
        let row = |id: &str| lines.iter().find(|line| line.starts_with(&format!("{id} "))).unwrap().to_string();
        assert_eq!(
            row("1"),
            "1      deflate      zlib          yes       yes     HDF5 predefined; NCZarr: built into libnetcdf"
        );
        assert!(row("5").ends_with("HDF5 predefined; NCZarr: none"), "{text}");
        assert!(row("32015").ends_with("plugin /a/lib__nch5zstd.so; NCZarr: built into libnetcdf"), "{text}");
        assert!(row("32001").contains(" no "), "{text}");
        assert!(row("32001").ends_with("built into libnetcdf"), "{text}");
        assert!(row("5").contains("nbit"), "{text}");
        assert!(row("40000").split_whitespace().collect::<Vec<_>>().starts_with(&["40000", "-", "-", "no", "no"]));
        assert!(text.ends_with("`ncfilters explain ID` tells why a filter is not usable and what to change.\n"));
    }

    #[test]
    fn path_shows_each_entry_with_origin_and_state() {
        let text = path(&fixture_report());
        assert_eq!(
            text,
            "HDF5_PLUGIN_PATH=/a:/b\n\
             DIRECTORY               ORIGIN            STATE\n\
             /a                      HDF5_PLUGIN_PATH  searched (1 used, 2 skipped, 2 ignored)\n\
             /b                      HDF5_PLUGIN_PATH  missing (no such directory)\n\
             /usr/local/hdf5/plugin  default           unreadable: Permission denied (os error 13)\n"
        );
        let mut unset = fixture_report();
        unset.plugin_path.value = None;
        unset.plugin_path.entries.clear();
        assert_eq!(
            path(&unset),
            "HDF5_PLUGIN_PATH is not set: the default directories are searched\nNo directory is searched.\n"
        );
    }

    #[test]
    fn spec_shows_ids_params_and_codec_json_in_the_library_key_order() {
        let description: SpecDescription = serde_json::from_str(
            r#"{"filters": [
                {"id": 32015, "name": "zstd", "params": [3], "codec": {"level": 3, "id": "zstd"}, "codec_error": null},
                {"id": 2, "name": "shuffle", "params": [], "codec": null, "codec_error": "needs the type size"},
                {"id": 40000, "name": null, "params": [1, 2]}
            ]}"#,
        )
        .unwrap();
        assert_eq!(
            spec(&description),
            "filter 1 of 3: 32015 (zstd)\n  parameters: 3\n  NCZarr codec: {\"level\":3,\"id\":\"zstd\"}\n\
             filter 2 of 3: 2 (shuffle)\n  parameters: none\n  NCZarr codec: none (needs the type size)\n\
             filter 3 of 3: 40000\n  parameters: 1, 2\n  NCZarr codec: none\n"
        );
        assert_eq!(spec(&SpecDescription { filters: vec![] }), "No filter.\n");
    }

    #[test]
    fn codec_shows_id_params_and_spec_form() {
        let description: CodecDescription =
            serde_json::from_str(r#"{"id": 32001, "name": "blosc", "params": [2, 2, 4, 0, 5, 1, 1]}"#).unwrap();
        assert_eq!(
            codec(&description),
            "HDF5 filter id: 32001 (blosc)\nparameters: 2, 2, 4, 0, 5, 1, 1\nfilter spec: 32001,2,2,4,0,5,1,1\n"
        );
        let bare: CodecDescription = serde_json::from_str(r#"{"id": 3}"#).unwrap();
        assert_eq!(codec(&bare), "HDF5 filter id: 3\nparameters: none\nfilter spec: 3\n");
    }

    #[test]
    fn the_fixture_is_the_contract_shape() {
        let value: serde_json::Value = serde_json::from_str(FIXTURE_REPORT).unwrap();
        for key in ["ncfilters_version", "ncfilters_build", "netcdf_version", "plugin_path", "libraries", "filters"] {
            assert!(value.get(key).is_some(), "{key}");
        }
    }
}
