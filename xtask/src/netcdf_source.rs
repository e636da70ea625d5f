// SPDX-License-Identifier: BSD-3-Clause
//! A netcdf-c release's source, verified by its content: the sha256 of its files
//! ([`tree_sha256`]), so that upstream's tarball of a tag and a `git archive` of it both verify.
//! It comes from a mirror folder (`NCFILTERS_NETCDF_SOURCES`, else `../shared/netcdf-c` beside
//! the repository), else from where the release is published (`setup::fetch_netcdf_source`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::{fail, remove_dir_all_if_exists, Failure, Harness, Result};
use crate::process::{cmd, run};

/// Where upstream publishes each tag's source archive (`<tag>.tar.gz`, unpacking to
/// `netcdf-c-<version>/`).
pub const UPSTREAM_TAGS: &str = "https://github.com/Unidata/netcdf-c/archive/refs/tags";

/// The folder of release archives a user names (`NCFILTERS_NETCDF_SOURCES`), else
/// `../shared/netcdf-c` beside the repository.
pub fn mirror_folder(h: &Harness) -> PathBuf {
    std::env::var_os("NCFILTERS_NETCDF_SOURCES").map(PathBuf::from).unwrap_or_else(|| h.repo.join("../shared/netcdf-c"))
}

/// The first of `names` in the mirror folder.
pub fn in_mirror(h: &Harness, names: &[String]) -> Option<PathBuf> {
    let folder = mirror_folder(h);
    names.iter().map(|name| folder.join(name)).find(|path| path.is_file())
}

/// `url` into `file` (through a partial file, removed on failure): the error says what curl said.
pub fn download(url: &str, file: &Path) -> std::result::Result<(), String> {
    let partial = file.with_extension("partial");
    let mut curl = cmd("curl", ["-fsSL", "--retry", "2", "--connect-timeout", "20", "-o"]);
    curl.arg(&partial).arg(url);
    let out = curl.stdout(Stdio::null()).output().map_err(|e| format!("cannot run curl: {e}"))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        // Each of curl's tries says the same.
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(said
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("curl failed")
            .trim()
            .to_string());
    }
    std::fs::rename(&partial, file).map_err(|e| format!("cannot rename {}: {e}", partial.display()))
}

/// The sha256 of a source tree's files, less `excluded` (paths relative to `dir`): what
/// `find . -type f -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum` prints
/// in it, with the excluded paths left out of find's list.
pub fn tree_sha256(dir: &Path, excluded: &[&str]) -> Result<String> {
    let mut files = Vec::new();
    collect_regular_files(dir, dir, &mut files)?;
    files.retain(|file| !excluded.contains(&file.as_str()));
    files.sort_unstable();
    let mut listing = String::new();
    for chunk in files.chunks(1000) {
        let mut sums = cmd("sha256sum", ["--"]);
        sums.args(chunk).current_dir(dir);
        listing.push_str(&crate::process::output(&mut sums)?);
    }
    sha256_of(&listing)
}

