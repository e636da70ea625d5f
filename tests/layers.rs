// SPDX-License-Identifier: BSD-3-Clause
//! Three crates in layers: ncfilters-core (`core/src/`), then ncfilters-plugin
//! (`plugins/common/src/`), then the library (`src/`), and in each the modules its `lib.rs` lists,
//! lowest first. A module uses only modules below it (those of the crates below included), so the
//! module graph has no cycle, nothing outside `src/abi/` uses `abi`, and no crate uses one above.
//!
//! What a file uses is read from its `use` trees, grouped ones expanded (`use crate::{a, b::{c}}`
//! names `a` and `b`), from its `crate::`/`$crate::` paths in code, and, in a top-level module's
//! own files, from `super::` paths (the crate root there).
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// ncfilters-core's top-level modules, lowest first (`core/src/lib.rs`).
const CORE_LAYERS: [&str; 19] = [
    "error",
    "c_types",
    "c_heap",
    "ffi_boundary",
    "worker_pool",
    "zstd_context",
    "filterspec",
    "plugin_path",
    "hdf5_filter_rules",
    "standard_filter_table",
    "standard_filters",
    "codec_json",
    "codecs",
    "filters",
    "plugin_loader",
    "plugin_registry",
    "filter_chain",
    "filter_report",
    "filter_explain",
];

/// ncfilters-plugin's modules, lowest first (`plugins/common/src/lib.rs`), above the core's.
const PLUGIN_LAYERS: [&str; 4] = ["hdf5_sys", "netcdf_api", "h5z", "plugin"];

/// The ncfilters crate's own modules, lowest first (`src/lib.rs`), above the core's and the plugin
/// crate's (which it re-exports under their own names).
const LIBRARY_LAYERS: [&str; 3] = ["netcdf_sys", "abi_layout", "abi"];

/// A crate's source directory, and the modules it may use, lowest first: those of the crate below
/// it, then its own.
struct Crate {
    src: PathBuf,
    layers: Vec<&'static str>,
}

fn core() -> Crate {
    Crate { src: root().join("core/src"), layers: CORE_LAYERS.to_vec() }
}

fn plugin() -> Crate {
    Crate { src: root().join("plugins/common/src"), layers: [&CORE_LAYERS[..], &PLUGIN_LAYERS].concat() }
}

fn library() -> Crate {
    Crate { src: root().join("src"), layers: [&CORE_LAYERS[..], &PLUGIN_LAYERS, &LIBRARY_LAYERS].concat() }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let first = file.strip_prefix(src).unwrap().components().next()?.as_os_str().to_str()?.to_string();
    let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (module != "lib").then_some(module)
}

fn rank(layers: &[&str], module: &str) -> usize {
    layers.iter().position(|&m| m == module).unwrap_or_else(|| panic!("module {module} is not in the layers"))
}

/// The code of a file without its comments (line comments and doc comments; no block comments
/// are used in src/) and string literals' contents, which may mention paths.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let mut in_string = false;
        let mut previous = ' ';
        let mut kept = String::new();
        for (i, c) in line.char_indices() {
            if !in_string && line[i..].starts_with("//") {
                break;
            }
            if c == '"' && previous != '\\' && previous != '\'' {
                in_string = !in_string;
            } else if !in_string {
                kept.push(c);
            }
            previous = c;
        }
        code.push_str(&kept);
        code.push('\n');
    }
    code
}

/// The paths a `use` tree names, groups expanded: `crate::{a::b, c::{d, e}}` gives `crate::a::b`,
/// `crate::c::d` and `crate::c::e`.
fn expand_use_tree(prefix: &str, tree: &str, paths: &mut Vec<String>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    match tree.find('{') {
        Some(open) if tree.ends_with('}') => {
            let head = &tree[..open];
            let inner = &tree[open + 1..tree.len() - 1];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand_use_tree(&format!("{prefix}{head}"), &inner[start..i], paths);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand_use_tree(&format!("{prefix}{head}"), &inner[start..], paths);
        }
        // `a::b as c` names `a::b`.
        _ => paths.push(format!("{prefix}{}", tree.split(" as ").next().unwrap_or(tree)).split_whitespace().collect()),
    }
}

/// Every path a file's code names: its `use` trees expanded, then the paths written inline.
fn paths_in(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("use ") {
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "use ".len()..];
        let tree = &rest[..rest.find(';').unwrap_or(rest.len())];
        expand_use_tree("", tree, &mut paths);
    }
    for root in ["crate::", "super::", "ncfilters::", "ncfilters_core::", "ncfilters_plugin::"] {
        for (at, _) in code.match_indices(root) {
            let path: String =
                code[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':').collect();
            paths.push(path);
        }
    }
    paths
}

/// The top-level modules a file of `module` uses: `crate::x…` (also `$crate::x…`), and `super::x…`
/// where `super` is the crate root (`src/<module>.rs`, `src/<module>/mod.rs`).
fn modules_used(code: &str, super_is_root: bool, layers: &[&str]) -> BTreeSet<String> {
    paths_in(code)
        .iter()
        .filter_map(|path| {
            let path = path.trim_start_matches('$');
            // `ncfilters_core::x` is the core's module `x`, which the layers above begin with.
            let rest = path
                .strip_prefix("crate::")
                .or_else(|| path.strip_prefix("ncfilters_core::"))
                .or_else(|| path.strip_prefix("ncfilters_plugin::"))
                .or_else(|| path.strip_prefix("super::").filter(|_| super_is_root))?;
            let module: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            layers.contains(&module.as_str()).then_some(module)
        })
        .collect()
}

