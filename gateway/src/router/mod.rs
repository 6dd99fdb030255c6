//! `tools/call` routing: every call goes through the catalog, the pinned identity and the
//! approved definition, in the order of seed 003 §4 and docs/design.md §5, and every decision is in
//! the audit log before the client hears it.
//!
//! # The steps
//!
//! 1. Look the tool up in the catalog; absent → `tool_not_in_catalog`.
//! 2. Connect to the bound upstream and negotiate; the pinning verifier enforces the catalog's
//!    anchors inside the TLS handshake (a full handshake on every connection: resumption is
//!    off), so an impostor is refused before any application byte (`identity_mismatch`). This
//!    connection is the one the call will be sent on, and it is made *before* the definition
//!    decision: a reconnect found here invalidates a `max-age` listing first (docs/design.md §5, "A
//!    check is never outrun"). A local (stdio) server's entrypoint files are hashed before its
//!    process starts ([`crate::local`]); a changed one is `identity_mismatch` too, nothing
//!    started, and a call goes only to the process whose tools were checked.
//! 3. Take the live definition from the upstream's `tools/list` (every page followed), hash it
//!    (docs/design.md §2, default label) and compare it with `definition_hash`; a different digest,
//!    a definition that cannot be digested, or a tool the upstream no longer lists →
//!    `definition_mismatch`. Freshness is per call by default, or a bounded `max-age` that
//!    `notifications/tools/list_changed` and a reconnect invalidate ([`crate::definition_check`]).
//! 4. Record the decision `allowed` in the audit log, with the identity presented on the
//!    connection of step 2 and the pin it matched (primary or backup). Nothing is forwarded
//!    unrecorded: if the log cannot record, the call is refused with -32603 and not forwarded.
//! 5. Forward on that connection and session only, with `name` = `upstream_name`, `arguments`
//!    and `_meta` passed through, and return the upstream's result unchanged (content,
//!    structuredContent, isError, _meta). A call is never sent again on another connection or
//!    into a new session without a new check: when its connection closed before it was written,
//!    or the upstream answered 404 for a session it lost (so the tool did not run), the call
//!    starts again at step 2, once, with a new path and a new check; a second failure is
//!    `upstream_unavailable`. If the forward fails, a second entry records
//!    `upstream_unavailable` or `upstream_error` for the same request, and the client receives
//!    that denial.
//!
//! # Errors a client receives
//!
//! Denials are JSON-RPC errors with `error.data.reason` (and `tool`, `upstream`,
//! `expected_definition`, `observed_definition` when known):
//!
//! | reason | code |
//! |---|---|
//! | `tool_not_in_catalog` | -32602 ([`codes::TOOL_NOT_IN_CATALOG`], MCP's code for an unknown tool) |
//! | `not_authorized` | -32005 ([`codes::NOT_AUTHORIZED`]; for the authorization of docs/design.md §7) |
//! | `identity_mismatch` | -32001 ([`codes::IDENTITY_MISMATCH`]) |
//! | `definition_mismatch` | -32002 ([`codes::DEFINITION_MISMATCH`]) |
//! | `upstream_unavailable` | -32003 ([`codes::UPSTREAM_UNAVAILABLE`]) |
//! | `upstream_error` | -32004 ([`codes::UPSTREAM_ERROR`]) |
//!
//! Each reason's string, code and HTTP status are decided in one place, [`crate::denial`].
//!
//! An audit log that cannot record answers -32603 without `data.reason`: no decision was made.

mod upstream_kind;
mod upstreams;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use catalog_store::{Catalog, CatalogEntry, ServerBinding};
use serde_json::{Map, Value};
use server_identity::rustls::RootCertStore;
use server_identity::{IdentityError, TrustBundles};

