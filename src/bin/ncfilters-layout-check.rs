// SPDX-License-Identifier: BSD-3-Clause
//! Prints the C program that compares ncfilters' mirrored structs with the netcdf-c tree being
//! built: cmake/ncfilters.cmake runs it at configure time, with the library's own features and
//! release, then compiles and runs the program against the tree's headers.
#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let source = ncfilters::abi_layout::layout_check_source();
    match std::io::stdout().lock().write_all(source.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // eprintln! could panic on a closed stderr.
            let _ = writeln!(std::io::stderr(), "ncfilters-layout-check: {error}");
            ExitCode::FAILURE
        }
    }
}
