// SPDX-License-Identifier: BSD-3-Clause
//! The NCZarr filter registry: which plugin libraries provide which HDF5 filter and Zarr codec.
//!
//! Discovery searches the plugin path (`crate::plugin_path`: from `HDF5_PLUGIN_PATH` by the rules
//! of the netcdf-c release, or as `nc_plugin_path_set` replaced it) for files whose name contains
//! `.so`, `.dll` or `.dylib`, as netcdf-c does, with these differences:
//! - directories are read in sorted order, so the result does not depend on `readdir`;
//! - a bad library (not loadable, half an HDF5 interface, wrong struct version or sort, NULL info,
//!   duplicate id, …) or a bad defaults entry is skipped with a diagnostic; the rest still load;
//! - a codec's `NCZ_codec_initialize` runs the first time the codec is used, not at discovery
//!   (so an unused broken plugin costs nothing), and `NCZ_codec_finalize` only for codecs that
//!   were initialised; the highest id is a plugin like any other;
//! - loading is lazy: nothing is loaded until a variable actually has a filter or one is defined;
//! - the standard filters (deflate, shuffle, fletcher32, szip, bzip2, zstd, blosc) are built in:
//!   an id, or the filter or codec half of one, that no library on the path provides is served by
//!   ncfilters' own, so they work with no `HDF5_PLUGIN_PATH`; a bad library for one of their
//!   ids is skipped and the built-in still serves the id.
//!
//! The registry is built once per process (until [`finalize`]) and shared as an `Arc`, so
//! callers never hold a lock while they call into a plugin or back into netcdf-c.
//! `NCFILTERS_DEBUG=1` prints what was found, skipped and why, and the pairing table.
#![forbid(unsafe_code)]

use crate::error::report;
use crate::ffi_boundary::Call;
use crate::plugin_loader::{self, CodecPart, FilterPart, KeepAlive, LibraryContents, PluginPathDir};
use crate::plugin_path::PluginDir;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

pub use crate::discovery_log::{
    is_plugin_file_name, DirRecord, DirState, DiscoveryLog, FileOutcome, FileRecord, PartSource, A_DIRECTORY,
    NOT_A_LIBRARY_NAME, NO_ENTRY_POINTS,
};
pub use crate::plugin_path::{DirOrigin, DEFAULT_PLUGIN_DIR, PLUGIN_PATH_ENV};
pub const DEBUG_ENV: &str = "NCFILTERS_DEBUG";
/// Valid HDF5 filter ids for a registry slot: 1..=65534 (`H5Z_FILTER_MAX` is 65535).
pub const MAX_FILTER_ID: u32 = 65534;

