//! Parallel work whose results are combined in a fixed order, so that renders and gradients do
//! not depend on the thread count, without keeping every tile's result until the end.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Runs `work` on every item with the current rayon pool's threads and hands each result to
/// `fold` in item order. Items are handed out in order, and a result is folded as soon as every
/// earlier item's has been, so only results that finished ahead of an earlier item wait (about
/// one per thread), and `fold` sees the same sequence whatever the thread count.
///
/// When an item fails, no further items start and the error of the first failing item is
/// returned: every item before it has run. `fold` has then seen a prefix of the results.
pub fn fold_in_order<T, R, E>(
    items: &[T],
    work: impl Fn(&T) -> Result<R, E> + Sync,
    fold: impl FnMut(R) + Send,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    struct State<R, E, F> {
        /// The first item whose result has not been folded.
        next: usize,
        /// Results of later items, by index.
        waiting: BTreeMap<usize, R>,
        fold: F,
        /// The failing item with the lowest index, and its error.
        error: Option<(usize, E)>,
    }
    let state = Mutex::new(State { next: 0, waiting: BTreeMap::new(), fold, error: None });
    let next_item = AtomicUsize::new(0);
    let worker = || loop {
        let index = next_item.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(index) else { break };
        let result = work(item);
        let mut guard = state.lock().unwrap_or_else(PoisonError::into_inner);
        let state = &mut *guard;
        match result {
            Ok(value) => {
                state.waiting.insert(index, value);
                while let Some(value) = state.waiting.remove(&state.next) {
                    (state.fold)(value);
                    state.next += 1;
                }
            }
            Err(error) => {
                if state.error.as_ref().is_none_or(|(first, _)| index < *first) {
                    state.error = Some((index, error));
                }
                next_item.store(items.len(), Ordering::Relaxed);
            }
        }
    };
    rayon::scope(|scope| {
        for _ in 0..rayon::current_num_threads() {
            scope.spawn(|_| worker());
        }
    });
    match state.into_inner().unwrap_or_else(PoisonError::into_inner).error {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}
