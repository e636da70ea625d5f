// SPDX-License-Identifier: BSD-3-Clause
//! Six crates in layers: ncfilters-logic (`logic/src/`, the pure logic, which forbids unsafe
//! code), then ncfilters-runtime (`runtime/src/`, the C runtime), then ncfilters-filters
//! (`filters/src/`, the standard filters written in Rust, which forbids unsafe code), then
//! ncfilters-core (`core/src/`, plugin loading, the registry and the chain), then ncfilters-plugin
//! (`plugins/common/src/`), then the library (`src/`), and in each the modules its `lib.rs`
//! declares, in the order it declares them, lowest first. A module uses only modules below it
//! (those of the crates below included), so the module graph has no cycle, nothing outside
//! `src/abi/` uses `abi`, and no crate uses one above. The modules that hold unsafe code say why
//! where they are declared.
//!
//! The sources are read by `ncfilters-source-scan` (syn and its tokenizer): what a file uses are the
//! `crate::`/`$crate::` paths and those of the crates below (`ncfilters_logic::`, …) it names, in `use` trees
//! (grouped ones expanded) and anywhere in code, and, in a top-level module's own files,
//! `super::` paths (the crate root there).
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ncfilters_source_scan::{calls_of, declared_modules, functions_calling, paths_from, rust_files};

/// A crate's modules, lowest first, as its `lib.rs` declares them.
fn own_layers(src: &Path) -> Vec<String> {
    declared_modules(&src.join("lib.rs")).into_iter().map(|m| m.name).collect()
}

/// A crate's source directory, and the modules it may use, lowest first: those of the crate below
/// it, then its own.
struct Crate {
    src: PathBuf,
    layers: Vec<String>,
}

/// The crate in `dir` above the layers `below`.
fn above(below: Vec<String>, dir: &str) -> Crate {
    let src = root().join(dir);
    Crate { layers: [below, own_layers(&src)].concat(), src }
}

fn logic() -> Crate {
    above(Vec::new(), "logic/src")
}

fn runtime() -> Crate {
    above(logic().layers, "runtime/src")
}

fn filters() -> Crate {
    above(runtime().layers, "filters/src")
}

fn core() -> Crate {
    above(filters().layers, "core/src")
}

fn plugin() -> Crate {
    above(core().layers, "plugins/common/src")
}

fn library() -> Crate {
    above(plugin().layers, "src")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let first = file.strip_prefix(src).unwrap().components().next()?.as_os_str().to_str()?.to_string();
    let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (module != "lib").then_some(module)
}

fn rank(layers: &[String], module: &str) -> usize {
    layers.iter().position(|m| m == module).unwrap_or_else(|| panic!("module {module} is not in the layers"))
}

/// The top-level modules a file uses: `crate::x…` (also `$crate::x…`), the crates below by name,
/// and `super::x…` where `super` is the crate root (`src/<module>.rs`, `src/<module>/mod.rs`).
fn modules_used(file: &Path, super_is_root: bool, layers: &[String]) -> BTreeSet<String> {
    const CRATES: [&str; 6] =
        ["crate", "ncfilters_logic", "ncfilters_runtime", "ncfilters_filters", "ncfilters_core", "ncfilters_plugin"];
    let roots = if super_is_root { [&CRATES[..], &["super"]].concat() } else { CRATES.to_vec() };
    paths_from(file, &roots).into_iter().map(|(_, module)| module).filter(|m| layers.contains(m)).collect()
}

/// `file: module uses higher` for each use of a higher layer in the crate.
fn upward_uses(krate: &Crate) -> Vec<String> {
    let mut upward = Vec::new();
    for file in rust_files(&krate.src) {
        let Some(module) = module_of(&krate.src, &file) else { continue };
        let relative = file.strip_prefix(&krate.src).unwrap();
        let super_is_root = relative.components().count() == 1 || relative.ends_with("mod.rs");
        for used in modules_used(&file, super_is_root, &krate.layers) {
            if used != module && rank(&krate.layers, &used) > rank(&krate.layers, &module) {
                upward.push(format!("{}: {module} uses {used}", file.display()));
            }
        }
    }
    upward
}

