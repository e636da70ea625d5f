// SPDX-License-Identifier: BSD-3-Clause
//! The plugin path's rules: the one list of directories, per process, in which the NCZarr
//! registry (and, from netcdf-c 4.9.3 on, HDF5) looks for filter plugins. The list in force,
//! which the plugin loader trusts and `nc_plugin_path_get`/`_set` read and replace, is held by
//! core (`ncfilters_core::plugin_path`).
//!
//! The initial list follows the release ncfilters is built into (Windows in brackets):
//! - 4.9.0: `HDF5_PLUGIN_PATH` split on `;` and `:` \[`;`\], empty pieces dropped (an empty variable
//!   counts as unset), then netcdf-c's default `/usr/local/hdf5/plugin`
//!   [`%ALLUSERSPROFILE%/hdf5/lib/plugin`, none when that is unset] unless listed;
//! - 4.9.3 and later: `HDF5_PLUGIN_PATH` split on `:` \[`;`\] only, empty pieces kept (an empty
//!   variable is an empty list), and when it is unset the build's `NETCDF_PLUGIN_SEARCH_PATH`.
#![forbid(unsafe_code)]

use crate::platform_names::Platform;
/// The platform's separator, for `'\0'` in the `ncaux_plugin_path_*` calls.
pub use crate::platform_names::PATH_SEPARATOR;

pub const PLUGIN_PATH_ENV: &str = "HDF5_PLUGIN_PATH";
/// netcdf-c 4.9.0's default off Windows (`PLUGIN_DIR_UNIX`; note HDF5's own is
/// `/usr/local/hdf5/lib/plugin`); [`default_plugin_dir`] is this platform's.
pub const DEFAULT_PLUGIN_DIR: &str = crate::platform_names::LEGACY_UNIX_DEFAULT_DIR;
/// The variable 4.9.0 builds its Windows default from (`WIN32_ROOT_ENV`).
pub const WINDOWS_ROOT_ENV: &str = "ALLUSERSPROFILE";

/// netcdf-c 4.9.0's default plugin directory here, read from the environment on Windows.
pub fn default_plugin_dir() -> Option<String> {
    let root = if Platform::CURRENT == Platform::Windows { std::env::var(WINDOWS_ROOT_ENV).ok() } else { None };
    Platform::CURRENT.legacy_default_dir(root.as_deref())
}
/// The netcdf-c release's build-time search path (`NETCDF_PLUGIN_SEARCH_PATH`), from 4.9.3 on
/// the list when `HDF5_PLUGIN_PATH` is unset.
pub const RELEASE_SEARCH_PATH: &str = env!("NCFILTERS_PLUGIN_SEARCH_PATH");

/// Where a directory of the plugin path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirOrigin {
    /// A piece of `HDF5_PLUGIN_PATH`.
    PluginPath,
    /// The default: 4.9.0's [`DEFAULT_PLUGIN_DIR`], or a later release's [`RELEASE_SEARCH_PATH`].
    Default,
    /// Set by the application (`nc_plugin_path_set`).
    Set,
}

/// One directory of the plugin path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginDir {
    pub dir: String,
    pub origin: DirOrigin,
}

impl PluginDir {
    pub fn new(dir: &str, origin: DirOrigin) -> Self {
        PluginDir { dir: dir.to_string(), origin }
    }
}

/// Whether this build follows netcdf-c 4.9.3's plugin-path rules (else 4.9.0's).
pub const RELEASE_RULES: bool = crate::PLUGIN_PATH_RELEASE;

/// The initial plugin path for `HDF5_PLUGIN_PATH` = `plugin_path` (`None`: unset).
pub fn initial_dirs(plugin_path: Option<&str>) -> Vec<PluginDir> {
    if RELEASE_RULES {
        release_initial_dirs(Platform::CURRENT, plugin_path, RELEASE_SEARCH_PATH)
    } else {
        legacy_initial_dirs(Platform::CURRENT, plugin_path, default_plugin_dir().as_deref())
    }
}

