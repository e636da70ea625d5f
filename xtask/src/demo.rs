// SPDX-License-Identifier: BSD-3-Clause
//! `demo`: netcdf-c built with ncfilters compresses a real dataset (from Debian's r-cran-stars)
//! with nccopy -F, bzip2 and zstd, to netCDF-4 and NCZarr, with HDF5_PLUGIN_PATH unset: the
//! standard filters are built into libnetcdf.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{create_dir_all, fail, log, remove_dir_all_if_exists, Harness, Result};
use crate::process::{output, run};
use crate::setup;
use crate::text::{collect_files, files_with_suffix};

/// The ncfilters build's programs, run with its libnetcdf and no plugin path.
struct Tools {
    nccopy: PathBuf,
    ncdump: PathBuf,
    liblib: PathBuf,
}

impl Tools {
    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command.env_remove("HDF5_PLUGIN_PATH").env("LD_LIBRARY_PATH", &self.liblib);
        command
    }

    fn nccopy<const N: usize>(&self, args: [&str; N]) -> Result {
        let mut nccopy = self.command(&self.nccopy);
        run(nccopy.args(args))
    }

    fn ncdump<const N: usize>(&self, args: [&str; N]) -> Result<String> {
        let mut ncdump = self.command(&self.ncdump);
        output(ncdump.args(args))
    }

    /// The `data:` section of ncdump's output: every variable's values.
    fn data_section(&self, file: &str) -> Result<String> {
        let dump = self.ncdump([file])?;
        Ok(dump.lines().skip_while(|line| !line.starts_with("data:")).collect::<Vec<_>>().join("\n"))
    }

    fn check_same_values(&self, input: &str, copy: &str, name: &str) -> Result {
        if self.data_section(input)? != self.data_section(copy)? {
            fail!("{name} data differs from the input");
        }
        println!("values of every variable identical to the input: yes");
        Ok(())
    }
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

pub fn demo(h: &Harness) -> Result {
    setup::setup(h)?;
    crate::netcdf::build_netcdf(h, "ncfilters")?;
    let build = h.ncfilters_build();
    let data = h.work.join("demo");
    create_dir_all(&data)?;
    let input = path_str(&setup::stars_input(h)?);
    let tools = Tools {
        nccopy: build.join("ncdump/nccopy"),
        ncdump: build.join("ncdump/ncdump"),
        liblib: h.lib_dir("ncfilters"),
    };
    let out = |name: &str| path_str(&data.join(name));

    log(format!("input: {input} (from Debian's r-cran-stars)"));
    for line in tools.ncdump(["-h", &input])?.lines().take(12) {
        println!("{line}");
    }
    log("nccopy -F with bzip2 (307) and zstd (32015), through netcdf-c built with ncfilters, HDF5_PLUGIN_PATH unset");
    tools.nccopy(["-k", "nc4", &input, &out("plain.nc")])?;
    tools.nccopy(["-k", "nc4", "-F", "*,307,9", &input, &out("bzip2.nc")])?;
    tools.nccopy(["-k", "nc4", "-F", "*,32015,3", &input, &out("zstd.nc")])?;
    for name in ["bzip2", "zstd"] {
        let file = out(&format!("{name}.nc"));
        log(format!("ncdump -hs {name}.nc"));
        let storage = tools.ncdump(["-hs", &file])?;
        let filter_lines =
            storage.lines().filter(|l| ["_Filter", "_Storage", "_ChunkSizes"].iter().any(|a| l.contains(a)));
        for line in filter_lines.take(8) {
            println!("{line}");
        }
        tools.check_same_values(&input, &file, &format!("{name}.nc"))?;
    }

    log("nccopy to NCZarr with zstd (32015), HDF5_PLUGIN_PATH unset: the codec as .zarray stores it, readable by zarr-python");
    let zarr = data.join("zstd.zarr");
    remove_dir_all_if_exists(&zarr)?;
    let zarr_url = format!("file://{}#mode=nczarr,file", zarr.display());
    tools.nccopy(["-F", "*,32015,3", &input, &zarr_url])?;
    show_last_compressor(&zarr)?;
    tools.check_same_values(&input, &zarr_url, "zstd.zarr")?;

    log("file sizes (bytes)");
    for file in [input.clone(), out("plain.nc"), out("bzip2.nc"), out("zstd.nc")] {
        let name = Path::new(&file).file_name().unwrap_or_default().to_string_lossy().into_owned();
        println!("{:>12}  {name}", file_size(Path::new(&file)));
    }
    let mut zarr_bytes = 0;
    collect_files(&zarr, &mut |file| zarr_bytes += file_size(file));
    println!("{zarr_bytes:>12}  zstd.zarr (all files)");
    Ok(())
}

fn file_size(path: &Path) -> u64 {
    path.metadata().map_or(0, |m| m.len())
}

/// The `"compressor": {...}` of the last .zarray (sorted by path), as zarr-python reads it.
fn show_last_compressor(zarr: &Path) -> Result {
    let Some(zarray) = files_with_suffix(zarr, ".zarray").pop() else {
        fail!("no .zarray in {}", zarr.display());
    };
    let text = crate::harness::read_to_string(&zarray)?;
    let array = zarray.parent().and_then(Path::file_name).unwrap_or_default().to_string_lossy();
    for compressor in compressor_objects(&text) {
        println!("{array}/.zarray: {compressor}");
    }
    Ok(())
}

/// Each `"compressor": {...}` (a flat object) in a .zarray's JSON text.
fn compressor_objects(json: &str) -> Vec<&str> {
    let key = "\"compressor\":";
    json.match_indices(key)
        .filter_map(|(at, _)| {
            let rest = &json[at + key.len()..];
            let spaces = rest.len() - rest.trim_start_matches(' ').len();
            if !rest[spaces..].starts_with('{') {
                return None;
            }
            let end = rest.find('}')?;
            Some(&json[at..at + key.len() + end + 1])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressor_object_is_found() {
        let json = r#"{"chunks": [1], "compressor": {"id": "zstd", "level": 3}, "dtype": "<f4"}"#;
        assert_eq!(compressor_objects(json), [r#""compressor": {"id": "zstd", "level": 3}"#]);
        assert!(compressor_objects(r#"{"compressor": null}"#).is_empty());
    }
}
