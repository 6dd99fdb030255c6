//! The listing cache of one upstream, with one in-flight listing shared by concurrent calls.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use jcs_digest::Digest;
use tokio::sync::watch;

use crate::definition_check::freshness::Freshness;
use crate::definition_check::listed::{ListedTools, PageMemo};
use crate::definition_check::listing::{DefinitionCheckError, Listing, VerifiedDefinition};

/// What a finished listing gives every call that waited for it.
type Outcome<E> = Result<Arc<Listing>, Arc<E>>;
type OutcomeReceiver<E> = watch::Receiver<Option<Outcome<E>>>;

/// The definition checks of one upstream (docs/design.md §5, `tools/call` step 3 and "Definition
/// check freshness").
///
/// Each check compares the live definition of one tool, from the upstream's `tools/list`, with
/// its approved digest. Listings are shared:
///
/// - **Single flight.** Concurrent checks share one in-flight listing. In
///   [`Freshness::PerCall`] mode a check joins only a listing that starts after it arrived;
///   checks that arrive while a listing is in flight wait for the next one, which all of them
///   share. So at most two listings per upstream are ever pending, whatever the load.
/// - **Reuse.** In [`Freshness::MaxAge`] mode a finished listing younger than the age is
///   reused, unless the upstream's invalidation generation (bumped by
///   `notifications/tools/list_changed` and by a reconnect) has changed since it started.
/// - **Per tool.** A listing's tools are digested one by one (from the page's bytes as they
///   are read, or, for definitions given as values, when a check first needs them) and reused
///   by every check of the listing; a drifted tool is refused while the upstream's other tools
///   keep matching.
///
/// Failed listings are never reused. A listing that others may wait for runs in its own task,
/// so a caller that goes away does not cancel it; in [`Freshness::PerCall`] mode, a check that
/// finds no listing in flight runs its own on its own task (later checks wait for the next
/// one, not for this one, so only this check depends on it). Every check waits for its listing
/// within a deadline ([`with_wait_limit`](Self::with_wait_limit)). `E` is the fetch's error type.
pub struct LiveDefinitions<E> {
    freshness: Freshness,
    /// How long one check waits for the listing it needs (its own or a shared one).
    wait_limit: Duration,
    state: Arc<Mutex<State<E>>>,
    /// The pages of this upstream's latest listings, for its fetches ([`Self::page_memo`]).
    pages: Arc<PageMemo>,
}

struct State<E> {
    /// The newest listing that finished without error.
    cached: Option<Arc<Listing>>,
    /// The listing in flight (its `started_at` is `None` until its task runs).
    current: Option<Flight<E>>,
    /// Per-call mode: the listing that starts when `current` finishes.
    next: Option<Flight<E>>,
    next_id: u64,
}

struct Flight<E> {
    id: u64,
    generation: u64,
    started_at: Option<Instant>,
    outcome: OutcomeReceiver<E>,
}

impl<E> fmt::Debug for LiveDefinitions<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveDefinitions")
            .field("freshness", &self.freshness)
            .field("wait_limit", &self.wait_limit)
            .finish_non_exhaustive()
    }
}

