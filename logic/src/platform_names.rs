// SPDX-License-Identifier: BSD-3-Clause
//! The names and path rules that netcdf-c's C picks per platform (`_WIN32`, `__APPLE__`), as pure
//! functions of a [`Platform`], so that the tests of any host check every platform's rules:
//! the plugin path's separator and netcdf-c 4.9.0's default directory, the plugin libraries' file
//! names, and the file names of the C libraries loaded on first use. What the running code does
//! differently per platform lives in `platform`.
#![forbid(unsafe_code)]

/// A platform whose netcdf-c rules differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and the other ELF systems.
    Unix,
    /// Windows (`_WIN32`): MinGW-w64, and MSVC (untested), whose plugin names differ only before
    /// 4.9.3 ([`windows_plugins_are_dlls`]).
    Windows,
    /// macOS: unix rules, but `.dylib` libraries.
    Apple,
}

impl Platform {
    /// The platform this build runs on.
    pub const CURRENT: Platform = if cfg!(windows) {
        Platform::Windows
    } else if cfg!(target_vendor = "apple") {
        Platform::Apple
    } else {
        Platform::Unix
    };

    pub const ALL: [Platform; 3] = [Platform::Unix, Platform::Windows, Platform::Apple];

    /// The plugin path's separator from netcdf-c 4.9.3 on: `;` on Windows, else `:`
    /// (`ncaux_plugin_path_parsen` and `_tostring` for separator `'\0'`, and the build's
    /// `PLATFORMSEP`).
    pub const fn path_separator(self) -> char {
        match self {
            Platform::Windows => ';',
            Platform::Unix | Platform::Apple => ':',
        }
    }

    /// netcdf-c 4.9.0's separators for `HDF5_PLUGIN_PATH` (`NCZ_split_plugin_path`): `;` on
    /// Windows, where `:` follows a drive letter, else `;` and `:`.
    pub const fn legacy_separators(self) -> &'static [char] {
        match self {
            Platform::Windows => &[';'],
            Platform::Unix | Platform::Apple => &[';', ':'],
        }
    }

    /// netcdf-c 4.9.0's default plugin directory given `%ALLUSERSPROFILE%` (`None`: unset):
    /// `PLUGIN_DIR_UNIX`, or on Windows `"%s/hdf5/lib/plugin"` of the variable as it is (its
    /// backslashes kept). An unset or empty variable leaves 4.9.0 with a NULL default, which it
    /// then dereferences; ncfilters has no default then.
    pub fn legacy_default_dir(self, all_users_profile: Option<&str>) -> Option<String> {
        match self {
            Platform::Windows => {
                all_users_profile.filter(|root| !root.is_empty()).map(|root| format!("{root}/hdf5/lib/plugin"))
            }
            Platform::Unix | Platform::Apple => Some(LEGACY_UNIX_DEFAULT_DIR.to_string()),
        }
    }

    /// Whether 4.9.0's "the default unless listed" matches `listed` (`nclistmatch(…, 0)`, so
    /// `strcasecmp`). Byte-equal on unix, as ncfilters always did there; ASCII case-insensitive on
    /// Windows, whose paths are.
    pub fn same_legacy_dir(self, listed: &str, default: &str) -> bool {
        match self {
            Platform::Windows => listed.eq_ignore_ascii_case(default),
            Platform::Unix | Platform::Apple => listed == default,
        }
    }

    /// The file netcdf-c's CMake builds for plugin `stem` (`h5zstd`, `zstdfilters`):
    /// `lib__nc<stem>.so` or `.dylib`; on Windows `__nc<stem>.dll` when the release names by
    /// `if(WIN32)` (4.9.3 on), while 4.9.0's `IF(MSVC)` gives MinGW the unix `lib__nc<stem>.so`.
    pub fn plugin_file(self, stem: &str, names_by_win32: bool) -> String {
        match self {
            Platform::Windows if names_by_win32 => format!("__nc{stem}.dll"),
            Platform::Windows | Platform::Unix => format!("lib__nc{stem}.so"),
            Platform::Apple => format!("lib__nc{stem}.dylib"),
        }
    }
}

