// SPDX-License-Identifier: BSD-3-Clause
//! The lists the docs keep, held to the code they describe: the module's options (its header
//! comment), the xtask subcommands (docs/testing.md), the functions of `include/ncfilters.h` and
//! the symbols libnetcdf adds (docs/packaging.md). Tests only.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
    }

    fn read(relative: &str) -> String {
        std::fs::read_to_string(repo().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
    }

    /// The `ncfilters_…` names in backquotes in `text`.
    fn quoted_ncfilters_names(text: &str) -> BTreeSet<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .filter(|word| {
                word.starts_with("ncfilters_") && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
            .map(str::to_string)
            .collect()
    }

    /// The text from the line holding `start` to the next blank line.
    fn paragraph_from<'a>(text: &'a str, start: &str) -> &'a str {
        let begin = text.find(start).unwrap_or_else(|| panic!("no `{start}`"));
        let rest = &text[begin..];
        &rest[..rest.find("\n\n").unwrap_or(rest.len())]
    }

    /// Every option a user sets (`option(…)`, `set(… CACHE …)`, the cargo it finds) is in the
    /// module's header comment, and the comment names no other.
    #[test]
    fn the_module_header_lists_every_option() {
        let module = read("cmake/ncfilters.cmake");
        let mut options = BTreeSet::new();
        for line in module.lines().map(str::trim_start) {
            let name = |rest: &str| rest.split([' ', ')']).next().unwrap_or_default().to_string();
            if let Some(rest) = line.strip_prefix("option(NCFILTERS_") {
                options.insert(format!("NCFILTERS_{}", name(rest)));
            } else if let Some(rest) = line.strip_prefix("set(NCFILTERS_").filter(|rest| rest.contains(" CACHE ")) {
                options.insert(format!("NCFILTERS_{}", name(rest)));
            } else if line.starts_with("find_program(NCFILTERS_CARGO ") {
                options.insert("NCFILTERS_CARGO".to_string());
            }
        }
        let header: BTreeSet<String> = module
            .lines()
            .take_while(|line| line.starts_with('#') || line.is_empty())
            .filter_map(|line| line.strip_prefix("#   NCFILTERS_"))
            .map(|rest| format!("NCFILTERS_{}", rest.split(' ').next().unwrap_or_default()))
            .collect();
        assert!(options.len() >= 10, "{options:?}");
        assert_eq!(header, options, "the header comment of cmake/ncfilters.cmake against its options");
    }

    /// docs/testing.md names every subcommand `cargo xtask --help` lists.
    #[test]
    fn testing_md_names_every_subcommand() {
        use clap::CommandFactory;
        let testing = read("docs/testing.md");
        let missing: Vec<String> = crate::Cli::command()
            .get_subcommands()
            .filter(|command| !command.is_hide_set())
            .map(|command| command.get_name().to_string())
            .filter(|name| {
                !testing.contains(&format!("`{name}`")) && !testing.contains(&format!("`cargo xtask {name}"))
            })
            .collect();
        assert!(missing.is_empty(), "docs/testing.md does not name these subcommands: {missing:?}");
    }

    /// What packaging.md says `ncfilters.h` declares and libnetcdf adds is what they do.
    #[test]
    fn packaging_md_names_the_header_s_functions_and_the_added_symbols() {
        let header: BTreeSet<String> = read("include/ncfilters.h")
            .lines()
            .filter(|line| !line.starts_with([' ', '*', '/', '#']))
            .filter_map(|line| line.split('(').next()?.split([' ', '*']).next_back())
            .filter(|name| name.starts_with("ncfilters_"))
            .map(str::to_string)
            .collect();
        let packaging = read("docs/packaging.md");
        let declared = paragraph_from(&packaging, "- `include/ncfilters.h`, which declares");
        assert_eq!(quoted_ncfilters_names(declared), header, "{declared}");
        let count = ["one", "two", "three", "four", "five", "six"][header.len() - 1];
        assert!(declared.contains(&format!("declares {count} functions")), "{declared}");

        let mut exported = BTreeSet::new();
        for file in std::fs::read_dir(repo().join("src/abi")).unwrap().flatten() {
            let text = std::fs::read_to_string(file.path()).unwrap();
            for piece in text.split("extern \"C\" fn ").skip(1) {
                let name: String = piece.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if name.starts_with("ncfilters_") {
                    exported.insert(name);
                }
            }
        }
        let added = paragraph_from(&packaging, "libnetcdf exports every symbol stock exports");
        assert_eq!(quoted_ncfilters_names(added), exported, "{added}");
        assert!(added.contains(&format!("these {}", ["", "", "", "", "", "five", "six", "seven"][exported.len()])));
    }
}
