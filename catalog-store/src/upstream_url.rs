//! An upstream URL, parsed once: `https`, a host, an optional port, path and query as written.
//!
//! A small hand-written parser rather than the `url` crate: the WHATWG parser that crate
//! implements repairs input (it drops tabs and newlines, turns `\` into `/`, accepts
//! `https:host`), and a security file must not mean something other than what it says. The
//! URL is used, and measured, exactly as written, so we only accept text that needs no repair.
//! The gateway connects with the parts parsed here rather than parsing the text again.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use rustls_pki_types::{DnsName, ServerName};

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

impl std::error::Error for UrlProblem {}

impl fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

/// The host of an [`UpstreamUrl`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Host {
    /// A DNS name, in lowercase (DNS names are case-insensitive, RFC 4343; the URL keeps the
    /// case it was written in).
    Dns(String),
    /// A dotted IPv4 address.
    Ipv4(Ipv4Addr),
    /// An IPv6 address, written `[…]` in the URL.
    Ipv6(Ipv6Addr),
}

impl fmt::Display for Host {
    /// The host as a TCP connection names it: the DNS name (lowercase), or the address
    /// (IPv6 without brackets).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Dns(name) => f.write_str(name),
            Host::Ipv4(address) => write!(f, "{address}"),
            Host::Ipv6(address) => write!(f, "{address}"),
        }
    }
}

/// An upstream's URL: `https://host[:port][/path][?query]`, lowercase `https`, a host (DNS
/// name, IPv4, `[IPv6]`), no user info, no fragment, RFC 3986 characters only.
///
/// Parsed once, at load ([`FromStr`], with [`UrlProblem`] errors); the gateway takes where to
/// connect ([`host`](Self::host), [`port`](Self::port)), what to verify
/// ([`server_name`](Self::server_name)), what to send ([`authority`](Self::authority) for
/// `Host`, [`request_target`](Self::request_target)) from here. [`as_str`](Self::as_str) is the
/// URL exactly as written, which is what is shown, logged and measured.
///
/// ```
/// use catalog_store::{Host, UpstreamUrl};
///
/// let url: UpstreamUrl = "https://CRM.example.com:8443/mcp?tenant=a".parse()?;
/// assert_eq!(url.host(), &Host::Dns("crm.example.com".to_owned()));
/// assert_eq!(url.port(), 8443);
/// assert_eq!(url.authority(), "CRM.example.com:8443");
/// assert_eq!((url.path(), url.query()), ("/mcp", Some("tenant=a")));
/// assert_eq!(url.request_target(), "/mcp?tenant=a");
/// assert_eq!(url.tls_endpoint(), "crm.example.com:8443");
/// assert_eq!(url.as_str(), "https://CRM.example.com:8443/mcp?tenant=a");
/// assert!("http://crm.example.com/mcp".parse::<UpstreamUrl>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamUrl {
    text: String,
    host: Host,
    port: u16,
    server_name: ServerName<'static>,
    /// `text[AUTHORITY_START..authority_end]` is the authority.
    authority_end: usize,
    /// `text[authority_end..path_end]` is the path; a `?` and the query follow when
    /// `path_end` is before the end.
    path_end: usize,
}

/// `https://`
const AUTHORITY_START: usize = 8;

impl UpstreamUrl {
    /// The URL exactly as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The host: where to connect (its `Display` is the name or address a TCP connection
    /// takes) and, through [`server_name`](Self::server_name), what the certificate is for.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The port; 443 when the URL has none.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The authority as written, `host[:port]` (IPv6 in brackets): the `Host` header value.
    pub fn authority(&self) -> &str {
        &self.text[AUTHORITY_START..self.authority_end]
    }

    /// The name the TLS handshake sends (SNI) and verifies: the DNS name, or the IP address.
    pub fn server_name(&self) -> ServerName<'static> {
        self.server_name.clone()
    }

    /// The path as written: empty, or starting with `/`.
    pub fn path(&self) -> &str {
        &self.text[self.authority_end..self.path_end]
    }

    /// The query as written, without its `?`; `None` when the URL has no `?`.
    pub fn query(&self) -> Option<&str> {
        self.text.get(self.path_end..)?.strip_prefix('?')
    }

    /// The HTTP request target: the path (`/` when empty) and `?query` when there is one.
    pub fn request_target(&self) -> String {
        let path = match self.path() {
            "" => "/",
            path => path,
        };
        match self.query() {
            Some(query) => format!("{path}?{query}"),
            None => path.to_owned(),
        }
    }

    /// The TLS endpoint, `host:port`: the host in lowercase (RFC 4343), an IPv6 literal in
    /// brackets and its canonical form (RFC 5952, as `Ipv6Addr` prints it), the port 443 when
    /// absent.
    ///
    /// Every URL with the same endpoint reaches the same TLS server, under the same SNI name,
    /// whatever its path and query: those travel inside the connection, after the handshake
    /// has checked the server's identity.
    pub fn tls_endpoint(&self) -> String {
        match &self.host {
            Host::Ipv6(address) => format!("[{address}]:{}", self.port),
            host => format!("{host}:{}", self.port),
        }
    }
}

impl fmt::Display for UpstreamUrl {
    /// The URL exactly as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl AsRef<str> for UpstreamUrl {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl FromStr for UpstreamUrl {
    type Err = UrlProblem;

