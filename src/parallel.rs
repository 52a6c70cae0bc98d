//! Thin wrappers that use rayon when the `parallel` feature is on and plain loops
//! otherwise. Results never depend on the number of threads.

use std::sync::atomic::{AtomicBool, Ordering};

/// Inputs smaller than this many items are processed on the calling thread.
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
pub(crate) const SEQUENTIAL_BELOW: usize = 16;

/// Set in a child process after `fork()`: the parent's thread pool does not exist
/// there, so work runs on the calling thread (Python's `multiprocessing` already
/// spreads work over processes).
static FORKED: AtomicBool = AtomicBool::new(false);

/// Set when no thread pool could be started (a process limit on threads or memory):
/// work then runs on the calling thread, with the same numbers.
static NO_POOL: AtomicBool = AtomicBool::new(false);

/// The most threads a pool may have, whatever is asked (beyond, thread creation itself
/// fails); one limit for the command line, the environment variable and Python.
pub const MAX_THREADS: usize = 4096;

/// Mark this process as a forked child (called by the Python package's fork hook).
pub fn mark_forked() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Size rayon's global pool from `IRMETRICS_NUM_THREADS` (once, before first use);
/// without it rayon uses all cores (or `RAYON_NUM_THREADS`).
#[inline]
fn init_global() {
    #[cfg(feature = "parallel")]
    {
        static INIT: std::sync::Once = std::sync::Once::new();
        INIT.call_once(|| {
            let n = std::env::var("IRMETRICS_NUM_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0)
                .min(MAX_THREADS);
            // fails if the pool already exists (then it stays as it is) or if its
            // threads cannot be started: then no pool is used at all
            let mut b = rayon::ThreadPoolBuilder::new();
            if n > 0 {
                b = b.num_threads(n);
            }
            if b.build_global().is_err()
                && std::panic::catch_unwind(rayon::current_num_threads).is_err()
            {
                NO_POOL.store(true, Ordering::Relaxed);
            }
        });
    }
}

/// Threads available to the current (or global) pool.
pub(crate) fn current_threads() -> usize {
    init_global();
    #[cfg(feature = "parallel")]
    {
        if NO_POOL.load(Ordering::Relaxed) {
            return 1;
        }
        rayon::current_num_threads().max(1)
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

#[inline]
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
fn parallel_ok(n: usize) -> bool {
    init_global();
    n >= SEQUENTIAL_BELOW && !FORKED.load(Ordering::Relaxed) && !NO_POOL.load(Ordering::Relaxed)
}

/// `items.map(f).collect()` for a few large work items (file chunks): parallel as soon
/// as there are two.
pub(crate) fn map_chunks<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        init_global();
        if items.len() > 1 && !FORKED.load(Ordering::Relaxed) {
            use rayon::prelude::*;
            return items.par_iter().map(f).collect();
        }
    }
    items.iter().map(f).collect()
}

/// `items.map(f)` with per-thread scratch state created by `init`, in order.
pub(crate) fn map_with<T: Sync, S, R: Send>(
    items: &[T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, &T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        if parallel_ok(items.len()) {
            use rayon::prelude::*;
            return items.par_iter().map_init(&init, |s, t| f(s, t)).collect();
        }
    }
    let mut s = init();
    items.iter().map(|t| f(&mut s, t)).collect()
}

/// `items.into_iter().map(f).collect()`, in order.
pub(crate) fn map_owned<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        if parallel_ok(items.len()) {
            use rayon::prelude::*;
            return items.into_par_iter().map(f).collect();
        }
    }
    items.into_iter().map(f).collect()
}

/// The result of `f` for the first item (in order) for which it returns `Some`, with
/// per-thread scratch state created by `init`.
pub(crate) fn find_first_with<T: Sync, S, R: Send>(
    items: &[T],
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, &T) -> Option<R> + Sync + Send,
) -> Option<R> {
    #[cfg(feature = "parallel")]
    {
        if parallel_ok(items.len()) {
            use rayon::prelude::*;
            return items
                .par_iter()
                .map_init(&init, |s, t| f(s, t))
                .find_map_first(|r| r);
        }
    }
    let mut s = init();
    items.iter().find_map(|t| f(&mut s, t))
}

/// A thread count to run work with: a pool of its own when it differs from the
/// default pool's, built once and reused (streaming evaluation runs many batches).
pub(crate) struct Pool {
    #[cfg(feature = "parallel")]
    pool: Option<rayon::ThreadPool>,
}

impl Pool {
    /// `n_threads` threads (0 = the default: all cores, or the `IRMETRICS_NUM_THREADS` /
    /// `RAYON_NUM_THREADS` environment variables).
    pub(crate) fn new(n_threads: usize) -> Pool {
        #[cfg(feature = "parallel")]
        {
            init_global();
            let n = n_threads.min(MAX_THREADS);
            let own = n > 0
                && !FORKED.load(Ordering::Relaxed)
                && !NO_POOL.load(Ordering::Relaxed)
                && n != rayon::current_num_threads();
            Pool {
                pool: own
                    .then(|| rayon::ThreadPoolBuilder::new().num_threads(n).build().ok())
                    .flatten(),
            }
        }
        #[cfg(not(feature = "parallel"))]
        {
            let _ = n_threads;
            Pool {}
        }
    }

    /// Run `f` on this pool's threads.
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        #[cfg(feature = "parallel")]
        if let Some(p) = &self.pool {
            if !FORKED.load(Ordering::Relaxed) {
                return p.install(f);
            }
        }
        f()
    }
}

/// Run `f` with `n_threads` threads (0 = the default: all cores, or the
/// `IRMETRICS_NUM_THREADS` / `RAYON_NUM_THREADS` environment variables).
pub fn with_threads<R: Send>(n_threads: usize, f: impl FnOnce() -> R + Send) -> R {
    Pool::new(n_threads).install(f)
}
