// SPDX-License-Identifier: BSD-3-Clause
//! `dist`: the release tarball, `target/dist/ncfilters-<version>.tar.xz` and its `.sha256`. It holds
//! the tracked sources as the work tree has them, `vendor/` with the crates the CMake build
//! compiles, `.cargo/config.toml` pointing cargo at them, and `.ncfilters-release` (the build then
//! says "release" where a clone's says "git <commit>"). `cargo xtask dist` refuses a work tree with
//! uncommitted changes; the tests' tarballs of one (`offline`, `debian13`, `deb`) carry
//! `.ncfilters-source` instead, so their builds say "git <commit>, modified". Its workspace is the shipped members with
//! their dev-dependencies removed: cargo resolves every member's dependencies, dev-dependencies
//! included, so those crates (test and benchmark tools) would otherwise have to be vendored too.
//! Reproducible: sorted entries, owner 0, every time SOURCE_DATE_EPOCH (default: the last commit's).

use std::path::{Path, PathBuf};

use crate::harness::{fail, log, Harness, Result};
use crate::licences::{metadata, shipped_members, tracked_files, workspace_version, DEV_ONLY_MEMBERS};
use crate::process::{cmd, output, run};

/// The file that marks a release tarball's tree (cmake/ncfilters.cmake reads it).
pub const RELEASE_MARKER: &str = ".ncfilters-release";
/// The file that names the commit a tree without `.git` was copied from (ncfilters_provenance.cmake).
pub const SOURCE_RECORD: &str = ".ncfilters-source";

const VENDORED_SOURCE_CONFIG: &str = "# SPDX-License-Identifier: BSD-3-Clause\n\
    # Written by `cargo xtask dist`: cargo takes every crate from vendor/, never from the network.\n\
    [source.crates-io]\n\
    replace-with = \"ncfilters-vendored\"\n\n\
    [source.ncfilters-vendored]\n\
    directory = \"vendor\"\n";

/// `cargo xtask dist`: the release tarball, of a work tree with no uncommitted change.
pub fn make_release_tarball(h: &Harness) -> Result<PathBuf> {
    let changed = changed_tracked_files(&h.repo)?;
    if !changed.is_empty() {
        fail!(
            "the work tree has uncommitted changes ({}): a release tarball is made from a commit (docs/releasing.md)",
            changed.join(", ")
        );
    }
    make_tarball(h)
}

/// Tracked files whose work-tree content differs from HEAD's.
fn changed_tracked_files(repo: &Path) -> Result<Vec<String>> {
    let status = output(cmd("git", ["-C"]).arg(repo).args(["status", "--porcelain", "--untracked-files=no"]))?;
    Ok(status.lines().filter_map(|line| line.get(3..)).map(String::from).collect())
}

