// SPDX-License-Identifier: BSD-3-Clause
//! The table of standard filters: one row per filter, the one place their facts are written.
//!
//! Everything else is derived from it: the [`Codec`] enum and its ids, the plugin libraries'
//! classes and codecs and the codec-defaults lists (ncfilters-plugin's `plugin`), the HDF5 stand-ins and
//! NCZarr's built-ins (`abi::builtin`), which filters need a C library loaded at run time
//! (ncfilters-core's `filters`), and, through `tools/gen-headers`, the CMake module's plugin list
//! (`cmake/ncfilters_plugins.cmake`), the harness's plugin checks and the README's table.
//! `tests/standard_filter_table.rs` checks what cannot be generated (the plugin crates).
//!
//! Adding a standard filter is one row here plus its byte format: its module in `filters/src/` (or
//! `core/src/filters/` for a filter on a C library),
//! its `H5Z_func_t` in `plugins/common/src/h5z.rs` (bound in `h5z::hdf5_functions`), its codec in `logic/src/codecs.rs`
//! (the compiler lists the `match`es that lack it) and its plugin crate `plugins/h5<filter>`.
#![forbid(unsafe_code)]

use crate::platform_names::{Platform, NAMES_BY_WIN32};

/// Calls `$then!` with the rows of the table, in table order: the order of the stand-in
/// registrations, of NCZarr's built-ins and of the codec-defaults lists. A row:
///
/// `filter: Codec = HDF5 id, "Zarr codec id", codec-defaults library, in HDF5, C library, netcdf-c's plugin;`
///
/// - `filter` names the filter (HDF5 class name, plugin library `lib__nch5<filter>.so`, plugin
///   crate and CMake target `h5<filter>`) and its modules in `filters` and `abi`;
/// - `Codec` is its variant of [`Codec`];
/// - the codec-defaults library is the [`CodecDefaults`] library listing its codec;
/// - in HDF5 is [`InHdf5`]: whether HDF5 predefines the filter;
/// - the C library is the [`NativeLibrary`] loaded at run time, if any;
/// - netcdf-c's plugin is [`NetcdfPlugin`]: whether netcdf-c 4.9.0 always builds its C plugin target.
#[macro_export]
macro_rules! standard_filter_rows {
    ($then:ident) => {
        $then! {
            // filter   Codec        HDF5 id  Zarr codec    codec defaults  in HDF5      C library       netcdf-c's plugin
            deflate:    Zlib       = 1,       "zlib",       Hdf5Filters,    Predefined,  None,           Always;
            shuffle:    Shuffle    = 2,       "shuffle",    Hdf5Filters,    Predefined,  None,           Always;
            fletcher32: Fletcher32 = 3,       "fletcher32", Hdf5Filters,    Predefined,  None,           Always;
            szip:       Szip       = 4,       "szip",       Hdf5Filters,    Predefined,  Some(Libsz),    IfLibraryFound;
            bzip2:      Bz2        = 307,     "bz2",        StdFilters,     StandIn,     None,           Always;
            zstd:       Zstd       = 32015,   "zstd",       StdFilters,     StandIn,     None,           IfLibraryFound;
            blosc:      Blosc      = 32001,   "blosc",      StdFilters,     StandIn,     Some(Libblosc), IfLibraryFound;
        }
    };
}
pub use crate::standard_filter_rows;

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardFilterRow {
    /// The filter's name, also its HDF5 class name (as netcdf-c's C plugin names it).
    pub name: &'static str,
    /// The HDF5 filter id.
    pub id: u32,
    pub codec: Codec,
    /// The Zarr (numcodecs) codec id.
    pub codec_id: &'static str,
    /// The plugin library netcdf-c builds for it on Linux, `lib__nch5<name>.so` (the README's
    /// table and the CMake list name these); [`StandardFilterRow::plugin_file`] is this platform's.
    pub plugin_library: &'static str,
    /// netcdf-c's CMake target of that library, also the plugin crate's directory in `plugins/`.
    pub plugin_target: &'static str,
    /// The codec-defaults library whose `NCZ_codec_info_defaults` lists its codec.
    pub codec_defaults: CodecDefaults,
    pub in_hdf5: InHdf5,
    /// The C library the filter loads on first use (`None`: all Rust).
    pub native_library: Option<NativeLibrary>,
    pub netcdf_plugin: NetcdfPlugin,
}

/// netcdf-c's two codec-defaults libraries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecDefaults {
    /// `lib__nczhdf5filters.so`: the codecs of HDF5's own filters.
    Hdf5Filters,
    /// `lib__nczstdfilters.so`: the codecs of the other standard filters.
    StdFilters,
}

impl CodecDefaults {
    pub const ALL: [CodecDefaults; 2] = [CodecDefaults::Hdf5Filters, CodecDefaults::StdFilters];

