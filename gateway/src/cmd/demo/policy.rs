//! The demo's policy step: the same catalog behind a Cedar policy (docs/design.md §7), and one
//! call it refuses.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use catalog_store::Catalog;
use serde_json::json;
use server_identity::rustls::RootCertStore;

use toolgate::audit::{AuditLog, DenialReason};
use toolgate::auth::{PolicyError, ToolPolicy};
use toolgate::mcp::ProtocolVersion;
use toolgate::router::{Router, RouterOptions, codes};
use toolgate_testkit::GatewayClient;

use super::local::LOCAL_TOOL;
use super::script::{DemoCheck, DemoError, Served, check, denial, report, setup, tool_names};

/// The policy of `examples/policy.cedar`: read-only tools for everyone, destructive tools only
/// for the `ops` group. The demo's caller is anonymous (a loopback gateway without client
/// authentication), and the local `echo` declares no annotations, so MCP's defaults make it
/// destructive: the policy refuses it.
pub(super) const DEMO_POLICY: &str = r#"// toolgate serve --policy examples/policy.cedar (docs/design.md §7).
// Principals: User::"<sub>" (bearer token; its claims and `scopes` are attributes),
// Spiffe::"spiffe://…", Cert::"SHA256:…", Local::"<user>", Anonymous::"anonymous".
// Resource: Tool::"<tool_name>" with `server`, `read_only` and `destructive` from the approved
// annotations. Context: { protocol: "<MCP version>" }. Anything not permitted is refused.

// Read-only tools, for everyone.
@id("read-only-for-everyone")
permit (principal, action == Action::"call", resource)
when { resource.read_only };

// Destructive tools, only for members of the `ops` group (the token's `groups` claim).
@id("destructive-for-ops")
permit (principal, action == Action::"call", resource)
when { resource.destructive && principal has groups && principal.groups.contains("ops") };
"#;

/// The expectation this step checks.
pub(super) const EXPECTATION: &str = "behind the policy, local.echo (destructive by MCP's defaults) is refused to the \
     anonymous caller with not_authorized (-32005) and left out of its tools/list";

/// Runs the step: writes the policy to `directory`, serves `catalog` behind it on a second
/// gateway writing to the same `audit` log, lists the tools and calls the refused one.
pub(super) async fn run(
    out: &mut (dyn Write + Send),
    catalog: Catalog,
    directory: &Path,
    audit: Arc<AuditLog>,
    checks: &mut Vec<DemoCheck>,
) -> Result<(), DemoError> {
    let path = directory.join("policy.cedar");
    std::fs::write(&path, DEMO_POLICY).map_err(|e| setup("write the demo policy")(&e))?;
    writeln!(
        out,
        "\n6. Who may call: the same catalog behind the Cedar policy {} (read-only tools for \
         everyone, destructive tools for the ops group)",
        path.display()
    )?;
    let policy = match ToolPolicy::from_file(&path) {
        Ok(policy) => policy,
        Err(error @ PolicyError::Unavailable { .. }) => {
            writeln!(out, "   skipped: {error}")?;
            return Ok(());
        }
        Err(error) => return Err(setup("load the demo policy")(&error)),
    };
    let mut options = RouterOptions::new(Arc::new(RootCertStore::empty()));
    options.upstream.max_idle_connections = 0;
    options.policy = Some(Arc::new(policy));
    let router =
        Arc::new(Router::new(catalog, options, audit).map_err(|e| setup("build the router")(&e))?);
    let served = Served::start(router.clone()).await?;
    let url = served.url.clone();
    writeln!(out, "   gateway    {url}  (--policy)")?;

    let outcome = async {
        let mut client = GatewayClient::new(&url, ProtocolVersion::V2025_11_25);
        client.connect().await?;
        let tools = client.list_tools().await?;
        let names = tool_names(&tools);
        writeln!(
            out,
            "   tools/list for anonymous: {}  ({LOCAL_TOOL} is left out)",
            names.join(", ")
        )?;
        let arguments = json!({"text": "hello"});
        let answer = client.call_tool(LOCAL_TOOL, arguments.clone()).await?;
        report(out, LOCAL_TOOL, &arguments, &answer)?;
        let refused =
            denial(&answer) == Some((codes::NOT_AUTHORIZED, DenialReason::NotAuthorized.as_str()));
        check(
            checks,
            EXPECTATION,
            refused && names == ["demo.echo", "demo.add", "demo.get_time"],
        );
        Ok::<(), DemoError>(())
    }
    .await;
    served.stop().await;
    router.shutdown().await;
    outcome
}
