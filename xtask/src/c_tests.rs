// SPDX-License-Identifier: BSD-3-Clause
//! `c`: the C tests of c_tests/ (c_tests/run.sh), which classify valgrind leaks with this
//! program's `classify-leaks`, so that one rule decides for every valgrind check.

use crate::harness::{fail, log, Harness, Result};
use crate::process::{cmd, run};

pub fn test_c(h: &Harness) -> Result {
    log(format!("C tests (c_tests/), netcdf-c {}", h.version()));
    let Ok(xtask) = std::env::current_exe() else {
        fail!("cannot find the xtask executable for c_tests/run.sh");
    };
    let mut run_sh = cmd("bash", [h.repo.join("c_tests/run.sh")]);
    run_sh.arg(&h.work).arg(&h.repo).arg(h.cargo_target()).env("NCFILTERS_XTASK", xtask);
    run(&mut run_sh)
}
