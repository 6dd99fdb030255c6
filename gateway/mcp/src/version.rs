//! Protocol versions and their two generations (RECIPE.md "Two protocol generations").

use std::fmt;
use std::str::FromStr;

/// How a protocol version carries its connection state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Generation {
    /// 2025-03-26, 2025-06-18, 2025-11-25: `initialize`, `notifications/initialized`, and an
    /// `Mcp-Session-Id` header on every later request.
    Session,
    /// 2026-07-28: no handshake and no session; `server/discover` is an optional probe and every
    /// request carries `MCP-Protocol-Version`, `Mcp-Method` (and `Mcp-Name`) headers plus the
    /// `params._meta` envelope.
    Stateless,
}

/// A protocol version the gateway speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2025-03-26`.
    V2025_03_26,
    /// `2025-06-18`.
    V2025_06_18,
    /// `2025-11-25`.
    V2025_11_25,
    /// `2026-07-28`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every supported version, oldest first.
    pub const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest version overall (stateless generation).
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest version reachable through `initialize` (session generation).
    pub const LATEST_SESSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The generation this version belongs to.
    pub fn generation(self) -> Generation {
        match self {
            ProtocolVersion::V2026_07_28 => Generation::Stateless,
            ProtocolVersion::V2025_03_26
            | ProtocolVersion::V2025_06_18
            | ProtocolVersion::V2025_11_25 => Generation::Session,
        }
    }

    /// The supported version with this wire string, if any.
    pub fn from_wire(text: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|version| version.as_str() == text)
    }

    /// The versions of one generation, oldest first.
    pub fn of_generation(generation: Generation) -> impl Iterator<Item = ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .filter(move |version| version.generation() == generation)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A protocol version string the gateway does not speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported MCP protocol version `{requested}`; supported: 2025-03-26, 2025-06-18, \
     2025-11-25, 2026-07-28"
)]
pub struct UnknownProtocolVersion {
    /// The version that was asked for.
    pub requested: String,
}

impl FromStr for ProtocolVersion {
    type Err = UnknownProtocolVersion;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::from_wire(text).ok_or_else(|| UnknownProtocolVersion {
            requested: text.to_owned(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip_and_generations_split_at_2026() {
        for version in ProtocolVersion::ALL {
            assert_eq!(version.as_str().parse::<ProtocolVersion>(), Ok(version));
        }
        let stateless: Vec<_> = ProtocolVersion::of_generation(Generation::Stateless).collect();
        assert_eq!(stateless, [ProtocolVersion::V2026_07_28]);
        assert_eq!(
            ProtocolVersion::of_generation(Generation::Session).count(),
            3
        );
        assert_eq!(
            "2024-11-05".parse::<ProtocolVersion>(),
            Err(UnknownProtocolVersion {
                requested: "2024-11-05".to_owned()
            })
        );
    }
}
