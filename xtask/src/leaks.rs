// SPDX-License-Identifier: BSD-3-Clause
//! The one rule that decides whether a valgrind definite leak is ncfilters': the first stack
//! frame after the allocator (valgrind's malloc family and Rust's alloc/core/std) is an ncfilters
//! function. A leak made inside a C plugin that the NCZarr chain called (its frames are ??? once
//! the plugin is unloaded) is the plugin's, as on stock. Used by `valgrind` and, through
//! `classify-leaks`, by c_tests/run.sh.

use std::path::PathBuf;

use crate::harness::{fail, read_to_string, Result};

pub const DEFINITE_LEAK: &str = "definitely lost in loss record";

/// The definite-leak records (each from its "definitely lost" line to the blank `==pid==` line
/// that ends it) whose allocation was made by ncfilters code.
pub fn leaks_allocated_by_ncfilters(log: &str) -> Vec<String> {
    let mut ours = Vec::new();
    let mut record: Option<Record> = None;
    for line in log.lines() {
        if line.contains(DEFINITE_LEAK) {
            record = Some(Record::default());
        }
        let Some(current) = record.as_mut() else {
            continue;
        };
        current.text.push('\n');
        current.text.push_str(line);
        if current.allocated_by_ncfilters.is_none() {
            if let Some(frame) = stack_frame(line) {
                if !is_allocator_frame(frame) {
                    current.allocated_by_ncfilters = Some(is_ncfilters_frame(frame));
                }
                continue;
            }
        }
        if is_record_end(line) {
            let done = record.take().expect("a record is open");
            if done.allocated_by_ncfilters == Some(true) {
                ours.push(done.text);
            }
        }
    }
    ours
}

#[derive(Default)]
struct Record {
    text: String,
    /// Decided by the first frame after the allocator; None until then.
    allocated_by_ncfilters: Option<bool>,
}

/// The function part of a stack line, `==12== at 0x4846990: malloc (in ...)` or
/// `==12==    by 0x65232D3: ???`: what follows "<at|by> 0x<HEX>: ".
fn stack_frame(line: &str) -> Option<&str> {
    ["at 0x", "by 0x"].iter().find_map(|marker| {
        let start = line.find(marker)? + marker.len();
        let rest = &line[start..];
        let hex_len = rest.bytes().take_while(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b)).count();
        if hex_len == 0 {
            return None;
        }
        let after = rest[hex_len..].strip_prefix(':')?;
        Some(after.strip_prefix(' ').unwrap_or(after))
    })
}

/// valgrind's replacement allocators and the Rust standard library's allocation paths.
fn is_allocator_frame(frame: &str) -> bool {
    frame.contains("vgpreload")
        || frame.contains("(library/")
        || ["alloc::", "core::", "std::", "__rust"].iter().any(|prefix| frame.starts_with(prefix))
}

/// An ncfilters function: named so (crate path or library file), or Rust source of ours
/// (`file.rs:LINE)`; the standard library's is `(library/...)`, excluded above).
fn is_ncfilters_frame(frame: &str) -> bool {
    frame.contains("ncfilters") || has_rust_source_location(frame)
}

fn has_rust_source_location(frame: &str) -> bool {
    frame.match_indices(".rs:").any(|(at, marker)| {
        let rest = &frame[at + marker.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(')')
    })
}

/// valgrind ends a record with a line holding only its `==pid==` prefix.
fn is_record_end(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("==") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].strip_prefix("==").is_some_and(|tail| tail.trim_end_matches(' ').is_empty())
}

/// `cargo xtask classify-leaks <log>...`: prints the ncfilters leak records; fails if any.
pub fn classify_command(logs: &[PathBuf]) -> Result {
    let mut count = 0;
    for log in logs {
        for record in leaks_allocated_by_ncfilters(&read_to_string(log)?) {
            println!("{record}");
            count += 1;
        }
    }
    if count > 0 {
        fail!("{count} definite leak record(s) allocated by ncfilters code");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLUGIN_LEAK: &str = "\
==4834== 40 bytes in 1 blocks are definitely lost in loss record 3 of 12
==4834==    at 0x4846990: memalign (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==4834==    by 0x4846AED: posix_memalign (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==4834==    by 0x65232D3: ???
==4834==    by 0x4EF4B02: H5Z_pipeline (in /usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103.3.1)
==4834==    by 0x4CDA3B3: ncfilters::abi::h5z::filter (h5z.rs:88)
==4834== 
";

    const NCFILTERS_LEAK: &str = "\
==77== 24 bytes in 1 blocks are definitely lost in loss record 1 of 4
==77==    at 0x48407B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==77==    by 0x5A1B2C3: alloc::alloc::alloc (alloc.rs:95)
==77==    by 0x5A1B2C4: alloc::raw_vec::RawVec<T,A>::allocate_in (library/alloc/src/raw_vec.rs:10)
==77==    by 0x5A1B2C5: ncfilters::c_heap::CArray<T>::from_slice (c_heap.rs:42)
==77==    by 0x5A1B2C6: nc_inq_var_filter_ids (filter_api.rs:120)
==77==    by 0x109ABC: main (filter_api.c:300)
==77== 
";

    const RUST_SOURCE_LEAK: &str = "\
==78== 8 bytes in 1 blocks are definitely lost in loss record 2 of 4
==78==    at 0x48407B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==78==    by 0x5A1B2C5: parse_one (filterspec.rs:77)
==78== 
";

    #[test]
    fn leak_of_a_c_plugin_is_not_ours_even_if_ncfilters_is_further_up() {
        assert!(leaks_allocated_by_ncfilters(PLUGIN_LEAK).is_empty());
    }

    #[test]
    fn leak_whose_first_frame_after_the_allocator_is_ncfilters_is_ours() {
        let log = format!("{PLUGIN_LEAK}==77== other noise\n{NCFILTERS_LEAK}{RUST_SOURCE_LEAK}");
        let ours = leaks_allocated_by_ncfilters(&log);
        assert_eq!(ours.len(), 2);
        assert!(ours[0].contains("CArray<T>::from_slice"));
        assert!(ours[0].contains("main (filter_api.c:300)"));
        assert!(ours[1].contains("parse_one"));
    }

    #[test]
    fn record_without_its_closing_line_is_not_reported() {
        let unterminated = NCFILTERS_LEAK.trim_end_matches("==77== \n");
        assert!(leaks_allocated_by_ncfilters(unterminated).is_empty());
    }

    #[test]
    fn frames_and_record_ends_are_recognised() {
        assert_eq!(stack_frame("==1==    by 0x65232D3: ???"), Some("???"));
        assert_eq!(stack_frame("==1== 40 bytes in 1 blocks"), None);
        assert!(is_record_end("==4834== "));
        assert!(is_record_end("==4834=="));
        assert!(!is_record_end("==4834== x"));
        assert!(has_rust_source_location("f (zfilter.rs:12)"));
        assert!(!has_rust_source_location("f (zfilter.rs:)"));
    }

    /// The saved logs of a passing run (the main worktree's C tests, when present) hold no
    /// ncfilters leak.
    #[test]
    fn saved_c_test_logs_hold_no_ncfilters_leak() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/harness/c_tests");
        for log in crate::text::glob(&dir, "valgrind-", ".log") {
            let text = read_to_string(&log).unwrap();
            assert!(leaks_allocated_by_ncfilters(&text).is_empty(), "{}", log.display());
        }
    }
}
