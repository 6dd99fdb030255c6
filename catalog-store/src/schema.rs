//! The member names of a `server` object, by kind of server.

/// The members a `server` object may carry: `display_name`, then a network server's, then a
/// local server's.
pub(crate) const SERVER_MEMBERS: &[&str] = &[
    "display_name",
    "url",
    "tls_fingerprint",
    "backup_fingerprints",
    "spiffe_id",
    "rotation_mode",
    "tls_trust",
    "command",
    "cwd",
    "env",
    "inherit_env",
    "entrypoint_digests",
];

/// The members only a network server has: refused on a local one.
pub(crate) const NETWORK_ONLY_MEMBERS: &[&str] = SERVER_MEMBERS.split_at(7).0.split_at(1).1;

/// The members only a local server has: refused on a network one.
pub(crate) const LOCAL_ONLY_MEMBERS: &[&str] = SERVER_MEMBERS.split_at(7).1;

#[cfg(test)]
mod unit {
    use super::{LOCAL_ONLY_MEMBERS, NETWORK_ONLY_MEMBERS};

    #[test]
    fn the_member_lists_split_where_the_kinds_do() {
        assert_eq!(
            NETWORK_ONLY_MEMBERS,
            [
                "url",
                "tls_fingerprint",
                "backup_fingerprints",
                "spiffe_id",
                "rotation_mode",
                "tls_trust"
            ]
        );
        assert_eq!(
            LOCAL_ONLY_MEMBERS,
            ["command", "cwd", "env", "inherit_env", "entrypoint_digests"]
        );
    }
}
