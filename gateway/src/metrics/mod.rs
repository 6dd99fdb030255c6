//! What `toolgate serve --metrics` reports (docs/design.md §8, docs/design.md §8): calls by tool
//! and decision, call duration by stage, upstream handshakes and listings by result, audit sync
//! time and the catalog measurement, in OpenMetrics text ([`Metrics::encode`]), plus the
//! readiness of [`Readiness`].
//!
//! Label values come from the catalog and from the gateway's own vocabulary (denial reasons,
//! stage names), never from client input: a tool name the catalog does not hold is counted
//! under [`UNKNOWN_TOOL`], so a client cannot grow the metrics without bound.

mod http;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::audit::AuditLog;

pub use self::http::serve_metrics;

/// The `tool` label of a call whose tool is not in the catalog (not a valid MCP tool name, so
/// it never collides with one).
pub const UNKNOWN_TOOL: &str = "(not in catalog)";

/// The `decision` label of a call that the audit log could not record (no decision was made).
pub const AUDIT_UNAVAILABLE: &str = "audit_unavailable";

/// The content type of [`Metrics::encode`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A stage of a `tools/call` whose duration is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// The definition check (the upstream's listing, or the cached one, compared with the
    /// approved digest).
    DefinitionCheck,
    /// The forwarded call, until the upstream's answer.
    Upstream,
    /// Recording the decision in the audit log (written and synced).
    Audit,
}

impl Stage {
    /// The `stage` label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::DefinitionCheck => "definition_check",
            Stage::Upstream => "upstream",
            Stage::Audit => "audit",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: String,
    decision: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabels {
    stage: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabels {
    upstream: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CatalogLabels {
    measurement: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds from 100 µs to about 52 s: an audit sync, a listing and a slow upstream all fit.
fn seconds_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 20))
}

/// The gateway's metrics. Cheap to share (`Arc`); every update is a few atomic operations or
/// one short lock.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: HistogramFamily<StageLabels>,
    handshakes: Family<UpstreamLabels, Counter>,
    listings: Family<UpstreamLabels, Counter>,
    audit_sync: Histogram,
    catalog: Family<CatalogLabels, Gauge>,
    reloads: Family<ResultLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric registered, all at zero, no catalog yet.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "toolgate_calls",
            "tools/call requests by catalog tool and decision (allowed or the denial reason)",
            calls.clone(),
        );
        let durations: HistogramFamily<StageLabels> =
            Family::new_with_constructor(seconds_histogram);
        registry.register(
            "toolgate_call_duration_seconds",
            "Time a tools/call spends in each stage: definition_check, upstream, audit",
            durations.clone(),
        );
        let handshakes = Family::<UpstreamLabels, Counter>::default();
        registry.register(
            "toolgate_upstream_handshakes",
            "Connections to network upstreams through the pinning verifier, by result (ok or \
             the denial reason)",
            handshakes.clone(),
        );
        let listings = Family::<UpstreamLabels, Counter>::default();
        registry.register(
            "toolgate_listings",
            "tools/list fetches from upstreams for the definition check, by result (ok or the \
             denial reason)",
            listings.clone(),
        );
        let audit_sync = seconds_histogram();
        registry.register(
            "toolgate_audit_sync_seconds",
            "Time of one audit log group commit (write and fdatasync)",
            audit_sync.clone(),
        );
        let catalog = Family::<CatalogLabels, Gauge>::default();
        registry.register(
            "toolgate_catalog_info",
            "The catalog in force: 1 for its measurement",
            catalog.clone(),
        );
        let reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "toolgate_catalog_reloads",
            "Catalog reloads (SIGHUP) by result: loaded or refused",
            reloads.clone(),
        );
        Metrics {
            registry,
            calls,
            durations,
            handshakes,
            listings,
            audit_sync,
            catalog,
            reloads,
        }
    }

    /// The OpenMetrics text of every metric, ending in `# EOF`.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    /// One call ended: `tool` is the catalog tool name (or [`UNKNOWN_TOOL`]), `decision`
    /// `allowed`, a denial reason or [`AUDIT_UNAVAILABLE`].
    pub fn count_call(&self, tool: &str, decision: &str) {
        self.calls
            .get_or_create(&CallLabels {
                tool: tool.to_owned(),
                decision: decision.to_owned(),
            })
            .inc();
    }

    /// A call spent `duration` in `stage`.
    pub fn observe_stage(&self, stage: Stage, duration: Duration) {
        self.durations
            .get_or_create(&StageLabels {
                stage: stage.as_str().to_owned(),
            })
            .observe(duration.as_secs_f64());
    }

    /// A connection to `upstream` (its catalog URL) failed with `reason`.
    pub fn count_failed_handshake(&self, upstream: &str, reason: &str) {
        self.handshakes
            .get_or_create(&UpstreamLabels {
                upstream: upstream.to_owned(),
                result: reason.to_owned(),
            })
            .inc();
    }

    /// The client of `upstream` made `new` more connections (each a full, pinned handshake),
    /// counted as `ok`.
    pub fn count_handshakes(&self, upstream: &str, new: u64) {
        if new > 0 {
            self.handshakes
                .get_or_create(&UpstreamLabels {
                    upstream: upstream.to_owned(),
                    result: "ok".to_owned(),
                })
                .inc_by(new);
        }
    }

    /// A listing of `upstream` ended with `result` (`ok` or the denial reason).
    pub fn count_listing(&self, upstream: &str, result: &str) {
        self.listings
            .get_or_create(&UpstreamLabels {
                upstream: upstream.to_owned(),
                result: result.to_owned(),
            })
            .inc();
    }

    /// One audit group commit took `duration`.
    pub fn observe_audit_sync(&self, duration: Duration) {
        self.audit_sync.observe(duration.as_secs_f64());
    }

    /// The catalog measured `measurement` is in force (the previous one no longer is).
    pub fn catalog_in_force(&self, measurement: &str) {
        self.catalog.clear();
        self.catalog
            .get_or_create(&CatalogLabels {
                measurement: measurement.to_owned(),
            })
            .set(1);
    }

    /// A catalog reload ended with `result` (`loaded` or `refused`).
    pub fn count_reload(&self, result: &str) {
        self.reloads
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }
}

