// SPDX-License-Identifier: BSD-3-Clause
//! A CMake project cross-built and installed into a prefix of its own: the C libraries of the
//! Windows builds (MinGW-w64) and of the Mac builds.

use std::path::Path;
use std::process::Command;

use crate::harness::{fail, log, Harness, Result};
use crate::process::{cmd, succeeds_into_log};
use crate::text::print_tail;

/// Where [`CMakeInstall::install`] builds into: a cross toolchain file, and the prefix.
pub struct CMakeInstall<'a> {
    /// What the build is for, as its messages name it.
    pub platform: &'a str,
    pub cmake: &'a Path,
    pub toolchain: &'a Path,
    pub prefix: &'a Path,
    /// What the commands need besides: Wine's prefix when the toolchain's emulator is Wine.
    pub environment: &'a dyn Fn(&mut Command) -> &mut Command,
}

impl CMakeInstall<'_> {
    /// Configures `source` in `build` (Release, then `options`), builds and installs it; the
    /// output goes to `build`'s `.log`, whose tail a failure shows.
    pub fn install(&self, h: &Harness, source: &Path, build: &Path, options: &[&str]) -> Result {
        log(format!("{} for {} into {}", source.display(), self.platform, self.prefix.display()));
        let log_file = build.with_extension("log");
        let mut configure = cmd(self.cmake, ["-S"]);
        configure
            .arg(source)
            .arg("-B")
            .arg(build)
            .arg(format!("-DCMAKE_TOOLCHAIN_FILE={}", self.toolchain.display()))
            .arg(format!("-DCMAKE_INSTALL_PREFIX={}", self.prefix.display()))
            .arg("-DCMAKE_BUILD_TYPE=Release")
            .args(options);
        let mut compile = cmd(self.cmake, ["--build"]);
        compile.arg(build).arg(format!("-j{}", h.jobs));
        let mut install = cmd(self.cmake, ["--install"]);
        install.arg(build);
        let steps =
            [("configure", &mut configure, false), ("build", &mut compile, true), ("install", &mut install, true)];
        for (what, command, append) in steps {
            if !succeeds_into_log((self.environment)(command), &log_file, append)? {
                print_tail(&log_file, 40);
                fail!("{}'s {what} for {} failed (log: {})", source.display(), self.platform, log_file.display());
            }
        }
        Ok(())
    }
}