fn collect_regular_files(root: &Path, dir: &Path, files: &mut Vec<String>) -> Result {
    let entries = std::fs::read_dir(dir).map_err(|e| Failure(format!("cannot read {}: {e}", dir.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| Failure(format!("cannot read {}: {e}", dir.display())))?;
        let kind = entry.file_type().map_err(|e| Failure(format!("cannot stat {}: {e}", entry.path().display())))?;
        if kind.is_dir() {
            collect_regular_files(root, &entry.path(), files)?;
        } else if kind.is_file() {
            let path = entry.path();
            let relative = path.strip_prefix(root).expect("a walked path is under its root");
            files.push(relative.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

fn sha256_of(text: &str) -> Result<String> {
    let sum = crate::process::output_with_input(&mut Command::new("sha256sum"), text)?;
    match sum.split_whitespace().next() {
        Some(sum) if sum.len() == 64 => Ok(sum.to_string()),
        _ => fail!("sha256sum printed no sum"),
    }
}

/// Unpacks `archive` (a `.tar.gz` whose one top folder is `top`) as `into/top` once its files'
/// [`tree_sha256`] less `excluded` is `expected`; on any other content nothing is left in `into`
/// and the error names the archive.
pub fn unpack_verified(archive: &Path, into: &Path, top: &str, expected: &str, excluded: &[&str]) -> Result {
    let staging = into.join(format!(".{top}.unverified"));
    remove_dir_all_if_exists(&staging)?;
    crate::harness::create_dir_all(&staging)?;
    let mut untar = cmd("tar", ["-xzf"]);
    untar.arg(archive).arg("-C").arg(&staging);
    let unpacked = crate::process::succeeds_quietly(&mut untar)?;
    let tree = staging.join(top);
    let verdict = if !unpacked {
        Err(format!("{} is not a gzipped tar archive", archive.display()))
    } else if !tree.is_dir() {
        Err(format!("{} holds no folder {top}/", archive.display()))
    } else {
        let found = tree_sha256(&tree, excluded)?;
        if found == expected {
            Ok(())
        } else {
            Err(format!(
                "{}'s files are not those of {top}: their tree sha256 is {found}, not {expected}",
                archive.display()
            ))
        }
    };
    if let Err(message) = verdict {
        remove_dir_all_if_exists(&staging)?;
        fail!("{message}");
    }
    run(cmd("mv", ["--"]).arg(&tree).arg(into.join(top)))?;
    remove_dir_all_if_exists(&staging)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    use super::*;

    /// A folder under the temporary directory, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("ncfilters-source-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// `netcdf-c-9.9.9/` with two files (and `extra` when given) as a .tar.gz in `dir`.
    fn archive(dir: &Path, name: &str, extra: Option<&str>) -> PathBuf {
        let tree = dir.join(format!("tree-{name}/netcdf-c-9.9.9"));
        std::fs::create_dir_all(tree.join("libdispatch")).unwrap();
        std::fs::write(tree.join("CMakeLists.txt"), "project(netCDF VERSION 9.9.9)\n").unwrap();
        std::fs::write(tree.join("libdispatch/dfilter.c"), "int x;\n").unwrap();
        if let Some(extra) = extra {
            std::fs::write(tree.join(extra), "large\n").unwrap();
        }
        let file = dir.join(format!("{name}.tar.gz"));
        let mut tar = cmd("tar", ["-czf"]);
        tar.arg(&file).arg("-C").arg(tree.parent().unwrap()).arg("netcdf-c-9.9.9");
        run(&mut tar).unwrap();
        file
    }

    /// Serves `body` to each of `requests` HTTP GETs on a loopback port: the URL of `/v9.9.9.tar.gz`.
    fn serve(body: Vec<u8>, requests: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(requests) {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 2 {
                    line.clear();
                }
                let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                stream.write_all(head.as_bytes()).unwrap();
                stream.write_all(&body).unwrap();
            }
        });
        format!("http://127.0.0.1:{port}/v9.9.9.tar.gz")
    }

    #[test]
    fn the_tree_hash_is_that_of_the_documented_shell_line() {
        let scratch = Scratch::new("shell");
        let dir = &scratch.0;
        let tarball = archive(dir, "a", None);
        run(cmd("tar", ["-xzf"]).arg(&tarball).arg("-C").arg(dir)).unwrap();
        let tree = dir.join("netcdf-c-9.9.9");
        let line = "find . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum | sha256sum";
        let shell = crate::process::output(cmd("sh", ["-c", line]).current_dir(&tree)).unwrap();
        assert_eq!(tree_sha256(&tree, &[]).unwrap(), shell.split_whitespace().next().unwrap());
    }

    #[test]
    fn a_download_is_verified_by_its_files_and_a_wrong_one_refused() {
        let scratch = Scratch::new("download");
        let dir = &scratch.0;
        // What a git archive of the tag holds, and upstream's tarball with a file the archive lacks.
        let archived = archive(dir, "archived", None);
        let upstream = archive(dir, "upstream", Some("gfs1.cdl"));
        run(cmd("tar", ["-xzf"]).arg(&archived).arg("-C").arg(dir)).unwrap();
        let expected = tree_sha256(&dir.join("netcdf-c-9.9.9"), &[]).unwrap();
        std::fs::remove_dir_all(dir.join("netcdf-c-9.9.9")).unwrap();

        let into = dir.join("work");
        std::fs::create_dir_all(&into).unwrap();
        let url = serve(std::fs::read(&upstream).unwrap(), 1);
        let fetched = dir.join("fetched.tar.gz");
        download(&url, &fetched).unwrap();
        unpack_verified(&fetched, &into, "netcdf-c-9.9.9", &expected, &["gfs1.cdl"]).unwrap();
        assert!(into.join("netcdf-c-9.9.9/libdispatch/dfilter.c").is_file());
        std::fs::remove_dir_all(into.join("netcdf-c-9.9.9")).unwrap();

        // Without the exclusion, upstream's extra file changes the content.
        let refused = unpack_verified(&fetched, &into, "netcdf-c-9.9.9", &expected, &[]).unwrap_err();
        assert!(refused.0.contains("are not those of netcdf-c-9.9.9"), "{}", refused.0);
        assert!(std::fs::read_dir(&into).unwrap().next().is_none(), "a refused archive leaves nothing behind");

        let wrong = serve(b"<html>not found</html>".to_vec(), 1);
        download(&wrong, &fetched).unwrap();
        let refused = unpack_verified(&fetched, &into, "netcdf-c-9.9.9", &expected, &[]).unwrap_err();
        assert!(refused.0.contains("is not a gzipped tar archive"), "{}", refused.0);
    }

    #[test]
    fn a_failed_download_says_why_and_leaves_no_file() {
        let scratch = Scratch::new("unreachable");
        // A port nothing listens on: bound, then closed.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let file = scratch.0.join("x.tar.gz");
        let error = download(&format!("http://127.0.0.1:{port}/x.tar.gz"), &file).unwrap_err();
        assert!(error.contains("curl"), "{error}");
        assert!(!file.exists() && !file.with_extension("partial").exists());
    }
}
