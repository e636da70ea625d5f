// SPDX-License-Identifier: BSD-3-Clause
//! What cannot be generated from the table of standard filters (`logic/src/standard_filter_table.rs`)
//! must agree with it: the plugin crates (one per library, library names, the row each exports,
//! what their descriptions say) and the interop tests' list of standard ids. The generated files
//! (`cmake/ncfilters_plugins.cmake`, the README's table) are checked by tools/gen-headers.
use ncfilters::standard_filter_table::{CodecDefaults, StandardFilterRow, STANDARD_FILTERS};
use std::path::Path;

fn read(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The value of `key = "…"` in a Cargo.toml section (`[package]`, `[lib]`).
fn toml_value<'a>(toml: &'a str, section: &str, key: &str) -> Option<&'a str> {
    let body = toml.split(&format!("[{section}]\n")).nth(1)?.split("\n[").next()?;
    let line = body.lines().find_map(|line| line.strip_prefix(key)?.trim_start().strip_prefix('='))?;
    line.trim().strip_prefix('"')?.strip_suffix('"')
}

/// The first line of a plugin crate's `src/lib.rs` after its SPDX line, and the rest.
fn plugin_source(target: &str) -> (String, String) {
    let source = read(&format!("plugins/{target}/src/lib.rs"));
    let Some(source) = source.strip_prefix("// SPDX-License-Identifier: BSD-3-Clause\n") else {
        panic!("plugins/{target}/src/lib.rs does not start with its SPDX line");
    };
    let (first, rest) = source.split_once('\n').unwrap_or((source, ""));
    (first.to_string(), rest.to_string())
}

fn codec_ids_of(library: CodecDefaults) -> String {
    let rows = STANDARD_FILTERS.iter().filter(|row| row.codec_defaults == library);
    rows.map(|row| row.codec_id).collect::<Vec<_>>().join(", ")
}

/// The plugin library crates in `plugins/` (every directory with a Cargo.toml but `common`, the
/// crate they share), which the workspace takes in as `plugins/h5*` and `plugins/ncz*`.
#[test]
fn plugins_has_a_crate_per_row_and_codec_defaults_library() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "common")
        .collect();
    found.sort_unstable();
    let filters = STANDARD_FILTERS.iter().map(|row| row.plugin_target);
    let mut expected: Vec<String> =
        filters.chain(CodecDefaults::ALL.map(CodecDefaults::target)).map(String::from).collect();
    expected.sort_unstable();
    assert_eq!(found, expected);
    let workspace = read("Cargo.toml");
    for target in &expected {
        let glob = if target.starts_with("h5") { "\"plugins/h5*\"" } else { "\"plugins/ncz*\"" };
        assert!(workspace.contains(glob), "the workspace's members take in plugins/{target} by {glob}");
    }
}

fn check_filter_crate(row: &StandardFilterRow) {
    let target = row.plugin_target;
    let toml = read(&format!("plugins/{target}/Cargo.toml"));
    let library = row.plugin_library;
    assert_eq!(toml_value(&toml, "package", "name"), Some(format!("ncfilters-plugin-{target}").as_str()));
    assert_eq!(toml_value(&toml, "lib", "name").map(|name| format!("lib{name}.so")).as_deref(), Some(library));
    let description = toml_value(&toml, "package", "description").unwrap_or_default();
    let says = format!("{library}: the {} filter (HDF5 id {})", row.name, row.id);
    assert!(description.starts_with(&says), "{target}/Cargo.toml: description should start {says:?}");

    let (first, rest) = plugin_source(target);
    assert!(first.starts_with(&format!("//! {says}")), "{target}/src/lib.rs: first line should start {says:?}");
    let exports: Vec<&str> = rest.lines().filter(|line| !line.starts_with("//") && !line.is_empty()).collect();
    assert_eq!(exports, [format!("ncfilters_plugin::export_standard_plugin!({});", row.name)], "{target}/src/lib.rs");
}

#[test]
fn each_filter_crate_builds_its_row_s_library() {
    for row in &STANDARD_FILTERS {
        check_filter_crate(row);
    }
}

#[test]
fn each_codec_defaults_crate_builds_its_library() {
    for library in CodecDefaults::ALL {
        let target = library.target();
        let toml = read(&format!("plugins/{target}/Cargo.toml"));
        assert_eq!(toml_value(&toml, "package", "name"), Some(format!("ncfilters-plugin-{target}").as_str()));
        let file = toml_value(&toml, "lib", "name").map(|name| format!("lib{name}.so"));
        assert_eq!(file.as_deref(), Some(library.library()));
        let codecs = format!("({})", codec_ids_of(library));
        let description = toml_value(&toml, "package", "description").unwrap_or_default();
        assert!(description.starts_with(library.library()) && description.contains(&codecs), "{target}: {codecs}");

        let (first, rest) = plugin_source(target);
        assert!(first.starts_with(&format!("//! {}", library.library())) && first.contains(&codecs), "{target}");
        let exports: Vec<&str> = rest.lines().filter(|line| !line.starts_with("//") && !line.is_empty()).collect();
        assert_eq!(exports, [format!("ncfilters_plugin::export_codec_defaults!({library:?});")], "{target}/src/lib.rs");
    }
}

#[test]
fn the_interop_tests_know_every_standard_id() {
    let test = read("tests/interop/test_builtin_filters.py");
    let ids = test.lines().find_map(|line| line.strip_prefix("STANDARD_IDS = ")).expect("STANDARD_IDS");
    let expected: Vec<String> = STANDARD_FILTERS.iter().map(|row| row.id.to_string()).collect();
    assert_eq!(ids, format!("[{}]", expected.join(", ")));
}
