// SPDX-License-Identifier: BSD-3-Clause
//! Prints the C program that compares ncfilters' mirrored structs with the netcdf-c tree being
//! built, and holds it between markers: cmake/ncfilters.cmake builds it with the library's own
//! features, release and target, reads the program from the file (so nothing of a target this
//! machine cannot run has to run), then compiles it against the tree's headers and runs it, or
//! only compiles it as `_Static_assert`s.
#![forbid(unsafe_code)]

use ncfilters::abi_layout::{embedded_layout_check, EMBEDDED_BEGIN_LEN, EMBEDDED_END_LEN, EMBEDDED_LEN};
use std::io::Write;
use std::process::ExitCode;

/// The program's text in this file, between the markers.
static EMBEDDED: [u8; EMBEDDED_LEN] = embedded_layout_check();

fn main() -> ExitCode {
    // Opaque to the optimiser, so that the whole marked text stays in the file as it is.
    let embedded: &[u8] = std::hint::black_box(&EMBEDDED);
    let source = &embedded[EMBEDDED_BEGIN_LEN..embedded.len() - EMBEDDED_END_LEN];
    match std::io::stdout().lock().write_all(source) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // eprintln! could panic on a closed stderr.
            let _ = writeln!(std::io::stderr(), "ncfilters-layout-check: {error}");
            ExitCode::FAILURE
        }
    }
}