use crate::audit::{AuditLog, CallRecord, Decision, ObservedIdentity as AuditIdentity};
use crate::definition_check::{DefinitionCheckError, Freshness, LiveDefinitions};
use crate::local::LocalOptions;
use crate::mcp::{ErrorObject, RawJson, error_codes};
use crate::metrics::{self, Metrics, Stage};
use crate::upstream::{UpstreamError, UpstreamOptions};

use self::upstream_kind::CallPath;
pub use self::upstream_kind::Upstream;
pub use self::upstreams::RouterBuildError;
pub use crate::auth::Principal;
use crate::auth::ToolPolicy;
pub use crate::denial::{Denial, DenialReason, codes, error_code};

/// One `tools/call` as the client sent it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// `params.name`: the catalog tool name.
    pub tool: String,
    /// `params.arguments` as the client sent it (well-formed JSON), passed through unchanged.
    pub arguments: Option<RawJson>,
    /// `params._meta`, passed through (without the client's `io.modelcontextprotocol/*` keys).
    pub meta: Option<Map<String, Value>>,
    /// The client's session, for the audit log.
    pub session_id: Option<String>,
    /// The client's JSON-RPC request id, for the audit log.
    pub request_id: Option<Value>,
    /// Who is calling (docs/design.md §7), for the audit log and the policy.
    pub principal: Principal,
    /// The MCP protocol version of the client's exchange (the policy's `context.protocol`).
    pub protocol: Option<String>,
}

impl ToolCall {
    /// A call of `tool` with no arguments, `_meta`, session or request id.
    pub fn new(tool: impl Into<String>) -> ToolCall {
        ToolCall {
            tool: tool.into(),
            arguments: None,
            meta: None,
            session_id: None,
            request_id: None,
            principal: Principal::Anonymous,
            protocol: None,
        }
    }

    /// The same call with `arguments` (written in serde_json's form).
    pub fn with_arguments(mut self, arguments: Map<String, Value>) -> ToolCall {
        self.arguments = Some(RawJson::from_value(&Value::Object(arguments)));
        self
    }
}

/// Why a call got no answer at all: the audit log could not record its decision. The call was
/// not forwarded.
#[derive(Debug, thiserror::Error)]
#[error(
    "the audit log cannot record decisions ({detail}); the call to {tool:?} was refused and not forwarded"
)]
#[non_exhaustive]
pub struct AuditUnavailable {
    /// The tool called.
    pub tool: String,
    /// The audit log's error.
    pub detail: String,
}

/// What a `tools/call` ends with when it is not a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallFailure {
    /// A recorded denial.
    #[error(transparent)]
    Denied(#[from] Denial),
    /// No decision could be recorded.
    #[error(transparent)]
    AuditUnavailable(#[from] AuditUnavailable),
}

impl CallFailure {
    /// The JSON-RPC error a client receives.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            CallFailure::Denied(denial) => denial.to_error_object(),
            CallFailure::AuditUnavailable(failure) => ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                format!("Internal error: {failure}"),
            ),
        }
    }

    /// The denial, when the call was denied.
    pub fn denial(&self) -> Option<&Denial> {
        match self {
            CallFailure::Denied(denial) => Some(denial),
            CallFailure::AuditUnavailable(_) => None,
        }
    }
}

/// How the router reaches upstreams and how fresh a definition check must be.
#[derive(Debug, Clone)]
pub struct RouterOptions {
    /// Trust roots for `tls_trust: webpki` upstreams.
    pub roots: Arc<RootCertStore>,
    /// SPIFFE trust bundles per trust domain.
    pub bundles: TrustBundles,
    /// Timeouts and limits of the upstream clients.
    pub upstream: UpstreamOptions,
    /// Per call (default) or a bounded max-age.
    pub freshness: Freshness,
    /// Process limits of local (stdio) upstreams.
    pub local: LocalOptions,
    /// Who may call what (`--policy`, docs/design.md §7); `None`: every caller may call every tool.
    pub policy: Option<Arc<ToolPolicy>>,
}