    /// netcdf-c's CMake target, also the crate's directory in `plugins/`.
    pub const fn target(self) -> &'static str {
        match self {
            CodecDefaults::Hdf5Filters => "nczhdf5filters",
            CodecDefaults::StdFilters => "nczstdfilters",
        }
    }

    /// The library's file on Linux; [`CodecDefaults::file`] is this platform's.
    pub const fn library(self) -> &'static str {
        match self {
            CodecDefaults::Hdf5Filters => "lib__nczhdf5filters.so",
            CodecDefaults::StdFilters => "lib__nczstdfilters.so",
        }
    }

    /// The library's file as this release's netcdf-c names it here.
    pub fn file(self) -> String {
        self.file_on(Platform::CURRENT, NAMES_BY_WIN32)
    }

    /// The library's file as netcdf-c names it on `platform` (see [`Platform::plugin_file`]).
    pub fn file_on(self, platform: Platform, names_by_win32: bool) -> String {
        platform.plugin_file(plugin_stem(self.library()), names_by_win32)
    }

    /// How many codecs the library lists.
    pub const fn codec_count(self) -> usize {
        let mut count = 0;
        let mut row = 0;
        while row < STANDARD_FILTERS.len() {
            if STANDARD_FILTERS[row].codec_defaults as u8 == self as u8 {
                count += 1;
            }
            row += 1;
        }
        count
    }
}

/// Whether HDF5 has the filter itself. Either way a stand-in is registered at netCDF
/// initialisation when HDF5 has no class for the id (`abi::builtin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InHdf5 {
    /// HDF5's predefined filter (szip only where HDF5 was built with it): HDF5's own class runs.
    Predefined,
    /// Not in HDF5: ncfilters' stand-in is registered unless the application registered a class.
    StandIn,
}

/// A C library a filter loads the first time it runs, instead of libnetcdf linking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeLibrary {
    /// c-blosc 1.x.
    Libblosc,
    /// libaec's szip-compatible library.
    Libsz,
}

impl NativeLibrary {
    pub const fn name(self) -> &'static str {
        match self {
            NativeLibrary::Libblosc => "libblosc",
            NativeLibrary::Libsz => "libsz",
        }
    }

    /// The file names tried here, in order (see [`NativeLibrary::sonames_on`]).
    pub const fn sonames(self) -> &'static [&'static str] {
        self.sonames_on(Platform::CURRENT)
    }

    /// The file names tried on `platform`, in order: on unix the runtime soname, then the
    /// development link; on Windows MinGW's (MSYS2's) names, then MSVC builds' (vcpkg, HDF5's
    /// binaries: `blosc.dll`, `szip.dll`); on macOS the install name, then the link.
    pub const fn sonames_on(self, platform: Platform) -> &'static [&'static str] {
        match (self, platform) {
            (NativeLibrary::Libblosc, Platform::Unix) => &["libblosc.so.1", "libblosc.so"],
            (NativeLibrary::Libsz, Platform::Unix) => &["libsz.so.2", "libsz.so"],
            (NativeLibrary::Libblosc, Platform::Windows) => &["libblosc.dll", "blosc.dll"],
            // libaec's CMake names it libsz.dll, a libtool build libsz-2.dll; libaec.dll lacks SZ_*.
            (NativeLibrary::Libsz, Platform::Windows) => &["libsz.dll", "libsz-2.dll", "szip.dll"],
            (NativeLibrary::Libblosc, Platform::Apple) => &["libblosc.1.dylib", "libblosc.dylib"],
            (NativeLibrary::Libsz, Platform::Apple) => &["libsz.2.dylib", "libsz.dylib"],
        }
    }

    /// The project that ships it, for advice on what to install.
    pub const fn project(self) -> &'static str {
        match self {
            NativeLibrary::Libblosc => "c-blosc 1.x",
            NativeLibrary::Libsz => "libaec's libsz",
        }
    }
}

/// When netcdf-c 4.9.0 defines the filter's C plugin target (`plugins/CMakeLists.txt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetcdfPlugin {
    /// Always (bzip2 from bundled sources when libbz2 is missing).
    Always,
    /// Only when its configure found the filter's C library (libsz, libzstd, libblosc).
    IfLibraryFound,
}

macro_rules! define_table {
    ($($filter:ident: $codec:ident = $id:literal, $codec_id:literal, $defaults:ident, $in_hdf5:ident, $native:expr, $netcdf_plugin:ident;)*) => {
        /// The standard filters' codecs, one per row, in table order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Codec {
            $($codec,)*
        }

        /// The table.
        pub static STANDARD_FILTERS: [StandardFilterRow; [$($id),*].len()] = {
            use NativeLibrary::*;
            [$(StandardFilterRow {
                name: stringify!($filter),
                id: $id,
                codec: Codec::$codec,
                codec_id: $codec_id,
                plugin_library: concat!("lib__nch5", stringify!($filter), ".so"),
                plugin_target: concat!("h5", stringify!($filter)),
                codec_defaults: CodecDefaults::$defaults,
                in_hdf5: InHdf5::$in_hdf5,
                native_library: $native,
                netcdf_plugin: NetcdfPlugin::$netcdf_plugin,
            },)*]
        };
    };
}
standard_filter_rows!(define_table);

