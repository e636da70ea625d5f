// SPDX-License-Identifier: BSD-3-Clause
//! The command line (clap derive).

use clap::{CommandFactory, Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  ncfilters list                         every filter, where it comes from, netCDF-4 / NCZarr use
  ncfilters explain blosc                why blosc is (not) usable and what to change
  ncfilters explain 32015                the same by HDF5 filter id
  HDF5_PLUGIN_PATH=/opt/plugins ncfilters path
                                         the plugin directories searched, and their state
  ncfilters spec 'zstd,3|shuffle'        what nccopy -F 'zstd,3|shuffle' means
  ncfilters codec '{\"id\":\"zstd\",\"level\":3}'
                                         the HDF5 filter of an NCZarr codec
  ncfilters --json list                  the same as JSON (every subcommand)

Exit status:
  0  success
  1  explain: the filter is usable neither for netCDF-4 nor for NCZarr
  2  usage error (bad command line)
  3  the input was rejected: bad filter spec, bad or unknown codec JSON, unknown filter name
  4  failure: the library failed or returned unreadable JSON, or the output could not be written

Environment:
  HDF5_PLUGIN_PATH  directories searched for plugin libraries (netCDF-4 and NCZarr), separated by ':'
                    (';' on Windows; 4.9.0 and 4.9.2 take ';' too); not needed for the standard filters
  NCFILTERS_THREADS
                    how many threads a large chunk may use (1: the caller's only); default: the CPUs
                    the process may run on
  NCFILTERS_CODEC_DIALECT
                    numeric or legacy: the codec JSON NCZarr writes, and so what spec and codec show
  NCFILTERS_DEBUG=1
                    what the plugin search found, skipped and why
  NCFILTERS_QUIET=1
                    no 'ncfilters: ...' lines on stderr
  NCFILTERS_ALL_RANKS=1
                    in an MPI job, every rank prints, not only rank 0";

/// Which filters libnetcdf (built with ncfilters) can use for netCDF-4 and NCZarr, and why.
///
/// Everything shown is this process's view through libnetcdf: the same plugin discovery, with the
/// same HDF5_PLUGIN_PATH, that a netCDF program started here would see.
#[derive(Parser, Debug, PartialEq, Eq)]
#[command(name = "ncfilters", version, about, long_about, after_help = EXAMPLES)]
pub struct Cli {
    /// Print JSON (pretty-printed, stable shape) instead of text.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum Command {
    /// One row per filter: id, name, NCZarr codec id, netCDF-4 and NCZarr use, where it comes from.
    ///
    /// The source is "HDF5 predefined", "built into libnetcdf", or "plugin LIBRARY" (for
    /// netCDF-4; NCZarr's is added when it differs). Always exits 0 when the report can be read.
    #[command(after_help = "Example:\n  ncfilters list\n  ncfilters --json list")]
    List,

    /// Why a filter is usable or not, which implementation wins, and what to change.
    ///
    /// Shows the directories searched, the libraries that declare the filter (and why any was
    /// skipped), the implementation that wins for netCDF-4 and for NCZarr, and what to set or install
    /// to change that. Exits 1 when the filter is usable neither for netCDF-4 nor for NCZarr (also
    /// for an id nothing provides), 3 for a name no known filter has.
    #[command(after_help = "Examples:\n  ncfilters explain zstd\n  ncfilters explain 32001\n  ncfilters explain BZ2")]
    Explain {
        /// An HDF5 filter id (decimal), or a filter name or NCZarr codec id (case-insensitive,
        /// e.g. deflate, zlib, bzip2, bz2, zstd, blosc, szip).
        #[arg(value_name = "ID|NAME")]
        filter: String,
    },

    /// The effective plugin path: each directory, where it came from, and its state.
    #[command(after_help = "Examples:\n  ncfilters path\n  HDF5_PLUGIN_PATH=/a:/b ncfilters path")]
    Path,

    /// Parse a filter spec as nccopy -F does: ids, parameters and NCZarr codec JSON per filter.
    ///
    /// Exits 3 with the parser's error when the spec is rejected.
    #[command(after_help = "Examples:\n  ncfilters spec 'zstd,3'\n  ncfilters spec 'shuffle|deflate,5'\n  \
                            ncfilters spec '32015,3'")]
    Spec {
        /// The filter spec: filters separated by '|', each a name or id with ','-separated parameters.
        #[arg(value_name = "SPEC")]
        spec: String,
    },

    /// The HDF5 filter id and parameters of one NCZarr codec JSON object.
    ///
    /// Exits 3 when the JSON is malformed or names an unknown codec.
    #[command(after_help = "Examples:\n  ncfilters codec '{\"id\":\"zstd\",\"level\":3}'\n  \
                            ncfilters codec '{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1}'")]
    Codec {
        /// One codec JSON object, as in a .zarray's "compressor" or "filters".
        #[arg(value_name = "JSON")]
        codec: String,
    },
}

/// The clap command with a run-time version: this program's, and the libnetcdf it runs with
/// (`nc_inq_libvers`).
pub fn command(libnetcdf_version: Option<&str>) -> clap::Command {
    let version = match libnetcdf_version {
        Some(libvers) => format!("{} (libnetcdf {})", env!("CARGO_PKG_VERSION"), libvers.trim()),
        None => env!("CARGO_PKG_VERSION").to_string(),
    };
    Cli::command().version(version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let matches = command(None).try_get_matches_from(args)?;
        Cli::from_arg_matches(&matches)
    }

    #[test]
    fn the_command_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn subcommands_and_the_global_json_flag() {
        assert_eq!(parse(&["ncfilters", "list"]).unwrap(), Cli { json: false, command: Command::List });
        assert_eq!(parse(&["ncfilters", "--json", "path"]).unwrap(), Cli { json: true, command: Command::Path });
        assert_eq!(
            parse(&["ncfilters", "explain", "zstd", "--json"]).unwrap(),
            Cli { json: true, command: Command::Explain { filter: "zstd".into() } }
        );
        assert_eq!(
            parse(&["ncfilters", "spec", "zstd,3|shuffle"]).unwrap().command,
            Command::Spec { spec: "zstd,3|shuffle".into() }
        );
        assert_eq!(
            parse(&["ncfilters", "codec", r#"{"id":"zstd"}"#]).unwrap().command,
            Command::Codec { codec: r#"{"id":"zstd"}"#.into() }
        );
    }

    #[test]
    fn usage_errors_exit_2() {
        for args in [&["ncfilters"][..], &["ncfilters", "explain"], &["ncfilters", "lst"], &["ncfilters", "list", "x"]]
        {
            let error = parse(args).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn help_has_examples_and_exit_codes_and_version_names_libnetcdf() {
        let help = command(None).render_long_help().to_string();
        assert!(help.contains("Examples:"), "{help}");
        assert!(help.contains("Exit status:"), "{help}");
        for subcommand in ["list", "explain", "path", "spec", "codec"] {
            assert!(help.contains(subcommand), "{subcommand}: {help}");
        }
        let version = command(Some("4.9.0 of Jan  1 2024 $\n")).render_version().to_string();
        assert_eq!(version, format!("ncfilters {} (libnetcdf 4.9.0 of Jan  1 2024 $)\n", env!("CARGO_PKG_VERSION")));
    }
}
