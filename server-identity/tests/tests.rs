//! Integration tests for `server-identity`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Certificate generation (rcgen): CAs, server leaves, SVIDs.
mod pki;
// A tokio-rustls server on 127.0.0.1 that counts the plaintext bytes it receives.
mod loopback;
// The fourteen handshake rows of docs/design.md §3, over TLS 1.3/1.2 and P-256/Ed25519.
mod handshake;
// Fingerprint text forms: every accepted spelling, every rejection with its exact error.
mod fingerprint_parse;
// SPIFFE ID validation to the specification, with exact errors.
mod spiffe_parse;
// rotation_mode and tls_trust spellings.
mod modes;
// Trust bundles: PEM, SPIFFE bundle JSON, malformed inputs.
mod bundles;
// The anchor-set builder and its refusals.
mod anchors;
// verify_identity at a fixed clock, the proof value, configuration errors.
mod verify;
// Observation::of_chain: what a presented chain shows, with and without roots; its errors.
mod observe;
// Every IdentityError variant: anchor, equality, exact Display; the rustls error round trip.
mod errors;
// The pinned certificate served without its key: refused by the handshake signature.
mod stolen_certificate;
// Display of the other error enums shows the values they carry.
mod display_smoke;
// `PresentedIdentity`: fingerprints and SPIFFE IDs read from a leaf, for the record.
mod presented;
// No session resumption: every connection a full handshake, a key change behind kept ticket keys refused.
mod no_resumption;
// ConnectionIdentity: which pin each established connection matched, from its own chain.
mod connection_identity;
// UtcTimestamp: RFC 3339 parse and Display, offsets, leap seconds, range, SystemTime.
mod timestamp;
// Entrypoint digests of a local server, on real files: match, change, missing, symlinks, modes.
mod entrypoints;
