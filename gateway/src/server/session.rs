//! Sessions of the handshake-era protocol versions (2025-03-26 … 2025-11-25): an
//! `Mcp-Session-Id` issued by `initialize` and required on every later request.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use crate::mcp::ProtocolVersion;

/// A session: the protocol version its `initialize` negotiated, and when it was last used
/// (a logical clock, for dropping the least recently used session when the table is full).
#[derive(Debug, Clone)]
struct Session {
    protocol_version: ProtocolVersion,
    last_used: u64,
    /// The client address that opened it (`None`: no address, as over stdio).
    owner: Option<IpAddr>,
}

/// The live sessions, bounded in total and per client address.
#[derive(Debug)]
pub(crate) struct SessionTable {
    max_sessions: usize,
    max_per_address: usize,
    inner: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    sessions: HashMap<String, Session>,
    per_address: HashMap<Option<IpAddr>, usize>,
    clock: u64,
}

impl Table {
    /// Drops the least recently used session among those `filter` keeps.
    fn drop_least_recent(&mut self, filter: impl Fn(&Session) -> bool) {
        let oldest = self
            .sessions
            .iter()
            .filter(|(_, session)| filter(session))
            .min_by_key(|(_, session)| session.last_used)
            .map(|(id, _)| id.clone());
        if let Some(oldest) = oldest {
            self.remove(&oldest);
        }
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some(session) = self.sessions.remove(id) else {
            return false;
        };
        if let Some(count) = self.per_address.get_mut(&session.owner) {
            *count -= 1;
            if *count == 0 {
                self.per_address.remove(&session.owner);
            }
        }
        true
    }
}

impl SessionTable {
    pub(crate) fn new(max_sessions: usize, max_per_address: usize) -> SessionTable {
        SessionTable {
            max_sessions: max_sessions.max(1),
            max_per_address: max_per_address.max(1),
            inner: Mutex::new(Table::default()),
        }
    }

    /// Issues a new session id: 128 bits from the operating system's CSPRNG (through rustls'
    /// provider), hex-encoded, so ids can be neither guessed nor enumerated.
    ///
    /// A client address at its cap loses its own least recently used session; a full table
    /// loses the least recently used session of the address holding the most, so that one
    /// address opening sessions in a loop only ever evicts its own.
    pub(crate) fn open(
        &self,
        protocol_version: ProtocolVersion,
        owner: Option<IpAddr>,
    ) -> Result<String, SessionIdUnavailable> {
        let mut bytes = [0u8; 16];
        rustls::crypto::ring::default_provider()
            .secure_random
            .fill(&mut bytes)
            .map_err(|_| SessionIdUnavailable)?;
        let id: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        let mut table = self.lock();
        if table.per_address.get(&owner).copied().unwrap_or(0) >= self.max_per_address {
            table.drop_least_recent(|session| session.owner == owner);
        } else if table.sessions.len() >= self.max_sessions {
            let largest = table
                .per_address
                .iter()
                .max_by_key(|(_, count)| **count)
                .map(|(address, _)| *address);
            table.drop_least_recent(|session| Some(session.owner) == largest);
        }
        table.clock += 1;
        let last_used = table.clock;
        table.sessions.insert(
            id.clone(),
            Session {
                protocol_version,
                last_used,
                owner,
            },
        );
        *table.per_address.entry(owner).or_default() += 1;
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
        self.lock().remove(id)
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
        let table = SessionTable::new(8, 8);
        let a = table.open(ProtocolVersion::V2025_06_18, None).unwrap();
        let b = table.open(ProtocolVersion::V2025_03_26, None).unwrap();
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
        let table = SessionTable::new(2, 8);
        let a = table.open(ProtocolVersion::V2025_06_18, None).unwrap();
        let b = table.open(ProtocolVersion::V2025_06_18, None).unwrap();
        table.touch(&a);
        let c = table.open(ProtocolVersion::V2025_06_18, None).unwrap();
        assert!(table.touch(&a).is_some());
        assert!(table.touch(&b).is_none());
        assert!(table.touch(&c).is_some());
    }

    #[test]
    fn one_address_opening_sessions_in_a_loop_evicts_only_its_own() {
        let flooder: Option<IpAddr> = Some([10, 0, 0, 66].into());
        let table = SessionTable::new(6, 3);
        let others: Vec<String> = (1..=3u8)
            .map(|n| {
                table
                    .open(ProtocolVersion::V2025_11_25, Some([10, 0, 0, n].into()))
                    .unwrap()
            })
            .collect();
        let flood: Vec<String> = (0..10_000)
            .map(|_| table.open(ProtocolVersion::V2025_11_25, flooder).unwrap())
            .collect();
        for id in &others {
            assert!(
                table.touch(id).is_some(),
                "another address lost its session"
            );
        }
        // The flooder keeps its 3 newest, at its cap.
        let live: Vec<bool> = flood.iter().map(|id| table.touch(id).is_some()).collect();
        assert_eq!(live.iter().filter(|live| **live).count(), 3);
        assert!(live[9_997..].iter().all(|live| *live));

        // A full table (6) drops from the address holding the most.
        let table = SessionTable::new(4, 3);
        let a: Vec<String> = (0..3)
            .map(|_| table.open(ProtocolVersion::V2025_11_25, flooder).unwrap())
            .collect();
        let b = table
            .open(ProtocolVersion::V2025_11_25, Some([10, 0, 0, 1].into()))
            .unwrap();
        let c = table
            .open(ProtocolVersion::V2025_11_25, Some([10, 0, 0, 2].into()))
            .unwrap();
        assert!(table.touch(&b).is_some() && table.touch(&c).is_some());
        assert!(table.touch(&a[0]).is_none());
        assert!(table.touch(&a[1]).is_some() && table.touch(&a[2]).is_some());
    }
}
