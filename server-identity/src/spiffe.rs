//! `SpiffeId`: a URI validated to the SPIFFE ID specification (seed 003 §1 "SPIFFE SVID").

use std::fmt;
use std::str::FromStr;

const SCHEME: &str = "spiffe://";
/// SPIFFE ID specification §2.3: URIs longer than 2048 bytes are not SPIFFE IDs.
const MAX_ID_LENGTH: usize = 2048;
/// SPIFFE ID specification §2.1: a trust domain is at most 255 bytes.
const MAX_TRUST_DOMAIN_LENGTH: usize = 255;

/// A SPIFFE ID: `spiffe://<trust-domain>[/<segment>…]`, validated on construction.
///
/// Equality is byte equality, which is what the SPIFFE specification prescribes: a valid ID
/// has exactly one spelling (lowercase scheme and trust domain, no percent-encoding, no
/// `.`/`..` segments).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpiffeId {
    id: String,
    /// Byte offset where the path starts (== `id.len()` for a trust domain ID).
    path_start: usize,
}

impl SpiffeId {
    /// The trust domain, e.g. `corp.example`.
    pub fn trust_domain(&self) -> &str {
        &self.id[SCHEME.len()..self.path_start]
    }

    /// The path, e.g. `/salesforce/mcp-server`; empty for a trust domain ID.
    pub fn path(&self) -> &str {
        &self.id[self.path_start..]
    }

    /// The whole ID.
    pub fn as_str(&self) -> &str {
        &self.id
    }
}

impl fmt::Display for SpiffeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// Why a text is not a SPIFFE ID. Positions are byte offsets in the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpiffeIdError {
    /// The text was empty.
    #[error("empty SPIFFE ID: expected spiffe://<trust-domain>/<path>")]
    Empty,
    /// The text does not start with the lowercase `spiffe://` scheme.
    #[error("SPIFFE ID `{presented}` must start with `spiffe://` (lowercase)")]
    WrongScheme {
        /// The text (cut to 100 bytes).
        presented: String,
    },
    /// Nothing between `spiffe://` and the path.
    #[error("SPIFFE ID has an empty trust domain: expected spiffe://<trust-domain>/<path>")]
    MissingTrustDomain,
    /// A trust domain character outside `[a-z0-9.-_]` (uppercase included).
    #[error(
        "SPIFFE ID trust domain has `{character}` at byte {position}: only lowercase letters, \
         digits, `.`, `-` and `_` are allowed"
    )]
    TrustDomainCharacter {
        /// The offending character.
        character: char,
        /// Its byte offset.
        position: usize,
    },
    /// The trust domain is longer than 255 bytes.
    #[error("SPIFFE ID trust domain is {length} bytes long; at most 255 are allowed")]
    TrustDomainTooLong {
        /// Its length in bytes.
        length: usize,
    },
    /// A `:port` after the trust domain.
    #[error("SPIFFE ID must not carry a port: remove `:…` after the trust domain")]
    Port,
    /// `user@` before the trust domain.
    #[error("SPIFFE ID must not carry user info: remove `…@` before the trust domain")]
    UserInfo,
    /// A `?query`.
    #[error("SPIFFE ID must not carry a query (`?…`)")]
    Query,
    /// A `#fragment`.
    #[error("SPIFFE ID must not carry a fragment (`#…`)")]
    Fragment,
    /// A `%` escape.
    #[error("SPIFFE ID must not be percent-encoded (found `%` at byte {position})")]
    PercentEncoding {
        /// Byte offset of the `%`.
        position: usize,
    },
    /// `//` inside the path.
    #[error("SPIFFE ID path has an empty segment (`//`) at byte {position}")]
    EmptySegment {
        /// Byte offset of the second `/`.
        position: usize,
    },
    /// A `.` or `..` segment.
    #[error(
        "SPIFFE ID path has a `{segment}` segment at byte {position}; relative segments are not allowed"
    )]
    DotSegment {
        /// `.` or `..`.
        segment: String,
        /// Byte offset of the segment.
        position: usize,
    },
    /// The path ends in `/`.
    #[error("SPIFFE ID must not end with `/`")]
    TrailingSlash,
    /// A path character outside `[A-Za-z0-9.-_]`.
    #[error(
        "SPIFFE ID path has `{character}` at byte {position}: only letters, digits, `.`, `-` \
         and `_` are allowed in segments"
    )]
    PathCharacter {
        /// The offending character.
        character: char,
        /// Its byte offset.
        position: usize,
    },
    /// Longer than 2048 bytes.
    #[error("SPIFFE ID is {length} bytes long; at most 2048 are allowed")]
    TooLong {
        /// Its length in bytes.
        length: usize,
    },
}