/// 4.9.3's rule (`buildinitialpluginpath`): `plugin_path`, else the build's `search_path`, split
/// on the platform's separator (`ncaux_plugin_path_parse(…, '\0', …)`).
pub fn release_initial_dirs(platform: Platform, plugin_path: Option<&str>, search_path: &str) -> Vec<PluginDir> {
    let (text, origin) = match plugin_path {
        Some(path) => (path, DirOrigin::PluginPath),
        None => (search_path, DirOrigin::Default),
    };
    split_keeping_empty(text, platform.path_separator()).map(|dir| PluginDir::new(dir, origin)).collect()
}

/// 4.9.0's rule (`NCZ_load_all_plugins`): `plugin_path` split on the platform's separators, empty
/// pieces dropped, then `default` unless listed.
pub fn legacy_initial_dirs(platform: Platform, plugin_path: Option<&str>, default: Option<&str>) -> Vec<PluginDir> {
    let mut dirs: Vec<PluginDir> = plugin_path
        .unwrap_or("")
        .split(platform.legacy_separators())
        .filter(|piece| !piece.is_empty())
        .map(|piece| PluginDir::new(piece, DirOrigin::PluginPath))
        .collect();
    if let Some(default) = default {
        if !dirs.iter().any(|d| platform.same_legacy_dir(&d.dir, default)) {
            dirs.push(PluginDir::new(default, DirOrigin::Default));
        }
    }
    dirs
}

/// netcdf-c 4.9.3's `ncaux_plugin_path_parse(path, separator, …)`: every piece, empty ones too;
/// an empty text has none.
fn split_keeping_empty(path: &str, separator: char) -> impl Iterator<Item = &str> {
    let pieces = if path.is_empty() { None } else { Some(path.split(separator)) };
    pieces.into_iter().flatten()
}

/// `ncaux_plugin_path_parsen`'s rule: split `text` on `separator` (`None`: the platform's, `:` or
/// on Windows `;`), keeping empty pieces; an empty text has no pieces.
pub fn parse(text: &str, separator: Option<char>) -> Vec<String> {
    split_keeping_empty(text, separator.unwrap_or(PATH_SEPARATOR)).map(String::from).collect()
}

