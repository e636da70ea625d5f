// SPDX-License-Identifier: BSD-3-Clause
//! The bits of text processing the steps need (what tail, grep and sed did in the shell script).

use std::path::{Path, PathBuf};

use crate::harness::{read_to_string, Result};

/// The last `n` lines of `text`.
pub fn last_lines(text: &str, n: usize) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Prints the last `n` lines of a log file (nothing if it cannot be read: we are failing anyway).
pub fn print_tail(log: &Path, n: usize) {
    if let Ok(text) = read_to_string(log) {
        for line in last_lines(&text, n) {
            println!("{line}");
        }
    }
}

/// Prints a whole log file.
pub fn print_file(log: &Path) {
    print_tail(log, usize::MAX);
}

/// Prints the first `n` lines of a log that contain any of `needles`.
pub fn print_matching(log: &Path, needles: &[&str], n: usize) {
    if let Ok(text) = read_to_string(log) {
        for line in matching_lines(&text, needles).take(n) {
            println!("{line}");
        }
    }
}

pub fn matching_lines<'a>(text: &'a str, needles: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    text.lines().filter(move |line| needles.iter().any(|needle| line.contains(needle)))
}

/// How many lines contain any of `needles` (grep -c with alternatives).
pub fn count_matching_lines(text: &str, needles: &[&str]) -> usize {
    matching_lines(text, needles).count()
}

/// Every file under `dir` (recursively) whose name ends with `suffix`, sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    collect_files(dir, &mut |path| {
        if path.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)) {
            found.push(path.to_path_buf());
        }
    });
    found.sort();
    found
}

/// Calls `visit` on every regular file under `dir`, not following symbolic links.
pub fn collect_files(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_files(&entry.path(), visit);
        } else if kind.is_file() {
            visit(&entry.path());
        }
    }
}

/// The entries of `dir` whose file names start with `prefix` and end with `suffix`, sorted
/// (a shell glob like `vg.*.log`).
pub fn glob(dir: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().is_some_and(|n| {
                        let n = n.to_string_lossy();
                        n.len() >= prefix.len() + suffix.len() && n.starts_with(prefix) && n.ends_with(suffix)
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The contents of several files, one after the other (cat).
pub fn concatenate(files: &[PathBuf]) -> Result<String> {
    let mut all = String::new();
    for file in files {
        all.push_str(&read_to_string(file)?);
    }
    Ok(all)
}

/// The passed and failed counts of libtest's `test result:` lines.
pub fn libtest_counts(log: &str) -> (usize, usize) {
    let number_before = |line: &str, word: &str| {
        line.split(';')
            .find_map(|part| part.trim().strip_suffix(word)?.trim().rsplit(' ').next()?.parse::<usize>().ok())
    };
    log.lines().filter(|line| line.starts_with("test result:")).fold((0, 0), |(passed, failed), line| {
        (passed + number_before(line, "passed").unwrap_or(0), failed + number_before(line, "failed").unwrap_or(0))
    })
}