    /// Accepts an absolute `https` URL with a host, no user info and no fragment, written with
    /// RFC 3986 characters only; refuses anything else with the first [`UrlProblem`].
    fn from_str(url: &str) -> Result<UpstreamUrl, UrlProblem> {
        check_characters(url)?;
        let Some(rest) = url.strip_prefix("https://") else {
            let scheme = url
                .split_once(':')
                .map(|(scheme, _)| scheme)
                .unwrap_or_default();
            if scheme == "https" {
                // `https:host` or `https:/host`: the scheme is right, the `//authority` is
                // missing.
                return Err(UrlProblem::NoHost);
            }
            return Err(UrlProblem::NotHttps {
                scheme: scheme.to_owned(),
            });
        };
        if url.contains('#') {
            return Err(UrlProblem::Fragment);
        }
        let authority_len = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..authority_len];
        if authority.contains('@') {
            return Err(UrlProblem::UserInfo);
        }
        let (host_text, port_text) = split_host_port(authority)?;
        if host_text.is_empty() {
            return Err(UrlProblem::NoHost);
        }
        let (host, server_name) = parse_host(host_text)?;
        let port = match port_text {
            None => 443,
            Some(port) => parse_port(port)?,
        };
        let authority_end = AUTHORITY_START + authority_len;
        let path_end = url[authority_end..]
            .find('?')
            .map_or(url.len(), |offset| authority_end + offset);
        Ok(UpstreamUrl {
            text: url.to_owned(),
            host,
            port,
            server_name,
            authority_end,
            path_end,
        })
    }
}

/// A port from 1 to 65535, digits only.
fn parse_port(port: &str) -> Result<u16, UrlProblem> {
    let digits_only =
        !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    match port.parse::<u16>() {
        Ok(number) if digits_only && number > 0 => Ok(number),
        _ => Err(UrlProblem::BadPort {
            port: port.to_owned(),
        }),
    }
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

/// The host and the name the handshake verifies for it.
fn parse_host(host: &str) -> Result<(Host, ServerName<'static>), UrlProblem> {
    let bad = || UrlProblem::BadHost {
        host: host.to_owned(),
    };
    if let Some(literal) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        let address = literal.parse::<Ipv6Addr>().map_err(|_| bad())?;
        return Ok((Host::Ipv6(address), ServerName::IpAddress(address.into())));
    }
    if let Ok(address) = host.parse::<Ipv4Addr>() {
        return Ok((Host::Ipv4(address), ServerName::IpAddress(address.into())));
    }
    // A DNS name: labels of letters, digits, '-' and '_', none empty (so no leading, trailing
    // or doubled dot), and one rustls can name in the handshake.
    let labels_ok = host.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if !labels_ok || host.len() > 253 {
        return Err(bad());
    }
    let name = host.to_ascii_lowercase();
    let server_name = DnsName::try_from(name.clone()).map_err(|_| bad())?;
    Ok((Host::Dns(name), ServerName::DnsName(server_name)))
}

#[cfg(test)]
mod unit {
    #![allow(clippy::unwrap_used)]

    use super::{Host, UpstreamUrl, UrlProblem};

    fn check_upstream_url(url: &str) -> Result<(), UrlProblem> {
        url.parse::<UpstreamUrl>().map(|_| ())
    }

    fn tls_endpoint(url: &str) -> Option<String> {
        url.parse::<UpstreamUrl>()
            .ok()
            .map(|url| url.tls_endpoint())
    }

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
    fn parses_host_port_authority_name_and_target() {
        use rustls_pki_types::ServerName;
        /// URL, host, port, authority, path, query, request target.
        type Case = (
            &'static str,
            Host,
            u16,
            &'static str,
            &'static str,
            Option<&'static str>,
            &'static str,
        );
        let cases: [Case; 5] = [
            (
                "https://CRM.Example.com",
                Host::Dns("crm.example.com".into()),
                443,
                "CRM.Example.com",
                "",
                None,
                "/",
            ),
            (
                "https://10.0.0.7:8443/mcp?tenant=a%20b",
                Host::Ipv4([10, 0, 0, 7].into()),
                8443,
                "10.0.0.7:8443",
                "/mcp",
                Some("tenant=a%20b"),
                "/mcp?tenant=a%20b",
            ),
            (
                "https://[0:0::1]/",
                Host::Ipv6(std::net::Ipv6Addr::LOCALHOST),
                443,
                "[0:0::1]",
                "/",
                None,
                "/",
            ),
            (
                "https://a.example?x=1",
                Host::Dns("a.example".into()),
                443,
                "a.example",
                "",
                Some("x=1"),
                "/?x=1",
            ),
            (
                "https://a.example/p?",
                Host::Dns("a.example".into()),
                443,
                "a.example",
                "/p",
                Some(""),
                "/p?",
            ),
        ];
        for (text, host, port, authority, path, query, target) in cases {
            let url: UpstreamUrl = text.parse().unwrap();
            assert_eq!(url.as_str(), text);
            assert_eq!(url.to_string(), text);
            assert_eq!(url.host(), &host, "{text}");
            assert_eq!(url.port(), port, "{text}");
            assert_eq!(url.authority(), authority, "{text}");
            assert_eq!(url.path(), path, "{text}");
            assert_eq!(url.query(), query, "{text}");
            assert_eq!(url.request_target(), target, "{text}");
        }
        let dns: UpstreamUrl = "https://CRM.Example.com/mcp".parse().unwrap();
        assert_eq!(
            dns.server_name(),
            ServerName::try_from("crm.example.com").unwrap()
        );
        let v6: UpstreamUrl = "https://[::1]:8443/mcp".parse().unwrap();
        assert_eq!(v6.server_name(), ServerName::try_from("::1").unwrap());
        assert_eq!(v6.host().to_string(), "::1");
        let v4: UpstreamUrl = "https://127.0.0.1/mcp".parse().unwrap();
        assert_eq!(v4.server_name(), ServerName::try_from("127.0.0.1").unwrap());
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
