//! One writer per log: an exclusive `flock` on the file for the writer's lifetime, and the
//! name of the process that holds it when a second writer is refused.
//!
//! The holder is read from `/proc/locks` (Linux), the kernel's own table of who holds which
//! lock, rather than from a pid file a crashed gateway could leave behind stale. Where that
//! table is not readable the refusal says the holder is unknown.

use std::fs::{File, TryLockError};
use std::io;

/// Why the exclusive lock was not taken.
pub(crate) enum LockFailure {
    /// Another open file description holds it: the pid of its process, when `/proc/locks` names
    /// one.
    Held(Option<u32>),
    /// The lock call itself failed (a file system without locks, say).
    Io(io::Error),
}

/// Takes the exclusive lock on `file` without waiting.
pub(crate) fn lock_exclusive(file: &File) -> Result<(), LockFailure> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(LockFailure::Held(holder(file))),
        Err(TryLockError::Error(error)) => Err(LockFailure::Io(error)),
    }
}

/// How many times `/proc/locks` is read before the holder is given up as unknown.
///
/// The kernel prints the table a page at a time from a list that other lock calls change
/// meanwhile, so one read can miss a lock held all along: with a table of a thousand locks and
/// two threads locking and unlocking others, 1 to 3 reads in a hundred did
/// (`tests/audit.rs`, `the_holder_is_named_while_other_files_are_locked_and_unlocked`). Misses
/// of successive reads were independent there. The reads are made only for a refusal.
#[cfg(target_os = "linux")]
const TABLE_READS: usize = 8;

/// The pid `/proc/locks` shows for a `FLOCK` on `file`'s inode.
#[cfg(target_os = "linux")]
fn holder(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;

    let metadata = file.metadata().ok()?;
    (0..TABLE_READS).find_map(|_| {
        let table = std::fs::read_to_string("/proc/locks").ok()?;
        holder_in(&table, metadata.dev(), metadata.ino())
    })
}

#[cfg(not(target_os = "linux"))]
fn holder(_file: &File) -> Option<u32> {
    None
}

/// Parses lines such as `3: FLOCK  ADVISORY  WRITE 4242 00:2a:1234 0 EOF` (waiters, marked
/// `->`, are skipped). The device is `major:minor` in hex; an inode match on another device is
/// taken only when no line matches both (overlay file systems show the lower device).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn holder_in(table: &str, dev: u64, ino: u64) -> Option<u32> {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let mut inode_only = None;
    for line in table.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, kind, _, _, pid, id, ..] = fields.as_slice() else {
            continue;
        };
        if *kind != "FLOCK" {
            continue;
        }
        let mut parts = id.split(':');
        let (Some(line_major), Some(line_minor), Some(line_ino)) =
            (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if line_ino.parse::<u64>().ok() != Some(ino) {
            continue;
        }
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let same_device = u64::from_str_radix(line_major, 16).ok() == Some(major)
            && u64::from_str_radix(line_minor, 16).ok() == Some(minor);
        if same_device {
            return Some(pid);
        }
        inode_only.get_or_insert(pid);
    }
    inode_only
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_the_flock_line_of_the_inode() {
        // dev 0x0803 = major 8, minor 3.
        let table = "1: POSIX  ADVISORY  WRITE 11 08:03:77 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4242 08:03:77 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 5151 08:03:77 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 99 08:03:78 0 EOF\n";
        assert_eq!(holder_in(table, 0x0803, 77), Some(4242));
        assert_eq!(holder_in(table, 0x0803, 78), Some(99));
        assert_eq!(holder_in(table, 0x0803, 79), None);
        // Another device: taken when nothing matches both.
        assert_eq!(holder_in(table, 0x002a, 77), Some(4242));
    }
}