#[test]
fn every_module_uses_only_lower_layers() {
    let upward =
        [logic(), runtime(), filters(), core(), plugin(), library()].iter().flat_map(upward_uses).collect::<Vec<_>>();
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
    rust_files(&krate.src)
        .iter()
        .filter(|file| !paths_from(file, crates).is_empty())
        .map(|file| file.display().to_string())
        .collect()
}

/// The crates form layers too: the pure logic uses none of the others, the runtime only the
/// logic, the filters only those two, the core only those three, the plugin crate only the core;
/// nothing uses the library.
#[test]
fn the_crates_use_only_the_crates_below() {
    let manifests: [(&str, &[&str]); 5] = [
        ("logic", &[]),
        ("runtime", &["ncfilters-logic"]),
        ("filters", &["ncfilters-logic", "ncfilters-runtime"]),
        ("core", &["ncfilters-logic", "ncfilters-runtime", "ncfilters-filters"]),
        ("plugins/common", &["ncfilters-core"]),
    ];
    for (krate, uses) in manifests {
        assert_eq!(dependencies(&root().join(krate).join("Cargo.toml")), uses, "{krate}/Cargo.toml");
    }
    let above_logic = ["ncfilters", "ncfilters_runtime", "ncfilters_filters", "ncfilters_core", "ncfilters_plugin"];
    assert_eq!(files_naming(&logic(), &above_logic), Vec::<String>::new(), "ncfilters-logic files");
    let above_runtime = ["ncfilters", "ncfilters_filters", "ncfilters_core", "ncfilters_plugin"];
    assert_eq!(files_naming(&runtime(), &above_runtime), Vec::<String>::new(), "ncfilters-runtime files");
    let above_filters = ["ncfilters", "ncfilters_core", "ncfilters_plugin"];
    assert_eq!(files_naming(&filters(), &above_filters), Vec::<String>::new(), "ncfilters-filters files");
    assert_eq!(files_naming(&core(), &["ncfilters", "ncfilters_plugin"]), Vec::<String>::new(), "core files");
    assert_eq!(files_naming(&plugin(), &["ncfilters"]), Vec::<String>::new(), "ncfilters-plugin files");
    // The command reads the pure logic's report types and explain, with no C runtime; the
    // benchmark also times the plugin crate's H5Z entry points. Neither links the C exports.
    let tools: [(&str, &[&str]); 2] = [
        ("tools/ncfilters-cli", &["ncfilters-logic"]),
        ("tools/bench-filters", &["ncfilters-core", "ncfilters-plugin"]),
    ];
    for (tool, uses) in tools {
        assert_eq!(dependencies(&root().join(tool).join("Cargo.toml")), uses, "{tool}/Cargo.toml");
    }
}

/// The pure logic's crate and the filters' forbid unsafe code at their roots, so no module of
/// them can allow it again (the compiler refuses `allow` or `expect` of a forbidden lint).
#[test]
fn the_pure_crates_forbid_unsafe_code() {
    for (krate, modules) in [(logic(), 8), (filters(), 6)] {
        let lib = std::fs::read_to_string(krate.src.join("lib.rs")).unwrap();
        assert!(lib.lines().any(|line| line.trim() == "#![forbid(unsafe_code)]"), "{}", krate.src.display());
        let layers = own_layers(&krate.src);
        assert!(layers.len() >= modules, "{}'s modules: {layers:?}", krate.src.display());
    }
}