/// netcdf-c 4.9.0's `PLUGIN_DIR_UNIX` (HDF5's own default is `/usr/local/hdf5/lib/plugin`).
pub const LEGACY_UNIX_DEFAULT_DIR: &str = "/usr/local/hdf5/plugin";

/// The plugin-path separator of this build's platform.
pub const PATH_SEPARATOR: char = Platform::CURRENT.path_separator();

/// Whether netcdf-c's plugin CMake names a Windows build's plugins `__nc….dll`: by `if(WIN32)` from
/// 4.9.3 on (the release that also brought the plugin-path code), by `IF(MSVC)` before it, which
/// leaves MinGW the unix names.
pub const fn windows_plugins_are_dlls(plugin_path_release: bool, msvc: bool) -> bool {
    plugin_path_release || msvc
}

/// [`windows_plugins_are_dlls`] for this build's release and compiler.
pub const NAMES_BY_WIN32: bool = windows_plugins_are_dlls(crate::PLUGIN_PATH_RELEASE, cfg!(target_env = "msvc"));

#[cfg(test)]
mod tests {
    use super::*;

    /// 4.9.0 and 4.9.2 name plugins `__nc….dll` for MSVC only, 4.9.3 on for every Windows build.
    #[test]
    fn windows_plugin_names_follow_each_release_s_cmake() {
        for (plugin_path_release, msvc, dll) in
            [(false, false, false), (false, true, true), (true, false, true), (true, true, true)]
        {
            assert_eq!(windows_plugins_are_dlls(plugin_path_release, msvc), dll, "{plugin_path_release} {msvc}");
            let expected = if dll { "__nch5zstd.dll" } else { "lib__nch5zstd.so" };
            assert_eq!(
                Platform::Windows.plugin_file("h5zstd", windows_plugins_are_dlls(plugin_path_release, msvc)),
                expected
            );
        }
    }

    #[test]
    fn separators_follow_win32() {
        assert_eq!(Platform::ALL.map(Platform::path_separator), [':', ';', ':']);
        assert_eq!(Platform::Windows.legacy_separators(), [';']);
        assert_eq!(Platform::Unix.legacy_separators(), [';', ':']);
        assert_eq!(Platform::Apple.legacy_separators(), [';', ':']);
        let expected = if cfg!(windows) { ';' } else { ':' };
        assert_eq!(PATH_SEPARATOR, expected);
    }

    #[test]
    fn legacy_default_dir_comes_from_allusersprofile_on_windows() {
        let windows = Platform::Windows;
        assert_eq!(
            windows.legacy_default_dir(Some(r"C:\ProgramData")).as_deref(),
            Some(r"C:\ProgramData/hdf5/lib/plugin")
        );
        assert_eq!(windows.legacy_default_dir(Some("")), None);
        assert_eq!(windows.legacy_default_dir(None), None);
        for unix in [Platform::Unix, Platform::Apple] {
            assert_eq!(unix.legacy_default_dir(Some(r"C:\ProgramData")).as_deref(), Some(LEGACY_UNIX_DEFAULT_DIR));
            assert_eq!(unix.legacy_default_dir(None).as_deref(), Some(LEGACY_UNIX_DEFAULT_DIR));
        }
        assert!(windows.same_legacy_dir(r"c:\programdata/HDF5/lib/plugin", r"C:\ProgramData/hdf5/lib/plugin"));
        assert!(!Platform::Unix.same_legacy_dir("/USR/local/hdf5/plugin", LEGACY_UNIX_DEFAULT_DIR));
    }

    #[test]
    fn plugin_files_follow_netcdf_c_s_cmake() {
        assert_eq!(Platform::Unix.plugin_file("h5zstd", true), "lib__nch5zstd.so");
        assert_eq!(Platform::Unix.plugin_file("h5zstd", false), "lib__nch5zstd.so");
        assert_eq!(Platform::Apple.plugin_file("zstdfilters", true), "lib__nczstdfilters.dylib");
        assert_eq!(Platform::Apple.plugin_file("zstdfilters", false), "lib__nczstdfilters.dylib");
        assert_eq!(Platform::Windows.plugin_file("h5zstd", true), "__nch5zstd.dll");
        assert_eq!(Platform::Windows.plugin_file("h5zstd", false), "lib__nch5zstd.so");
    }
}