/// Whether `NCFILTERS_DEBUG` asks for the loader's account.
pub fn debug_enabled() -> bool {
    std::env::var_os(DEBUG_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

fn debug(message: std::fmt::Arguments<'_>) {
    if debug_enabled() {
        crate::error::write_stderr("ncfilters[debug]: ", message);
    }
}

/// One HDF5 filter id's implementation: its HDF5 filter function and its Zarr codec, possibly
/// from different libraries (or the codec from a defaults library).
#[derive(Debug)]
pub struct Plugin {
    pub id: u32,
    pub filter: Option<FilterPart>,
    pub filter_source: Option<PartSource>,
    pub codec: Option<CodecPart>,
    pub codec_source: Option<PartSource>,
    pub codec_defaulted: bool,
    /// The libraries the parts came from, kept loaded while anything uses this plugin.
    _keep_loaded: Vec<KeepAlive>,
}

impl Plugin {
    /// Both parts present: the filter can be used on NCZarr data.
    pub fn is_complete(&self) -> bool {
        self.filter.is_some() && self.codec.is_some()
    }

    /// Why this plugin's HDF5 filter cannot run: it is ncfilters' own and needs a C library
    /// (libblosc, libsz) that does not load. A library on the plugin path is trusted to run.
    pub fn unavailable_reason(&self) -> Option<String> {
        match &self.filter_source {
            Some(PartSource::BuiltIn) => crate::filters::native_library_error(self.id),
            _ => None,
        }
    }
}

/// The plugins found, by HDF5 id, and how they were found.
#[derive(Debug, Default)]
pub struct Registry {
    plugins: BTreeMap<u32, Arc<Plugin>>,
    log: DiscoveryLog,
    /// The plugin path's generation searched (a newer one means discover again).
    generation: u64,
}

impl Registry {
    /// What discovery searched and found.
    pub fn discovery_log(&self) -> &DiscoveryLog {
        &self.log
    }

    pub fn get(&self, id: u32) -> Option<&Arc<Plugin>> {
        self.plugins.get(&id)
    }

    /// The plugin whose codec has this id (`"zlib"`, `"bz2"`, …), lowest HDF5 id first.
    pub fn by_codec_id(&self, codec_id: &str) -> Option<&Arc<Plugin>> {
        self.plugins.values().find(|p| p.codec.as_ref().is_some_and(|c| c.codec_id == codec_id))
    }

    pub fn plugins(&self) -> impl Iterator<Item = &Arc<Plugin>> {
        self.plugins.values()
    }

    /// What serves filter `id`, for the diagnostic of a library skipped for it.
    pub fn served_by(&self, id: u32) -> String {
        match self.get(id).and_then(|p| p.filter_source.as_ref().or(p.codec_source.as_ref())) {
            Some(PartSource::BuiltIn) => format!("ncfilters' built-in filter serves id {id}"),
            Some(PartSource::Library(path)) => format!("{} serves id {id}", path.display()),
            None => format!("nothing serves id {id}"),
        }
    }

    /// The pairing table, one line per id, for `NCFILTERS_DEBUG`.
    pub fn table(&self) -> String {
        let mut out = String::from("id     codec        state       HDF5 filter from / codec from\n");
        for p in self.plugins.values() {
            let source = |s: &Option<PartSource>| s.as_ref().map_or("-".to_string(), |s| s.to_string());
            out.push_str(&format!(
                "{:<6} {:<12} {:<11} {} / {}{}\n",
                p.id,
                p.codec.as_ref().map_or("-", |c| c.codec_id.as_str()),
                if p.is_complete() { "complete" } else { "incomplete" },
                source(&p.filter_source),
                source(&p.codec_source),
                if p.codec_defaulted { " (defaults)" } else { "" }
            ));
        }
        out
    }
}

/// A library's contribution before pairing.
#[derive(Debug)]
pub struct LoadedLibrary {
    pub path: PathBuf,
    pub keep_alive: KeepAlive,
    pub contents: LibraryContents,
}

/// A library skipped for a known filter id: reported once the id's final source is known.
#[derive(Debug)]
struct SkippedForId {
    path: PathBuf,
    id: u32,
    why: String,
}

#[derive(Debug)]
struct Draft {
    filter: Option<(FilterPart, PartSource)>,
    codec: Option<(CodecPart, PartSource)>,
    codec_defaulted: bool,
    libraries: Vec<KeepAlive>,
}

/// One thing that happened to a file, for the [`DiscoveryLog`].
#[derive(Debug)]
enum FileEvent {
    Used(u32),
    Skipped(Option<u32>, String),
    /// A default codec no HDF5-only plugin needed.
    Unneeded(u32),
    Ignored(String),
}

/// Pairs libraries into plugins: the first library found for a part wins; later duplicates
/// are reported and unused; defaults libraries supply codecs for HDF5-only plugins.
#[derive(Debug, Default)]
pub struct RegistryBuilder {
    drafts: BTreeMap<u32, Draft>,
    defaults: Vec<(CodecPart, PathBuf, KeepAlive)>,
    builtins: Vec<(FilterPart, CodecPart)>,
    skipped: Vec<SkippedForId>,
    plugin_path: Option<String>,
    dirs: Vec<DirRecord>,
    /// Files in the order first seen, with what happened to each.
    files: Vec<(PathBuf, Vec<FileEvent>)>,
}

fn skip(path: &Path, why: impl std::fmt::Display) {
    report(format_args!("plugin {} skipped: {why}", path.display()));
}

fn valid_id(id: u32) -> bool {
    (1..=MAX_FILTER_ID).contains(&id)
}

impl RegistryBuilder {
    fn record(&mut self, path: &Path, event: FileEvent) {
        match self.files.iter_mut().find(|(seen, _)| seen == path) {
            Some((_, events)) => events.push(event),
            None => self.files.push((path.to_path_buf(), vec![event])),
        }
    }

    /// Records a directory of the search, for the [`DiscoveryLog`].
    pub fn searched_dir(&mut self, dir: &Path, origin: DirOrigin, state: DirState) {
        self.dirs.push(DirRecord { dir: dir.to_path_buf(), origin, state });
    }

    /// Records the plugin path discovery used, for the [`DiscoveryLog`].
    pub fn set_plugin_path(&mut self, plugin_path: Option<String>) {
        self.plugin_path = plugin_path;
    }

    /// Records a file that is no plugin candidate.
    pub fn ignore_file(&mut self, path: &Path, reason: &str) {
        self.record(path, FileEvent::Ignored(reason.to_string()));
    }

    /// A library skipped at once (its reason is final), reported now.
    fn skip_now(&mut self, path: &Path, id: Option<u32>, why: impl std::fmt::Display) {
        let why = why.to_string();
        skip(path, &why);
        self.record(path, FileEvent::Skipped(id, why));
    }

    /// A library skipped: reported at once when the id it was for is unknown, else by
    /// [`RegistryBuilder::finish`], which can say what serves the id instead.
    pub fn skip_library(&mut self, path: &Path, id: Option<u32>, why: impl std::fmt::Display) {
        match id {
            Some(id) => self.skipped.push(SkippedForId { path: path.to_path_buf(), id, why: why.to_string() }),
            None => self.skip_now(path, None, why),
        }
    }

    pub fn add(&mut self, library: LoadedLibrary) {
        let LoadedLibrary { path, keep_alive, contents } = library;
        match contents {
            LibraryContents::Defaults(entries) => {
                for (index, entry) in entries.into_iter().enumerate() {
                    match entry {
                        Ok(codec) => {
                            debug(format_args!(
                                "{}: default codec \"{}\" for id {}",
                                path.display(),
                                codec.codec_id,
                                codec.hdf5_id
                            ));
                            self.defaults.push((codec, path.clone(), keep_alive.clone()));
                        }
                        Err(why) => self.skip_library(&path, why.id, format_args!("defaults entry {index}: {why}")),
                    }
                }
            }
            LibraryContents::Plugin { filter, codec } => {
                let id = match (&filter, &codec) {
                    (Some(f), Some(c)) if f.id() != c.hdf5_id => {
                        let why = format!("its HDF5 filter id {} and codec id {} differ", f.id(), c.hdf5_id);
                        self.skip_library(&path, Some(c.hdf5_id), &why);
                        return self.skip_library(&path, Some(f.id()), why);
                    }
                    (Some(f), _) => f.id(),
                    (None, Some(c)) => c.hdf5_id,
                    (None, None) => return self.ignore_file(&path, NO_ENTRY_POINTS),
                };
                if !valid_id(id) {
                    return self.skip_now(
                        &path,
                        Some(id),
                        format_args!("filter id {id} is outside 1..{MAX_FILTER_ID}"),
                    );
                }
                let draft = self.drafts.entry(id).or_insert(Draft {
                    filter: None,
                    codec: None,
                    codec_defaulted: false,
                    libraries: Vec::new(),
                });
                let mut used = false;
                let mut duplicates = Vec::new();
                if let Some(filter) = filter {
                    match &draft.filter {
                        None => {
                            draft.filter = Some((filter, PartSource::Library(path.clone())));
                            used = true;
                        }
                        Some((_, first)) => {
                            // Reported now, as before; logged once the draft is released.
                            let why = format!("duplicate HDF5 filter {id}, already provided by {}", first);
                            skip(&path, &why);
                            duplicates.push(why);
                        }
                    }
                }
                if let Some(codec) = codec {
                    match &draft.codec {
                        None => {
                            draft.codec = Some((codec, PartSource::Library(path.clone())));
                            used = true;
                        }
                        Some((_, first)) => {
                            // Reported now, as before; logged once the draft is released.
                            let why = format!("duplicate codec for id {id}, already provided by {}", first);
                            skip(&path, &why);
                            duplicates.push(why);
                        }
                    }
                }
                if used {
                    debug(format_args!("{}: provides id {id}", path.display()));
                    draft.libraries.push(keep_alive);
                    self.record(&path, FileEvent::Used(id));
                }
                for why in duplicates {
                    self.record(&path, FileEvent::Skipped(Some(id), why));
                }
            }
        }
    }

    /// Filters and codecs to use for ids, or parts of ids, that no library provides
    /// (ncfilters' built-in standard filters): libraries on the plugin path come first.
    pub fn add_builtins(&mut self, parts: Vec<(FilterPart, CodecPart)>) {
        self.builtins = parts;
    }

    /// Attaches default codecs, then built-in parts, and reports the libraries skipped for an id
    /// with what serves that id now. Nothing is initialised here (see [`CodecPart::ensure_initialized`]).
    pub fn finish(mut self) -> Registry {
        let mut events = Vec::new();
        for (codec, path, keep_alive) in self.defaults {
            match self.drafts.get_mut(&codec.hdf5_id) {
                Some(draft) if draft.filter.is_some() && draft.codec.is_none() => {
                    let id = codec.hdf5_id;
                    draft.codec = Some((codec, PartSource::Library(path.clone())));
                    draft.codec_defaulted = true;
                    draft.libraries.push(keep_alive);
                    events.push((path, FileEvent::Used(id)));
                }
                _ => {
                    debug(format_args!(
                        "default codec \"{}\" ({}) unused: no HDF5-only plugin for id {}",
                        codec.codec_id,
                        path.display(),
                        codec.hdf5_id
                    ));
                    events.push((path, FileEvent::Unneeded(codec.hdf5_id)));
                }
            }
        }
        for (filter, codec) in self.builtins {
            let draft = self.drafts.entry(filter.id()).or_insert(Draft {
                filter: None,
                codec: None,
                codec_defaulted: false,
                libraries: Vec::new(),
            });
            if draft.filter.is_none() {
                draft.filter = Some((filter, PartSource::BuiltIn));
            }
            if draft.codec.is_none() {
                draft.codec = Some((codec, PartSource::BuiltIn));
            }
        }
        let plugins = self
            .drafts
            .into_iter()
            .map(|(id, d)| {
                let (filter, filter_source) = d.filter.map_or((None, None), |(f, p)| (Some(f), Some(p)));
                let (codec, codec_source) = d.codec.map_or((None, None), |(c, p)| (Some(c), Some(p)));
                Plugin {
                    id,
                    filter,
                    filter_source,
                    codec,
                    codec_source,
                    codec_defaulted: d.codec_defaulted,
                    _keep_loaded: d.libraries,
                }
            })
            .map(|plugin| (plugin.id, Arc::new(plugin)))
            .collect();
        let mut registry = Registry { plugins, log: DiscoveryLog::default(), generation: 0 };
        for SkippedForId { path, id, why } in self.skipped {
            let why = format!("{why}; {}", registry.served_by(id));
            skip(&path, &why);
            events.push((path, FileEvent::Skipped(Some(id), why)));
        }
        let mut files = self.files;
        for (path, event) in events {
            match files.iter_mut().find(|(seen, _)| *seen == path) {
                Some((_, file_events)) => file_events.push(event),
                None => files.push((path, vec![event])),
            }
        }
        registry.log = DiscoveryLog {
            plugin_path: self.plugin_path,
            dirs: self.dirs,
            files: files.into_iter().map(|(path, events)| FileRecord { path, outcome: outcome_of(events) }).collect(),
        };
        registry
    }
}

/// A file's outcome from what happened to it: used if any part of it is, else skipped if any
/// part was, else ignored.
fn outcome_of(events: Vec<FileEvent>) -> FileOutcome {
    let (mut used, mut skipped, mut unneeded, mut reasons, mut ignored) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), None);
    for event in events {
        match event {
            FileEvent::Used(id) => used.push(id),
            FileEvent::Skipped(id, why) => {
                skipped.extend(id);
                reasons.push(why);
            }
            FileEvent::Unneeded(id) => unneeded.push(id),
            FileEvent::Ignored(why) => ignored = Some(why),
        }
    }
    for ids in [&mut used, &mut skipped, &mut unneeded] {
        ids.sort_unstable();
        ids.dedup();
    }
    let reasons = (!reasons.is_empty()).then(|| reasons.join("; "));
    match (used.is_empty(), reasons) {
        (false, partly) => FileOutcome::Used { ids: used, partly },
        (true, Some(reason)) => FileOutcome::Skipped { ids: skipped, reason },
        (true, None) if !unneeded.is_empty() => {
            let ids: Vec<String> = unneeded.iter().map(u32::to_string).collect();
            FileOutcome::Ignored {
                reason: format!(
                    "codec-defaults library whose codecs no HDF5-only plugin needs (ids {})",
                    ids.join(", ")
                ),
            }
        }
        (true, None) => FileOutcome::Ignored { reason: ignored.unwrap_or_else(|| NO_ENTRY_POINTS.to_string()) },
    }
}