/// Makes the tarball and its checksum; returns the tarball's path. From a tree with uncommitted
/// changes (a test's), it names the commit it was made from instead of calling itself a release.
pub fn make_tarball(h: &Harness) -> Result<PathBuf> {
    let version = workspace_version(&h.repo)?;
    let name = format!("ncfilters-{version}");
    let dist = h.repo.join("target/dist");
    let stage = dist.join(&name);
    crate::harness::remove_dir_all_if_exists(&stage)?;
    crate::harness::create_dir_all(&stage)?;
    log(format!("stage the sources of ncfilters {version} in {}", stage.display()));
    for file in tracked_files(&h.repo)? {
        let to = stage.join(&file);
        if let Some(parent) = to.parent() {
            crate::harness::create_dir_all(parent)?;
        }
        std::fs::copy(h.repo.join(&file), &to).map_err(|e| crate::harness::Failure(format!("copy {file}: {e}")))?;
    }
    let members = shipped_members(&h.repo, &metadata(&h.repo)?);
    for (_, dir) in &members {
        let manifest = stage.join(dir).join("Cargo.toml");
        let text = crate::harness::read_to_string(&manifest)?;
        crate::harness::write_file(&manifest, &without_dev_dependencies(&text))?;
    }
    let root_manifest = stage.join("Cargo.toml");
    let text = crate::harness::read_to_string(&root_manifest)?;
    crate::harness::write_file(&root_manifest, &shipped_workspace(&text, &members)?)?;
    if changed_tracked_files(&h.repo)?.is_empty() {
        crate::harness::write_file(&stage.join(RELEASE_MARKER), &format!("ncfilters {version}, release tarball\n"))?;
    } else {
        let commit = output(cmd("git", ["-C"]).arg(&h.repo).args(["rev-parse", "--short=12", "HEAD"]))?;
        crate::harness::write_file(&stage.join(SOURCE_RECORD), &format!("git {}, modified\n", commit.trim()))?;
    }

    log("cargo vendor: the crates of the shipped members");
    let mut vendor = cmd("cargo", ["vendor", "--versioned-dirs", "--quiet", "--manifest-path"]);
    vendor.arg(&root_manifest).arg(stage.join("vendor")).current_dir(&stage);
    output(&mut vendor)?;
    without_what_dh_clean_deletes(&stage.join("vendor"))?;
    crate::harness::write_file(&stage.join(".cargo/config.toml"), VENDORED_SOURCE_CONFIG)?;
    same_versions_as_the_repository(&h.repo, &stage)?;
    let copyright = crate::licences::debian_copyright(&stage)?;
    crate::harness::write_file(&stage.join(crate::licences::DEBIAN_COPYRIGHT), &copyright)?;

    let tarball = dist.join(format!("{name}.tar.xz"));
    let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(epoch) => epoch,
        Err(_) => output(cmd("git", ["-C"]).arg(&h.repo).args(["log", "-1", "--format=%ct"]))?.trim().to_string(),
    };
    let script = format!(
        "set -o pipefail; tar --sort=name --mtime=@{epoch} --owner=0 --group=0 --numeric-owner \
         --mode=u+rw,go+r,go-w --format=gnu -C '{}' -cf - '{name}' | xz -6 -T1 -c > '{}'",
        dist.display(),
        tarball.display()
    );
    run(&mut cmd("bash", ["-c", script.as_str()]))?;
    let mut sum = cmd("sha256sum", [format!("{name}.tar.xz")]);
    sum.current_dir(&dist);
    let checksum = output(&mut sum)?;
    crate::harness::write_file(&dist.join(format!("{name}.tar.xz.sha256")), &checksum)?;
    let size = std::fs::metadata(&tarball).map(|m| m.len()).unwrap_or(0);
    println!("PASS {} ({} MB): {}", tarball.display(), size / 1_000_000, checksum.trim());
    Ok(tarball)
}

/// Whether debhelper's `dh_clean`, which every Debian package build runs first, deletes a file of
/// this name (its list of editor and patch leftovers; `Cargo.toml.orig` is one).
fn deleted_by_dh_clean(name: &str) -> bool {
    [".orig", ".rej", ".bak", "~"].iter().any(|suffix| name.ends_with(suffix))
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
        || ["DEADJOE", ".SUMS", "TAGS"].contains(&name)
}

/// Removes from each vendored crate the files `dh_clean` would delete, and their entries in the
/// crate's `.cargo-checksum.json`: cargo checks every file listed there, so a Debian build of the
/// tarball would otherwise stop with "failed to calculate checksum of …/Cargo.toml.orig".
fn without_what_dh_clean_deletes(vendor: &Path) -> Result {
    let crates =
        std::fs::read_dir(vendor).map_err(|e| crate::harness::Failure(format!("{}: {e}", vendor.display())))?;
    for entry in crates.flatten() {
        let dir = entry.path();
        let checksums = dir.join(".cargo-checksum.json");
        let text = crate::harness::read_to_string(&checksums)?;
        let mut json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| crate::harness::Failure(format!("{}: {e}", checksums.display())))?;
        let Some(files) = json.get_mut("files").and_then(serde_json::Value::as_object_mut) else {
            fail!("{}: no \"files\" object", checksums.display());
        };
        let mut doomed = Vec::new();
        crate::text::collect_files(&dir, &mut |path| {
            if path.file_name().is_some_and(|name| deleted_by_dh_clean(&name.to_string_lossy())) {
                doomed.push(path.to_path_buf());
            }
        });
        for path in doomed {
            std::fs::remove_file(&path).map_err(|e| crate::harness::Failure(format!("{}: {e}", path.display())))?;
            if let Ok(relative) = path.strip_prefix(&dir) {
                files.remove(&relative.to_string_lossy().into_owned());
            }
        }
        crate::harness::write_file(&checksums, &json.to_string())?;
    }
    Ok(())
}

