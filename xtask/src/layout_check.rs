// SPDX-License-Identifier: BSD-3-Clause
//! The module's layout check (cmake/ncfilters.cmake, `ncfilters_layout_check`) as a packager's
//! build meets it: the release's own tree passed it at configure time, and a tree whose
//! `NCZ_VAR_INFO_T` has one field more, as a distribution's patch or a point release could give
//! it, stops configure with a message naming the struct, the field and both offsets; and, as a
//! cross build for a target nothing here runs, with one naming the struct and the field.

use crate::harness::{fail, log, read_to_string, remove_dir_all_if_exists, write_file, Harness, Result};
use crate::netcdf::configure_must_stop;
use crate::process::{cmd, run};

/// What configure's check printed for the release's ncfilters build.
const PASSED: &str = "sizes and offsets of netcdf-c's structs match ncfilters' mirrors";
/// The struct the patch changes, and the line it puts first in it.
const PATCHED_STRUCT: &str = "typedef struct NCZ_VAR_INFO {";
const ADDED_FIELD: &str = "    int added_by_a_patch; /* a distribution's patch, as the layout check sees it */";
/// What configure must say about it: `common`, the first field, moved by the added `int`.
const REFUSAL: &str = "offset of NCZ_VAR_INFO_T.common: ncfilters expects 0, this netcdf-c has ";
/// The same where the check only compiles, as static assertions.
const COMPILED_REFUSAL: &str = "offset of NCZ_VAR_INFO_T.common differs from the ncfilters mirror";
/// A cross build with no emulator, as CMake has it when a toolchain file names the system: the
/// check cannot run the program it compiles (that it is this machine's does not matter).
const CROSS_WITHOUT_EMULATOR: [&str; 2] = ["-DCMAKE_SYSTEM_NAME=Linux", "-DCMAKE_CROSSCOMPILING_EMULATOR="];

pub fn test_layout_check(h: &Harness) -> Result {
    let configured = read_to_string(&h.work_file("configure-ncfilters.log"))?;
    match configured.lines().find(|line| line.contains(PASSED)) {
        Some(line) => println!("the ncfilters build's configure: {}", line.trim_start_matches("-- ")),
        None => fail!("the ncfilters build's configure log does not show the layout check: no line with {PASSED:?}"),
    }

    log(format!("layout check: netcdf-c {} with a field added to NCZ_VAR_INFO_T must stop configure", h.version()));
    let src = h.work.join("src-layout-patched");
    remove_dir_all_if_exists(&src)?;
    run(cmd("cp", ["-a"]).arg(h.work.join(format!("netcdf-c-{}", h.version()))).arg(&src))?;
    let header = src.join("libnczarr/zinternal.h");
    let text = read_to_string(&header)?;
    let Some(at) = text.find(PATCHED_STRUCT) else { fail!("{} has no {PATCHED_STRUCT:?}", header.display()) };
    let line_end = at + text[at..].find('\n').unwrap_or(text.len() - at) + 1;
    write_file(&header, &format!("{}{ADDED_FIELD}\n{}", &text[..line_end], &text[line_end..]))?;

    println!("configure stopped: {}", configure_must_stop(h, &src, "layout-patched", REFUSAL, &[])?);
    let cross = configure_must_stop(h, &src, "layout-patched-cross", COMPILED_REFUSAL, &CROSS_WITHOUT_EMULATOR)?;
    println!("configure stopped (a cross build with no emulator): {cross}");
    remove_dir_all_if_exists(&src)
}