/// The parts built into the caller, for ids or halves of ids no library provides.
pub type Builtins = fn() -> Vec<(FilterPart, CodecPart)>;

/// Loads every directory of the plugin path in force and pairs what it found with the `builtins`.
fn discover(call: &Call<'_>, builtins: Builtins) -> Registry {
    let (dirs, plugin_path_env, generation) = PluginPathDir::in_force();
    let mut registry = discover_in(call, &dirs, plugin_path_env, builtins);
    registry.generation = generation;
    registry
}

/// [`discover`] in `dirs`, recording `plugin_path_env` as `HDF5_PLUGIN_PATH`.
fn discover_in(
    call: &Call<'_>,
    dirs: &[PluginPathDir],
    plugin_path_env: Option<String>,
    builtins: Builtins,
) -> Registry {
    let mut builder = RegistryBuilder::default();
    builder.add_builtins(builtins());
    builder.set_plugin_path(plugin_path_env);
    for plugin_path_dir in dirs {
        let PluginDir { dir, origin } = plugin_path_dir.dir();
        let (dir, origin) = (PathBuf::from(dir), *origin);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                debug(format_args!("{}: no such directory", dir.display()));
                builder.searched_dir(&dir, origin, DirState::Missing);
                continue;
            }
            Err(e) => {
                report(format_args!("plugin directory {} skipped: {e}", dir.display()));
                builder.searched_dir(&dir, origin, DirState::Unreadable(e.to_string()));
                continue;
            }
        };
        builder.searched_dir(&dir, origin, DirState::Searched);
        let mut names: Vec<String> =
            entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            if !is_plugin_file_name(&name) || path.is_dir() {
                debug(format_args!("{}: not a shared library name, ignored", path.display()));
                builder.ignore_file(&path, if path.is_dir() { A_DIRECTORY } else { NOT_A_LIBRARY_NAME });
                continue;
            }
            match plugin_loader::load_from_plugin_path(call, plugin_path_dir, &name) {
                Ok(Some((keep_alive, contents))) => builder.add(LoadedLibrary { path, keep_alive, contents }),
                Ok(None) => {
                    debug(format_args!("{}: no plugin entry points, ignored", path.display()));
                    builder.ignore_file(&path, NO_ENTRY_POINTS);
                }
                Err(why) => builder.skip_library(&path, why.id, why),
            }
        }
    }
    let registry = builder.finish();
    if debug_enabled() {
        debug(format_args!("NCZarr filter plugins:\n{}", registry.table().trim_end()));
    }
    registry
}

