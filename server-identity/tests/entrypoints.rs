//! `EntrypointDigests` and `digest_file` on real files in a temporary directory: a match, a
//! changed byte, a missing file, a directory, a FIFO, a symlink to a changed target, a symlink
//! loop, an unreadable file; exact errors; `FileDigest` text forms and a round-trip property.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use server_identity::{
    Anchor, EntrypointDigests, EntrypointError, FileDigest, FileDigestError, IdentityError,
    digest_file,
};

/// A fresh directory under the system temp directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "server-identity-{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The digest computed with sha2 directly, independent of the crate's file reading.
fn sha256(bytes: &[u8]) -> FileDigest {
    use sha2::Digest;
    FileDigest::from_bytes(sha2::Sha256::digest(bytes).into())
}

fn pinned(entries: &[(&Path, FileDigest)]) -> EntrypointDigests {
    let mut digests = EntrypointDigests::new();
    for (path, digest) in entries {
        digests.insert(path.to_path_buf(), *digest).unwrap();
    }
    digests
}

fn unreadable(path: &Path, detail: &str) -> IdentityError {
    IdentityError::EntrypointUnreadable {
        path: path.to_path_buf(),
        detail: detail.to_owned(),
    }
}

#[test]
fn matching_files_verify_in_path_order() {
    let dir = TempDir::new("match");
    let node = dir.file("node", b"#!/bin/node\x00binary");
    let script = dir.file("index.js", b"console.log('mcp')\n");
    let digests = pinned(&[
        (&node, sha256(b"#!/bin/node\x00binary")),
        (&script, sha256(b"console.log('mcp')\n")),
    ]);
    let verified = digests.verify().unwrap();
    assert_eq!(verified.digests(), &digests);
    let listed: Vec<(&Path, &FileDigest)> = verified.digests().iter().collect();
    let expected_script = sha256(b"console.log('mcp')\n");
    let expected_node = sha256(b"#!/bin/node\x00binary");
    // `index.js` sorts before `node`.
    assert_eq!(
        listed,
        [
            (script.as_path(), &expected_script),
            (node.as_path(), &expected_node)
        ]
    );
    assert_eq!(digests.iter().collect::<Vec<_>>(), listed);
}

#[test]
fn a_changed_byte_is_a_mismatch_with_both_digests() {
    let dir = TempDir::new("changed");
    let script = dir.file("index.js", b"console.log('mcp')\n");
    let digests = pinned(&[(&script, sha256(b"console.log('mcp')\n"))]);
    std::fs::write(&script, b"console.log('MCP')\n").unwrap();
    let error = digests.verify().unwrap_err();
    assert_eq!(
        error,
        IdentityError::EntrypointMismatch {
            path: script.clone(),
            expected: sha256(b"console.log('mcp')\n"),
            observed: sha256(b"console.log('MCP')\n"),
        }
    );
    assert_eq!(error.anchor(), Anchor::Entrypoint);
}