impl FromStr for SpiffeId {
    type Err = SpiffeIdError;

    /// Validates to the SPIFFE ID specification §2 (no normalization: a text that would need
    /// it is refused, so one ID has one spelling).
    fn from_str(text: &str) -> Result<SpiffeId, SpiffeIdError> {
        if text.is_empty() {
            return Err(SpiffeIdError::Empty);
        }
        let Some(rest) = text.strip_prefix(SCHEME) else {
            return Err(SpiffeIdError::WrongScheme {
                presented: cut(text),
            });
        };
        if text.len() > MAX_ID_LENGTH {
            return Err(SpiffeIdError::TooLong { length: text.len() });
        }
        // URI components SPIFFE forbids, named precisely before the character-class checks.
        if let Some(position) = text.find('%') {
            return Err(SpiffeIdError::PercentEncoding { position });
        }
        if text.contains('?') {
            return Err(SpiffeIdError::Query);
        }
        if text.contains('#') {
            return Err(SpiffeIdError::Fragment);
        }
        let path_start = SCHEME.len() + rest.find('/').unwrap_or(rest.len());
        validate_trust_domain(&text[SCHEME.len()..path_start], SCHEME.len())?;
        validate_path(&text[path_start..], path_start)?;
        Ok(SpiffeId {
            id: text.to_owned(),
            path_start,
        })
    }
}

/// Trust domain rules (SPIFFE ID §2.1); `offset` is where `domain` starts in the reported text.
pub(crate) fn validate_trust_domain(domain: &str, offset: usize) -> Result<(), SpiffeIdError> {
    if domain.is_empty() {
        return Err(SpiffeIdError::MissingTrustDomain);
    }
    if domain.contains('@') {
        return Err(SpiffeIdError::UserInfo);
    }
    if domain.contains(':') {
        return Err(SpiffeIdError::Port);
    }
    if let Some((position, character)) = domain
        .char_indices()
        .find(|&(_, c)| !matches!(c, 'a'..='z' | '0'..='9' | '.' | '-' | '_'))
    {
        return Err(SpiffeIdError::TrustDomainCharacter {
            character,
            position: offset + position,
        });
    }
    if domain.len() > MAX_TRUST_DOMAIN_LENGTH {
        return Err(SpiffeIdError::TrustDomainTooLong {
            length: domain.len(),
        });
    }
    Ok(())
}

/// Path rules (SPIFFE ID §2.2); `path` is empty or starts with `/`.
fn validate_path(path: &str, offset: usize) -> Result<(), SpiffeIdError> {
    if path.is_empty() {
        return Ok(());
    }
    if path.ends_with('/') {
        // `spiffe://td/` and `spiffe://td/a/` alike.
        return Err(SpiffeIdError::TrailingSlash);
    }
    let mut start = offset + 1;
    for segment in path[1..].split('/') {
        if segment.is_empty() {
            return Err(SpiffeIdError::EmptySegment { position: start });
        }
        if segment == "." || segment == ".." {
            return Err(SpiffeIdError::DotSegment {
                segment: segment.to_owned(),
                position: start,
            });
        }
        if let Some((position, character)) = segment
            .char_indices()
            .find(|&(_, c)| !matches!(c, 'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_'))
        {
            return Err(SpiffeIdError::PathCharacter {
                character,
                position: start + position,
            });
        }
        start += segment.len() + 1;
    }
    Ok(())
}

fn cut(text: &str) -> String {
    if text.len() <= 100 {
        return text.to_owned();
    }
    let end = (0..=100)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..end])
}
