//! Sessions of the handshake-era protocol versions (2025-03-26 … 2025-11-25): an
//! `Mcp-Session-Id` issued by `initialize` and required on every later request.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::mcp::ProtocolVersion;

/// A session: the protocol version its `initialize` negotiated, and when it was last used
/// (a logical clock, for dropping the least recently used session when the table is full).
#[derive(Debug, Clone)]
struct Session {
    protocol_version: ProtocolVersion,
    last_used: u64,
}

/// The live sessions, bounded.
#[derive(Debug)]
pub(crate) struct SessionTable {
    max_sessions: usize,
    inner: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    sessions: HashMap<String, Session>,
    clock: u64,
}

impl SessionTable {
    pub(crate) fn new(max_sessions: usize) -> SessionTable {
        SessionTable {
            max_sessions: max_sessions.max(1),
            inner: Mutex::new(Table::default()),
        }
    }

    /// Issues a new session id: 128 bits from the operating system's CSPRNG (through rustls'
    /// provider), hex-encoded, so ids can be neither guessed nor enumerated.
    pub(crate) fn open(
        &self,
        protocol_version: ProtocolVersion,
    ) -> Result<String, SessionIdUnavailable> {
        let mut bytes = [0u8; 16];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut bytes)
            .map_err(|_| SessionIdUnavailable)?;
        let id: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let mut table = self.lock();
        if table.sessions.len() >= self.max_sessions {
            let oldest = table
                .sessions
                .iter()
                .min_by_key(|(_, session)| session.last_used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                table.sessions.remove(&oldest);
            }
        }
        table.clock += 1;
        let last_used = table.clock;
        table.sessions.insert(
            id.clone(),
            Session {
                protocol_version,
                last_used,
            },
        );
        Ok(id)
    }

    /// The negotiated version of a live session (and marks it used), or `None` when the id is
    /// unknown, ended or dropped.
    pub(crate) fn touch(&self, id: &str) -> Option<ProtocolVersion> {
        let mut table = self.lock();
        table.clock += 1;
        let now = table.clock;
        let session = table.sessions.get_mut(id)?;
        session.last_used = now;
        Some(session.protocol_version)
    }

    /// Ends a session; `false` when it was not live.
    pub(crate) fn close(&self, id: &str) -> bool {
        self.lock().sessions.remove(id).is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A poisoned lock only means another thread panicked while holding it; the table itself
        // is always consistent between statements, so keep using it.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The system's random number generator failed (no session can be issued safely).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionIdUnavailable;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_random_hex_and_tracked() {
        let table = SessionTable::new(8);
        let a = table.open(ProtocolVersion::V2025_06_18).unwrap();
        let b = table.open(ProtocolVersion::V2025_03_26).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(table.touch(&a), Some(ProtocolVersion::V2025_06_18));
        assert!(table.close(&a));
        assert_eq!(table.touch(&a), None);
        assert!(!table.close(&a));
        assert_eq!(table.touch(&b), Some(ProtocolVersion::V2025_03_26));
    }

    #[test]
    fn least_recently_used_is_dropped_when_full() {
        let table = SessionTable::new(2);
        let a = table.open(ProtocolVersion::V2025_06_18).unwrap();
        let b = table.open(ProtocolVersion::V2025_06_18).unwrap();
        table.touch(&a);
        let c = table.open(ProtocolVersion::V2025_06_18).unwrap();
        assert!(table.touch(&a).is_some());
        assert!(table.touch(&b).is_none());
        assert!(table.touch(&c).is_some());
    }
}
