//! `--jwks https://…` (docs/design.md §7): the authorization server's JWK set, fetched over
//! TLS with the gateway's trust roots, bounded in time and size, read by the same parser as a
//! file ([`KeySet::parse`]), and refetched when a token names a `kid` the cached set lacks, at
//! most once per interval, one fetch shared by every request that waits for it; and refreshed
//! in the background once it is older than its maximum age, so that a key the authorization
//! server withdrew stops verifying tokens even when no token ever names an unknown `kid`.
//!
//! The network I/O lives here, in the gateway crate; the verification of tokens stays in
//! [`super::bearer`] and never waits on a peer except through [`RemoteKeys::refetch_for`].

use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{StatusCode, Uri, header};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::rt::TokioIo;
use rustls::RootCertStore;
use rustls_pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::jwks::{JwksError, KeySet};

/// The default bound on one fetch, connect, TLS handshake, request and the whole body together.
pub const DEFAULT_JWKS_TIMEOUT: Duration = Duration::from_secs(10);
/// The default shortest time between two refetches caused by unknown `kid`s: a client sending
/// made-up `kid`s makes the gateway fetch at most once per interval.
pub const DEFAULT_JWKS_REFETCH_INTERVAL: Duration = Duration::from_secs(60);
/// The default age after which the held set is refreshed in the background: how long a key
/// the authorization server withdrew may still verify tokens here.
pub const DEFAULT_JWKS_MAX_AGE: Duration = Duration::from_secs(300);
/// The default largest JWKS document read (a set of a few dozen keys is a few KiB).
pub const DEFAULT_MAX_JWKS_BYTES: usize = 256 * 1024;

/// Why the JWK set at a URL could not be fetched or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwksFetchError {
    /// `http://`: the keys decide who may call, so they never travel in the clear.
    #[error(
        "--jwks {url}: refusing a plain http URL: the keys decide who may call, and anyone on \
         the path could replace them; serve the JWKS over https"
    )]
    NotHttps {
        /// The URL.
        url: String,
    },
    /// Not an `https://host[:port]/path` URL.
    #[error("--jwks {url}: not a JWKS URL ({detail}); write https://HOST[:PORT]/PATH")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The TCP connection failed.
    #[error(
        "--jwks {url}: cannot connect to {address} ({detail}); is the authorization server up?"
    )]
    Connect {
        /// The URL.
        url: String,
        /// `host:port`.
        address: String,
        /// The system's message.
        detail: String,
    },
    /// The TLS handshake failed (a certificate from another CA, or for another name).
    #[error(
        "--jwks {url}: the TLS handshake failed ({detail}); the server's certificate must chain \
         to the gateway's trust roots (--ca, default the system bundle) and name the URL's host"
    )]
    Tls {
        /// The URL.
        url: String,
        /// rustls' message.
        detail: String,
    },
    /// No complete answer within the deadline.
    #[error(
        "--jwks {url}: no complete answer within {timeout:?} (connect, handshake, request and \
         body together; --jwks-timeout)"
    )]
    Timeout {
        /// The URL.
        url: String,
        /// The deadline.
        timeout: Duration,
    },
    /// An answer other than 200 (redirects are not followed).
    #[error("--jwks {url}: the server answered HTTP {observed}; expected 200 with the JWK set")]
    Status {
        /// The URL.
        url: String,
        /// The status received.
        observed: u16,
    },
    /// The server announced a document larger than the cap (Content-Length); none was read.
    #[error(
        "--jwks {url}: the server announced {announced} bytes (Content-Length), more than the \
         {limit} read; a JWK set is a few KiB"
    )]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: usize,
        /// The Content-Length.
        announced: u64,
    },
    /// The body ran past the cap (no Content-Length, or one that understated it).
    #[error(
        "--jwks {url}: the document runs past {limit} bytes; reading stopped there (a JWK set is \
         a few KiB)"
    )]
    BodyTooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: usize,
    },
    /// The HTTP exchange broke off.
    #[error("--jwks {url}: the HTTP exchange failed ({detail})")]
    Http {
        /// The URL.
        url: String,
        /// hyper's message.
        detail: String,
    },
    /// The document is not a JWK set the gateway accepts.
    #[error(transparent)]
    Document(#[from] JwksError),
}

/// Where the JWK set is fetched from, and the bounds of each fetch.
#[derive(Clone)]
pub struct JwksUrl {
    url: String,
    host: String,
    port: u16,
    authority: String,
    path: String,
    server_name: ServerName<'static>,
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
    refetch_interval: Duration,
    max_age: Duration,
    max_bytes: usize,
}