/// What `/readyz` answers: ready when the catalog is loaded, the MCP listener is up and the
/// audit log can still record.
#[derive(Debug)]
pub struct Readiness {
    catalog_loaded: AtomicBool,
    listener_up: AtomicBool,
    audit: Mutex<Option<Arc<AuditLog>>>,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness::new()
    }
}

impl Readiness {
    /// Nothing ready yet.
    pub fn new() -> Readiness {
        Readiness {
            catalog_loaded: AtomicBool::new(false),
            listener_up: AtomicBool::new(false),
            audit: Mutex::new(None),
        }
    }

    /// A catalog is loaded and its router built.
    pub fn set_catalog_loaded(&self) {
        self.catalog_loaded.store(true, Ordering::Release);
    }

    /// The MCP listener is bound (or stdio is being served); `false` once it stops.
    pub fn set_listener_up(&self, up: bool) {
        self.listener_up.store(up, Ordering::Release);
    }

    /// The audit log whose health counts.
    pub fn set_audit(&self, audit: Arc<AuditLog>) {
        *self.audit.lock().unwrap_or_else(PoisonError::into_inner) = Some(audit);
    }

    /// `Ok` when ready, else every reason it is not.
    ///
    /// # Errors
    ///
    /// The reasons, one per line's worth of text.
    pub fn check(&self) -> Result<(), Vec<String>> {
        let mut reasons = Vec::new();
        if !self.catalog_loaded.load(Ordering::Acquire) {
            reasons.push("the catalog is not loaded".to_owned());
        }
        if !self.listener_up.load(Ordering::Acquire) {
            reasons.push("the MCP listener is not up".to_owned());
        }
        match &*self.audit.lock().unwrap_or_else(PoisonError::into_inner) {
            None => reasons.push("the audit log is not open".to_owned()),
            Some(audit) => {
                if let Some(failure) = audit.failure() {
                    reasons.push(format!("the audit log cannot record: {failure}"));
                }
            }
        }
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_labels_encode_as_openmetrics() {
        let metrics = Metrics::new();
        metrics.count_call("demo.echo", "allowed");
        metrics.count_call("demo.echo", "allowed");
        metrics.count_call(UNKNOWN_TOOL, "tool_not_in_catalog");
        metrics.count_handshakes("https://u.example/mcp", 3);
        metrics.count_handshakes("https://u.example/mcp", 0);
        metrics.count_handshakes("https://u.example/mcp", 1);
        metrics.catalog_in_force("sha256:aa");
        metrics.catalog_in_force("sha256:bb");
        let text = metrics.encode();
        assert!(
            text.contains("toolgate_calls_total{tool=\"demo.echo\",decision=\"allowed\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "toolgate_calls_total{tool=\"(not in catalog)\",decision=\"tool_not_in_catalog\"} 1\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "toolgate_upstream_handshakes_total{upstream=\"https://u.example/mcp\",result=\"ok\"} 4\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("toolgate_catalog_info{measurement=\"sha256:bb\"} 1\n"),
            "{text}"
        );
        assert!(!text.contains("sha256:aa"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn readiness_names_what_is_missing() {
        let readiness = Readiness::new();
        assert_eq!(
            readiness.check(),
            Err(vec![
                "the catalog is not loaded".to_owned(),
                "the MCP listener is not up".to_owned(),
                "the audit log is not open".to_owned(),
            ])
        );
    }
}
