//! The client-authentication options of `toolgate serve` (docs/design.md §7): bearer tokens, client
//! certificates, and the refusal to expose an unauthenticated gateway beyond loopback.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use server_identity::rustls::RootCertStore;
use toolgate::auth::{BearerAuth, ToolPolicy};
use toolgate::server::ServerOptions;

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
    /// The issuer's signing keys, a JWKS file (RFC 7517); RS256, ES256 and EdDSA keys, each
    /// with a `kid`.
    #[arg(long, value_name = "FILE", requires_all = ["jwt_issuer", "jwt_audience"])]
    pub(crate) jwks: Option<PathBuf>,
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

    /// Bearer tokens and the resource URL into `options`.
    pub(crate) fn apply(&self, options: &mut ServerOptions) -> Result<(), Failure> {
        if let (Some(issuer), Some(audience), Some(jwks)) =
            (&self.jwt_issuer, &self.jwt_audience, &self.jwks)
        {
            let auth = BearerAuth::from_jwks_file(issuer, audience, jwks)
                .map_err(|error| Failure::Usage(error.to_string()))?;
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
