//! Who is calling (docs/design.md §7): one vocabulary for every way a client is known, written the
//! way a Cedar entity reference is (`User::"sub"`, `Spiffe::"spiffe://…"`, `Cert::"SHA256:…"`),
//! so that the audit log, the logs and a policy all name a caller with the same text.

use std::fmt;

use serde_json::{Map, Value};

/// The caller of one request.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Principal {
    /// A bearer token's subject (`User::"<sub>"`), with the token's scopes and other claims.
    User {
        /// The token's `sub`.
        subject: String,
        /// The token's `scope` claim, split on spaces (RFC 8693 §4.2).
        scopes: Vec<String>,
        /// Every other claim of the token (`iss`, `aud`, `groups`, …), as the token carried it.
        claims: Map<String, Value>,
    },
    /// A client certificate's SPIFFE ID (`Spiffe::"spiffe://…"`).
    Spiffe(String),
    /// A client certificate without a SPIFFE ID, by its key fingerprint (`Cert::"SHA256:<hex>"`).
    Cert(String),
    /// The user who started a `--stdio` gateway (`Local::"<user>"`): whoever can write to its
    /// standard input runs as that user already.
    Local(String),
    /// No client authentication is configured (`anonymous`).
    Anonymous,
}

impl Principal {
    /// The local user for `--stdio`: `$USER` (or `$LOGNAME`), else the numeric uid from
    /// `/proc/self`, else `unknown`.
    pub fn local_user() -> Principal {
        let name = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|name| !name.is_empty());
        Principal::Local(name.unwrap_or_else(|| "unknown".to_owned()))
    }

    /// The Cedar entity type (`User`, `Spiffe`, `Cert`, `Local`), `None` for `anonymous`.
    pub fn entity_type(&self) -> Option<&'static str> {
        match self {
            Principal::User { .. } => Some("User"),
            Principal::Spiffe(_) => Some("Spiffe"),
            Principal::Cert(_) => Some("Cert"),
            Principal::Local(_) => Some("Local"),
            Principal::Anonymous => None,
        }
    }

    /// The entity id: the subject, SPIFFE ID, fingerprint or user name.
    pub fn id(&self) -> Option<&str> {
        match self {
            Principal::User { subject, .. } => Some(subject),
            Principal::Spiffe(id) | Principal::Cert(id) | Principal::Local(id) => Some(id),
            Principal::Anonymous => None,
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.entity_type(), self.id()) {
            // `{:?}` of a str is a quoted, escaped string, as Cedar writes an entity id.
            (Some(kind), Some(id)) => write!(f, "{kind}::{id:?}"),
            _ => f.write_str("anonymous"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_written_as_cedar_entity_references() {
        let user = Principal::User {
            subject: "alice".to_owned(),
            scopes: vec!["tools".to_owned()],
            claims: Map::new(),
        };
        assert_eq!(user.to_string(), r#"User::"alice""#);
        assert_eq!(
            Principal::Spiffe("spiffe://example.org/agent".to_owned()).to_string(),
            r#"Spiffe::"spiffe://example.org/agent""#
        );
        assert_eq!(
            Principal::Cert("SHA256:ab".to_owned()).to_string(),
            r#"Cert::"SHA256:ab""#
        );
        assert_eq!(
            Principal::Local("ops".to_owned()).to_string(),
            r#"Local::"ops""#
        );
        assert_eq!(Principal::Anonymous.to_string(), "anonymous");
        assert_eq!(
            Principal::Spiffe("a\"b".to_owned()).to_string(),
            r#"Spiffe::"a\"b""#
        );
    }
}
