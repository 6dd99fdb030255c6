//! Pin MCP upstream servers by TLS key, certificate or SPIFFE ID, enforced inside the rustls handshake.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod fingerprint;
mod modes;
mod spiffe;

pub use crate::{
    fingerprint::{Fingerprint, FingerprintError},
    modes::{ModeError, RotationMode, TlsTrust},
    spiffe::{SpiffeId, SpiffeIdError},
};