#[test]
fn a_missing_file_a_directory_and_a_fifo_are_unreadable() {
    let dir = TempDir::new("unreadable");
    let missing = dir.0.join("gone");
    let any = sha256(b"x");
    assert_eq!(
        pinned(&[(&missing, any)]).verify().unwrap_err(),
        unreadable(&missing, "No such file or directory (os error 2)")
    );
    assert_eq!(
        pinned(&[(&dir.0, any)]).verify().unwrap_err(),
        unreadable(&dir.0, "a directory, not a regular file")
    );
    // A FIFO with no writer: refused at once, not waited on.
    let fifo = dir.0.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    assert_eq!(
        pinned(&[(&fifo, any)]).verify().unwrap_err(),
        unreadable(&fifo, "a FIFO, socket or device, not a regular file")
    );
    assert_eq!(
        digest_file(&fifo).unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
}

#[test]
fn a_symlink_is_followed_and_reported_by_its_listed_path() {
    let dir = TempDir::new("symlink");
    let target = dir.file("index-1.2.js", b"v1.2");
    let link = dir.0.join("index.js");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let digests = pinned(&[(&link, sha256(b"v1.2"))]);
    digests.verify().unwrap();
    assert_eq!(digest_file(&link).unwrap(), sha256(b"v1.2"));

    // The target changes behind the link.
    std::fs::write(&target, b"v1.3").unwrap();
    assert_eq!(
        digests.verify().unwrap_err(),
        IdentityError::EntrypointMismatch {
            path: link.clone(),
            expected: sha256(b"v1.2"),
            observed: sha256(b"v1.3"),
        }
    );

    // A loop.
    let (a, b) = (dir.0.join("a"), dir.0.join("b"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    assert_eq!(
        pinned(&[(&a, sha256(b""))]).verify().unwrap_err(),
        unreadable(&a, "Too many levels of symbolic links (os error 40)")
    );
}

// chmod 000: refused for an ordinary user. Root (CAP_DAC_OVERRIDE) still reads the file, so as
// root the check passes and this test asserts that instead: the hashing does not depend on
// the mode bits, only the operating system's permission check does.
#[test]
fn an_unreadable_file_is_refused_unless_the_process_may_read_anything() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = TempDir::new("mode000");
    let secret = dir.file("server", b"bytes");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8(uid.stdout).unwrap().trim() == "0";
    let result = pinned(&[(&secret, sha256(b"bytes"))]).verify();
    if root {
        assert_eq!(result.unwrap().digests().len(), 1);
    } else {
        assert_eq!(
            result.unwrap_err(),
            unreadable(&secret, "Permission denied (os error 13)")
        );
    }
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn the_first_failure_in_path_order_is_reported() {
    let dir = TempDir::new("order");
    let (a, b) = (dir.0.join("a-missing"), dir.file("b-changed", b"new"));
    let digests = pinned(&[(&b, sha256(b"old")), (&a, sha256(b"x"))]);
    assert_eq!(
        digests.verify().unwrap_err(),
        unreadable(&a, "No such file or directory (os error 2)")
    );
}

// More than one read buffer, with a tail: streamed, the digest is that of the whole file.
#[test]
fn a_large_file_is_hashed_whole() {
    let dir = TempDir::new("large");
    let bytes: Vec<u8> = (0..(3 * 64 * 1024 + 17)).map(|i| (i % 251) as u8).collect();
    let path = dir.file("big", &bytes);
    assert_eq!(digest_file(&path).unwrap(), sha256(&bytes));
}

#[test]
fn insert_refuses_relative_and_repeated_paths() {
    let mut digests = EntrypointDigests::new();
    assert!(digests.is_empty());
    assert_eq!(
        digests.insert(PathBuf::from("dist/index.js"), sha256(b"")),
        Err(EntrypointError::RelativePath {
            path: PathBuf::from("dist/index.js")
        })
    );
    digests
        .insert(PathBuf::from("/usr/bin/node"), sha256(b"1"))
        .unwrap();
    assert_eq!(
        digests.insert(PathBuf::from("/usr/bin/node"), sha256(b"2")),
        Err(EntrypointError::DuplicatePath {
            path: PathBuf::from("/usr/bin/node")
        })
    );
    assert_eq!(digests.len(), 1);
    assert!(digests.contains(Path::new("/usr/bin/node")));
    assert!(!digests.contains(Path::new("/usr/bin/nodejs")));
    // The refused insert left the first digest.
    assert_eq!(
        digests.iter().collect::<Vec<_>>(),
        [(Path::new("/usr/bin/node"), &sha256(b"1"))]
    );
    assert_eq!(
        EntrypointError::RelativePath {
            path: PathBuf::from("x")
        }
        .to_string(),
        "entrypoint path x is relative: resolve it against the server's cwd before pinning \
         (entrypoint digests are checked by absolute path)"
    );
    assert_eq!(
        EntrypointError::DuplicatePath {
            path: PathBuf::from("/x")
        }
        .to_string(),
        "entrypoint path /x is listed twice: each file has one digest; remove the duplicate"
    );
}

#[test]
fn file_digest_text() {
    // SHA-256 of the empty string.
    let empty = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_eq!(empty.parse::<FileDigest>(), Ok(sha256(b"")));
    assert_eq!(sha256(b"").to_string(), empty);
    assert_eq!(FileDigest::of_bytes(b""), sha256(b""));
    assert_eq!(format!("{:?}", sha256(b"")), format!("FileDigest({empty})"));
    let upper = format!("sha256:{}", empty["sha256:".len()..].to_uppercase());
    assert_eq!(upper.parse::<FileDigest>(), Ok(sha256(b"")));
    for (text, error) in [
        (
            format!("SHA256:{}", &empty[7..]),
            FileDigestError::MissingPrefix {
                presented: format!("SHA256:{}", &empty[7..]),
            },
        ),
        (
            format!(" {empty}"),
            FileDigestError::MissingPrefix {
                presented: format!(" {empty}"),
            },
        ),
        (
            format!("{empty}0"),
            FileDigestError::WrongLength { presented: 65 },
        ),
        (
            "sha256:".to_owned(),
            FileDigestError::WrongLength { presented: 0 },
        ),
        (
            format!("sha256:{}g", &empty[7..70]),
            FileDigestError::InvalidCharacter {
                character: 'g',
                position: 70,
            },
        ),
        (
            format!("sha256:é{}", &empty[7..69]),
            FileDigestError::InvalidCharacter {
                character: 'é',
                position: 7,
            },
        ),
    ] {
        assert_eq!(text.parse::<FileDigest>(), Err(error), "{text}");
    }
    let long = "x".repeat(300);
    assert_eq!(
        long.parse::<FileDigest>(),
        Err(FileDigestError::MissingPrefix {
            presented: format!("{}…", "x".repeat(100))
        })
    );
}

proptest! {
    #[test]
    fn file_digest_display_then_parse_is_the_identity(bytes in any::<[u8; 32]>()) {
        let digest = FileDigest::from_bytes(bytes);
        let text = digest.to_string();
        prop_assert_eq!(text.len(), 71);
        prop_assert!(text[7..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        prop_assert_eq!(text.parse::<FileDigest>(), Ok(digest));
        let upper = format!("sha256:{}", text[7..].to_uppercase());
        prop_assert_eq!(upper.parse::<FileDigest>(), Ok(digest));
    }

    #[test]
    fn any_text_parses_or_fails_without_panicking(text in ".{0,80}") {
        if let Ok(digest) = text.parse::<FileDigest>() {
            prop_assert_eq!(digest.to_string(), text.to_lowercase());
        }
    }
}
