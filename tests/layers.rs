//! The modules of `src/` form the layers `src/lib.rs` lists: a module uses only modules below it,
//! so the module graph has no cycle and nothing outside `src/abi/` uses `abi`.
use std::path::{Path, PathBuf};

/// The top-level modules, lowest first (`src/lib.rs`).
const LAYERS: [&str; 22] = [
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
    "hdf5_sys",
    "plugin_loader",
    "plugin_registry",
    "filter_chain",
    "filter_report",
    "netcdf_sys",
    "abi_layout",
    "abi",
];

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

fn rank(module: &str) -> usize {
    LAYERS.iter().position(|&m| m == module).unwrap_or_else(|| panic!("module {module} is not in LAYERS"))
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    for file in files {
        let Some(module) = module_of(&src, &file) else { continue };
        for (number, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let used: String = code[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if LAYERS.contains(&used.as_str()) && used != module && rank(&used) > rank(&module) {
                    upward.push(format!("{}:{}: {module} uses {used}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(upward.is_empty(), "uses of a higher layer:\n{}", upward.join("\n"));
}

#[test]
fn lib_rs_declares_exactly_the_layered_modules() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let mut declared: Vec<&str> = lib
        .lines()
        .filter_map(|line| ["pub mod ", "pub(crate) mod ", "mod "].iter().find_map(|prefix| line.strip_prefix(prefix)))
        // File modules only: lib.rs's inline `test_support` re-exports for tests/, above every layer.
        .filter_map(|rest| rest.strip_suffix(';'))
        .collect();
    let mut layers = LAYERS.to_vec();
    declared.sort_unstable();
    layers.sort_unstable();
    assert_eq!(declared, layers);
}