impl RouterOptions {
    /// Options with the given trust roots, no SPIFFE bundles, default upstream options and
    /// per-call freshness.
    pub fn new(roots: Arc<RootCertStore>) -> RouterOptions {
        RouterOptions {
            roots,
            bundles: TrustBundles::new(),
            upstream: UpstreamOptions::default(),
            freshness: Freshness::PerCall,
            local: LocalOptions::default(),
            policy: None,
        }
    }
}

/// The catalog, one client per upstream, the definition check and the audit log.
#[derive(Debug)]
pub struct Router {
    catalog: Catalog,
    /// One per distinct server of the catalog.
    routes: Vec<Route>,
    /// Each catalog tool name's route.
    route_of_tool: HashMap<String, ToolRoute>,
    audit: Arc<AuditLog>,
    /// `toolgate serve --metrics`; `None` measures nothing.
    metrics: Option<Arc<Metrics>>,
    /// What the router was built with, for its [`successor`](Router::successor); its `policy`
    /// (`--policy`) decides who may call what, and `None` there lets every authenticated
    /// principal call every catalog tool.
    options: RouterOptions,
}

/// One upstream and what the router keeps about it.
#[derive(Debug)]
struct Route {
    /// Shared with the router that replaced this one on a reload, when it carried the upstream
    /// over ([`Router::successor`]).
    upstream: Arc<Upstream>,
    /// The catalog's binding the upstream was built from: what a reload compares.
    binding: ServerBinding,
    /// Its live definitions: the listing cache the definition check reads.
    definitions: LiveDefinitions<UpstreamError>,
    /// The upstream's URL, shared by the audit records of its calls.
    url: Arc<str>,
}

/// Where a catalog tool goes, and its names as its audit records share them (no copy per call).
#[derive(Debug)]
struct ToolRoute {
    /// Its index in `routes`.
    route: usize,
    /// The catalog `tool_name`.
    tool: Arc<str>,
    /// The name the upstream serves it under.
    upstream_name: Arc<str>,
    /// The `detail` of its `allowed` entries, the same for every call (written once).
    allowed_detail: String,
}

impl Router {
    /// Builds the router: one [`Upstream`] per distinct server of `catalog` (nothing is
    /// connected or started yet): a network client enforcing its anchors with `options.roots`
    /// and `options.bundles`, or a local process with `options.local`.
    ///
    /// # Errors
    ///
    /// [`RouterBuildError`] naming the server whose TLS configuration cannot be made.
    pub fn new(
        catalog: Catalog,
        options: RouterOptions,
        audit: Arc<AuditLog>,
    ) -> Result<Router, RouterBuildError> {
        Router::build(catalog, options, audit, None, |_| None)
    }

    /// The router for `catalog` that replaces this one on a reload, with this one's options,
    /// audit log and metrics. An upstream whose server binding is unchanged (the same URL and
    /// anchors, or the same command, environment and entrypoint digests) is carried over: its
    /// connections, verified against those anchors, its session and its local process stay in
    /// use. Every other server gets a new upstream, so connections made under anchors that
    /// changed are never reused (docs/design.md §8). Listings are not carried over: every
    /// definition is checked again under the new catalog.
    ///
    /// Once this router is out of use, [`shutdown_unshared`](Self::shutdown_unshared) stops
    /// the local servers the successor did not carry over.
    ///
    /// # Errors
    ///
    /// [`RouterBuildError`], as [`Router::new`].
    pub fn successor(&self, catalog: Catalog) -> Result<Router, RouterBuildError> {
        Router::build(
            catalog,
            self.options.clone(),
            Arc::clone(&self.audit),
            self.metrics.clone(),
            |binding| {
                self.routes
                    .iter()
                    .find(|route| route.binding == *binding)
                    .map(|route| Arc::clone(&route.upstream))
            },
        )
    }

