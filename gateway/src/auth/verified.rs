//! Tokens already verified, so that a caller presenting the same token on every request pays
//! the signature check once (RS256 costs about 65 µs, ES256 and EdDSA about 120 µs here; a hit
//! costs a hash of the token and a clone of its principal).
//!
//! A hit is only ever a token that verified against the very key set held now: each entry
//! keeps the set (`Arc`) it verified against, and any other set — a refetch for an unknown
//! `kid`, a `--jwks-max-age` refresh, even one with the same keys — makes the next use verify
//! in full again, so a withdrawn key stops verifying exactly when it did without the cache.
//! The issuer and audience are the verifier's own and cannot change. `exp` is checked on each
//! hit by the same rule the full check applies (`exp` not before now minus the leeway), and a
//! token whose `exp` is not a plain integer is not kept. `nbf` needs no re-check: it held when
//! the token verified and time only moves on. Refusals are never kept: a refused token is
//! checked in full each time it is presented.
//!
//! Memory is bounded twice: at most [`MAX_ENTRIES`] tokens and [`MAX_TOKEN_BYTES_HELD`] bytes
//! of token text; a full cache first drops what can no longer hit (expired, other key set),
//! then entries in no particular order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::jwks::KeySet;
use super::principal::Principal;

/// The most tokens held.
pub(crate) const MAX_ENTRIES: usize = 1024;
/// The most bytes of token text held (a token is at most 16 KiB).
pub(crate) const MAX_TOKEN_BYTES_HELD: usize = 4 * 1024 * 1024;

#[derive(Debug)]
struct Verified {
    principal: Principal,
    /// The token's `exp` (seconds since the Unix epoch).
    exp: u64,
    /// The key set the token verified against.
    keys: Arc<KeySet>,
}

#[derive(Debug, Default)]
struct Held {
    entries: HashMap<Box<str>, Verified>,
    token_bytes: usize,
}

/// The verified tokens of one [`BearerAuth`](super::BearerAuth).
#[derive(Debug)]
pub(crate) struct VerifiedTokens {
    held: Mutex<Held>,
    leeway: u64,
}

impl VerifiedTokens {
    /// An empty cache whose hits allow `exp` to be `leeway` seconds past.
    pub(crate) fn new(leeway: u64) -> VerifiedTokens {
        VerifiedTokens {
            held: Mutex::new(Held::default()),
            leeway,
        }
    }

    /// The principal of `token` when it verified against `keys` and has not expired since.
    pub(crate) fn get(&self, token: &str, keys: &Arc<KeySet>) -> Option<Principal> {
        let now = now();
        let mut held = self.lock();
        let entry = held.entries.get(token)?;
        if Arc::ptr_eq(&entry.keys, keys) && self.unexpired(entry.exp, now) {
            return Some(entry.principal.clone());
        }
        // It can never hit again: the full check decides, and whatever it decides replaces it.
        held.remove(token);
        None
    }

    /// Keeps `principal`, which `token` verified to against `keys` just now.
    pub(crate) fn insert(&self, token: &str, keys: &Arc<KeySet>, principal: &Principal) {
        let Some(exp) = exp_of(principal) else {
            return;
        };
        if token.len() > MAX_TOKEN_BYTES_HELD {
            return;
        }
        let now = now();
        let mut held = self.lock();
        held.remove(token);
        if held.entries.len() >= MAX_ENTRIES
            || held.token_bytes + token.len() > MAX_TOKEN_BYTES_HELD
        {
            held.entries.retain(|_, entry| {
                Arc::ptr_eq(&entry.keys, keys) && entry.exp.saturating_add(self.leeway) >= now
            });
            held.token_bytes = held.entries.keys().map(|token| token.len()).sum();
        }
        while held.entries.len() >= MAX_ENTRIES
            || held.token_bytes + token.len() > MAX_TOKEN_BYTES_HELD
        {
            let Some(any) = held.entries.keys().next().cloned() else {
                break;
            };
            held.remove(&any);
        }
        held.token_bytes += token.len();
        held.entries.insert(
            token.into(),
            Verified {
                principal: principal.clone(),
                exp,
                keys: Arc::clone(keys),
            },
        );
    }

    /// How many tokens are held.
    pub(crate) fn len(&self) -> usize {
        self.lock().entries.len()
    }

    fn unexpired(&self, exp: u64, now: u64) -> bool {
        // The full check refuses `exp < now - leeway`.
        exp.saturating_add(self.leeway) >= now
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Held {
    fn remove(&mut self, token: &str) {
        if let Some((token, _)) = self.entries.remove_entry(token) {
            self.token_bytes -= token.len();
        }
    }
}

/// The `exp` the full check read, when it is a plain integer (`jsonwebtoken` also reads other
/// spellings; such a token is simply not kept).
fn exp_of(principal: &Principal) -> Option<u64> {
    match principal {
        Principal::User { claims, .. } => claims.get("exp").and_then(Value::as_u64),
        _ => None,
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}
