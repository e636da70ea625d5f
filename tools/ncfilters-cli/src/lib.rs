// SPDX-License-Identifier: BSD-3-Clause
//! The `ncfilters` command, without its C calls: the argument model ([`cli`]), the rendering
//! ([`render`], [`explain`]) of the JSON the library returns, read into ncfilters-logic's report
//! types, and the exit codes ([`Exit`]). What `explain` finds and advises is the core's
//! (`filter_explain`); this crate only prints it.
//! `main.rs` implements [`Netcdf`] with the C functions of libnetcdf built with ncfilters
//! (`ncfilters_report`, `ncfilters_describe_spec`, `ncfilters_describe_codec`, `nc_strerror`,
//! `nc_inq_libvers`, `nc_initialize`); nothing here links them, so this library builds and tests
//! with no libnetcdf.

pub mod cli;
pub mod explain;
pub mod render;

use std::io::{self, Write};

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

pub use cli::{command, Cli, Command};
use ncfilters_logic::filter_report::{CodecDescription, Report, SpecDescription};

/// `NC_ENOMEM`: never the input's fault.
const NC_ENOMEM: i32 = -61;
/// `NC_EINTERNAL`: never the input's fault.
const NC_EINTERNAL: i32 = -92;

/// The exit status of `ncfilters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Success = 0,
    /// 1: the answer is negative: `explain` of a filter usable neither for netCDF-4 nor for NCZarr.
    Negative = 1,
    /// 2: bad command line (clap's own status; listed here to document it).
    Usage = 2,
    /// 3: the input was rejected: bad filter spec, bad or unknown codec JSON, unknown filter name.
    Input = 3,
    /// 4: the library failed or returned what this program cannot read, or the output could not be written.
    Failure = 4,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// What one of the three C functions returned: its status and the JSON text it allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: i32,
    pub json: String,
}

/// The library calls. `Err` is a message for a reply that is not text (a NULL string, invalid
/// UTF-8, an argument C cannot take).
pub trait Netcdf {
    fn report(&mut self) -> Result<Reply, String>;
    fn describe_spec(&mut self, spec: &str) -> Result<Reply, String>;
    fn describe_codec(&mut self, codec_json: &str) -> Result<Reply, String>;
    /// `nc_strerror`.
    fn strerror(&self, status: i32) -> String;
}

/// Why a command ended without its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    fn library(message: String) -> Failure {
        Failure { exit: Exit::Failure, message }
    }
}

/// Runs `cli`: writes the output to `out` and errors to `err`, returns the exit status. A closed
/// output (`ncfilters list | head -1`) ends the output quietly with the status the command had.
pub fn run(cli: &Cli, netcdf: &mut dyn Netcdf, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match output(cli, netcdf) {
        Ok((text, exit)) => match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => exit.code(),
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => exit.code(),
            Err(error) => {
                let _ = writeln!(err, "ncfilters: error: cannot write the output: {error}");
                Exit::Failure.code()
            }
        },
        Err(failure) => {
            let _ = writeln!(err, "ncfilters: error: {}", failure.message);
            failure.exit.code()
        }
    }
}

