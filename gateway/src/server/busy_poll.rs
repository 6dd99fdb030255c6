//! Busy polling: for a while after each request, one task keeps a worker of the runtime polling
//! for I/O instead of sleeping (`ServerOptions::busy_poll`, `toolgate serve --busy-poll`).
//!
//! Why: a worker with nothing to do sleeps in `epoll_wait`, and whatever comes next (the
//! client's next request, the upstream's answer) must wake it. On a virtual machine whose idle
//! vCPUs halt at once (guest halt polling off), that wake-up goes through the hypervisor and
//! costs tens of microseconds, paid by the sender inside its `write` and again before the
//! worker runs; a call through the gateway waits for two of them that a direct call does not
//! (BENCHMARKS.md, "Busy polling"). While this task spins, the worker never sleeps: data that
//! arrives finds no sleeper to wake, and the next non-blocking poll sees it.
//!
//! How: the task yields in a loop. Tokio runs a yielded task again only after its worker has
//! polled the I/O driver without blocking, so each turn is one `epoll_wait` with a zero
//! timeout, after every ready task has run. Once no request has started for the window, the
//! task waits for the next request, and the workers sleep as they would without it.
//!
//! The price is CPU: one worker stays busy through each window, on a machine whose other
//! processes then have one CPU fewer. It keeps one worker awake, so it pairs with one worker
//! thread (`--worker-threads 1`); with more, the others still sleep and are woken.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The longest window accepted: past a second, spinning saves nothing a sleep would not.
pub const MAX_BUSY_POLL: Duration = Duration::from_secs(1);

/// Requests as the busy-polling task sees them: a count it watches while it spins, and a
/// notification for when it waits; and how long it spins after one.
#[derive(Debug)]
pub(crate) struct Activity {
    window: Duration,
    requests: AtomicU64,
    /// The task is waiting for a request (not spinning).
    waiting: AtomicBool,
    next_request: Notify,
}

impl Activity {
    /// Nothing counted yet, for a task that spins for `window` after each request.
    pub(crate) fn new(window: Duration) -> Activity {
        Activity {
            window,
            requests: AtomicU64::new(0),
            waiting: AtomicBool::new(false),
            next_request: Notify::new(),
        }
    }

    /// A request started: the window starts again, and a waiting task spins again.
    pub(crate) fn request_started(&self) {
        // Sequentially consistent with the task's `waiting` store and its second look at the
        // count: either this sees it waiting and notifies, or the task sees the new count.
        self.requests.fetch_add(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) {
            self.next_request.notify_waiters();
        }
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    /// Waits until a request starts after `seen` requests.
    async fn wait_for_request(&self, seen: u64) {
        let notified = self.next_request.notified();
        tokio::pin!(notified);
        // Registered before the count is looked at again, so a request in between notifies it.
        notified.as_mut().enable();
        self.waiting.store(true, Ordering::SeqCst);
        if self.requests() == seen {
            notified.await;
        }
        self.waiting.store(false, Ordering::SeqCst);
    }
}

/// The busy-polling task of the runtime it was started on, for as long as it is held: dropping
/// it ends the task.
#[derive(Debug)]
pub(crate) struct BusyPoll(Option<JoinHandle<()>>);

impl BusyPoll {
    /// Starts the task on the current Tokio runtime, spinning for the activity's window after
    /// each request it counts. Outside a runtime nothing starts.
    pub(crate) fn start(activity: Arc<Activity>) -> BusyPoll {
        // Counted now, not when the task first runs: a request in between makes it spin.
        let seen = activity.requests();
        let task = tokio::runtime::Handle::try_current()
            .ok()
            .map(|runtime| runtime.spawn(spin(activity, seen)));
        BusyPoll(task)
    }
}

impl Drop for BusyPoll {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// Waits for a request after the `seen` first, spins until none has started for the window,
/// waits again, and so on.
async fn spin(activity: Arc<Activity>, mut seen: u64) {
    activity.wait_for_request(seen).await;
    loop {
        seen = activity.requests();
        let mut last_request = Instant::now();
        while last_request.elapsed() < activity.window {
            tokio::task::yield_now().await;
            let requests = activity.requests();
            if requests != seen {
                seen = requests;
                last_request = Instant::now();
            }
        }
        activity.wait_for_request(seen).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_millis(40);

    /// Yields until `done` holds (the busy-polling task runs in between), at most ten seconds.
    async fn yield_until(mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(10), "never happened");
            tokio::task::yield_now().await;
        }
    }

    /// Yields `turns` times, so that the busy-polling task runs in between.
    async fn let_it_run(turns: u32) {
        for _ in 0..turns {
            tokio::task::yield_now().await;
        }
    }

    fn is_waiting(activity: &Activity) -> bool {
        activity.waiting.load(Ordering::SeqCst)
    }

    /// Before any request the task waits; a request makes it spin, and it spins for the whole
    /// window after the last request (never less), then waits again; the next request makes it
    /// spin again.
    #[tokio::test(flavor = "current_thread")]
    async fn spins_for_the_window_after_each_request_then_waits() {
        let activity = Arc::new(Activity::new(WINDOW));
        let _busy = BusyPoll::start(activity.clone());
        let_it_run(3).await;
        assert!(is_waiting(&activity), "waits before any request");

        let requested = Instant::now();
        activity.request_started();
        let_it_run(3).await;
        assert!(!is_waiting(&activity), "spins after a request");
        yield_until(|| is_waiting(&activity)).await;
        let spun = requested.elapsed();
        assert!(spun >= WINDOW, "stopped {spun:?} after the request");

        // A request halfway through the window starts it again.
        activity.request_started();
        let started = Instant::now();
        let_it_run(3).await;
        assert!(!is_waiting(&activity), "spins after the next request");
        yield_until(|| started.elapsed() >= WINDOW / 2).await;
        assert!(!is_waiting(&activity), "still within the window");
        let restarted = Instant::now();
        activity.request_started();
        yield_until(|| is_waiting(&activity)).await;
        let spun = restarted.elapsed();
        assert!(spun >= WINDOW, "stopped {spun:?} after the last request");
    }

    /// Dropping the handle ends the task, spinning or not; outside a runtime nothing starts.
    #[tokio::test(flavor = "current_thread")]
    async fn dropping_the_handle_ends_the_task() {
        let activity = Arc::new(Activity::new(Duration::from_secs(60)));
        let busy = BusyPoll::start(activity.clone());
        activity.request_started();
        let_it_run(3).await;
        assert!(!is_waiting(&activity), "spins");
        let task = busy.0.as_ref().map(JoinHandle::abort_handle);
        drop(busy);
        let_it_run(3).await;
        assert_eq!(task.map(|task| task.is_finished()), Some(true));
        // Only the test's own reference is left once the task is gone.
        assert_eq!(Arc::strong_count(&activity), 1);

        let outside =
            std::thread::spawn(|| BusyPoll::start(Arc::new(Activity::new(WINDOW))).0.is_none());
        assert_eq!(outside.join().ok(), Some(true));
    }
}