    /// The router of `catalog`; `carried` gives the upstream of an earlier router for a server
    /// binding it had too.
    fn build(
        catalog: Catalog,
        options: RouterOptions,
        audit: Arc<AuditLog>,
        metrics: Option<Arc<Metrics>>,
        carried: impl Fn(&ServerBinding) -> Option<Arc<Upstream>>,
    ) -> Result<Router, RouterBuildError> {
        let (upstreams, route_of_tool) = upstreams::build_upstreams(
            &catalog,
            &options.roots,
            &options.bundles,
            &options.upstream,
            &options.local,
            carried,
        )?;
        // A listing ends within its deadline; a per-call check may wait for the one in flight
        // and then its own.
        let wait_limit = options.upstream.listing_deadline().saturating_mul(2);
        let routes: Vec<Route> = upstreams
            .into_iter()
            .map(|(binding, upstream)| Route {
                url: Arc::from(upstream.url()),
                upstream,
                binding,
                definitions: LiveDefinitions::with_wait_limit(options.freshness, wait_limit),
            })
            .collect();
        let route_of_tool = route_of_tool
            .into_iter()
            .filter_map(|(tool, route)| {
                let entry = catalog.lookup(&tool)?;
                let url = &routes.get(route)?.url;
                let names = ToolRoute {
                    route,
                    tool: Arc::from(entry.tool_name()),
                    upstream_name: Arc::from(entry.upstream_name()),
                    allowed_detail: format!(
                        "approved; forwarding to {url} as {:?}",
                        entry.upstream_name()
                    ),
                };
                Some((tool, names))
            })
            .collect();
        Ok(Router {
            catalog,
            routes,
            route_of_tool,
            audit,
            metrics,
            options,
        })
    }