/// Each module that holds unsafe code says why where it is declared: `#[expect(unsafe_code, reason
/// = "…")]` (which also fails the build's lint check once the module no longer needs it), never a
/// bare `allow`.
#[test]
fn modules_with_unsafe_code_give_their_reason_where_declared() {
    let declaring = [
        runtime().src.join("lib.rs"),
        core().src.join("lib.rs"),
        core().src.join("filters/mod.rs"),
        plugin().src.join("lib.rs"),
        library().src.join("lib.rs"),
    ];
    let mut with_reasons = 0;
    for file in declaring {
        for module in declared_modules(&file) {
            assert!(
                !module.allows_unsafe_without_reason,
                "{}: module {} allows unsafe code without a reason",
                file.display(),
                module.name
            );
            with_reasons += usize::from(module.unsafe_reason.as_deref().is_some_and(|r| !r.is_empty()));
        }
    }
    assert!(with_reasons >= 9, "only {with_reasons} modules give a reason for unsafe code");
}

/// The panic boundary is `ffi_export!` alone: no other code calls the functions it expands to.
#[test]
fn only_the_boundary_macro_catches_panics_for_c() {
    let mut calls = Vec::new();
    for krate in [logic(), runtime(), filters(), core(), plugin(), library()] {
        for file in rust_files(&krate.src).iter().filter(|f| !f.ends_with("ffi_boundary.rs")) {
            for call in calls_of(file, &["guarded", "exported", "status_of"]) {
                calls.push(format!("{}: {call}", file.display()));
            }
        }
    }
    assert!(calls.is_empty(), "calls of the panic boundary outside ffi_export!: {calls:?}");
}

/// Only the boundary module catches panics (`ffi_export!`, and `piece_panicked` for a piece of a
/// call's work). The exceptions, one call each: `error::write_stderr`, a layer below, which drops
/// a diagnostic's panic; and the unit tests that assert a misuse panics.
#[test]
fn nothing_but_the_boundary_catches_a_panic() {
    const EXCEPTIONS: [&str; 4] =
        ["logic/src/error.rs", "runtime/src/c_heap.rs", "core/src/plugin_registry.rs", "filters/src/lib.rs"];
    let mut calls = Vec::new();
    for krate in [logic(), runtime(), filters(), core(), plugin(), library()] {
        for file in rust_files(&krate.src).iter().filter(|f| !f.ends_with("ffi_boundary.rs")) {
            let found = calls_of(file, &["catch_unwind"]).len();
            let allowed = usize::from(EXCEPTIONS.iter().any(|t| file.ends_with(t)));
            if found > allowed {
                calls.push(format!("{}: {found} catch_unwind", file.display()));
            }
        }
    }
    assert!(calls.is_empty(), "panics caught outside the boundary module: {calls:?}");
}

/// A [`Call`](ncfilters_core::ffi_boundary::Call) proves its code runs on netcdf-c's thread only
/// if every `CallersThread::promise` is made in an `unsafe` function, whose callers promise it in
/// turn: the C entry points and their unsafe helpers. The exceptions are unit tests' stand-ins
/// for C, each named.
#[test]
fn only_unsafe_functions_promise_the_caller_s_thread() {
    const TEST_STAND_INS: [(&str, &str); 4] = [
        ("runtime/src/ffi_boundary.rs", "test_thread"),
        ("core/src/lib.rs", "test_thread"),
        ("plugins/common/src/netcdf_api.rs", "var_chunks_sizes_its_buffer_from_the_variable_s_rank"),
        ("src/lib.rs", "in_test_call"),
    ];
    let mut safe_promises = Vec::new();
    let mut promises = 0;
    for krate in [runtime(), core(), plugin(), library()] {
        for file in rust_files(&krate.src) {
            for (function, is_unsafe) in functions_calling(&file, "promise") {
                promises += 1;
                let stand_in = TEST_STAND_INS.iter().any(|(f, name)| file.ends_with(f) && function == *name);
                if !is_unsafe && !stand_in {
                    safe_promises.push(format!("{}: {function}", file.display()));
                }
            }
        }
    }
    assert!(promises > 90, "found only {promises} promises");
    assert!(safe_promises.is_empty(), "safe functions promising the caller's thread: {safe_promises:?}");
}