impl std::fmt::Debug for JwksUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwksUrl")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .field("refetch_interval", &self.refetch_interval)
            .field("max_age", &self.max_age)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl JwksUrl {
    /// The JWK set at `url` (`https://` only), its server authenticated by `roots`, with the
    /// default bounds.
    ///
    /// # Errors
    ///
    /// [`JwksFetchError::NotHttps`] for `http://`, [`JwksFetchError::InvalidUrl`] for anything
    /// else that is not `https://HOST[:PORT]/PATH`.
    pub fn new(url: &str, roots: Arc<RootCertStore>) -> Result<JwksUrl, JwksFetchError> {
        let invalid = |detail: &str| JwksFetchError::InvalidUrl {
            url: url.to_owned(),
            detail: detail.to_owned(),
        };
        let uri: Uri = url.parse().map_err(|_| invalid("it does not parse"))?;
        match uri.scheme_str() {
            Some("https") => {}
            Some(scheme) if scheme.eq_ignore_ascii_case("http") => {
                return Err(JwksFetchError::NotHttps {
                    url: url.to_owned(),
                });
            }
            Some(scheme) if scheme.eq_ignore_ascii_case("https") => {}
            _ => return Err(invalid("the scheme is not https")),
        }
        let authority = uri.authority().ok_or_else(|| invalid("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(invalid("it carries user information"));
        }
        let bracketed = authority.host();
        let host = bracketed
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(bracketed);
        if host.is_empty() {
            return Err(invalid("it has no host"));
        }
        let server_name = ServerName::try_from(host.to_owned())
            .map_err(|_| invalid("the host is neither a DNS name nor an IP address"))?;
        let path = uri
            .path_and_query()
            .map_or("/", |path| path.as_str())
            .to_owned();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| JwksFetchError::Tls {
                url: url.to_owned(),
                detail: error.to_string(),
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        // As for upstreams (server_identity::client_config): every fetch is a full handshake,
        // checked against the roots as they are now, never a verdict resumed from an earlier one.
        config.resumption = rustls::client::Resumption::disabled();
        Ok(JwksUrl {
            url: url.to_owned(),
            host: host.to_owned(),
            port: authority.port_u16().unwrap_or(443),
            authority: authority.as_str().to_owned(),
            path,
            server_name,
            tls: Arc::new(config),
            timeout: DEFAULT_JWKS_TIMEOUT,
            refetch_interval: DEFAULT_JWKS_REFETCH_INTERVAL,
            max_age: DEFAULT_JWKS_MAX_AGE,
            max_bytes: DEFAULT_MAX_JWKS_BYTES,
        })
    }

    /// The bound on one fetch (at least 1 ms): connect, handshake, request and body together.
    pub fn timeout(&mut self, timeout: Duration) -> &mut Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The shortest time between two refetches caused by tokens with an unknown `kid`.
    pub fn refetch_interval(&mut self, interval: Duration) -> &mut Self {
        self.refetch_interval = interval;
        self
    }

    /// How old the held set may grow (at least 10 ms) before it is fetched again in the
    /// background, whether or not a token names an unknown `kid`; a failed refresh keeps the
    /// keys held and is tried again one `max_age` later.
    pub fn max_age(&mut self, age: Duration) -> &mut Self {
        self.max_age = age.max(Duration::from_millis(10));
        self
    }

    /// The largest document read (at least 1 byte); a larger one fails the fetch.
    pub fn max_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_bytes = bytes.max(1);
        self
    }

    /// The URL, as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One fetch and parse of the set: a [`JwksFetchError`] names the URL and what failed.
    pub(crate) async fn fetch_keys(&self) -> Result<KeySet, JwksFetchError> {
        let document = tokio::time::timeout(self.timeout, self.exchange())
            .await
            .map_err(|_| JwksFetchError::Timeout {
                url: self.url.clone(),
                timeout: self.timeout,
            })??;
        Ok(KeySet::parse(&document, &self.url)?)
    }

    /// GET over a fresh connection; the body, at most `max_bytes` of it.
    async fn exchange(&self) -> Result<Vec<u8>, JwksFetchError> {
        let url = || self.url.clone();
        let http = |error: hyper::Error| JwksFetchError::Http {
            url: url(),
            detail: error.to_string(),
        };
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|error| JwksFetchError::Connect {
                url: url(),
                address: self.authority.clone(),
                detail: error.to_string(),
            })?;
        let tls = TlsConnector::from(self.tls.clone())
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|error| JwksFetchError::Tls {
                url: url(),
                detail: error.to_string(),
            })?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(TokioIo::new(tls))
                .await
                .map_err(http)?;
        // Aborted when this future ends, on time or not: no connection outlives its fetch.
        let driver = AbortOnDrop(tokio::spawn(connection));
        let request = http::Request::get(&self.path)
            .header(header::HOST, &self.authority)
            .header(header::ACCEPT, "application/jwk-set+json, application/json")
            .header(
                header::USER_AGENT,
                concat!("toolgate/", env!("CARGO_PKG_VERSION")),
            )
            .body(Empty::new())
            .map_err(|error| JwksFetchError::InvalidUrl {
                url: url(),
                detail: error.to_string(),
            })?;
        let response = sender.send_request(request).await.map_err(http)?;
        if response.status() != StatusCode::OK {
            return Err(JwksFetchError::Status {
                url: url(),
                observed: response.status().as_u16(),
            });
        }
        let announced = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if let Some(length) = announced.filter(|&length| length > self.max_bytes as u64) {
            return Err(JwksFetchError::TooLarge {
                url: url(),
                limit: self.max_bytes,
                announced: length,
            });
        }
        let mut body = response.into_body();
        let mut document = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.map_err(http)?.into_data() else {
                continue;
            };
            if document.len() + data.len() > self.max_bytes {
                return Err(JwksFetchError::BodyTooLarge {
                    url: url(),
                    limit: self.max_bytes,
                });
            }
            document.extend_from_slice(&data);
        }
        drop(driver);
        Ok(document)
    }
}

