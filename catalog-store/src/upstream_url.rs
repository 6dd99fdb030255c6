//! A strict check of an upstream URL: `https`, a host, no user info, no fragment.
//!
//! A small hand-written check rather than the `url` crate: the WHATWG parser that crate
//! implements repairs input (it drops tabs and newlines, turns `\` into `/`, accepts
//! `https:host`), and a security file must not mean something other than what it says. The
//! URL is used, and measured, exactly as written, so we only accept text that needs no repair.

use std::net::Ipv6Addr;

/// Why a `server.url` is refused; each reason says what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlProblem {
    /// The scheme is not `https` (upstreams are reached over pinned TLS only).
    NotHttps {
        /// The scheme as written, or the empty string when there is none.
        scheme: String,
    },
    /// `https://` is not followed by a host name or address.
    NoHost,
    /// The authority carries `user:password@` (credentials do not belong in a catalog).
    UserInfo,
    /// The URL has a `#fragment` (never sent to a server, so it can only mislead).
    Fragment,
    /// The port is not a number from 1 to 65535.
    BadPort {
        /// The port text as written.
        port: String,
    },
    /// The host is not a DNS name, an IPv4 address or a bracketed IPv6 address.
    BadHost {
        /// The host text as written.
        host: String,
    },
    /// A character that RFC 3986 does not allow unencoded (space, control, non-ASCII, `"`,
    /// `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}`), or a `%` not followed by two hex digits.
    BadCharacter {
        /// The offending character.
        character: char,
        /// Its byte offset in the URL.
        offset: usize,
    },
}

impl std::fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UrlProblem::NotHttps { scheme } if scheme.is_empty() => f.write_str(
                "the URL has no scheme; write it as https://host/path (upstreams are reached over pinned TLS only)",
            ),
            UrlProblem::NotHttps { scheme } => write!(
                f,
                "the scheme is {scheme:?}, not \"https\"; write the URL as https://... (lowercase; upstreams are reached over pinned TLS only)"
            ),
            UrlProblem::NoHost => f.write_str("the URL has no host; write it as https://host/path"),
            UrlProblem::UserInfo => f.write_str(
                "the URL carries user info (user@ or user:password@); remove it, credentials do not belong in a catalog",
            ),
            UrlProblem::Fragment => {
                f.write_str("the URL has a #fragment, which is never sent to the server; remove it")
            }
            UrlProblem::BadPort { port } => {
                write!(f, "the port {port:?} is not a number from 1 to 65535; fix or remove it")
            }
            UrlProblem::BadHost { host } => write!(
                f,
                "the host {host:?} is not a DNS name (letters, digits, '-', '_', '.'), an IPv4 address or a bracketed IPv6 address; write IDN hosts in their xn-- form"
            ),
            UrlProblem::BadCharacter { character, offset } => write!(
                f,
                "the character {character:?} at byte {offset} is not allowed unencoded in a URL; percent-encode it"
            ),
        }
    }
}

/// Checks that `url` is an absolute `https` URL with a host, no user info and no fragment,
/// written with RFC 3986 characters only.
pub(crate) fn check_upstream_url(url: &str) -> Result<(), UrlProblem> {
    check_characters(url)?;
    let Some(rest) = url.strip_prefix("https://") else {
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme)
            .unwrap_or_default();
        if scheme == "https" {
            // `https:host` or `https:/host`: the scheme is right, the `//authority` is missing.
            return Err(UrlProblem::NoHost);
        }
        return Err(UrlProblem::NotHttps {
            scheme: scheme.to_owned(),
        });
    };
    if url.contains('#') {
        return Err(UrlProblem::Fragment);
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if authority.contains('@') {
        return Err(UrlProblem::UserInfo);
    }
    let (host, port) = split_host_port(authority)?;
    if host.is_empty() {
        return Err(UrlProblem::NoHost);
    }
    check_host(host)?;
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n));
        if !valid {
            return Err(UrlProblem::BadPort {
                port: port.to_owned(),
            });
        }
    }
    Ok(())
}

/// The TLS endpoint of a URL that [`check_upstream_url`] accepted: `host:port`, with the host
/// in lowercase (DNS names are case-insensitive, RFC 4343), an IPv6 literal in its canonical
/// form (RFC 5952, as `Ipv6Addr` prints it) and the port defaulting to 443. `None` for a URL
/// the check refuses.
///
/// Every URL with the same endpoint reaches the same TLS server, under the same SNI name,
/// whatever its path and query: those travel inside the connection, after the handshake has
/// checked the server's identity.
pub(crate) fn tls_endpoint(url: &str) -> Option<String> {
    check_upstream_url(url).ok()?;
    let rest = url.strip_prefix("https://")?;
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let (host, port) = split_host_port(authority).ok()?;
    let port: u16 = port.map_or(Some(443), |port| port.parse().ok())?;
    let host = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(literal) => format!("[{}]", literal.parse::<Ipv6Addr>().ok()?),
        None => host.to_ascii_lowercase(),
    };
    Some(format!("{host}:{port}"))
}

