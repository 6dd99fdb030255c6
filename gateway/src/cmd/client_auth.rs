//! The client-authentication options of `toolgate serve` (docs/design.md §7): bearer tokens, client
//! certificates, and the refusal to expose an unauthenticated gateway beyond loopback.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use server_identity::rustls::RootCertStore;
use toolgate::auth::{BearerAuth, JwksUrl, ToolPolicy};
use toolgate::server::ServerOptions;

use crate::cmd::serve::parse_duration;
use crate::outcome::Failure;

/// Who may call: bearer tokens, client certificates, or neither on purpose.
#[derive(Debug, clap::Args)]
pub(crate) struct ClientAuthArgs {
    /// Require OAuth 2.1 bearer tokens issued by this authorization server (the token's `iss`;
    /// also `authorization_servers` in the RFC 9728 metadata). Needs --jwt-audience and --jwks.
    #[arg(long, value_name = "URL", requires_all = ["jwt_audience", "jwks"])]
    pub(crate) jwt_issuer: Option<String>,
    /// The audience tokens must name in `aud` (this gateway's resource identifier).
    #[arg(long, value_name = "AUD", requires_all = ["jwt_issuer", "jwks"])]
    pub(crate) jwt_audience: Option<String>,
    /// The issuer's signing keys (RFC 7517; RS256, ES256 and EdDSA keys, each with a `kid`): a
    /// file, or an https URL fetched at start with the --ca roots (a failure refuses to start)
    /// and refetched when a token names an unknown kid (at most once per
    /// --jwks-refetch-interval; a failed refetch keeps the keys held).
    #[arg(long, value_name = "FILE|URL", requires_all = ["jwt_issuer", "jwt_audience"])]
    pub(crate) jwks: Option<String>,
    /// With an https --jwks: the shortest time between two refetches caused by tokens whose
    /// kid is not in the cached set (the start-up fetch is not one).
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub(crate) jwks_refetch_interval: String,
    /// With an https --jwks: how old the fetched set may grow before it is fetched again in the
    /// background (a key the authorization server withdrew verifies tokens at most this long;
    /// a failed refresh keeps the keys held).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub(crate) jwks_max_age: String,
    /// With an https --jwks: the bound on one fetch (connect, TLS, request and body together).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) jwks_timeout: String,
    /// The gateway's URL as clients reach it, the `resource` of the metadata document; default:
    /// the request's scheme and Host, then /mcp.
    #[arg(long, value_name = "URL", requires = "jwks")]
    pub(crate) resource_url: Option<String>,
    /// Require a client certificate chaining to these PEM roots on the HTTPS listener (needs
    /// --tls-cert); the principal is its SPIFFE ID, else its key fingerprint.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) client_ca: Option<PathBuf>,
    /// Authorize every tools/call (and filter tools/list) with this Cedar policy file:
    /// principal, action `Action::"call"`, resource `Tool::"<tool_name>"` with `server`,
    /// `read_only` and `destructive`, context `{ protocol }`. Checked at start.
    #[arg(long, value_name = "FILE")]
    pub(crate) policy: Option<PathBuf>,
    /// Validate the --policy file against this Cedar schema at start (Cedar's validator,
    /// strict mode): a policy naming an undeclared type, attribute or action, or using a value
    /// as the wrong type, refuses to start. examples/policy.cedarschema describes the gateway's
    /// entities.
    #[arg(long, value_name = "FILE", requires = "policy")]
    pub(crate) policy_schema: Option<PathBuf>,
    /// Serve a non-loopback --listen address without --jwks or --client-ca (anyone who reaches
    /// it may call every catalog tool).
    #[arg(long)]
    pub(crate) allow_unauthenticated: bool,
}

impl ClientAuthArgs {
    /// Refuses a non-loopback listener that authenticates nobody, unless told to serve it.
    pub(crate) fn check_exposure(&self, listen: SocketAddr, stdio: bool) -> Result<(), Failure> {
        let authenticates = self.jwks.is_some() || self.client_ca.is_some();
        if stdio || authenticates || self.allow_unauthenticated || listen.ip().is_loopback() {
            return Ok(());
        }
        Err(Failure::Usage(format!(
            "refusing to serve {listen} without client authentication: anyone who can reach it \
             could call every catalog tool. Give --jwt-issuer, --jwt-audience and --jwks (bearer \
             tokens) or --client-ca (mTLS), or --allow-unauthenticated to serve it anyway"
        )))
    }

    /// Bearer tokens and the resource URL into `options`; a JWKS URL is fetched now, its
    /// server authenticated by `roots` (the --ca roots).
    pub(crate) async fn apply(
        &self,
        options: &mut ServerOptions,
        roots: &Arc<RootCertStore>,
    ) -> Result<(), Failure> {
        if let (Some(issuer), Some(audience), Some(jwks)) =
            (&self.jwt_issuer, &self.jwt_audience, &self.jwks)
        {
            let auth = if jwks.contains("://") {
                let mut source = JwksUrl::new(jwks, roots.clone())
                    .map_err(|error| Failure::Usage(error.to_string()))?;
                source
                    .refetch_interval(parse_duration(
                        "--jwks-refetch-interval",
                        &self.jwks_refetch_interval,
                    )?)
                    .max_age(parse_duration("--jwks-max-age", &self.jwks_max_age)?)
                    .timeout(parse_duration("--jwks-timeout", &self.jwks_timeout)?);
                BearerAuth::from_jwks_url(issuer, audience, source)
                    .await
                    .map_err(|error| Failure::Usage(error.to_string()))?
            } else {
                BearerAuth::from_jwks_file(issuer, audience, Path::new(jwks))
                    .map_err(|error| Failure::Usage(error.to_string()))?
            };
            options.bearer_auth(Arc::new(auth));
        }
        if let Some(url) = &self.resource_url {
            options.resource_url(url);
        }
        Ok(())
    }

    /// The Cedar policy, parsed and, with --policy-schema, validated (a file that does not
    /// parse or validate refuses to start, naming the line).
    pub(crate) fn policy(&self) -> Result<Option<Arc<ToolPolicy>>, Failure> {
        let Some(path) = &self.policy else {
            return Ok(None);
        };
        ToolPolicy::from_files(path, self.policy_schema.as_deref())
            .map(|policy| Some(Arc::new(policy)))
            .map_err(|error| Failure::Usage(error.to_string()))
    }

    /// The verifier of client certificates for the HTTPS listener, when --client-ca is given.
    pub(crate) fn client_verifier(&self) -> Result<Option<Arc<dyn ClientCertVerifier>>, Failure> {
        let Some(path) = &self.client_ca else {
            return Ok(None);
        };
        let shown = path.display();
        let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
            .map_err(|error| Failure::Usage(format!("--client-ca {shown}: {error}")))?;
        let mut roots = RootCertStore::empty();
        for certificate in certificates {
            roots
                .add(certificate)
                .map_err(|error| Failure::Usage(format!("--client-ca {shown}: {error}")))?;
        }
        if roots.is_empty() {
            return Err(Failure::Usage(format!(
                "--client-ca {shown}: no CERTIFICATE in the file"
            )));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|error| Failure::Usage(format!("--client-ca {shown}: {error}")))?;
        Ok(Some(verifier))
    }
}