impl Codec {
    /// The codec's row.
    pub const fn row(self) -> &'static StandardFilterRow {
        // The variants are declared in table order.
        &STANDARD_FILTERS[self as usize]
    }

    /// The numcodecs id.
    pub const fn codec_id(self) -> &'static str {
        self.row().codec_id
    }

    /// The HDF5 filter id.
    pub const fn hdf5_id(self) -> u32 {
        self.row().id
    }
}

impl StandardFilterRow {
    /// The plugin library's file as this release's netcdf-c names it here.
    pub fn plugin_file(&self) -> String {
        self.plugin_file_on(Platform::CURRENT, NAMES_BY_WIN32)
    }

    /// The plugin library's file as netcdf-c names it on `platform` (see [`Platform::plugin_file`]).
    pub fn plugin_file_on(&self, platform: Platform, names_by_win32: bool) -> String {
        platform.plugin_file(plugin_stem(self.plugin_library), names_by_win32)
    }
}

/// The part of a Linux plugin file name after `lib__nc`: netcdf-c's `TARGETLIB` (`h5zstd`).
pub fn plugin_stem(linux_file: &str) -> &str {
    let stem = linux_file.strip_prefix("lib__nc").and_then(|rest| rest.strip_suffix(".so"));
    stem.expect("a plugin file is named lib__nc<stem>.so on Linux")
}

/// The row of HDF5 filter `id`, if it is a standard filter.
pub fn standard_filter(id: u32) -> Option<&'static StandardFilterRow> {
    STANDARD_FILTERS.iter().find(|row| row.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c_types::ids;

    #[test]
    fn ids_are_netcdf_filter_h_s() {
        let header = [
            ("deflate", ids::H5Z_FILTER_DEFLATE),
            ("shuffle", ids::H5Z_FILTER_SHUFFLE),
            ("fletcher32", ids::H5Z_FILTER_FLETCHER32),
            ("szip", ids::H5Z_FILTER_SZIP),
            ("bzip2", ids::H5Z_FILTER_BZIP2),
            ("zstd", ids::H5Z_FILTER_ZSTD),
            ("blosc", ids::H5Z_FILTER_BLOSC),
        ];
        for (name, id) in header {
            assert_eq!(standard_filter(id).map(|row| row.name), Some(name));
        }
    }

    #[test]
    fn rows_are_distinct_and_in_variant_order() {
        for (index, row) in STANDARD_FILTERS.iter().enumerate() {
            assert_eq!(row.codec as usize, index);
            assert_eq!(row.codec.row(), row);
            let others = STANDARD_FILTERS.iter().filter(|other| other != &row);
            for other in others {
                assert!(other.id != row.id && other.name != row.name && other.codec_id != row.codec_id);
            }
        }
        let listed: usize = CodecDefaults::ALL.iter().map(|library| library.codec_count()).sum();
        assert_eq!(listed, STANDARD_FILTERS.len());
    }

    #[test]
    fn plugin_files_per_platform() {
        let zstd = standard_filter(ids::H5Z_FILTER_ZSTD).unwrap();
        assert_eq!(zstd.plugin_file_on(Platform::Unix, true), "lib__nch5zstd.so");
        assert_eq!(zstd.plugin_file_on(Platform::Apple, true), "lib__nch5zstd.dylib");
        assert_eq!(zstd.plugin_file_on(Platform::Windows, true), "__nch5zstd.dll");
        assert_eq!(zstd.plugin_file_on(Platform::Windows, false), "lib__nch5zstd.so");
        let defaults = CodecDefaults::Hdf5Filters;
        assert_eq!(defaults.file_on(Platform::Windows, true), "__nczhdf5filters.dll");
        assert_eq!(defaults.file_on(Platform::Apple, false), "lib__nczhdf5filters.dylib");
        for row in &STANDARD_FILTERS {
            assert_eq!(row.plugin_file_on(Platform::Unix, NAMES_BY_WIN32), row.plugin_library);
            if Platform::CURRENT == Platform::Unix {
                assert_eq!(row.plugin_file(), row.plugin_library);
            }
        }
        for defaults in CodecDefaults::ALL {
            assert_eq!(defaults.file_on(Platform::Unix, NAMES_BY_WIN32), defaults.library());
        }
    }

    #[test]
    fn native_libraries_per_platform() {
        assert_eq!(NativeLibrary::Libblosc.sonames_on(Platform::Unix), ["libblosc.so.1", "libblosc.so"]);
        assert_eq!(NativeLibrary::Libsz.sonames_on(Platform::Unix), ["libsz.so.2", "libsz.so"]);
        assert_eq!(NativeLibrary::Libblosc.sonames_on(Platform::Windows)[0], "libblosc.dll");
        assert_eq!(NativeLibrary::Libsz.sonames_on(Platform::Windows), ["libsz.dll", "libsz-2.dll", "szip.dll"]);
        assert_eq!(NativeLibrary::Libblosc.sonames_on(Platform::Apple)[0], "libblosc.1.dylib");
        assert_eq!(NativeLibrary::Libsz.sonames_on(Platform::Apple)[0], "libsz.2.dylib");
        assert_eq!(NativeLibrary::Libsz.sonames(), NativeLibrary::Libsz.sonames_on(Platform::CURRENT));
    }
}