#[derive(Debug)]
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The cached set of a [`JwksUrl`], replaced whole by each successful refetch.
#[derive(Debug)]
pub(crate) struct RemoteKeys {
    source: JwksUrl,
    current: Arc<RwLock<Arc<KeySet>>>,
    /// The background refresh of [`JwksUrl::max_age`]; it ends with these keys.
    _refresh: AbortOnDrop<()>,
    /// When the last refetch was tried; held across the fetch, so that requests waiting on an
    /// unknown `kid` share one fetch.
    last_refetch: tokio::sync::Mutex<Option<Instant>>,
}

impl RemoteKeys {
    /// Fetches the set once; a failure is the caller's to report (the gateway refuses to start).
    pub(crate) async fn start(source: JwksUrl) -> Result<RemoteKeys, JwksFetchError> {
        let keys = source.fetch_keys().await?;
        tracing::info!(url = %source.url, kids = ?keys.kids(), "fetched the JWKS");
        let current = Arc::new(RwLock::new(Arc::new(keys)));
        let refresh = AbortOnDrop(tokio::spawn(refresh_every_max_age(
            source.clone(),
            current.clone(),
        )));
        Ok(RemoteKeys {
            source,
            current,
            _refresh: refresh,
            // The start-up fetch is not a refetch: a key published just after start is found
            // by the first token that names it.
            last_refetch: tokio::sync::Mutex::new(None),
        })
    }

    /// The keys as last fetched.
    pub(crate) fn current(&self) -> Arc<KeySet> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The keys after a refetch for the unknown `kid`: refetched unless another request's
    /// refetch already brought `kid` or one was tried within the interval. A failed refetch
    /// keeps the keys held before and logs why.
    pub(crate) async fn refetch_for(&self, kid: &str) -> Arc<KeySet> {
        let mut last_refetch = self.last_refetch.lock().await;
        let held = self.current();
        if held.find(kid).is_some() {
            return held;
        }
        if last_refetch.is_some_and(|at| at.elapsed() < self.source.refetch_interval) {
            return held;
        }
        *last_refetch = Some(Instant::now());
        match self.source.fetch_keys().await {
            Ok(keys) => {
                tracing::info!(
                    url = %self.source.url,
                    kids = ?keys.kids(),
                    "refetched the JWKS for a token with the unknown kid {kid:?}"
                );
                let keys = Arc::new(keys);
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = keys.clone();
                keys
            }
            Err(error) => {
                tracing::warn!(
                    "refetching the JWKS for a token with the unknown kid {kid:?} failed, keeping \
                     the {} keys fetched before: {error}",
                    held.len()
                );
                held
            }
        }
    }
}

/// Replaces the held set with a fresh fetch every [`JwksUrl::max_age`]; a failed fetch keeps
/// the keys held (an unreachable authorization server must not lock every caller out) and says
/// so at warn.
async fn refresh_every_max_age(source: JwksUrl, current: Arc<RwLock<Arc<KeySet>>>) {
    loop {
        tokio::time::sleep(source.max_age).await;
        match source.fetch_keys().await {
            Ok(keys) => {
                tracing::info!(
                    url = %source.url,
                    kids = ?keys.kids(),
                    "refreshed the JWKS (older than its maximum age, {:?})",
                    source.max_age
                );
                *current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(keys);
            }
            Err(error) => {
                let held = current.read().unwrap_or_else(PoisonError::into_inner).len();
                tracing::warn!(
                    "refreshing the JWKS (older than its maximum age, {:?}) failed, keeping the \
                     {held} keys fetched before: {error}",
                    source.max_age
                );
            }
        }
    }
}
