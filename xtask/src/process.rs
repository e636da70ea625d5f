// SPDX-License-Identifier: BSD-3-Clause
//! Running programs: in the foreground, into a log file, or capturing their output.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::harness::{fail, Failure, Result};

/// `dir` first on `command`'s `PATH`, before the environment's.
pub fn with_first_on_path<'c>(command: &'c mut Command, dir: &Path) -> &'c mut Command {
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    command.env("PATH", path)
}

/// A command with its arguments, ready for the `run*` functions.
pub fn cmd<I, S>(program: impl AsRef<OsStr>, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(program);
    command.args(args);
    command
}

/// The command line as a message shows it.
pub fn describe(command: &Command) -> String {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(command.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

fn spawn_failure(command: &Command, error: std::io::Error) -> Failure {
    Failure(format!("cannot run `{}`: {error}", describe(command)))
}

/// Runs with the terminal's stdout and stderr; fails naming the command if it fails.
pub fn run(command: &mut Command) -> Result {
    let status = command.status().map_err(|e| spawn_failure(command, e))?;
    if !status.success() {
        fail!("`{}` failed ({status})", describe(command));
    }
    Ok(())
}

/// Whether the command succeeds, its stdout and stderr going to `log` (created or appended
/// to). Callers show the relevant part of the log on failure.
pub fn succeeds_into_log(command: &mut Command, log: &Path, append: bool) -> Result<bool> {
    let file = OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(log)
        .map_err(|e| Failure(format!("cannot open {}: {e}", log.display())))?;
    let stderr = file.try_clone().map_err(|e| Failure(format!("cannot duplicate {}: {e}", log.display())))?;
    succeeds_with(command, file.into(), stderr.into())
}

/// Whether the command succeeds, its output discarded (a probe like `dpkg -s`).
pub fn succeeds_quietly(command: &mut Command) -> Result<bool> {
    succeeds_with(command, Stdio::null(), Stdio::null())
}

/// Whether the command succeeds with these stdout and stderr.
fn succeeds_with(command: &mut Command, stdout: Stdio, stderr: Stdio) -> Result<bool> {
    let status = command.stdout(stdout).stderr(stderr).status().map_err(|e| spawn_failure(command, e))?;
    Ok(status.success())
}

/// The stdout of a command that must succeed (stderr is shown).
pub fn output(command: &mut Command) -> Result<String> {
    let out = command.stderr(Stdio::inherit()).output().map_err(|e| spawn_failure(command, e))?;
    if !out.status.success() {
        fail!("`{}` failed ({})", describe(command), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The stdout of a command that must succeed, given `input` on its stdin.
pub fn output_with_input(command: &mut Command, input: &str) -> Result<String> {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| spawn_failure(command, e))?;
    let written = child.stdin.take().expect("stdin is piped").write_all(input.as_bytes());
    let out = child.wait_with_output().map_err(|e| spawn_failure(command, e))?;
    if written.is_err() || !out.status.success() {
        fail!("`{}` failed ({})", describe(command), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The stdout of a command, whatever its exit status and with stderr discarded (nm on an
/// archive warns about members without symbols).
pub fn output_ignoring_errors(command: &mut Command) -> Result<String> {
    let out = command.stderr(Stdio::null()).output().map_err(|e| spawn_failure(command, e))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `program` is found on PATH, as `command -v` answers.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(program))))
}

pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs as root: directly when we are root, through sudo otherwise.
pub fn as_root<I, S>(program: &str, args: I) -> Result<Command>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    if output(&mut cmd("id", ["-u"]))?.trim() == "0" {
        Ok(cmd(program, args))
    } else {
        let mut command = cmd("sudo", [program]);
        command.args(args);
        Ok(command)
    }
}