/// A manifest without its dev-dependency tables (`[dev-dependencies]`, `[dev-dependencies.x]`,
/// `[target.'…'.dev-dependencies]`).
fn without_dev_dependencies(manifest: &str) -> String {
    let mut kept = String::new();
    let mut skipping = false;
    for line in manifest.lines() {
        let header = line.trim_start();
        if header.starts_with('[') {
            skipping = header.contains("dev-dependencies");
        }
        if !skipping {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The root manifest with the shipped members only, the dev-only ones excluded.
fn shipped_workspace(manifest: &str, members: &[(String, String)]) -> Result<String> {
    let Some(start) = manifest.find("members = [") else {
        fail!("Cargo.toml has no `members = [` list");
    };
    let Some(length) = manifest[start..].find(']') else {
        fail!("Cargo.toml's members list does not end");
    };
    let listed: Vec<String> = members.iter().map(|(_, dir)| format!("    \"{dir}\",\n")).collect();
    let Some(exclude) = manifest.find("exclude = [\"fuzz\"]") else {
        fail!("Cargo.toml has no `exclude = [\"fuzz\"]`");
    };
    let excluded: Vec<String> = DEV_ONLY_MEMBERS.iter().map(|dir| format!(", \"{dir}\"")).collect();
    let mut text = String::new();
    text.push_str(&manifest[..start]);
    text.push_str(&format!("members = [\n{}]", listed.concat()));
    text.push_str(&manifest[start + length + 1..exclude]);
    text.push_str(&format!("exclude = [\"fuzz\"{}]", excluded.concat()));
    text.push_str(&manifest[exclude + "exclude = [\"fuzz\"]".len()..]);
    Ok(text)
}

/// Every package of the tarball's Cargo.lock is in the repository's, at the same version: cargo
/// vendor only dropped what the dev-only crates needed.
fn same_versions_as_the_repository(repo: &Path, stage: &Path) -> Result {
    let packages = |lock: &str| -> Vec<String> {
        let mut name = "";
        let mut found = Vec::new();
        for line in lock.lines() {
            if let Some(value) = line.strip_prefix("name = ") {
                name = value;
            } else if let Some(version) = line.strip_prefix("version = ") {
                found.push(format!("{name} {version}"));
            }
        }
        found
    };
    let repository = packages(&crate::harness::read_to_string(&repo.join("Cargo.lock"))?);
    let changed: Vec<String> = packages(&crate::harness::read_to_string(&stage.join("Cargo.lock"))?)
        .into_iter()
        .filter(|package| !repository.contains(package))
        .collect();
    if !changed.is_empty() {
        fail!("the tarball's Cargo.lock has packages the repository's lacks: {changed:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_a_tracked_file_is_seen_and_an_untracked_file_is_not() {
        let repo = std::env::temp_dir().join(format!("ncfilters-dist-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&repo);
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| run(cmd("git", ["-C"]).arg(&repo).args(args)).unwrap();
        git(&["init", "-q"]);
        std::fs::write(repo.join("tracked"), "a\n").unwrap();
        git(&["add", "tracked"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"]);
        std::fs::write(repo.join("untracked"), "b\n").unwrap();
        assert!(changed_tracked_files(&repo).unwrap().is_empty());
        std::fs::write(repo.join("tracked"), "c\n").unwrap();
        assert_eq!(changed_tracked_files(&repo).unwrap(), ["tracked"]);
        let _ = std::fs::remove_dir_all(&repo);
    }

    #[test]
    fn the_names_dh_clean_deletes_are_known() {
        for name in ["Cargo.toml.orig", "x.rej", "a.bak", "b~", "#c#", "TAGS"] {
            assert!(deleted_by_dh_clean(name), "{name}");
        }
        for name in ["Cargo.toml", "orig.rs", "#", "tags", ".cargo-checksum.json"] {
            assert!(!deleted_by_dh_clean(name), "{name}");
        }
    }

    #[test]
    fn dev_dependency_tables_are_removed_and_nothing_else() {
        let manifest = "[package]\nname = \"a\"\n\n[dependencies]\nx = \"1\"\n\n[dev-dependencies]\ny = \"1\"\n\
                        \n[target.'cfg(unix)'.dev-dependencies]\nz = \"1\"\n\n[features]\nf = []\n";
        assert_eq!(
            without_dev_dependencies(manifest),
            "[package]\nname = \"a\"\n\n[dependencies]\nx = \"1\"\n\n[features]\nf = []\n"
        );
    }

    #[test]
    fn the_workspace_keeps_the_shipped_members_and_excludes_the_others() {
        let manifest =
            "[workspace]\nmembers = [\n    \".\",\n    \"xtask\",\n]\nexclude = [\"fuzz\"]\nresolver = \"2\"\n";
        let members = [("ncfilters".to_string(), ".".to_string())];
        assert_eq!(
            shipped_workspace(manifest, &members).unwrap(),
            "[workspace]\nmembers = [\n    \".\",\n]\nexclude = [\"fuzz\", \"tools/bench-filters\", \"tools/gen-headers\", \"tools/source-scan\", \"xtask\"]\nresolver = \"2\"\n"
        );
    }
}
