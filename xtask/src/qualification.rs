// SPDX-License-Identifier: BSD-3-Clause
//! A release's qualification (docs/releasing.md): every stage of the whole `cargo xtask test` run
//! on the release's shipped tree, gathered over several runs into `release/<version>.md`.
//!
//! The shipped tree is what a build of libnetcdf with ncfilters reads ([`SHIPPED_PATHS`]): a run
//! on any commit whose shipped tree is the candidate's qualifies the candidate, whatever changed
//! in the tests, the harness or the docs. Its id is git's own: `git hash-object --stdin` of the
//! lines `<path> <git rev-parse <commit>:<path>>`.

use std::path::Path;

use crate::harness::{fail, log, Harness, Result};
use crate::process::{cmd, output};

/// What the CMake build and the release tarball's crates are made of: the shipped crates
/// (`licences::shipped_members`, held to this list by a test), the module, the headers, the
/// licences and the packagers' files.
pub const SHIPPED_PATHS: [&str; 16] = [
    "Cargo.lock",
    "Cargo.toml",
    "LICENSE",
    "LICENSES",
    "THIRD-PARTY-NOTICES",
    "build.rs",
    "cmake",
    "core",
    "filters",
    "include",
    "logic",
    "packaging",
    "plugins",
    "runtime",
    "src",
    "tools/ncfilters-cli",
];

/// The shipped tree's id at `commit`.
pub fn shipped_tree(repo: &Path, commit: &str) -> Result<String> {
    let mut listing = String::new();
    for path in SHIPPED_PATHS {
        let id = output(cmd("git", ["-C"]).arg(repo).args(["rev-parse", &format!("{commit}:{path}")]))?;
        listing.push_str(&format!("{path} {}\n", id.trim()));
    }
    let mut hash = cmd("git", ["-C"]);
    hash.arg(repo).args(["hash-object", "--stdin"]);
    Ok(crate::process::output_with_input(&mut hash, &listing)?.trim().to_string())
}

/// The shipped paths whose work-tree content differs from HEAD's.
pub fn uncommitted_shipped_changes(repo: &Path) -> Result<Vec<String>> {
    let mut git = cmd("git", ["-C"]);
    git.arg(repo).args(["status", "--porcelain", "--untracked-files=no", "--"]).args(SHIPPED_PATHS);
    Ok(output(&mut git)?.lines().filter_map(|line| line.get(3..)).map(String::from).collect())
}

/// The line a run prints with its stage table: the commit and shipped tree it ran on.
pub fn describe_run(repo: &Path) -> Result<String> {
    let commit = output(cmd("git", ["-C"]).arg(repo).args(["rev-parse", "--short=12", "HEAD"]))?;
    let tree = shipped_tree(repo, "HEAD")?;
    let changed = uncommitted_shipped_changes(repo)?;
    let state = if changed.is_empty() {
        String::new()
    } else {
        format!(", plus uncommitted changes to {}", changed.join(", "))
    };
    Ok(format!("commit {}, shipped tree {tree}{state}", commit.trim()))
}

/// One row of a qualification record: `| stage | date | commit | shipped tree | result | command |`.
#[derive(Debug, PartialEq)]
struct Row {
    stage: String,
    shipped_tree: String,
}

/// The rows of a record's table (its header and rule skipped).
fn rows(record: &str) -> Vec<Row> {
    record
        .lines()
        .filter_map(|line| line.trim().strip_prefix('|')?.strip_suffix('|'))
        .map(|line| line.split('|').map(|cell| cell.trim().trim_matches('`').to_string()).collect::<Vec<_>>())
        .filter(|cells| cells.len() == 6 && cells[3].len() == 40 && cells[3].chars().all(|c| c.is_ascii_hexdigit()))
        .map(|cells| Row { stage: cells[0].clone(), shipped_tree: cells[3].clone() })
        .collect()
}

/// The stages of `stages` that no row of `record` has on `shipped_tree`.
fn missing_stages(record: &str, stages: &[String], shipped_tree: &str) -> Vec<String> {
    let rows = rows(record);
    stages
        .iter()
        .filter(|stage| !rows.iter().any(|row| &row.stage == *stage && row.shipped_tree == shipped_tree))
        .cloned()
        .collect()
}

/// `cargo xtask qualification`: which stages of the whole `test` the workspace version's record
/// (`release/<version>.md`) still lacks on HEAD's shipped tree; fails while any does.
pub fn check_record(h: &Harness, stages: &[String]) -> Result {
    let version = crate::licences::workspace_version(&h.repo)?;
    let file = h.repo.join(format!("release/{version}.md"));
    let record = if file.is_file() { crate::harness::read_to_string(&file)? } else { String::new() };
    let tree = shipped_tree(&h.repo, "HEAD")?;
    log(format!("the qualification of ncfilters {version} on shipped tree {tree} ({})", file.display()));
    let missing = missing_stages(&record, stages, &tree);
    println!("{} of the {} stages of `cargo xtask test` recorded", stages.len() - missing.len(), stages.len());
    if !missing.is_empty() {
        fail!("not yet run on this shipped tree: {}", missing.join(", "));
    }
    println!("PASS every stage of `cargo xtask test` ran on shipped tree {tree}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "0123456789abcdef0123456789abcdef01234567";
    const OTHER: &str = "89abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_stage_counts_only_on_the_candidates_shipped_tree() {
        let record = format!(
            "| stage | date | commit | shipped tree | result | command |\n|---|---|---|---|---|---|\n\
             | rust | 2026-12-02 | 772aac9 | `{TREE}` | 264 passed | `bash .ci/run` |\n\
             | build 4.9.0 | 2026-12-02 | 772aac9 | `{OTHER}` | built | `cargo xtask build` |\n"
        );
        let stages = ["rust".to_string(), "build 4.9.0".to_string(), "fuzz".to_string()];
        assert_eq!(missing_stages(&record, &stages, TREE), ["build 4.9.0", "fuzz"]);
        assert_eq!(rows(&record).len(), 2, "the header and the rule are not rows");
    }

    #[test]
    fn every_shipped_crate_is_in_the_shipped_tree() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let metadata = crate::licences::metadata(repo).unwrap();
        for (name, dir) in crate::licences::shipped_members(repo, &metadata) {
            let covered = dir == "." || SHIPPED_PATHS.iter().any(|path| Path::new(&dir).starts_with(path));
            assert!(covered, "{name} ({dir}) ships but is not in SHIPPED_PATHS");
        }
        for path in SHIPPED_PATHS {
            assert!(repo.join(path).exists(), "{path} does not exist");
        }
    }

    #[test]
    fn the_shipped_tree_is_gits_hash_of_its_listing() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let id = shipped_tree(repo, "HEAD").unwrap();
        assert_eq!(id.len(), 40);
        let script = format!(
            "for p in {}; do echo \"$p $(git rev-parse HEAD:$p)\"; done | git hash-object --stdin",
            SHIPPED_PATHS.join(" ")
        );
        let shell = output(cmd("sh", ["-c", &script]).current_dir(repo)).unwrap();
        assert_eq!(id, shell.trim());
    }
}
