//! `toolgate demo-upstream`: the demo upstream (`toolgate_testkit::DemoUpstream`) as a process, for
//! interop checks with third-party clients and for load tests. A demo and test server, not a
//! production one: it listens on 127.0.0.1 only, with a certificate generated at start.

use std::io::Write;
use std::path::PathBuf;

use toolgate_testkit::{
    DemoUpstream, DemoUpstreamConfig, DiscoverRefusal, Misbehaviour, ResponseMode,
    StdioServerConfig,
};

use crate::outcome::{Failure, Verdict, stdout_error};

/// `toolgate demo-upstream`
#[derive(Debug, clap::Args)]
pub(crate) struct DemoUpstreamArgs {
    /// Tools per `tools/list` page (0: every tool on one page).
    #[arg(long, default_value_t = 0)]
    page_size: usize,
    /// Filler tools (`filler_01`, …) served after `echo`, `add` and `get_time`.
    #[arg(long, default_value_t = 0)]
    filler_tools: usize,
    /// Answer requests with SSE streams instead of JSON.
    #[arg(long)]
    sse: bool,
    /// Serve only the session generation and refuse `server/discover` as the TypeScript SDK
    /// does (HTTP 400, -32000).
    #[arg(long, conflicts_with = "stateless_only")]
    sessions_only: bool,
    /// Serve only 2026-07-28 (`server/discover`, stateless requests).
    #[arg(long)]
    stateless_only: bool,
    /// Write the CA certificate (PEM) to this file, for clients that validate the chain.
    #[arg(long, value_name = "FILE")]
    ca_out: Option<PathBuf>,
    /// Serve MCP on stdin and stdout (a local server) instead of HTTPS.
    #[arg(long)]
    stdio: bool,
    /// With --stdio: serve the tools of this JSON file (an array of MCP tool definitions, or
    /// {"tools": [...]}); pin it in entrypoint_digests beside the toolgate binary.
    #[arg(long, value_name = "FILE", requires = "stdio")]
    tools: Option<PathBuf>,
    /// With --stdio: append this process's id to FILE at start (tests count starts with it),
    /// and `call NAME` when a tools/call arrives.
    #[arg(long, value_name = "FILE", requires = "stdio")]
    marker: Option<PathBuf>,
    /// With --stdio: after N tools/call, change the first tool's description and send
    /// notifications/tools/list_changed.
    #[arg(long, value_name = "N", requires = "stdio")]
    rug_pull_after: Option<u64>,
    /// With --stdio: exit with status 1 after answering N tools/call.
    #[arg(long, value_name = "N", requires = "stdio")]
    crash_after: Option<u64>,
    /// With --stdio: misbehave: garbage, huge-line, silent, exit-at-once, stderr-flood or
    /// ignore-sigterm.
    #[arg(long, value_name = "MODE", requires = "stdio")]
    misbehave: Option<Misbehaviour>,
    /// With --stdio: wait this many milliseconds before answering each tools/call.
    #[arg(long, value_name = "MS", requires = "stdio")]
    call_delay_ms: Option<u64>,
    /// With --misbehave huge-line: the line's length in bytes (default 100 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = 0, requires = "stdio")]
    huge_line_bytes: usize,
}

/// `toolgate demo-upstream --stdio`: the testkit's stdio server on this process's stdio.
fn run_stdio(args: &DemoUpstreamArgs) -> Result<Verdict, Failure> {
    let mut config = StdioServerConfig::default();
    config.tools_file = args.tools.clone();
    config.page_size = args.page_size;
    config.sessions_only = args.sessions_only;
    config.marker = args.marker.clone();
    config.rug_pull_after = args.rug_pull_after;
    config.crash_after = args.crash_after;
    config.misbehave = args.misbehave;
    config.huge_line_bytes = args.huge_line_bytes;
    config.call_delay = args.call_delay_ms.map(std::time::Duration::from_millis);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::io("cannot start the async runtime", error))?;
    runtime
        .block_on(toolgate_testkit::serve_stdio(config))
        .map_err(|error| Failure::Usage(error.to_string()))?;
    Ok(Verdict::Pass)
}

pub(crate) fn run(args: &DemoUpstreamArgs) -> Result<Verdict, Failure> {
    if args.stdio {
        return run_stdio(args);
    }
    let mut config = DemoUpstreamConfig::new();
    config
        .page_size(args.page_size)
        .filler_tools(args.filler_tools)
        .sessions(!args.stateless_only)
        .stateless(!args.sessions_only)
        .discover_refusal(DiscoverRefusal::BadRequest);
    if args.sse {
        config.response_mode(ResponseMode::Sse);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Failure::io("cannot start the async runtime", error))?;
    runtime.block_on(async {
        let upstream = DemoUpstream::start(&config)
            .await
            .map_err(|error| Failure::Usage(error.to_string()))?;
        if let Some(path) = &args.ca_out {
            std::fs::write(path, upstream.ca_pem())
                .map_err(|error| Failure::io(format!("cannot write {}", path.display()), error))?;
        }
        // One JSON line that scripts read: where it listens and what to pin.
        let line = serde_json::json!({
            "url": upstream.url(),
            "spki_sha256": upstream.spki_fingerprint().to_string(),
            "cert_sha256": upstream.cert_fingerprint().to_string(),
        });
        let mut out = std::io::stdout();
        writeln!(out, "{}", jcs_digest::order::Sorted(&line)).map_err(stdout_error)?;
        out.flush().map_err(stdout_error)?;
        wait_for_shutdown().await;
        upstream.shutdown().await;
        Ok(Verdict::Pass)
    })
}

/// Until SIGTERM or Ctrl-C.
async fn wait_for_shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