/// RFC 3986 §2: only unreserved, reserved and `%XX` may appear.
fn check_characters(url: &str) -> Result<(), UrlProblem> {
    let bytes = url.as_bytes();
    for (offset, character) in url.char_indices() {
        let allowed = character.is_ascii_alphanumeric()
            || "-._~:/?#[]@!$&'()*+,;=".contains(character)
            || (character == '%'
                && bytes.get(offset + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(offset + 2).is_some_and(u8::is_ascii_hexdigit));
        if !allowed {
            return Err(UrlProblem::BadCharacter { character, offset });
        }
    }
    Ok(())
}

/// Splits `host[:port]`, where the host may be a bracketed IPv6 literal.
fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), UrlProblem> {
    if authority.starts_with('[') {
        let Some(close) = authority.find(']') else {
            return Err(UrlProblem::BadHost {
                host: authority.to_owned(),
            });
        };
        let (host, after) = authority.split_at(close + 1);
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(UrlProblem::BadHost {
                    host: authority.to_owned(),
                }),
            },
        };
    }
    Ok(match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

fn check_host(host: &str) -> Result<(), UrlProblem> {
    let bad = || UrlProblem::BadHost {
        host: host.to_owned(),
    };
    if let Some(literal) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return literal.parse::<Ipv6Addr>().map(|_| ()).map_err(|_| bad());
    }
    // A DNS name or dotted IPv4: labels of letters, digits, '-' and '_', none empty
    // (so no leading, trailing or doubled dot).
    let labels_ok = host.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if labels_ok && host.len() <= 253 {
        Ok(())
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod unit {
    use super::{UrlProblem, check_upstream_url, tls_endpoint};

    #[test]
    fn accepts_plain_https_urls() {
        for ok in [
            "https://mcp.example.com/mcp",
            "https://mcp.example.com",
            "https://10.0.0.7:8443/mcp?tenant=a%20b",
            "https://[::1]:8443/mcp",
            "https://legacy_crm.internal/mcp",
        ] {
            assert_eq!(check_upstream_url(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn tls_endpoints_ignore_host_case_the_default_port_path_and_query() {
        for (url, endpoint) in [
            ("https://crm.example.com/mcp", "crm.example.com:443"),
            ("https://CRM.Example.com:443/mcp/", "crm.example.com:443"),
            ("https://crm.example.com?tenant=a", "crm.example.com:443"),
            ("https://crm.example.com:8443", "crm.example.com:8443"),
            ("https://[0:0::1]:8443/mcp", "[::1]:8443"),
            ("https://[::FFFF:10.0.0.7]/mcp", "[::ffff:10.0.0.7]:443"),
        ] {
            assert_eq!(tls_endpoint(url).as_deref(), Some(endpoint), "{url}");
        }
        assert_eq!(tls_endpoint("http://crm.example.com/mcp"), None);
    }

    #[test]
    fn refuses_each_problem() {
        let cases: [(&str, UrlProblem); 12] = [
            (
                "http://a.example/mcp",
                UrlProblem::NotHttps {
                    scheme: "http".into(),
                },
            ),
            (
                "HTTPS://a.example/mcp",
                UrlProblem::NotHttps {
                    scheme: "HTTPS".into(),
                },
            ),
            (
                "a.example/mcp",
                UrlProblem::NotHttps {
                    scheme: String::new(),
                },
            ),
            ("https:///mcp", UrlProblem::NoHost),
            ("https:a.example/mcp", UrlProblem::NoHost),
            ("https://u:p@a.example/mcp", UrlProblem::UserInfo),
            ("https://a.example/mcp#x", UrlProblem::Fragment),
            (
                "https://a.example:0/mcp",
                UrlProblem::BadPort { port: "0".into() },
            ),
            (
                "https://a.example:/mcp",
                UrlProblem::BadPort {
                    port: String::new(),
                },
            ),
            (
                "https://a..example/mcp",
                UrlProblem::BadHost {
                    host: "a..example".into(),
                },
            ),
            (
                "https://[::g]/mcp",
                UrlProblem::BadHost {
                    host: "[::g]".into(),
                },
            ),
            (
                "https://a.example/m cp",
                UrlProblem::BadCharacter {
                    character: ' ',
                    offset: 19,
                },
            ),
        ];
        for (url, problem) in cases {
            assert_eq!(check_upstream_url(url), Err(problem), "{url}");
        }
    }
}
