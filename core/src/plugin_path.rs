// SPDX-License-Identifier: BSD-3-Clause
//! The plugin path in force: the one list of directories whose libraries the plugin loader
//! loads and runs ([`crate::plugin_loader::load_from_plugin_path`]), with the rules of
//! [`ncfilters_logic::plugin_path`]. It is shared safely between threads (netcdf-c's own list is
//! an unguarded global).
//!
//! Whoever names a directory here vouches for every library in it, so only two sources do:
//! - the process's environment (`HDF5_PLUGIN_PATH`), read on first use and again after
//!   [`finalize`], as the dynamic linker reads its own search path. Changing the environment is
//!   `unsafe` from Rust 2024 on, and clippy refuses `std::env::set_var` in these crates;
//! - [`set`], which is `unsafe` for that reason: its caller is C's caller of
//!   `nc_plugin_path_set`.
//!
//! A change bumps a generation number; the NCZarr registry discovers again, lazily, when it sees
//! a newer one.

pub use ncfilters_logic::plugin_path::*;
use std::sync::{Mutex, MutexGuard};

/// The plugin path in force and how often it was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub dirs: Vec<PluginDir>,
    /// `HDF5_PLUGIN_PATH` when the list was first made (`None`: unset).
    pub plugin_path_env: Option<String>,
    /// 0 for the initial list, then one more for every [`set`].
    pub generation: u64,
}

static STATE: Mutex<Option<Snapshot>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<Snapshot>> {
    STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn initial() -> Snapshot {
    let plugin_path_env = std::env::var(PLUGIN_PATH_ENV).ok();
    Snapshot { dirs: initial_dirs(plugin_path_env.as_deref()), plugin_path_env, generation: 0 }
}

/// The plugin path in force, made from the environment on first use.
pub fn snapshot() -> Snapshot {
    state().get_or_insert_with(initial).clone()
}

/// Replaces the plugin path (`nc_plugin_path_set`); returns the new generation.
///
/// # Safety
/// Every library in `dirs` may be loaded and its code run: the caller vouches for them, as C's
/// caller of `nc_plugin_path_set` does.
///
/// ```compile_fail,E0133
/// ncfilters_core::plugin_path::set(&["/tmp/anything".to_string()]);
/// ```
pub unsafe fn set(dirs: &[String]) -> u64 {
    let mut state = state();
    let generation = state.as_ref().map_or(1, |s| s.generation + 1);
    let plugin_path_env =
        state.as_ref().map_or_else(|| std::env::var(PLUGIN_PATH_ENV).ok(), |s| s.plugin_path_env.clone());
    let dirs = dirs.iter().map(|dir| PluginDir::new(dir, DirOrigin::Set)).collect();
    *state = Some(Snapshot { dirs, plugin_path_env, generation });
    generation
}

/// Forgets the list (`nc_finalize`): the next use makes it from the environment again.
pub fn finalize() {
    *state() = None;
}

/// The generation of the list in force, without making one.
pub fn generation() -> u64 {
    state().as_ref().map_or(0, |s| s.generation)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Held by a test that changes the plugin path, and by one that must not see it change.
    pub(crate) fn change_lock() -> MutexGuard<'static, ()> {
        static CHANGE: Mutex<()> = Mutex::new(());
        CHANGE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[test]
    fn set_replaces_the_list_and_bumps_the_generation() {
        let _change = change_lock();
        let before = snapshot().generation;
        // SAFETY: nothing loads from these directories, which do not exist.
        let generation = unsafe { set(&["/nonexistent/x".to_string(), "/nonexistent/y".to_string()]) };
        assert!(generation > before);
        let now = snapshot();
        assert_eq!(now.generation, generation);
        let expected =
            [PluginDir::new("/nonexistent/x", DirOrigin::Set), PluginDir::new("/nonexistent/y", DirOrigin::Set)];
        assert_eq!(now.dirs, expected);
        assert_eq!(self::generation(), generation);
    }
}
