//! A timer that keeps the Tokio time driver's next wake-up near, so that arming a request's
//! timeouts does not interrupt it.
//!
//! Tokio's time driver parks its thread until the earliest pending timer. Arming a timer that
//! expires before that wake-up (or any timer when none is pending) interrupts the park: a write
//! to the driver's eventfd, and an `epoll_wait` that returns at once, only to be called again.
//! Every call arms timeouts (the upstream exchange's, the request body's, the header timeout of
//! the connection's next request), and between calls the earliest pending timer may be later
//! than them or absent: at one client that was one eventfd write and one extra `epoll_wait` per
//! call in the gateway's threads (BENCHMARKS.md, "System calls and wake-ups per call"). A sleep renewed
//! every [`PERIOD`] keeps a wake-up at most that far away, so a timeout of [`PERIOD`] or longer
//! (every default one) is armed without an interruption. Its price is one wake-up per
//! [`PERIOD`] while the gateway serves. Only the cost changes, never when a timeout fires.

use std::time::Duration;

use tokio::task::JoinHandle;

/// How far ahead the anchor keeps a wake-up: shorter than every default timeout of the gateway
/// (the header timeout is 10 s), long enough that its own wake-ups cost nothing measurable.
const PERIOD: Duration = Duration::from_secs(1);

/// The anchor of the runtime it was started on, for as long as it is held: dropping it ends
/// the anchor's task.
#[derive(Debug)]
pub(crate) struct WakeAnchor(Option<JoinHandle<()>>);

impl WakeAnchor {
    /// Starts the anchor on the current Tokio runtime; outside one (an executor of another
    /// kind polls the serving future) there is no time driver to keep near, and nothing starts.
    pub(crate) fn start() -> WakeAnchor {
        let task = tokio::runtime::Handle::try_current().ok().map(|runtime| {
            runtime.spawn(async {
                let mut ticks = tokio::time::interval(PERIOD);
                // A late tick (a busy runtime) must not be followed by a burst of catch-up ones.
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                }
            })
        });
        WakeAnchor(task)
    }

    /// Whether the anchor's task runs (there was a runtime to start it on).
    #[cfg(test)]
    fn is_running(&self) -> bool {
        self.0.as_ref().is_some_and(|task| !task.is_finished())
    }
}

impl Drop for WakeAnchor {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn the_anchor_runs_while_held_and_ends_when_dropped() {
        let alive = || {
            tokio::runtime::Handle::current()
                .metrics()
                .num_alive_tasks()
        };
        assert_eq!(alive(), 0);
        let anchor = WakeAnchor::start();
        assert!(anchor.is_running());
        assert_eq!(alive(), 1);
        // It keeps running past its first ticks.
        tokio::time::sleep(PERIOD + Duration::from_millis(100)).await;
        assert!(anchor.is_running());
        drop(anchor);
        // An aborted task is gone once the runtime has run its cancellation.
        for _ in 0..100 {
            if alive() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(alive(), 0);
    }

    #[test]
    fn outside_a_runtime_nothing_starts_and_nothing_panics() {
        let anchor = WakeAnchor::start();
        assert!(!anchor.is_running());
        assert!(anchor.0.is_none());
        drop(anchor);
    }
}