impl<E: Send + Sync + 'static> LiveDefinitions<E> {
    /// The longest a check waits for a listing unless told otherwise
    /// ([`with_wait_limit`](Self::with_wait_limit)).
    pub const DEFAULT_WAIT_LIMIT: Duration = Duration::from_secs(60);

    /// An empty cache for one upstream; a check waits at most
    /// [`DEFAULT_WAIT_LIMIT`](Self::DEFAULT_WAIT_LIMIT) for its listing.
    pub fn new(freshness: Freshness) -> LiveDefinitions<E> {
        LiveDefinitions::with_wait_limit(freshness, Self::DEFAULT_WAIT_LIMIT)
    }

    /// An empty cache whose checks wait at most `wait_limit` for the listing they need,
    /// whether they started it or joined one in flight (docs/design.md §5: every waiter has a
    /// deadline). A listing of its own deadline `d` ends within `d`; in `per-call` mode a check
    /// may wait for the listing in flight and then the next, so `2 × d` leaves room for both.
    pub fn with_wait_limit(freshness: Freshness, wait_limit: Duration) -> LiveDefinitions<E> {
        LiveDefinitions {
            freshness,
            wait_limit,
            state: Arc::new(Mutex::new(State {
                cached: None,
                current: None,
                next: None,
                next_id: 0,
            })),
            pages: Arc::default(),
        }
    }

    /// The memo of this upstream's latest pages, for the fetch to read pages through
    /// ([`ListedTools::read_page_remembered`]): a page served again byte for byte is not read
    /// and digested again.
    pub fn page_memo(&self) -> &Arc<PageMemo> {
        &self.pages
    }

    /// The freshness this cache was made with.
    pub fn freshness(&self) -> Freshness {
        self.freshness
    }

    /// Checks that the upstream serves `upstream_name` with a definition whose digest
    /// (`trace.mcp-tool-definition.v1`) is `expected`.
    ///
    /// `generation` is the upstream's current invalidation generation (the value of
    /// `UpstreamClient::invalidations()`); a listing started under another generation is never
    /// reused. `fetch` starts one `tools/list` (every page followed: in the gateway
    /// `Upstream::list_tool_definitions`, which digests each tool from the bytes served, or
    /// definitions as values, digested here when needed) and is called only when this check
    /// has to start a listing; it runs in a task of its own, or in this check when per-call
    /// mode finds none in flight (call this inside a tokio runtime with its time driver
    /// enabled: the wait is bounded).
    ///
    /// # Errors
    ///
    /// [`DefinitionCheckError`]: a mismatch with both digests, an absent, doubled or
    /// undigestible tool, or the fetch's error.
    pub async fn check<F, Fut, T>(
        &self,
        upstream_name: &str,
        expected: &Digest,
        generation: u64,
        fetch: F,
    ) -> Result<VerifiedDefinition, DefinitionCheckError<E>>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Into<ListedTools> + Send + 'static,
    {
        let arrived = Instant::now();
        let mut inline = None;
        let mut outcome = {
            let mut state = lock(&self.state);
            match self.freshness {
                Freshness::MaxAge(max_age) => {
                    if let Some(listing) = state.cached.as_ref().filter(|listing| {
                        listing.generation == generation && listing.started_at.elapsed() < max_age
                    }) {
                        return listing.check(upstream_name, expected);
                    }
                    match &state.current {
                        Some(current) if current.generation == generation => {
                            current.outcome.clone()
                        }
                        _ => start(
                            &self.state,
                            &mut state,
                            Slot::Current,
                            generation,
                            None,
                            fetch,
                        ),
                    }
                }
                Freshness::PerCall => {
                    if let Some(next) = &state.next {
                        // It has not started yet, so it starts after this call arrived.
                        next.outcome.clone()
                    } else {
                        match &state.current {
                            Some(current)
                                if current.started_at.is_none_or(|started| started >= arrived) =>
                            {
                                current.outcome.clone()
                            }
                            Some(current) => {
                                let after = current.outcome.clone();
                                start(
                                    &self.state,
                                    &mut state,
                                    Slot::Next,
                                    generation,
                                    Some(after),
                                    fetch,
                                )
                            }
                            // No listing in flight: this check runs its own, on its own task
                            // (below, once the lock is released), rather than spawn one and wait
                            // for another task to wake it.
                            None => {
                                let (outcome, flight) =
                                    register(&self.state, &mut state, Slot::Current, generation);
                                inline = Some((flight, fetch));
                                outcome
                            }
                        }
                    }
                }
            }
        };
        if let Some(((guard, sender), fetch)) = inline {
            // Bounded like a wait; a listing abandoned here ends for those that joined it, and
            // the listing after it does not wait for it any longer.
            let listing = run_flight(guard, generation, None, fetch, sender);
            if tokio::time::timeout(self.wait_limit, listing)
                .await
                .is_err()
            {
                return Err(DefinitionCheckError::WaitTimeout {
                    limit: self.wait_limit,
                });
            }
        }
        let waiting = outcome.wait_for(Option::is_some);
        let Ok(finished) = tokio::time::timeout(self.wait_limit, waiting).await else {
            // The listing goes on for the others (its own deadline ends it); this check stops.
            return Err(DefinitionCheckError::WaitTimeout {
                limit: self.wait_limit,
            });
        };
        match finished.map(|finished| finished.clone()) {
            Ok(Some(Ok(listing))) => listing.check(upstream_name, expected),
            Ok(Some(Err(error))) => Err(DefinitionCheckError::Fetch(error)),
            Ok(None) | Err(_) => Err(DefinitionCheckError::Interrupted),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Current,
    Next,
}

/// Registers a new listing in `slot` and spawns its task; returns where its outcome appears.
fn start<E, F, Fut, T>(
    shared: &Arc<Mutex<State<E>>>,
    state: &mut State<E>,
    slot: Slot,
    generation: u64,
    after: Option<OutcomeReceiver<E>>,
    fetch: F,
) -> OutcomeReceiver<E>
where
    E: Send + Sync + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: Into<ListedTools> + Send + 'static,
{
    let (outcome, (guard, sender)) = register(shared, state, slot, generation);
    tokio::spawn(run_flight(guard, generation, after, fetch, sender));
    outcome
}

/// What runs one listing: the guard that forgets it and the sender of its outcome.
type FlightHandle<E> = (FlightGuard<E>, watch::Sender<Option<Outcome<E>>>);

/// Registers a new listing in `slot`; its runner must call [`run_flight`] with the handle.
fn register<E>(
    shared: &Arc<Mutex<State<E>>>,
    state: &mut State<E>,
    slot: Slot,
    generation: u64,
) -> (OutcomeReceiver<E>, FlightHandle<E>) {
    let (sender, outcome) = watch::channel(None);
    let id = state.next_id;
    state.next_id += 1;
    let flight = Flight {
        id,
        generation,
        started_at: None,
        outcome: outcome.clone(),
    };
    match slot {
        Slot::Current => state.current = Some(flight),
        Slot::Next => state.next = Some(flight),
    }
    let guard = FlightGuard {
        state: Arc::clone(shared),
        id,
    };
    (outcome, (guard, sender))
}

/// The task of one listing: wait for the listing before it (per-call mode), mark the start,
/// fetch, digest, publish.
async fn run_flight<E, F, Fut, T>(
    guard: FlightGuard<E>,
    generation: u64,
    after: Option<OutcomeReceiver<E>>,
    fetch: F,
    sender: watch::Sender<Option<Outcome<E>>>,
) where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    T: Into<ListedTools> + Send + 'static,
{
    if let Some(mut previous) = after {
        // Its end, not its result, is what this listing waits for; an abandoned one ends too.
        let _ = previous.wait_for(Option::is_some).await;
    }
    let started_at = {
        let mut state = lock(&guard.state);
        // Taken under the lock: a call that saw this listing as not started arrived before it.
        let now = Instant::now();
        if state.next.as_ref().is_some_and(|next| next.id == guard.id) {
            state.current = state.next.take();
        }
        if let Some(current) = state
            .current
            .as_mut()
            .filter(|current| current.id == guard.id)
        {
            current.started_at = Some(now);
        }
        now
    };
    let outcome = match fetch().await {
        Ok(tools) => Ok(Arc::new(Listing::new(tools.into(), started_at, generation))),
        Err(error) => Err(Arc::new(error)),
    };
    {
        let mut state = lock(&guard.state);
        if let Ok(listing) = &outcome {
            if state
                .cached
                .as_ref()
                .is_none_or(|cached| cached.started_at <= started_at)
            {
                state.cached = Some(Arc::clone(listing));
            }
        }
        guard.forget(&mut state);
    }
    // Every receiver may be gone (all callers left); the listing is cached anyway.
    let _ = sender.send(Some(outcome));
}

/// Removes a listing from the state when its task ends, also when the task is dropped
/// unfinished (a panicking fetch, a runtime shutting down): no call may join a listing that
/// will never finish.
struct FlightGuard<E> {
    state: Arc<Mutex<State<E>>>,
    id: u64,
}

impl<E> FlightGuard<E> {
    fn forget(&self, state: &mut State<E>) {
        if state
            .current
            .as_ref()
            .is_some_and(|current| current.id == self.id)
        {
            state.current = None;
        }
        if state.next.as_ref().is_some_and(|next| next.id == self.id) {
            state.next = None;
        }
    }
}

impl<E> Drop for FlightGuard<E> {
    fn drop(&mut self) {
        let state = Arc::clone(&self.state);
        self.forget(&mut lock(&state));
    }
}

/// The state's lock; a panic while it was held left nothing half-updated that matters, so a
/// poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