    /// The same router, counting its calls, stages, handshakes and listings in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Router {
        self.metrics = Some(metrics);
        self
    }

    /// The catalog in force.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The audit log decisions go to.
    pub fn audit(&self) -> &Arc<AuditLog> {
        &self.audit
    }

    /// The upstreams, one per distinct server of the catalog.
    pub fn upstreams(&self) -> Vec<&Upstream> {
        self.routes.iter().map(|route| &*route.upstream).collect()
    }

    /// Stops every local server's process (stdin closed, SIGTERM, SIGKILL, each after its
    /// grace period) and starts no other; network upstreams are left alone.
    pub async fn shutdown(&self) {
        for route in &self.routes {
            route.upstream.shutdown().await;
        }
    }

    /// Stops the local servers of this router that no other router holds (a
    /// [`successor`](Self::successor) keeps the ones it carried over running), as
    /// [`shutdown`](Self::shutdown) stops them; network upstreams are left alone.
    ///
    /// Call it once this router is out of use, then drop it, one retired router at a time: a
    /// router retired meanwhile could otherwise still hold a server that neither stops.
    pub async fn shutdown_unshared(&self) {
        for route in &self.routes {
            if Arc::strong_count(&route.upstream) == 1 {
                route.upstream.shutdown().await;
            }
        }
    }

    /// The tools `principal` may call over `protocol`, as [`listed_tools`](Self::listed_tools)
    /// lists them: all of them without a policy.
    pub fn listed_tools_for(&self, principal: &Principal, protocol: &str) -> Option<Vec<Value>> {
        let policy = self.options.policy.as_ref()?;
        let allowed: std::collections::HashSet<&str> = self
            .catalog
            .entries()
            .iter()
            .filter(|entry| policy.decide(principal, entry, protocol).allowed)
            .map(|entry| entry.tool_name())
            .collect();
        Some(
            self.listed_tools()
                .into_iter()
                .filter(|tool| {
                    tool.get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|name| allowed.contains(name))
                })
                .collect(),
        )
    }

    /// The tools clients see: each entry's approved definition, complete, with `"name"` set to
    /// the catalog `tool_name`, in catalog order.
    pub fn listed_tools(&self) -> Vec<Value> {
        self.catalog
            .entries()
            .iter()
            .map(|entry| {
                let mut definition = entry.approved_definition().clone();
                if let Value::Object(object) = &mut definition {
                    object.insert("name".into(), Value::from(entry.tool_name()));
                }
                definition
            })
            .collect()
    }

    /// Runs one `tools/call` through the steps of the module docs.
    ///
    /// # Errors
    ///
    /// [`CallFailure::Denied`] with the recorded denial, or [`CallFailure::AuditUnavailable`]
    /// when no decision could be recorded.
    ///
    /// The result is the upstream's, byte for byte (docs/design.md §5, "Pass-through data is not
    /// rewritten").
    pub async fn call_tool(&self, call: ToolCall) -> Result<RawJson, CallFailure> {
        let started = Instant::now();
        // The label is the catalog's own name, never the client's text for a tool it lacks.
        let (tool, upstream) = match self.route(&call.tool) {
            Some((entry, route, _)) => (entry.tool_name(), route.upstream.url()),
            None => (metrics::UNKNOWN_TOOL, ""),
        };
        let result = self.call_tool_unmeasured(call).await;
        let decision = match &result {
            Ok(_) => "allowed",
            Err(CallFailure::Denied(denial)) => denial.reason.as_str(),
            Err(CallFailure::AuditUnavailable(_)) => metrics::AUDIT_UNAVAILABLE,
        };
        // One line per call, its fields as members under `--log-format json`.
        tracing::info!(
            tool = %tool,
            upstream,
            decision,
            latency_ms = started.elapsed().as_secs_f64() * 1000.0,
            "tools/call"
        );
        if let Some(metrics) = &self.metrics {
            metrics.count_call(tool, decision);
        }
        result
    }

    fn observe(&self, stage: Stage, started: Instant) {
        if let Some(metrics) = &self.metrics {
            metrics.observe_stage(stage, started.elapsed());
        }
    }

    fn count_handshakes(&self, upstream: &Upstream, failure: Option<&UpstreamError>) {
        if let Some(metrics) = &self.metrics {
            count_handshakes(metrics, upstream, failure);
        }
    }

    async fn call_tool_unmeasured(&self, call: ToolCall) -> Result<RawJson, CallFailure> {
        let started = Instant::now();
        let ToolCall {
            tool,
            arguments: call_arguments,
            meta,
            session_id,
            request_id,
            principal,
            protocol,
        } = call;
        let arguments_value = call_arguments;
        // Arguments without an RFC 8785 form (an integer beyond 2^53, say) are still carried;
        // their entry says why it holds no digest.
        let arguments = arguments_value
            .as_ref()
            .map(|arguments| self.audit.carried_arguments_digest(arguments));
        let routed = self.route(&tool);
        let tool_text = routed.map_or_else(
            || Arc::from(tool.as_str()),
            |(_, _, names)| names.tool.clone(),
        );
        let base = CallRecord {
            arguments,
            session_id,
            request_id,
            ..CallRecord::of_principal(tool_text, Decision::Allowed, principal.to_string())
        };

        let Some((entry, route, names)) = routed else {
            let denial = Denial {
                reason: DenialReason::ToolNotInCatalog,
                tool: tool.clone(),
                upstream: None,
                expected_definition: None,
                observed_definition: None,
                message: format!(
                    "tool {:?} is not in the catalog: the gateway forwards only approved tools \
                     (see tools/list); an operator must add it to the catalog to allow it",
                    shorten(&tool)
                ),
            };
            return Err(self.deny(denial, base, None, started).await);
        };
        let (upstream, definitions) = (&route.upstream, &route.definitions);
        let expected = entry.definition_hash();
        let decision = self
            .options
            .policy
            .as_ref()
            .map(|policy| policy.decide(&principal, entry, protocol.as_deref().unwrap_or("")));
        let base = CallRecord {
            policies: decision.as_ref().map(|decision| decision.policies.clone()),
            upstream_name: Some(names.upstream_name.clone()),
            upstream_url: Some(route.url.clone()),
            expected_definition: Some(expected),
            ..base
        };
        if let Some(decision) = decision.filter(|decision| !decision.allowed) {
            let deciding = match decision.policies.as_slice() {
                [] => "no policy permits it".to_owned(),
                ids => format!("forbidden by {}", ids.join(", ")),
            };
            let denial = Denial {
                reason: DenialReason::NotAuthorized,
                tool: tool.clone(),
                upstream: Some(upstream.url().to_owned()),
                expected_definition: None,
                observed_definition: None,
                message: format!(
                    "{principal} may not call {:?}: {deciding} (--policy)",
                    shorten(&tool)
                ),
            };
            return Err(self.deny(denial, base, None, started).await);
        }

        // A call that did not reach the tool on its checked path (the connection closed before
        // it was written, or the upstream had lost the session) goes once more, on a new path
        // with a new check; it is never sent again unchecked.
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self
                .check_and_forward(
                    entry,
                    names,
                    upstream,
                    definitions,
                    &base,
                    &arguments_value,
                    &meta,
                    started,
                )
                .await
            {
                Err(Forward::Again(error)) if attempt == 1 => {
                    tracing::info!(tool = %tool, upstream = %upstream.url(), "{error}; checking again on a new path");
                }
                Err(Forward::Again(error)) => {
                    let denial = upstream_denial(entry, upstream, &error, "calling the tool");
                    return Err(self.deny(denial, base, None, started).await);
                }
                Err(Forward::Failed(failure)) => return Err(failure),
                Ok(result) => return Ok(result),
            }
        }
    }

    /// Steps 2 to 5 for one path: the connection and negotiation first (a reconnect found
    /// there invalidates a `max-age` listing before the decision), the definition check, the
    /// decision recorded with the identity of the connection that will carry the call, and the
    /// call on that connection.
    #[allow(clippy::too_many_arguments)]
    async fn check_and_forward(
        &self,
        entry: &CatalogEntry,
        names: &ToolRoute,
        upstream: &Upstream,
        definitions: &LiveDefinitions<UpstreamError>,
        base: &CallRecord,
        arguments: &Option<RawJson>,
        meta: &Option<Map<String, Value>>,
        started: Instant,
    ) -> Result<RawJson, Forward> {
        let tool = entry.tool_name();
        let expected = entry.definition_hash();
        // Step 2: a connection through the pinning verifier, and the protocol state.
        let path = upstream.call_path().await;
        self.count_handshakes(upstream, path.as_ref().err());
        let path = match path {
            Ok(path) => path,
            Err(error) => {
                let denial = upstream_denial(entry, upstream, &error, "connecting");
                let failure = self.deny(denial, base.clone(), identity_of(&error), started);
                return Err(Forward::Failed(failure.await));
            }
        };
        let identity = match &path {
            CallPath::Network(path) => path.audit_identity().cloned(),
            // What a local server runs is known once it is started, for the listing.
            CallPath::Local => None,
        };

        // Step 3: the live definition compared with the approved digest, under the generation
        // read after the path was established.
        let generation = *upstream.invalidations().borrow();
        let client = upstream.clone();
        let listing_metrics = self.metrics.clone();
        let pages = Arc::clone(definitions.page_memo());
        let fetch = move || async move {
            let listed = client.list_tool_definitions(&pages).await;
            if let Some(metrics) = listing_metrics {
                let result = match &listed {
                    Ok(_) => "ok",
                    Err(error) => error.reason().as_str(),
                };
                metrics.count_listing(client.url(), result);
                count_handshakes(&metrics, &client, listed.as_ref().err());
            }
            listed
        };
        let check_started = Instant::now();
        let checked = definitions
            .check(entry.upstream_name(), &expected, generation, fetch)
            .await;
        self.observe(Stage::DefinitionCheck, check_started);
        let observed = match checked {
            Ok(verified) => verified.digest(),
            Err(DefinitionCheckError::Fetch(error)) => {
                let denial = upstream_denial(entry, upstream, &error, "listing its tools");
                let identity = identity_of(&error)
                    .or(identity)
                    .or_else(|| local_identity(upstream));
                let failure = self.deny(denial, base.clone(), identity, started);
                return Err(Forward::Failed(failure.await));
            }
            Err(error) => {
                let reason = error
                    .denial_reason()
                    .unwrap_or(DenialReason::DefinitionMismatch);
                let observed = error.observed();
                let denial = Denial {
                    reason,
                    tool: tool.to_owned(),
                    upstream: Some(upstream.url().to_owned()),
                    expected_definition: Some(expected),
                    observed_definition: observed,
                    message: format!(
                        "tool {:?} denied: {} on {} (upstream tool {:?}): {error}",
                        tool,
                        reason.as_str(),
                        upstream.url(),
                        entry.upstream_name(),
                    ),
                };
                let base = CallRecord {
                    observed_definition: observed,
                    ..base.clone()
                };
                let identity = identity.or_else(|| local_identity(upstream));
                let failure = self.deny(denial, base, identity, started);
                return Err(Forward::Failed(failure.await));
            }
        };
        let identity = identity.or_else(|| local_identity(upstream));

        // Step 4: the decision is durable before anything is forwarded.
        let allowed = CallRecord {
            observed_definition: Some(observed),
            identity: identity.clone(),
            detail: names.allowed_detail.clone(),
            latency: started.elapsed(),
            ..base.clone()
        };
        self.record(allowed, tool)
            .await
            .map_err(|failure| Forward::Failed(failure.into()))?;

        // Step 5: forward on the checked path, and return the result exactly as received.
        let forward_started = Instant::now();
        let forwarded = upstream
            .call_tool_on(
                path,
                entry.upstream_name(),
                arguments.clone(),
                meta.as_ref(),
                generation,
            )
            .await;
        self.observe(Stage::Upstream, forward_started);
        match forwarded {
            Ok(result) => Ok(result),
            Err(
                error @ (UpstreamError::CallNotSent { .. } | UpstreamError::SessionLost { .. }),
            ) => Err(Forward::Again(error)),
            Err(error) => {
                let mut denial = upstream_denial(entry, upstream, &error, "calling the tool");
                denial.observed_definition = Some(observed);
                let base = CallRecord {
                    observed_definition: Some(observed),
                    ..base.clone()
                };
                let failure = self.deny(denial, base, identity, started);
                Err(Forward::Failed(failure.await))
            }
        }
    }

    fn route(&self, tool: &str) -> Option<(&CatalogEntry, &Route, &ToolRoute)> {
        let entry = self.catalog.lookup(tool)?;
        let names = self.route_of_tool.get(tool)?;
        let route = self.routes.get(names.route)?;
        Some((entry, route, names))
    }

    async fn record(&self, record: CallRecord, tool: &str) -> Result<(), AuditUnavailable> {
        let record_started = Instant::now();
        let recorded = self.audit.record(record).await;
        self.observe(Stage::Audit, record_started);
        match recorded {
            Ok(_) => Ok(()),
            Err(error) => {
                tracing::error!("audit log failure: {error}");
                Err(AuditUnavailable {
                    tool: tool.to_owned(),
                    detail: error.to_string(),
                })
            }
        }
    }

    /// Records a denial and returns it (or the audit failure that replaced it).
    async fn deny(
        &self,
        denial: Denial,
        base: CallRecord,
        identity: Option<Arc<AuditIdentity>>,
        started: Instant,
    ) -> CallFailure {
        tracing::info!(tool = %denial.tool, reason = denial.reason.as_str(), "denied: {}", denial.message);
        let record = CallRecord {
            decision: Decision::Denied(denial.reason),
            detail: denial.message.clone(),
            identity: identity.or(base.identity.clone()),
            latency: started.elapsed(),
            ..base
        };
        match self.record(record, &denial.tool).await {
            Ok(()) => CallFailure::Denied(denial),
            Err(failure) => CallFailure::AuditUnavailable(failure),
        }
    }
}

