//! `toolgate identity URL`: connect to an upstream without trusting it, and print what it
//! presents and the catalog lines that pin it (docs/design.md §6; seed 003 §1 "Server Identity Format").

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use server_identity::rustls::RootCertStore;
use server_identity::{Observation, roots_from_pem};

use crate::outcome::{Failure, Verdict, stdout_error};

use crate::observe;

/// The system trust store used for `chain_valid` when `--ca` is not given.
const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// `toolgate identity`
#[derive(Debug, clap::Args)]
pub(crate) struct IdentityArgs {
    /// The upstream's https URL, e.g. `https://mcp.example.com/mcp`. Nothing is sent after the
    /// TLS handshake.
    #[arg(value_name = "URL", required_unless_present = "command")]
    pub(crate) url: Option<String>,
    /// Instead of a URL: print what a local (stdio) server started with the command after
    /// `--` would run, and the entrypoint_digests to pin (the resolved program and every
    /// argument that names an existing file).
    #[arg(long, conflicts_with_all = ["url", "ca"], requires = "argv")]
    pub(crate) command: bool,
    /// The command and its arguments, after `--` (with --command).
    #[arg(last = true, value_name = "CMD ARGS")]
    pub(crate) argv: Vec<String>,
    /// PEM file of CA certificates to check the chain against (`chain_valid`). Default: the
    /// system bundle /etc/ssl/certs/ca-certificates.crt if present; otherwise chain_valid is null.
    #[arg(long, value_name = "FILE")]
    pub(crate) ca: Option<PathBuf>,
    /// Print one JSON object: {"url", "spki_sha256", "cert_sha256", "spiffe_ids",
    /// "chain_valid", "not_before", "not_after"}.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(args: &IdentityArgs) -> Result<Verdict, Failure> {
    let Some(text) = args.url.as_deref().filter(|_| !args.command) else {
        return super::identity_command::run(&args.argv, args.json);
    };
    let url: catalog_store::UpstreamUrl = text
        .parse()
        .map_err(|problem| Failure::Usage(format!("invalid URL `{text}`: {problem}")))?;
    let roots = roots(args.ca.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::io("cannot start the async runtime", e))?;
    let observation = runtime
        .block_on(observe::observe(&url, roots))
        .map_err(|error| Failure::Usage(error.to_string()))?;
    let text = if args.json {
        render_json(text, &observation)
    } else {
        render_text(text, &observation)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).map_err(stdout_error)?;
    stdout.flush().map_err(stdout_error)?;
    Ok(Verdict::Pass)
}

/// `--ca FILE` (an error if unusable), else the system bundle if present and loadable, else none.
fn roots(ca: Option<&Path>) -> Result<Option<Arc<RootCertStore>>, Failure> {
    if let Some(path) = ca {
        let pem = std::fs::read(path).map_err(|e| {
            Failure::io(
                format!("cannot read --ca {} (check the path)", path.display()),
                e,
            )
        })?;
        let roots = roots_from_pem(&pem).map_err(|error| {
            Failure::Usage(format!(
                "--ca {}: {error}; give a PEM file of CA certificates",
                path.display()
            ))
        })?;
        return Ok(Some(Arc::new(roots)));
    }
    // The system bundle is a convenience: if it is absent or does not load, `chain_valid` is
    // reported as unknown rather than failing the observation.
    Ok(std::fs::read(SYSTEM_ROOTS)
        .ok()
        .and_then(|pem| roots_from_pem(&pem).ok())
        .map(Arc::new))
}

fn render_json(url: &str, seen: &Observation) -> String {
    let value = serde_json::json!({
        "url": url,
        "spki_sha256": seen.spki_sha256.to_string(),
        "cert_sha256": seen.cert_sha256.to_string(),
        "spiffe_ids": seen.spiffe_ids.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "chain_valid": seen.chain_valid,
        "not_before": seen.not_before.to_string(),
        "not_after": seen.not_after.to_string(),
    });
    format!("{}\n", jcs_digest::order::Sorted(&value))
}

fn render_text(url: &str, seen: &Observation) -> String {
    let mut out = String::new();
    out.push_str(&format!("url          {url}\n"));
    out.push_str(&format!(
        "spki_sha256  {}  (key-pinned, the default)\n",
        seen.spki_sha256
    ));
    out.push_str(&format!(
        "cert_sha256  {}  (cert-pinned)\n",
        seen.cert_sha256
    ));
    let ids: Vec<String> = seen.spiffe_ids.iter().map(ToString::to_string).collect();
    out.push_str(&format!(
        "spiffe_ids   {}\n",
        if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.join(", ")
        }
    ));
    let chain = match (seen.chain_valid, &seen.chain_problem) {
        (Some(true), _) => "valid for this host name".to_owned(),
        (Some(false), Some(problem)) => format!("NOT valid: {problem}"),
        (Some(false), None) => "NOT valid".to_owned(),
        (None, _) => format!("unknown (no --ca given and no {SYSTEM_ROOTS})"),
    };
    out.push_str(&format!("chain        {chain}\n"));
    out.push_str(&format!("not_before   {}\n", seen.not_before));
    out.push_str(&format!("not_after    {}\n", seen.not_after));
    out.push('\n');
    if seen.chain_valid == Some(false) {
        out.push_str(
            "note: the chain does not validate, so the default tls_trust `webpki` would refuse \
             this server; if it is self-signed on purpose, add \"tls_trust\": \"pin\" after \
             checking the fingerprint out of band.\n",
        );
    }
    if seen.spiffe_ids.len() == 1 {
        out.push_str(
            "note: the server presents a SPIFFE ID; pinning it needs the trust domain's bundle \
             configured in the gateway.\n",
        );
    }
    out.push_str("Catalog lines to pin this server (check the fingerprint out of band first):\n");
    out.push_str(&format!(
        "  \"tls_fingerprint\": \"{}\",\n",
        seen.spki_sha256
    ));
    if let [id] = seen.spiffe_ids.as_slice() {
        out.push_str(&format!("  \"spiffe_id\": \"{id}\",\n"));
    }
    out.push_str("  \"rotation_mode\": \"key-pinned\"\n");
    out
}