/// The output text of `cli` and its exit status.
pub fn output(cli: &Cli, netcdf: &mut dyn Netcdf) -> Result<(String, Exit), Failure> {
    let json_text = |value: &Value| serde_json::to_string_pretty(value).map(|text| text + "\n");
    let to_failure = |error: serde_json::Error| Failure::library(format!("cannot print the JSON: {error}"));
    match &cli.command {
        Command::List => {
            let (value, report) = fetch_report(netcdf)?;
            let text = if cli.json {
                json_text(&json!({
                    "ncfilters_version": value["ncfilters_version"],
                    "ncfilters_build": value["ncfilters_build"],
                    "netcdf_version": value["netcdf_version"],
                    "filters": value["filters"],
                }))
                .map_err(to_failure)?
            } else {
                render::list(&report)
            };
            Ok((text, Exit::Success))
        }
        Command::Path => {
            let (value, report) = fetch_report(netcdf)?;
            let text = if cli.json {
                json_text(&json!({"plugin_path": value["plugin_path"], "libraries": value["libraries"]}))
                    .map_err(to_failure)?
            } else {
                render::path(&report)
            };
            Ok((text, Exit::Success))
        }
        Command::Explain { filter } => {
            let (value, report) = fetch_report(netcdf)?;
            let explanations = ncfilters_logic::filter_explain::explain(&report, filter)
                .map_err(|unknown| Failure { exit: Exit::Input, message: unknown.to_string() })?;
            let exit = if explanations.iter().any(|explanation| explanation.usable_anywhere(&report)) {
                Exit::Success
            } else {
                Exit::Negative
            };
            let text = if cli.json {
                json_text(&explain::json(&value, &report, filter, &explanations)).map_err(to_failure)?
            } else {
                explain::text(&report, &explanations)
            };
            Ok((text, exit))
        }
        Command::Spec { spec } => {
            let reply = netcdf
                .describe_spec(spec)
                .map_err(|message| Failure::library(format!("ncfilters_describe_spec: {message}")))?;
            let (value, description) = read_reply::<SpecDescription>(netcdf, reply, "filter spec", spec)?;
            let text = if cli.json { json_text(&value).map_err(to_failure)? } else { render::spec(&description) };
            Ok((text, Exit::Success))
        }
        Command::Codec { codec } => {
            let reply = netcdf
                .describe_codec(codec)
                .map_err(|message| Failure::library(format!("ncfilters_describe_codec: {message}")))?;
            let (value, description) = read_reply::<CodecDescription>(netcdf, reply, "codec JSON", codec)?;
            let text = if cli.json { json_text(&value).map_err(to_failure)? } else { render::codec(&description) };
            Ok((text, Exit::Success))
        }
    }
}

/// The library's error text of a failed reply: its `{"error": …}` message (or, without one, the
/// JSON text) and the status with `nc_strerror`'s words.
fn error_text(netcdf: &dyn Netcdf, reply: &Reply) -> String {
    let message = serde_json::from_str::<Value>(&reply.json)
        .ok()
        .and_then(|value| value.get("error").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| reply.json.trim().to_string());
    let status = format!("status {}: {}", reply.status, netcdf.strerror(reply.status));
    if message.is_empty() {
        status
    } else {
        format!("{message} ({status})")
    }
}

fn parse<T: DeserializeOwned>(json: &str, function: &str) -> Result<(Value, T), Failure> {
    let unreadable = |error: serde_json::Error| {
        Failure::library(format!("{function} returned JSON this program cannot read ({error}): {json}"))
    };
    let value: Value = serde_json::from_str(json).map_err(unreadable)?;
    let typed = T::deserialize(&value).map_err(unreadable)?;
    Ok((value, typed))
}

/// `ncfilters_report`, read.
fn fetch_report(netcdf: &mut dyn Netcdf) -> Result<(Value, Report), Failure> {
    let reply = netcdf.report().map_err(|message| Failure::library(format!("ncfilters_report: {message}")))?;
    if reply.status != 0 {
        return Err(Failure::library(format!("ncfilters_report failed: {}", error_text(netcdf, &reply))));
    }
    parse(&reply.json, "ncfilters_report")
}