/// Counts the handshakes a network upstream's client made, and `failure` when it is one of a
/// connection (refused, TLS, or the pinned identity): a handshake is made for a call's path or
/// for a listing, whichever needs a connection first.
fn count_handshakes(metrics: &Metrics, upstream: &Upstream, failure: Option<&UpstreamError>) {
    let Some(client) = upstream.network() else {
        return;
    };
    metrics.count_handshakes(upstream.url(), client.take_connections_made());
    if let Some(
        error @ (UpstreamError::Identity { .. }
        | UpstreamError::Connect { .. }
        | UpstreamError::Tls { .. }),
    ) = failure
    {
        metrics.count_failed_handshake(upstream.url(), error.reason().as_str());
    }
}

/// How one attempt of a call ended when it returned no result.
enum Forward {
    /// The call did not reach the tool on its checked path: its connection closed before it
    /// was written, or the upstream had lost its session (HTTP 404).
    Again(UpstreamError),
    /// A recorded denial, or an audit failure.
    Failed(CallFailure),
}

/// What a local server presents: the digests of its entrypoint files, verified before its
/// process started; `None` for a network upstream (its connection says what it presented).
fn local_identity(upstream: &Upstream) -> Option<Arc<AuditIdentity>> {
    let verified = upstream.local()?.verified_entrypoints()?;
    Some(Arc::new(AuditIdentity {
        fingerprints: verified
            .digests()
            .iter()
            .map(|(_, digest)| digest.to_string())
            .collect(),
        ..AuditIdentity::default()
    }))
}