/// `ncaux_plugin_path_tostring`'s rule: the directories joined with `separator` (`None`: the
/// platform's).
pub fn join<S: AsRef<str>>(dirs: &[S], separator: Option<char>) -> String {
    let separator = separator.unwrap_or(PATH_SEPARATOR).to_string();
    dirs.iter().map(AsRef::as_ref).collect::<Vec<&str>>().join(&separator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(path: Option<&str>) -> Vec<String> {
        initial_dirs(path).into_iter().map(|d| d.dir).collect()
    }

    #[test]
    #[cfg(not(ncf_plugin_path_release))]
    fn release_4_9_0_splits_on_the_platform_s_separators_and_ends_with_the_default() {
        // On Windows only `;` separates (a `:` follows a drive letter), and the default comes
        // from ALLUSERSPROFILE.
        let default = default_plugin_dir();
        let pieces = if cfg!(windows) { ["/a", "/b::/c"].as_slice() } else { &["/a", "/b", "/c"] };
        let mut expected: Vec<String> = pieces.iter().map(|dir| dir.to_string()).collect();
        expected.extend(default.clone());
        assert_eq!(dirs(Some("/a;/b::/c")), expected);
        assert_eq!(dirs(Some("")), default.iter().cloned().collect::<Vec<_>>());
        let unset: Vec<PluginDir> = default.iter().map(|dir| PluginDir::new(dir, DirOrigin::Default)).collect();
        assert_eq!(initial_dirs(None), unset);
        if !cfg!(windows) {
            assert_eq!(default.as_deref(), Some(DEFAULT_PLUGIN_DIR));
        }
        if let Some(default) = &default {
            let listed = initial_dirs(Some(&format!("{default}{PATH_SEPARATOR}/x")));
            assert_eq!(listed[0], PluginDir::new(default, DirOrigin::PluginPath), "listed: from the path");
            assert_eq!(listed.len(), 2);
        }
    }

    #[test]
    #[cfg(ncf_plugin_path_release)]
    fn later_releases_split_on_colons_keep_empty_pieces_and_default_to_the_search_path() {
        if cfg!(windows) {
            assert_eq!(dirs(Some("C:/a:b;;/c")), ["C:/a:b", "", "/c"], "';' only, on Windows");
        } else {
            assert_eq!(dirs(Some("/a;/b::/c")), ["/a;/b", "", "/c"]);
        }
        assert!(dirs(Some("")).is_empty(), "an empty HDF5_PLUGIN_PATH is no directory");
        let default = initial_dirs(None);
        assert_eq!(default.iter().map(|d| d.dir.as_str()).collect::<Vec<_>>(), parse(RELEASE_SEARCH_PATH, None));
        assert!(default.iter().all(|d| d.origin == DirOrigin::Default));
    }

    fn on(dirs: Vec<PluginDir>) -> Vec<(String, DirOrigin)> {
        dirs.into_iter().map(|d| (d.dir, d.origin)).collect()
    }

    fn pairs(list: &[(&str, DirOrigin)]) -> Vec<(String, DirOrigin)> {
        list.iter().map(|&(dir, origin)| (dir.to_string(), origin)).collect()
    }

    #[test]
    fn release_rules_split_on_the_platform_s_separator() {
        use DirOrigin::{Default, PluginPath};
        let search = "C:/netcdf/hdf5/lib/plugin;C:/ProgramData/hdf5/lib/plugin";
        let windows = |path| on(release_initial_dirs(Platform::Windows, path, search));
        assert_eq!(windows(Some("C:/a;;D:/b")), pairs(&[("C:/a", PluginPath), ("", PluginPath), ("D:/b", PluginPath)]));
        assert_eq!(
            windows(None),
            pairs(&[("C:/netcdf/hdf5/lib/plugin", Default), ("C:/ProgramData/hdf5/lib/plugin", Default)])
        );
        assert!(windows(Some("")).is_empty());
        for unix in [Platform::Unix, Platform::Apple] {
            let dirs = on(release_initial_dirs(unix, Some("/a;/b::/c"), "/x:/y"));
            assert_eq!(dirs, pairs(&[("/a;/b", PluginPath), ("", PluginPath), ("/c", PluginPath)]));
            assert_eq!(on(release_initial_dirs(unix, None, "/x:/y")), pairs(&[("/x", Default), ("/y", Default)]));
        }
    }

    #[test]
    fn legacy_rules_per_platform() {
        use DirOrigin::{Default, PluginPath};
        let root = Platform::Windows.legacy_default_dir(Some(r"C:\ProgramData"));
        let windows = |path| on(legacy_initial_dirs(Platform::Windows, path, root.as_deref()));
        let default = r"C:\ProgramData/hdf5/lib/plugin";
        assert_eq!(
            windows(Some("C:/a;;D:/b")),
            pairs(&[("C:/a", PluginPath), ("D:/b", PluginPath), (default, Default)])
        );
        assert_eq!(windows(None), pairs(&[(default, Default)]));
        assert_eq!(windows(Some(r"c:\programdata/hdf5/lib/plugin")).len(), 1, "listed, in any case");
        let unset = legacy_initial_dirs(Platform::Windows, Some("C:/a"), None);
        assert_eq!(on(unset), pairs(&[("C:/a", PluginPath)]), "no ALLUSERSPROFILE: no default");
        for unix in [Platform::Unix, Platform::Apple] {
            let dirs = on(legacy_initial_dirs(unix, Some("/a;/b::/c"), Some(DEFAULT_PLUGIN_DIR)));
            let expected = [("/a", PluginPath), ("/b", PluginPath), ("/c", PluginPath), (DEFAULT_PLUGIN_DIR, Default)];
            assert_eq!(dirs, pairs(&expected));
        }
    }

    #[test]
    #[cfg(not(windows))]
    fn the_default_dir_off_windows_is_4_9_0_s() {
        assert_eq!(default_plugin_dir().as_deref(), Some(DEFAULT_PLUGIN_DIR));
        assert_eq!(join(&["/a", "/b"], None), "/a:/b");
        assert_eq!(parse("/a;/b:/c", None), ["/a;/b", "/c"]);
    }

    #[test]
    fn parse_and_join_follow_ncaux() {
        assert_eq!(parse("/zero;/one;;/two", Some(';')), ["/zero", "/one", "", "/two"]);
        assert_eq!(parse(&format!("/a{PATH_SEPARATOR}/b"), None), ["/a", "/b"]);
        assert!(parse("", Some(';')).is_empty());
        assert_eq!(join(&["/a", "", "/b"], Some(';')), "/a;;/b");
        assert_eq!(join::<&str>(&[], None), "");
    }
}
