// SPDX-License-Identifier: BSD-3-Clause
//! What a cross-built libnetcdf exports (Windows' netcdf.dll, the Macs' libnetcdf.dylib): the
//! module's build exports stock's symbols and the functions of ncfilters' own header.

use std::collections::BTreeSet;

use crate::harness::{fail, read_to_string, Harness, Result};

/// ncfilters' `library` exports stock's symbols and `additions`, nothing else.
pub fn check_exports(
    library: &str,
    stock: &BTreeSet<String>,
    ncfilters: &BTreeSet<String>,
    additions: &BTreeSet<String>,
) -> Result {
    let expected: BTreeSet<String> = stock.union(additions).cloned().collect();
    let missing: Vec<_> = expected.difference(ncfilters).collect();
    let extra: Vec<_> = ncfilters.difference(&expected).collect();
    if !missing.is_empty() || !extra.is_empty() {
        fail!(
            "ncfilters' {library} exports differ from stock's and {additions:?}: missing {missing:?}, extra {extra:?}"
        );
    }
    println!("{library} exports: stock's {}, ncfilters' the same and {additions:?}", stock.len());
    Ok(())
}

/// The functions of ncfilters' own header, include/ncfilters.h.
pub fn header_functions(h: &Harness) -> Result<BTreeSet<String>> {
    let additions = ncfilters_functions(&read_to_string(&h.repo.join("include/ncfilters.h"))?);
    if additions.is_empty() {
        fail!("include/ncfilters.h declares no ncfilters_ function");
    }
    Ok(additions)
}

/// The `ncfilters_*` functions a header declares.
fn ncfilters_functions(header: &str) -> BTreeSet<String> {
    header
        .lines()
        .filter(|line| !line.starts_with(' ') && !line.starts_with('#'))
        .filter_map(|line| {
            let start = line.find("ncfilters_")?;
            let name = &line[start..line[start..].find('(')? + start];
            name.chars().all(|c| c.is_ascii_lowercase() || c == '_').then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn ncfilters_functions_are_the_header_s_declarations() {
        let header = read_to_string(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/ncfilters.h")).unwrap();
        let names = ncfilters_functions(&header);
        assert!(names.contains("ncfilters_report"), "{names:?}");
        assert!(names.iter().all(|name| name.starts_with("ncfilters_")), "{names:?}");
    }
}
