//! Per-entry work on two threads: the entries of a large catalog validated (and their
//! definitions digested) in two halves at once, the results in file order.

/// Whether a load may use a second thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    /// One thread, and the tree reader's `parse_strict` for the whole file: the reference
    /// the two-thread path is tested against.
    #[cfg(any(test, feature = "reference-loader"))]
    One,
    /// A second thread for a large catalog, when the machine has more than one CPU.
    UpToTwo,
    /// Two threads whatever the size (tests of the halves' boundaries).
    #[cfg(any(test, feature = "reference-loader"))]
    Two,
}

/// Below this many entries a second thread costs about what it saves.
const SPLIT_FROM: usize = 64;

impl Threads {
    fn split(self, items: usize) -> bool {
        match self {
            #[cfg(any(test, feature = "reference-loader"))]
            Threads::One => false,
            Threads::UpToTwo => {
                items >= SPLIT_FROM
                    && std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1)
            }
            #[cfg(any(test, feature = "reference-loader"))]
            Threads::Two => items >= 2,
        }
    }
}

/// `work(index, item)` for every item, in order; with `threads` allowing it, the second half
/// on a second thread. Each result depends only on its index and item, so where the halves
/// meet changes nothing.
pub(crate) fn in_two_halves<T, R, F>(items: &mut [T], threads: Threads, work: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, &mut T) -> R + Sync,
{
    let run = |offset: usize, half: &mut [T]| -> Vec<R> {
        half.iter_mut()
            .enumerate()
            .map(|(index, item)| work(offset + index, item))
            .collect()
    };
    if !threads.split(items.len()) {
        return run(0, items);
    }
    let middle = items.len() / 2;
    let (first, second) = items.split_at_mut(middle);
    std::thread::scope(|scope| {
        let run = &run;
        // The half is handed over once the thread runs, so that this thread still holds it
        // (and does it itself) if no thread can be started.
        let (hand_over, receive) = std::sync::mpsc::channel::<&mut [T]>();
        let spawned = std::thread::Builder::new()
            .name("catalog-store-half".to_owned())
            .spawn_scoped(scope, move || receive.recv().map(|half| run(middle, half)));
        let second = match spawned {
            Ok(handle) => match hand_over.send(second) {
                Ok(()) => Err(handle),
                Err(returned) => Ok(returned.0),
            },
            Err(_) => Ok(second),
        };
        let mut results = run(0, first);
        match second {
            Ok(half) => results.extend(run(middle, half)),
            Err(handle) => match handle.join() {
                Ok(Ok(rest)) => results.extend(rest),
                // Unreachable: the half was sent before the handle was kept.
                Ok(Err(_)) => {}
                Err(panic) => std::panic::resume_unwind(panic),
            },
        }
        results
    })
}