#[test]
fn use_trees_are_read_with_their_groups() {
    let code = code_of("use crate::{error::NC_EINVAL, c_heap::{CArray, CVec as V}, codec_json as json};\nuse super::abi; // crate::filters\nlet x = crate::codecs::f(\"crate::netcdf_sys\");\nuse ncfilters_core::plugin_path;");
    let layers = library().layers;
    let used: Vec<String> = modules_used(&code, true, &layers).into_iter().collect();
    assert_eq!(used, ["abi", "c_heap", "codec_json", "codecs", "error", "plugin_path"]);
    assert!(modules_used(&code, false, &layers).iter().all(|m| m != "abi"), "super:: of a submodule is its module");
}

/// `file: module uses higher` for each use of a higher layer in the crate.
fn upward_uses(krate: &Crate) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&krate.src, &mut files);
    let mut upward = Vec::new();
    for file in files {
        let Some(module) = module_of(&krate.src, &file) else { continue };
        let relative = file.strip_prefix(&krate.src).unwrap();
        let super_is_root = relative.components().count() == 1 || relative.ends_with("mod.rs");
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for used in modules_used(&code, super_is_root, &krate.layers) {
            if used != module && rank(&krate.layers, &used) > rank(&krate.layers, &module) {
                upward.push(format!("{}: {module} uses {used}", file.display()));
            }
        }
    }
    upward
}

#[test]
fn every_module_uses_only_lower_layers() {
    let upward = [upward_uses(&core()), upward_uses(&plugin()), upward_uses(&library())].concat();
    assert!(upward.is_empty(), "uses of a higher layer:\n{}", upward.join("\n"));
}

/// The crates named in a manifest's dependency lines (`name = ...`, `name.workspace = true`).
fn dependencies(manifest: &Path) -> Vec<String> {
    std::fs::read_to_string(manifest)
        .unwrap()
        .lines()
        .map(|line| line.split(['=', '.', ' ']).next().unwrap_or("").to_string())
        .filter(|name| name.starts_with("ncfilters"))
        .collect()
}

/// Files of `krate` whose code names a path of one of `crates` (a `use` of it would not compile
/// without the dependency, but a macro's expansion could name it).
fn files_naming(krate: &Crate, crates: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&krate.src, &mut files);
    files
        .iter()
        .filter(|file| {
            let code = code_of(&std::fs::read_to_string(file).unwrap());
            paths_in(&code).iter().any(|p| crates.iter().any(|c| p.starts_with(&format!("{c}::"))))
        })
        .map(|file| file.display().to_string())
        .collect()
}

/// The crates form layers too: the core uses neither crate above it, the plugin crate only the
/// core; nothing uses the library.
#[test]
fn the_crates_use_only_the_crates_below() {
    let core_manifest = root().join("core/Cargo.toml");
    let plugin_manifest = root().join("plugins/common/Cargo.toml");
    assert_eq!(dependencies(&core_manifest), Vec::<String>::new(), "core/Cargo.toml");
    assert_eq!(dependencies(&plugin_manifest), ["ncfilters-core"], "plugins/common/Cargo.toml");
    assert_eq!(files_naming(&core(), &["ncfilters", "ncfilters_plugin"]), Vec::<String>::new(), "core files");
    assert_eq!(files_naming(&plugin(), &["ncfilters"]), Vec::<String>::new(), "ncfilters-plugin files");
    // The command reads the core's report types; the benchmark also times the plugin crate's
    // H5Z entry points. Neither links the C exports.
    let tools: [(&str, &[&str]); 2] = [
        ("tools/ncfilters-cli", &["ncfilters-core"]),
        ("tools/bench-filters", &["ncfilters-core", "ncfilters-plugin"]),
    ];
    for (tool, uses) in tools {
        assert_eq!(dependencies(&root().join(tool).join("Cargo.toml")), uses, "{tool}/Cargo.toml");
    }
}

/// The modules a `lib.rs` declares (file modules only: the library's inline `test_support`
/// re-exports for tests/ are above every layer).
fn declared_modules(lib: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(lib).unwrap();
    let mut declared: Vec<String> = lib
        .lines()
        .filter_map(|line| ["pub mod ", "pub(crate) mod ", "mod "].iter().find_map(|prefix| line.strip_prefix(prefix)))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(String::from)
        .collect();
    declared.sort_unstable();
    declared
}

#[test]
fn lib_rs_declares_exactly_the_layered_modules() {
    for (krate, own) in [(core(), &CORE_LAYERS[..]), (plugin(), &PLUGIN_LAYERS[..]), (library(), &LIBRARY_LAYERS[..])] {
        let mut layers: Vec<String> = own.iter().map(|m| m.to_string()).collect();
        layers.sort_unstable();
        assert_eq!(declared_modules(&krate.src.join("lib.rs")), layers, "{}", krate.src.display());
    }
}

/// The panic boundary is `ffi_export!` alone: no other code calls the functions it expands to.
#[test]
fn only_the_boundary_macro_catches_panics_for_c() {
    let mut calls = Vec::new();
    for krate in [core(), plugin(), library()] {
        let mut files = Vec::new();
        rust_files(&krate.src, &mut files);
        for file in files.iter().filter(|f| !f.ends_with("ffi_boundary.rs")) {
            let code = code_of(&std::fs::read_to_string(file).unwrap());
            for call in ["guarded(", "exported(", "status_of("] {
                if code.contains(call) {
                    calls.push(format!("{}: {call}", file.display()));
                }
            }
        }
    }
    assert!(calls.is_empty(), "calls of the panic boundary outside ffi_export!: {calls:?}");
}