/// A codec read from `.zarray` that no complete plugin implements (its variable's data will
/// fail with `NC_ENOFILTER`, reported then).
pub fn note_missing(codec_id: &str, plugin: Option<&Arc<Plugin>>) {
    match plugin {
        Some(p) => debug(format_args!("codec \"{codec_id}\": plugin {} lacks its HDF5 filter", p.id)),
        None => debug(format_args!("codec \"{codec_id}\": no plugin provides it")),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

static REGISTRY: Mutex<Option<Arc<Registry>>> = Mutex::new(None);
/// Registries replaced after a plugin-path change: their codecs are finalised at [`finalize`]
/// (variables opened before the change may still use them).
static RETIRED: Mutex<Vec<Arc<Registry>>> = Mutex::new(Vec::new());
/// Serialises discovery; held while plugins initialise, never while netcdf-c is called.
static DISCOVERY: Mutex<()> = Mutex::new(());

thread_local! {
    static DISCOVERING: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as discovering until dropped, also when discovery unwinds: a flag left
/// set would make this thread see an empty registry forever.
struct Discovering;

impl Discovering {
    fn enter() -> Self {
        DISCOVERING.with(|d| d.set(true));
        Discovering
    }
}

impl Drop for Discovering {
    fn drop(&mut self) {
        DISCOVERING.with(|d| d.set(false));
    }
}

#[cfg(test)]
thread_local! {
    /// Makes this thread's next discovery panic (the registry's unwind test).
    static PANIC_IN_DISCOVERY: Cell<bool> = const { Cell::new(false) };
}

/// The registry, discovered on first use with `builtins` (asked then only: the caller that
/// links the built-in filters passes the same function every time). Within a call: discovery
/// loads plugin libraries, running their initialisers and entry points, which may use HDF5.
///
/// ```compile_fail,E0061
/// std::thread::spawn(|| ncfilters_core::plugin_registry::registry(Vec::new));
/// ```
pub fn registry(call: &Call<'_>, builtins: Builtins) -> Arc<Registry> {
    if let Some(registry) = current() {
        return registry;
    }
    // A plugin initialiser that re-enters netcdf-c's filter API sees an empty registry
    // instead of deadlocking on its own thread.
    if DISCOVERING.with(Cell::get) {
        return Arc::new(Registry::default());
    }
    let _discovery = lock(&DISCOVERY);
    if let Some(registry) = current() {
        return registry;
    }
    if let Some(stale) = lock(&REGISTRY).take() {
        lock(&RETIRED).push(stale);
    }
    let discovering = Discovering::enter();
    #[cfg(test)]
    if PANIC_IN_DISCOVERY.with(|p| p.replace(false)) {
        panic!("discovery panics (test)");
    }
    let registry = Arc::new(discover(call, builtins));
    drop(discovering);
    *lock(&REGISTRY) = Some(registry.clone());
    registry
}

/// The registry, if one was discovered for the plugin path in force.
fn current() -> Option<Arc<Registry>> {
    let registry = lock(&REGISTRY).clone()?;
    (registry.generation == crate::plugin_path::generation()).then_some(registry)
}

/// `NCZ_filter_finalize`: finalises the complete plugins' codecs and drops the registry (and
/// those a plugin-path change replaced); the libraries are unloaded once no variable uses them
/// any more. A later use discovers again. Within a call: the codecs' `NCZ_codec_finalize` runs
/// C (c-blosc's `blosc_destroy`, say) that netcdf-c's thread may be using.
///
/// ```compile_fail,E0061
/// // Not from any thread: only within a call (whose token `CallersThread::promise` makes).
/// std::thread::spawn(|| ncfilters_core::plugin_registry::finalize());
/// ```
pub fn finalize(call: &Call<'_>) {
    let mut taken: Vec<Arc<Registry>> = std::mem::take(&mut *lock(&RETIRED));
    taken.extend(lock(&REGISTRY).take());
    for registry in taken {
        for codec in registry.plugins().filter_map(|plugin| plugin.codec.as_ref()) {
            codec.finalize(call); // only if it was initialised
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin_loader::test_parts::{codec, codec_with_lifecycle, filter, keep_alive};
    use crate::{ffi_boundary::with_call, test_thread};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn plugin(filter: Option<FilterPart>, codec: Option<CodecPart>) -> LibraryContents {
        LibraryContents::Plugin { filter, codec }
    }

    fn library(path: &str, contents: LibraryContents) -> LoadedLibrary {
        LoadedLibrary { path: PathBuf::from(path), keep_alive: keep_alive(), contents }
    }

    /// Built-ins for the process-wide registry (the abi layer's, in the library, are its own).
    fn builtins() -> Vec<(FilterPart, CodecPart)> {
        vec![(filter(32015), codec("zstd", 32015))]
    }

    #[test]
    fn plugin_file_names_follow_netcdf_c() {
        for name in
            ["lib__nch5bzip2.so", "x.so.1", "x.sox", "a.dll", "b.dylib", "__nch5zstd.dll", "lib__nch5zstd.dylib"]
        {
            assert!(is_plugin_file_name(name), "{name}");
        }
        for name in ["lib.la", "x.o", "README", "so", "x.s"] {
            assert!(!is_plugin_file_name(name), "{name}");
        }
    }

    #[test]
    fn parts_from_separate_libraries_pair_and_defaults_fill_in() {
        let mut b = RegistryBuilder::default();
        b.add(library("/p/h5bzip2.so", plugin(Some(filter(307)), None)));
        b.add(library("/p/h5zstd.so", plugin(Some(filter(32015)), None)));
        b.add(library("/p/h5misc.so", plugin(Some(filter(32768)), None)));
        b.add(library("/p/nczmisc.so", plugin(None, Some(codec("test", 32768)))));
        b.add(library("/p/h5noop.so", plugin(Some(filter(40000)), Some(codec("noop", 40000)))));
        b.add(library(
            "/p/defaults.so",
            LibraryContents::Defaults(vec![Ok(codec("bz2", 307)), Ok(codec("zstd", 32015)), Ok(codec("blosc", 32001))]),
        ));
        let r = b.finish();
        for id in [307, 32015, 32768, 40000] {
            assert!(r.get(id).unwrap().is_complete(), "{id}");
        }
        assert!(r.get(32001).is_none(), "a default codec alone makes no plugin");
        assert!(r.get(307).unwrap().codec_defaulted);
        assert_eq!(r.by_codec_id("zstd").unwrap().id, 32015);
        assert_eq!(
            r.by_codec_id("test").unwrap().codec_source.as_ref().and_then(PartSource::library),
            Some(Path::new("/p/nczmisc.so"))
        );
        assert!(r.table().contains("40000  noop"));
    }

    #[test]
    fn concurrent_first_uses_share_one_registry() {
        let _no_path_change = crate::plugin_path::tests::change_lock();
        let registries: Vec<Arc<Registry>> = std::thread::scope(|s| {
            (0..8)
                .map(|_| s.spawn(|| crate::in_test_call(|call| registry(call, builtins))))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect()
        });
        assert!(registries.windows(2).all(|pair| Arc::ptr_eq(&pair[0], &pair[1])));
    }

    #[test]
    fn the_highest_id_is_complete_like_any_other() {
        let mut b = RegistryBuilder::default();
        b.add(library("/p/a.so", plugin(Some(filter(1)), Some(codec("zlib", 1)))));
        b.add(library("/p/b.so", plugin(Some(filter(65534)), Some(codec("max", 65534)))));
        assert!(b.finish().get(65534).unwrap().is_complete());
    }

    #[test]
    fn bad_and_duplicate_libraries_do_not_disturb_the_others() {
        let mut b = RegistryBuilder::default();
        b.add(library("/p/a.so", plugin(Some(filter(307)), None)));
        b.add(library("/p/b.so", plugin(Some(filter(307)), Some(codec("bz2", 307)))));
        b.add(library("/p/c.so", plugin(Some(filter(40000)), Some(codec("noop", 40001)))));
        b.add(library("/p/d.so", plugin(Some(filter(70000)), None)));
        b.add(library("/p/e.so", LibraryContents::Defaults(vec![Err("NULL entry".into()), Ok(codec("zlib", 1))])));
        b.add(library("/p/f.so", plugin(Some(filter(1)), None)));
        let r = b.finish();
        let bz = r.get(307).unwrap();
        assert_eq!(
            bz.filter_source.as_ref().and_then(PartSource::library),
            Some(Path::new("/p/a.so")),
            "first library wins the filter part"
        );
        assert_eq!(
            bz.codec_source.as_ref().and_then(PartSource::library),
            Some(Path::new("/p/b.so")),
            "the duplicate still adds its missing codec"
        );
        assert!(r.get(40000).is_none() && r.get(40001).is_none(), "mismatched ids: library ignored");
        assert!(r.get(70000).is_none());
        assert!(r.get(1).unwrap().is_complete(), "one bad defaults entry disables nothing else");
    }

    #[test]
    fn the_discovery_log_says_what_became_of_every_library() {
        let mut b = RegistryBuilder::default();
        b.add_builtins(vec![(filter(32015), codec("zstd", 32015))]);
        b.ignore_file(Path::new("/p/README"), NOT_A_LIBRARY_NAME);
        b.add(library("/p/a.so", plugin(Some(filter(307)), None)));
        b.add(library("/p/b.so", plugin(Some(filter(307)), Some(codec("bz2", 307)))));
        b.add(library("/p/c.so", plugin(Some(filter(307)), None)));
        b.skip_library(Path::new("/p/d.so"), Some(32015), "NCZ_codec_t sort 2");
        b.skip_library(Path::new("/p/e.so"), None, "cannot be loaded: bad ELF");
        b.add(library("/p/f.so", LibraryContents::Defaults(vec![Ok(codec("x", 41000))])));
        b.add(library("/p/g.so", plugin(None, None)));
        let log = b.finish().log;
        let outcome = |path: &str| log.files.iter().find(|f| f.path == Path::new(path)).map(|f| f.outcome.clone());
        assert_eq!(log.files[0].path, Path::new("/p/README"), "in the order seen");
        assert_eq!(outcome("/p/README"), Some(FileOutcome::Ignored { reason: NOT_A_LIBRARY_NAME.into() }));
        assert_eq!(outcome("/p/a.so"), Some(FileOutcome::Used { ids: vec![307], partly: None }));
        let Some(FileOutcome::Used { ids, partly: Some(partly) }) = outcome("/p/b.so") else { panic!("b.so") };
        assert_eq!((ids, partly.as_str()), (vec![307], "duplicate HDF5 filter 307, already provided by /p/a.so"));
        let Some(FileOutcome::Skipped { ids, reason }) = outcome("/p/c.so") else { panic!("c.so") };
        assert_eq!((ids, reason.as_str()), (vec![307], "duplicate HDF5 filter 307, already provided by /p/a.so"));
        let Some(FileOutcome::Skipped { ids, reason }) = outcome("/p/d.so") else { panic!("d.so") };
        assert_eq!(
            (ids, reason.as_str()),
            (vec![32015], "NCZ_codec_t sort 2; ncfilters' built-in filter serves id 32015")
        );
        let Some(FileOutcome::Skipped { ids, .. }) = outcome("/p/e.so") else { panic!("e.so") };
        assert!(ids.is_empty(), "no id known");
        assert!(matches!(outcome("/p/f.so"), Some(FileOutcome::Ignored { reason }) if reason.contains("41000")));
        assert_eq!(outcome("/p/g.so"), Some(FileOutcome::Ignored { reason: NO_ENTRY_POINTS.into() }));
    }

    #[test]
    #[cfg_attr(miri, ignore = "reads directories and dlopens")]
    fn discovery_records_directories_and_files_as_it_searches() {
        let root = std::env::temp_dir().join(format!("ncfilters-discovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("sub.so")).unwrap();
        std::fs::write(root.join("readme.txt"), "text").unwrap();
        std::fs::write(root.join("libbad.so"), "not an ELF file").unwrap();
        let (missing, file) = (root.join("missing"), root.join("readme.txt"));
        let separator = crate::plugin_path::PATH_SEPARATOR;
        let path = format!("{}{separator}{}{separator}{}", root.display(), missing.display(), file.display());
        let mut dirs = crate::plugin_path::initial_dirs(Some(&path));
        dirs.push(PluginDir { dir: "/elsewhere".into(), origin: DirOrigin::Default });
        let dirs: Vec<PluginPathDir> = dirs.into_iter().map(PluginPathDir::trusted_by_test).collect();
        let log = with_call(test_thread(), |call| discover_in(call, &dirs, Some(path.clone()), builtins).log);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(log.plugin_path, Some(path));
        let dir = |i: usize| (log.dirs[i].dir.clone(), log.dirs[i].origin, log.dirs[i].state.clone());
        assert_eq!(dir(0), (root.clone(), DirOrigin::PluginPath, DirState::Searched));
        assert_eq!(dir(1), (missing, DirOrigin::PluginPath, DirState::Missing));
        assert!(matches!(dir(2), (f, DirOrigin::PluginPath, DirState::Unreadable(_)) if f == file), "{:?}", dir(2));
        assert_eq!(log.dirs[3].origin, DirOrigin::Default);
        let files: Vec<(PathBuf, FileOutcome)> = log
            .files
            .iter()
            .filter(|f| f.path.starts_with(&root))
            .map(|f| (f.path.clone(), f.outcome.clone()))
            .collect();
        assert_eq!(files.len(), 3, "{files:?}");
        assert!(matches!(&files[0], (p, FileOutcome::Skipped { ids, reason })
            if p.ends_with("libbad.so") && ids.is_empty() && reason.starts_with("cannot be loaded")));
        assert_eq!(files[1], (file, FileOutcome::Ignored { reason: NOT_A_LIBRARY_NAME.into() }));
        assert_eq!(files[2], (root.join("sub.so"), FileOutcome::Ignored { reason: A_DIRECTORY.into() }));
    }

    #[test]
    fn a_panic_during_discovery_leaves_the_thread_able_to_discover() {
        // Its own thread: the flags are per thread. Retried while other tests' uses of the
        // shared registry keep discovery from running here.
        let discovered_after_panic = std::thread::spawn(|| {
            for _ in 0..100 {
                with_call(test_thread(), finalize);
                PANIC_IN_DISCOVERY.with(|p| p.set(true));
                let discover = || with_call(test_thread(), |call| registry(call, builtins));
                let panicked = std::panic::catch_unwind(discover).is_err();
                PANIC_IN_DISCOVERY.with(|p| p.set(false));
                if panicked {
                    return Some(discover().get(32015).is_some_and(|p| p.is_complete()));
                }
            }
            None
        })
        .join()
        .unwrap();
        assert_eq!(discovered_after_panic, Some(true), "after a panic this thread must still see the built-in filters");
    }

    static INITIALISED: AtomicUsize = AtomicUsize::new(0);
    static FINALISED: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn count_initialise() {
        INITIALISED.fetch_add(1, Ordering::SeqCst);
    }
    extern "C" fn count_finalise() {
        FINALISED.fetch_add(1, Ordering::SeqCst);
    }
    extern "C" fn abort_initialise() {
        std::process::abort();
    }
    extern "C" fn nothing() {}

    #[test]
    fn a_codec_is_initialised_on_first_use_only_and_finalised_only_if_initialised() {
        let mut b = RegistryBuilder::default();
        b.add(library(
            "/p/used.so",
            plugin(Some(filter(40500)), Some(codec_with_lifecycle("used", 40500, count_initialise, count_finalise))),
        ));
        b.add(library(
            "/p/unused.so",
            plugin(Some(filter(40501)), Some(codec_with_lifecycle("unused", 40501, count_initialise, count_finalise))),
        ));
        let r = b.finish();
        assert_eq!(INITIALISED.load(Ordering::SeqCst), 0, "discovery initialises nothing");
        let used = r.get(40500).unwrap().codec.clone().unwrap();
        crate::in_test_call(|call| {
            for _ in 0..3 {
                used.to_hdf5(call, "{\"id\": \"used\"}").unwrap();
            }
            assert_eq!(INITIALISED.load(Ordering::SeqCst), 1, "initialised once, at first use");
            for plugin in r.plugins() {
                plugin.codec.as_ref().unwrap().finalize(call);
            }
        });
        assert_eq!(FINALISED.load(Ordering::SeqCst), 1, "only the initialised codec is finalised");
    }

    #[test]
    fn a_bad_path_library_for_a_built_in_id_leaves_the_built_in_serving_it() {
        let mut b = RegistryBuilder::default();
        b.add_builtins(vec![(filter(307), codec("bz2", 307)), (filter(32015), codec("zstd", 32015))]);
        // A complete path codec whose initialiser would kill the process: never run at discovery.
        b.add(library(
            "/p/crashy_bz2.so",
            plugin(Some(filter(307)), Some(codec_with_lifecycle("bz2", 307, abort_initialise, nothing))),
        ));
        b.skip_library(Path::new("/p/bad_zstd.so"), Some(32015), "NCZ_codec_t sort 2");
        let r = b.finish();
        assert_eq!(
            r.get(307).unwrap().filter_source.as_ref().and_then(PartSource::library),
            Some(Path::new("/p/crashy_bz2.so"))
        );
        let zstd = r.get(32015).unwrap();
        assert!(zstd.is_complete() && zstd.filter_source == Some(PartSource::BuiltIn));
        assert_eq!(r.served_by(32015), "ncfilters' built-in filter serves id 32015");
        assert_eq!(r.served_by(307), "/p/crashy_bz2.so serves id 307");
        assert_eq!(r.served_by(41000), "nothing serves id 41000");
    }

    #[test]
    #[cfg_attr(miri, ignore = "dlopens libblosc, a C library Miri cannot run")]
    fn a_built_in_filter_is_usable_only_if_its_c_library_loads() {
        let mut b = RegistryBuilder::default();
        b.add_builtins(vec![(filter(32001), codec("blosc", 32001)), (filter(32015), codec("zstd", 32015))]);
        b.add(library("/p/blosc.so", plugin(Some(filter(4)), Some(codec("szip", 4)))));
        let r = b.finish();
        assert_eq!(r.get(32015).unwrap().unavailable_reason(), None, "zstd needs no C library");
        assert_eq!(r.get(4).unwrap().unavailable_reason(), None, "a path plugin is trusted to run");
        let blosc = r.get(32001).unwrap();
        assert_eq!(blosc.unavailable_reason(), crate::filters::native_library_error(32001));
    }
}
