//! A future that, when its inner future wakes itself while being polled, polls it again at once
//! instead of going back to the scheduler.
//!
//! Why: hyper serves a connection and runs its service in one task, and hands the request body
//! from one to the other through a channel whose every hand-off wakes the other side, here the
//! same task. Tokio's multi-threaded scheduler treats a task woken during its own poll as one
//! that yields: it queues it behind the others and wakes an idle worker to share the work. At one
//! client that was, for each call, a futex wake of the other worker, which found nothing to do
//! and parked again (BENCHMARKS.md, "System calls and wake-ups per call"). Polling again at once is what
//! the scheduler would do next on this thread anyway, without the other thread's wake-up.
//!
//! A wake from anywhere else (the I/O driver, another task) while the inner future is not being
//! polled goes to the task's own waker as before. A future that keeps waking itself (a deliberate
//! yield, an exhausted cooperative budget) is polled at most [`REPOLLS`] times in a row; then
//! the task yields to the scheduler as asked.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

/// How many polls in a row one poll of the task may give its inner future: enough for hyper's
/// hand-offs of one request, few enough that a future that yields on purpose still yields soon.
const REPOLLS: usize = 4;

/// The inner future is not being polled: a wake goes to the task.
const IDLE: u8 = 0;
/// The inner future is being polled: a wake is noted, and it is polled again.
const POLLING: u8 = 1;
/// The inner future woke itself (or was woken) during this poll.
const WOKEN_WHILE_POLLING: u8 = 2;

/// `future`, with its self-wakes turned into immediate polls (module docs).
pub(crate) fn absorbing_self_wakes<F: Future + Unpin>(future: F) -> AbsorbSelfWakes<F> {
    let wake = Arc::new(WakeState {
        state: AtomicU8::new(IDLE),
        task: Mutex::new(None),
    });
    AbsorbSelfWakes {
        future,
        waker: Waker::from(Arc::clone(&wake)),
        wake,
    }
}

/// See [`absorbing_self_wakes`].
#[derive(Debug)]
pub(crate) struct AbsorbSelfWakes<F> {
    future: F,
    wake: Arc<WakeState>,
    /// The waker the inner future sees: made once, so that it stays the same waker
    /// (`Waker::will_wake`) for every poll, as the task's own would.
    waker: Waker,
}

#[derive(Debug)]
struct WakeState {
    state: AtomicU8,
    /// The waker of the task that last polled, for wakes that come while it is not polling.
    task: Mutex<Option<Waker>>,
}

impl Wake for WakeState {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        match self.state.compare_exchange(
            POLLING,
            WOKEN_WHILE_POLLING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // Noted: the poll in progress polls again.
            Ok(_) => {}
            Err(WOKEN_WHILE_POLLING) => {}
            Err(_) => {
                let task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(task) = task.as_ref() {
                    task.wake_by_ref();
                }
            }
        }
    }
}

impl<F: Future + Unpin> Future for AbsorbSelfWakes<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        {
            let mut task = this
                .wake
                .task
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !task.as_ref().is_some_and(|task| task.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        let mut inner = Context::from_waker(&this.waker);
        for _ in 0..REPOLLS {
            this.wake.state.store(POLLING, Ordering::Release);
            if let Poll::Ready(output) = Pin::new(&mut this.future).poll(&mut inner) {
                this.wake.state.store(IDLE, Ordering::Release);
                return Poll::Ready(output);
            }
            if this
                .wake
                .state
                .compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // Nothing woke it: the wake it waits for will reach the task's waker.
                return Poll::Pending;
            }
        }
        // Woken during every poll: yield to the scheduler, which polls the task again.
        this.wake.state.store(IDLE, Ordering::Release);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// Counts the wakes of a task.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Pending `self_wakes` times, each time waking itself, then ready with its poll count.
    struct WakesItself {
        self_wakes: usize,
        polls: usize,
        waker: Option<Waker>,
    }

    impl WakesItself {
        fn new(self_wakes: usize) -> WakesItself {
            WakesItself {
                self_wakes,
                polls: 0,
                waker: None,
            }
        }
    }

    impl Future for WakesItself {
        type Output = usize;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            self.waker = Some(cx.waker().clone());
            if self.polls > self.self_wakes {
                return Poll::Ready(self.polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    fn poll_once<F: Future + Unpin>(future: &mut F, task: &Arc<Wakes>) -> Poll<F::Output> {
        let waker = Waker::from(Arc::clone(task));
        Pin::new(future).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_self_wake_is_a_poll_again_not_a_wake_of_the_task() {
        let task = Arc::new(Wakes::default());
        let mut future = absorbing_self_wakes(WakesItself::new(1));
        assert_eq!(poll_once(&mut future, &task), Poll::Ready(2));
        assert_eq!(task.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_future_that_keeps_waking_itself_still_yields_to_the_scheduler() {
        let task = Arc::new(Wakes::default());
        let mut future = absorbing_self_wakes(WakesItself::new(REPOLLS + 1));
        assert_eq!(poll_once(&mut future, &task), Poll::Pending);
        assert_eq!(future.future.polls, REPOLLS);
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        // The scheduler polls it again: the rest of its self-wakes, then its end.
        assert_eq!(poll_once(&mut future, &task), Poll::Ready(REPOLLS + 2));
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_wake_between_polls_reaches_the_task_that_polled_last() {
        let first = Arc::new(Wakes::default());
        let second = Arc::new(Wakes::default());
        let mut future = absorbing_self_wakes(std::future::pending::<()>());
        assert_eq!(poll_once(&mut future, &first), Poll::Pending);
        future.waker.wake_by_ref();
        assert_eq!(first.0.load(Ordering::SeqCst), 1);
        // Moved to another task (a waker that is not the same): wakes go there now.
        assert_eq!(poll_once(&mut future, &second), Poll::Pending);
        let by_value = future.waker.clone();
        by_value.wake();
        assert_eq!(first.0.load(Ordering::SeqCst), 1);
        assert_eq!(second.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_inner_future_sees_one_waker_for_every_poll() {
        let task = Arc::new(Wakes::default());
        let mut future = absorbing_self_wakes(WakesItself::new(2));
        assert_eq!(poll_once(&mut future, &task), Poll::Ready(3));
        let seen = future.future.waker.clone().unwrap();
        assert!(seen.will_wake(&future.waker));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wake_from_another_thread_during_a_poll_is_not_lost() {
        // The inner future is woken from another thread while it is being polled; whichever
        // way the race goes, the wake is either a poll again or a wake of the task, never lost.
        for _ in 0..200 {
            let (sender, receiver) = tokio::sync::oneshot::channel::<u32>();
            let waiting = tokio::spawn(absorbing_self_wakes(receiver));
            let sending = tokio::spawn(async move { sender.send(7) });
            sending.await.unwrap().unwrap();
            let received = tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
                .await
                .expect("a wake was lost: the receiver was never polled again");
            assert_eq!(received.unwrap().unwrap(), 7);
        }
    }
}
