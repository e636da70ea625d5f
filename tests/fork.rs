// SPDX-License-Identifier: BSD-3-Clause
//! A child forked after the worker pools started has none of their threads: it must still
//! compress large chunks, with the same bytes, and not hang waiting for workers that stayed in
//! the parent (issue 15). Windows has no fork.
#![cfg(unix)]
use ncfilters::filters::{bzip2, deflate, zstd};
use std::time::{Duration, Instant};

/// 4 MiB of float-like data: several zstd jobs, deflate blocks and bzip2 pieces.
fn floats() -> Vec<u8> {
    (0..1u32 << 20).flat_map(|i| ((i as f32 * 0.0007).sin() * 300.0 + (i % 7) as f32 * 0.01).to_le_bytes()).collect()
}

fn compressed(data: &[u8]) -> Vec<Vec<u8>> {
    vec![
        zstd::encode(3, data).unwrap().as_slice().to_vec(),
        deflate::encode(1, data).unwrap().as_slice().to_vec(),
        bzip2::encode(9, data).unwrap().as_slice().to_vec(),
    ]
}

#[test]
fn a_forked_child_compresses_large_chunks_alike() {
    let data = floats();
    let in_parent = compressed(&data); // starts the pools
                                       // SAFETY: the child only compresses (allocating, starting libzstd workers of its own),
                                       // compares and leaves with _exit, never returning into the test harness.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        let same = compressed(&data) == in_parent;
        // SAFETY: ends the child at once, running no destructor of the parent's state.
        unsafe { libc::_exit(if same { 0 } else { 1 }) };
    }
    let started = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `child` is this process's child; `status` is writable.
        let done = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
        if done == child {
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            // SAFETY: as above; the child is killed and reaped.
            unsafe {
                libc::kill(child, libc::SIGKILL);
                libc::waitpid(child, &mut status, 0);
            }
            panic!("the forked child hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(libc::WIFEXITED(status), "the child died: status {status:#x}");
    assert_eq!(libc::WEXITSTATUS(status), 0, "the child wrote other bytes than its parent");
}