/// The reply of `ncfilters_describe_spec` or `_codec` for `input` (`what` names its kind). A
/// failure is the input's fault (exit 3) unless it is out of memory or internal (exit 4).
fn read_reply<T: DeserializeOwned>(
    netcdf: &dyn Netcdf,
    reply: Reply,
    what: &str,
    input: &str,
) -> Result<(Value, T), Failure> {
    if reply.status != 0 {
        let exit = if matches!(reply.status, NC_ENOMEM | NC_EINTERNAL) { Exit::Failure } else { Exit::Input };
        return Err(Failure { exit, message: format!("bad {what} '{input}': {}", error_text(netcdf, &reply)) });
    }
    let function = if what == "filter spec" { "ncfilters_describe_spec" } else { "ncfilters_describe_codec" };
    parse(&reply.json, function)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A report shaped like the contract: a plugin zstd winning over the built-in one for netCDF-4,
    /// blosc missing libblosc, szip without NCZarr codec, a plugin-only filter, and every library
    /// outcome and path state.
    /// A report of every kind of entry, shared with ncfilters-logic's tests of explain.
    pub(crate) const FIXTURE_REPORT: &str = include_str!("../../../logic/testdata/report.json");

    pub(crate) fn fixture_report() -> Report {
        serde_json::from_str(FIXTURE_REPORT).unwrap()
    }

    /// Replies from fixtures; records the inputs it was given.
    struct Fake {
        report: Result<Reply, String>,
        spec: Reply,
        codec: Reply,
        inputs: Vec<String>,
    }

    impl Fake {
        fn new() -> Fake {
            Fake {
                report: Ok(Reply { status: 0, json: FIXTURE_REPORT.to_string() }),
                spec: Reply {
                    status: 0,
                    json: r#"{"filters": [{"id": 32015, "name": "zstd", "params": [3], "codec": {"id": "zstd", "level": 3}, "codec_error": null}]}"#.into(),
                },
                codec: Reply { status: 0, json: r#"{"id": 32015, "name": "zstd", "params": [3]}"#.into() },
                inputs: Vec::new(),
            }
        }
    }

    impl Netcdf for Fake {
        fn report(&mut self) -> Result<Reply, String> {
            self.report.clone()
        }
        fn describe_spec(&mut self, spec: &str) -> Result<Reply, String> {
            self.inputs.push(spec.to_string());
            Ok(self.spec.clone())
        }
        fn describe_codec(&mut self, codec_json: &str) -> Result<Reply, String> {
            self.inputs.push(codec_json.to_string());
            Ok(self.codec.clone())
        }
        fn strerror(&self, status: i32) -> String {
            match status {
                -132 => "NetCDF: Filter error: bad id or parameters or duplicate filter".into(),
                -136 => "NetCDF: Filter error: undefined filter".into(),
                _ => format!("error {status}"),
            }
        }
    }

    fn cli(args: &[&str]) -> Cli {
        use clap::FromArgMatches;
        let args: Vec<&str> = std::iter::once("ncfilters").chain(args.iter().copied()).collect();
        Cli::from_arg_matches(&command(None).try_get_matches_from(args).unwrap()).unwrap()
    }

    fn run_with(fake: &mut Fake, args: &[&str]) -> (i32, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = run(&cli(args), fake, &mut out, &mut err);
        (status, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
    }

    #[test]
    fn exit_codes() {
        let codes = [Exit::Success, Exit::Negative, Exit::Usage, Exit::Input, Exit::Failure].map(Exit::code);
        assert_eq!(codes, [0, 1, 2, 3, 4]);
        let mut fake = Fake::new();
        assert_eq!(run_with(&mut fake, &["list"]).0, 0);
        assert_eq!(run_with(&mut fake, &["path"]).0, 0);
        assert_eq!(run_with(&mut fake, &["explain", "zstd"]).0, 0);
        assert_eq!(run_with(&mut fake, &["explain", "szip"]).0, 0, "usable for netCDF-4 only");
        assert_eq!(run_with(&mut fake, &["explain", "blosc"]).0, 1, "usable nowhere");
        assert_eq!(run_with(&mut fake, &["explain", "40000"]).0, 1);
        assert_eq!(run_with(&mut fake, &["explain", "31999"]).0, 1, "known nowhere");
        assert_eq!(run_with(&mut fake, &["--json", "explain", "31999"]).0, 1);
        assert_eq!(run_with(&mut fake, &["spec", "zstd,3"]).0, 0);
        assert_eq!(run_with(&mut fake, &["codec", "{}"]).0, 0);
    }

    #[test]
    fn an_unknown_name_is_an_input_error_naming_it() {
        let (status, out, err) = run_with(&mut Fake::new(), &["explain", "lz4"]);
        assert_eq!((status, out.as_str()), (3, ""));
        assert!(err.starts_with("ncfilters: error: unknown filter 'lz4':"), "{err}");
    }

    #[test]
    fn spec_and_codec_errors_name_the_input_and_the_library_message() {
        let mut fake = Fake::new();
        fake.spec = Reply { status: -132, json: r#"{"error": "filter spec 'zstd,x': 'x' is not a number"}"#.into() };
        let (status, out, err) = run_with(&mut fake, &["spec", "zstd,x"]);
        assert_eq!((status, out.as_str()), (3, ""));
        assert_eq!(
            err,
            "ncfilters: error: bad filter spec 'zstd,x': filter spec 'zstd,x': 'x' is not a number \
             (status -132: NetCDF: Filter error: bad id or parameters or duplicate filter)\n"
        );
        assert_eq!(fake.inputs, ["zstd,x"]);

        fake.codec = Reply { status: -136, json: r#"{"error": "unknown codec id 'lz4'"}"#.into() };
        let (status, _, err) = run_with(&mut fake, &["--json", "codec", r#"{"id":"lz4"}"#]);
        assert_eq!(status, 3);
        assert!(
            err.starts_with(r#"ncfilters: error: bad codec JSON '{"id":"lz4"}': unknown codec id 'lz4' (status -136"#)
        );

        fake.codec = Reply { status: -61, json: r#"{"error": "out of memory"}"#.into() };
        assert_eq!(run_with(&mut fake, &["codec", "{}"]).0, 4);
    }

    #[test]
    fn library_failures_exit_4() {
        let mut fake = Fake::new();
        fake.report = Err("returned NULL".into());
        let (status, out, err) = run_with(&mut fake, &["list"]);
        assert_eq!((status, out.as_str()), (4, ""));
        assert_eq!(err, "ncfilters: error: ncfilters_report: returned NULL\n");

        fake.report = Ok(Reply { status: -92, json: r#"{"error": "panic in discovery"}"#.into() });
        let (status, _, err) = run_with(&mut fake, &["path"]);
        assert_eq!(status, 4);
        assert_eq!(err, "ncfilters: error: ncfilters_report failed: panic in discovery (status -92: error -92)\n");

        fake.report = Ok(Reply { status: 0, json: r#"{"filters": 3}"#.into() });
        let (status, _, err) = run_with(&mut fake, &["explain", "1"]);
        assert_eq!(status, 4);
        assert!(err.starts_with("ncfilters: error: ncfilters_report returned JSON this program cannot read"), "{err}");

        fake.spec = Reply { status: 0, json: "not json".into() };
        assert_eq!(run_with(&mut fake, &["spec", "1"]).0, 4);
    }

    #[test]
    fn json_output_passes_the_library_objects_through() {
        let report: Value = serde_json::from_str(FIXTURE_REPORT).unwrap();
        let mut fake = Fake::new();
        let json_of = |fake: &mut Fake, args: &[&str]| -> Value {
            let (status, out, _) = run_with(fake, args);
            assert!(status == 0 || status == 1);
            assert!(out.ends_with("}\n"));
            serde_json::from_str(&out).unwrap()
        };
        let list = json_of(&mut fake, &["--json", "list"]);
        assert_eq!(list["filters"], report["filters"]);
        assert_eq!(list["ncfilters_version"], "0.1.0");
        assert_eq!(list["ncfilters_build"], "0.1.0 (git 0123456789ab)");
        assert_eq!(list["netcdf_version"], "4.9.0");
        let path = json_of(&mut fake, &["path", "--json"]);
        assert_eq!(path, json!({"plugin_path": report["plugin_path"], "libraries": report["libraries"]}));
        let spec = json_of(&mut fake, &["--json", "spec", "zstd,3"]);
        assert_eq!(spec, serde_json::from_str::<Value>(&fake.spec.json).unwrap());
        let codec = json_of(&mut fake, &["--json", "codec", "{}"]);
        assert_eq!(codec, json!({"id": 32015, "name": "zstd", "params": [3]}));
        let explain = json_of(&mut fake, &["--json", "explain", "bz2"]);
        assert_eq!(explain["explanations"][0]["filter"]["id"], 307);
    }

    /// A writer that fails every write with `kind`.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(self.0))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_ends_quietly_and_other_write_errors_exit_4() {
        let mut err = Vec::new();
        let status = run(&cli(&["list"]), &mut Fake::new(), &mut Failing(io::ErrorKind::BrokenPipe), &mut err);
        assert_eq!((status, err.len()), (0, 0));
        let status =
            run(&cli(&["explain", "blosc"]), &mut Fake::new(), &mut Failing(io::ErrorKind::BrokenPipe), &mut err);
        assert_eq!((status, err.len()), (1, 0));
        let status = run(&cli(&["list"]), &mut Fake::new(), &mut Failing(io::ErrorKind::StorageFull), &mut err);
        assert_eq!(status, 4);
        assert!(String::from_utf8(err).unwrap().starts_with("ncfilters: error: cannot write the output:"));
    }
}
