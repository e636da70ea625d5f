// SPDX-License-Identifier: BSD-3-Clause
//! The Rust versions the crates state (`rust-version`), held to what their dependencies ask for
//! (cargo metadata): the shipped crates state the workspace's, which no dependency they build
//! exceeds (Debian 13's rustc 1.85.1 then builds them, as `debian13` and `deb trixie` do); the
//! dev-only crates state the highest that anything the tests build asks for (proptest's).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::harness::{fail, Result};

/// A `rust-version` as (major, minor, patch).
fn parse(version: &str) -> Option<(u32, u32, u32)> {
    let mut parts = version.split('.').map(str::parse::<u32>);
    let major = parts.next()?.ok()?;
    let minor = parts.next().unwrap_or(Ok(0)).ok()?;
    let patch = parts.next().unwrap_or(Ok(0)).ok()?;
    Some((major, minor, patch))
}

/// The package ids reachable from `roots` through dependencies of the kinds `follows` accepts
/// (`None` a normal dependency, `Some("build")`, `Some("dev")`), the roots included.
fn reachable(metadata: &Value, roots: &[String], follows: impl Fn(Option<&str>) -> bool) -> BTreeSet<String> {
    let nodes: BTreeMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|node| Some((node["id"].as_str()?, node)))
        .collect();
    let mut seen: BTreeSet<String> = roots.iter().cloned().collect();
    let mut pending: Vec<String> = roots.to_vec();
    while let Some(id) = pending.pop() {
        let Some(node) = nodes.get(id.as_str()) else { continue };
        for dependency in node["deps"].as_array().into_iter().flatten() {
            let kinds = dependency["dep_kinds"].as_array().into_iter().flatten();
            if !kinds.map(|k| k["kind"].as_str()).any(&follows) {
                continue;
            }
            if let Some(next) = dependency["pkg"].as_str() {
                if seen.insert(next.to_string()) {
                    pending.push(next.to_string());
                }
            }
        }
    }
    seen
}

/// The highest `rust-version` among the dependencies in `ids` (not the workspace's own crates), with
/// the package that states it.
fn highest(metadata: &Value, ids: &BTreeSet<String>) -> Option<((u32, u32, u32), String)> {
    metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| !p["source"].is_null() && p["id"].as_str().is_some_and(|id| ids.contains(id)))
        .filter_map(|p| Some((parse(p["rust_version"].as_str()?)?, p["name"].as_str()?.to_string())))
        .max()
}

fn shown((major, minor, patch): (u32, u32, u32)) -> String {
    if patch == 0 {
        format!("{major}.{minor}")
    } else {
        format!("{major}.{minor}.{patch}")
    }
}

/// Adds to `wrong` each of `packages` (the `kind` of crate) whose rust-version is not `expected`
/// (`why` it is expected).
fn stating_otherwise(packages: &[&Value], expected: (u32, u32, u32), kind: &str, why: &str, wrong: &mut Vec<String>) {
    for package in packages {
        if package["rust_version"].as_str().and_then(parse) != Some(expected) {
            wrong.push(format!(
                "{} ({kind}) states {:?}, not {} ({why})",
                package["name"],
                package["rust_version"],
                shown(expected)
            ));
        }
    }
}

/// Checks the stated versions; returns the line that says what holds.
pub fn check_rust_versions(metadata: &Value, shipped_names: &[String]) -> Result<String> {
    let members: Vec<&Value> =
        metadata["packages"].as_array().into_iter().flatten().filter(|p| p["source"].is_null()).collect();
    let is_shipped = |package: &Value| shipped_names.iter().any(|name| package["name"] == name.as_str());
    let id = |package: &Value| package["id"].as_str().unwrap_or_default().to_string();
    let (shipped, dev_only): (Vec<&Value>, Vec<&Value>) = members.iter().partition(|p| is_shipped(p));
    let workspace_version =
        shipped.iter().find(|p| p["name"] == "ncfilters").and_then(|p| parse(p["rust_version"].as_str()?));
    let Some(workspace_version) = workspace_version else { fail!("the ncfilters crate states no rust-version") };
    let mut wrong = Vec::new();
    stating_otherwise(&shipped, workspace_version, "shipped", "the workspace's", &mut wrong);
    let built = reachable(metadata, &shipped.iter().map(|p| id(p)).collect::<Vec<_>>(), |kind| kind != Some("dev"));
    let Some((built_needs, built_by)) = highest(metadata, &built) else {
        fail!("no rust-version among the shipped crates' dependencies")
    };
    if built_needs > workspace_version {
        wrong.push(format!(
            "{built_by}, which the shipped crates build, asks for Rust {}, above their {}",
            shown(built_needs),
            shown(workspace_version)
        ));
    }
    let everything = reachable(metadata, &members.iter().map(|p| id(p)).collect::<Vec<_>>(), |_| true);
    let Some((tests_need, tests_by)) = highest(metadata, &everything) else {
        fail!("no rust-version in the workspace")
    };
    let tests_floor = format!("{tests_by}'s, the highest the tests build");
    stating_otherwise(&dev_only, tests_need, "dev-only", &tests_floor, &mut wrong);
    if !wrong.is_empty() {
        fail!("rust-version: {}", wrong.join("; "));
    }
    Ok(format!(
        "PASS rust-version: the {} shipped crates state Rust {} (the most a dependency they build on any target asks: {}, {built_by}); the {} dev-only crates {} ({tests_by}'s, the most the tests ask)",
        shipped.len(),
        shown(workspace_version),
        shown(built_needs),
        dev_only.len(),
        shown(tests_need)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(parse("1.88").unwrap() > parse("1.85.1").unwrap());
        assert!(parse("1.100").unwrap() > parse("1.99").unwrap());
        assert_eq!(shown(parse("1.85.0").unwrap()), "1.85");
    }

    #[test]
    fn a_dev_dependency_s_version_binds_only_the_dev_only_crates() {
        let package = |name: &str, source: Option<&str>, version: &str| {
            serde_json::json!({"id": name, "name": name, "source": source, "rust_version": version,
                               "manifest_path": format!("/r/{name}/Cargo.toml")})
        };
        let node = |id: &str, deps: &[(&str, Option<&str>)]| serde_json::json!({"id": id, "deps": deps.iter().map(|(pkg, kind)| serde_json::json!({"pkg": pkg, "dep_kinds": [{"kind": kind}]})).collect::<Vec<_>>()});
        let metadata = |lib: &str, tool: &str| {
            serde_json::json!({
                "packages": [package("ncfilters", None, lib), package("xtask", None, tool),
                             package("zstd", Some("registry"), "1.64"), package("proptest", Some("registry"), "1.88")],
                "resolve": {"nodes": [node("ncfilters", &[("zstd", None), ("proptest", Some("dev"))]), node("xtask", &[]),
                                      node("zstd", &[]), node("proptest", &[])]}
            })
        };
        let shipped = ["ncfilters".to_string()];
        assert!(check_rust_versions(&metadata("1.85", "1.88"), &shipped).is_ok());
        assert!(check_rust_versions(&metadata("1.85", "1.85"), &shipped).is_err(), "the tools must state 1.88");
        assert!(check_rust_versions(&metadata("1.60", "1.88"), &shipped).is_err(), "zstd asks for 1.64");
    }
}