/// The denial for an upstream failure while `doing` (identity, unavailable, or error).
fn upstream_denial(
    entry: &CatalogEntry,
    upstream: &Upstream,
    error: &UpstreamError,
    doing: &str,
) -> Denial {
    let reason = error.reason();
    let advice = match reason {
        DenialReason::IdentityMismatch if upstream.local().is_some() => "nothing was started",
        DenialReason::IdentityMismatch => "nothing was sent to it",
        DenialReason::UpstreamUnavailable => {
            "check that the upstream runs and is reachable, then retry"
        }
        _ => "the upstream's answer was not usable; check the upstream's logs",
    };
    Denial {
        reason,
        tool: entry.tool_name().to_owned(),
        upstream: Some(upstream.url().to_owned()),
        expected_definition: Some(entry.definition_hash()),
        observed_definition: None,
        message: format!(
            "tool {:?} denied: {} while {doing}: {error}; {advice}",
            entry.tool_name(),
            reason.as_str(),
        ),
    }
}

/// What the upstream presented, when the failure is an identity mismatch that says so.
/// What a refused upstream presented, as far as its identity error says.
fn identity_of(error: &UpstreamError) -> Option<Arc<AuditIdentity>> {
    let spiffe = |id: String| {
        Some(AuditIdentity {
            fingerprints: Vec::new(),
            spiffe_id: Some(id),
            ..AuditIdentity::default()
        })
    };
    let identity = match error.identity_error()? {
        IdentityError::PinMismatch { presented, .. } => Some(AuditIdentity {
            fingerprints: vec![presented.to_string()],
            ..AuditIdentity::default()
        }),
        IdentityError::SpiffeIdMismatch { presented, .. } => spiffe(presented.to_string()),
        IdentityError::SvidIsCa { presented } => spiffe(presented.to_string()),
        IdentityError::SvidInvalidId { presented, .. } => spiffe(presented.clone()),
        IdentityError::EntrypointMismatch { observed, .. } => Some(AuditIdentity {
            fingerprints: vec![observed.to_string()],
            ..AuditIdentity::default()
        }),
        _ => None,
    };
    identity.map(Arc::new)
}

fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(200).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}
