//! Thin wrappers that use rayon when the `parallel` feature is on and plain loops
//! otherwise. Results never depend on the number of threads.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

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

/// The most threads a pool may have (beyond, thread creation itself fails): a larger
/// count is refused, not capped, with the same error on every route ([`check_threads`]:
/// `--threads`, `IRMETRICS_NUM_THREADS`, Python's `n_threads`, [`Options::n_threads`]).
///
/// [`Options::n_threads`]: crate::Options::n_threads
pub const MAX_THREADS: usize = 4096;

/// The environment variable that sizes the default pool.
pub const THREADS_ENV: &str = "IRMETRICS_NUM_THREADS";

/// The error for a thread count outside 0..=[`MAX_THREADS`]; `what` names the option or
/// variable, `got` the value as given.
pub fn threads_error(what: &str, got: &str) -> Error {
    Error::Option(format!(
        "{what} must be a whole number from 0 to {MAX_THREADS}, got {got} (0: all cores)"
    ))
}

/// The one rule for a thread count: a whole number from 0 (all cores, or
/// `IRMETRICS_NUM_THREADS`) to [`MAX_THREADS`]; anything else is an
/// [`Error::Option`] naming `what`.
pub fn check_threads(n: i128, what: &str) -> Result<usize> {
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= MAX_THREADS)
        .ok_or_else(|| threads_error(what, &n.to_string()))
}

/// A thread count written as text (`--threads 4`, `IRMETRICS_NUM_THREADS=4`; spaces
/// around it are ignored), checked by [`check_threads`].
pub fn parse_threads(text: &str, what: &str) -> Result<usize> {
    let n: i128 = text
        .trim()
        .parse()
        .map_err(|_| threads_error(what, &format!("'{text}'")))?;
    check_threads(n, what)
}

/// The thread count of `IRMETRICS_NUM_THREADS`: 0 when it is unset or empty, an error
/// when it is not a valid count ([`parse_threads`]). Checked when an evaluator is built
/// and when the command line starts; the pool itself falls back to all cores.
pub fn env_threads() -> Result<usize> {
    threads_of_env_value(std::env::var_os(THREADS_ENV))
}

fn threads_of_env_value(value: Option<std::ffi::OsString>) -> Result<usize> {
    match value {
        None => Ok(0),
        Some(v) => {
            let v = v.to_string_lossy();
            if v.trim().is_empty() {
                Ok(0)
            } else {
                parse_threads(&v, THREADS_ENV)
            }
        }
    }
}

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
            // a bad value is reported by `env_threads` where errors can be returned
            let n = env_threads().unwrap_or(0);
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
    map_chunks_owned(items.iter().collect(), f)
}

/// [`map_chunks`] over owned items (buffers handed to the workers and back, so that
/// what a worker allocates is reused rather than freed on another thread).
pub(crate) fn map_chunks_owned<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        init_global();
        if items.len() > 1 && !FORKED.load(Ordering::Relaxed) {
            use rayon::prelude::*;
            return items.into_par_iter().map(f).collect();
        }
    }
    items.into_iter().map(f).collect()
}

/// Output for items `0..n` made in parallel and written in order: `format` fills a
/// buffer with the text of a range of about `per_chunk` items, `write` takes each
/// buffer in item order. A window of chunks is formatted at a time and the buffers go
/// back to the workers for the next window, so memory stays at one window and what a
/// worker allocates is not freed on another thread. The first error in item order
/// stops it.
pub(crate) fn write_in_chunks<E: Send>(
    n: usize,
    per_chunk: usize,
    format: impl Fn(std::ops::Range<usize>, &mut Vec<u8>) -> std::result::Result<(), E> + Sync + Send,
    mut write: impl FnMut(&[u8]) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let per_chunk = per_chunk.max(1);
    let window = per_chunk * 4 * current_threads().max(1);
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for start in (0..n).step_by(window) {
        let chunks: Vec<std::ops::Range<usize>> = (start..(start + window).min(n))
            .step_by(per_chunk)
            .map(|s| s..(s + per_chunk).min(n))
            .collect();
        buffers.resize_with(buffers.len().max(chunks.len()), Vec::new);
        let work: Vec<_> = buffers.drain(..).zip(chunks).collect();
        let done = map_chunks_owned(work, |(mut buf, range)| {
            buf.clear();
            let r = format(range, &mut buf);
            (buf, r)
        });
        for (buf, r) in done {
            r?;
            write(&buf)?;
            buffers.push(buf);
        }
    }
    Ok(())
}

/// Items arriving one at a time (batches from a decoder, say) made into results by `f`
/// on the pool as they come, at most `ahead` in flight, and handed to `take` in item
/// order on the calling thread while later items are still being made: the source,
/// the work and the taking overlap. The first error of `take` stops it (items in
/// flight are finished and dropped). Without a pool: one after the other, the same
/// results in the same order.
#[cfg_attr(not(feature = "parallel"), allow(unused_variables))]
pub(crate) fn pipeline<T: Send, R: Send>(
    items: impl IntoIterator<Item = T>,
    ahead: usize,
    f: impl Fn(T) -> R + Sync + Send,
    mut take: impl FnMut(R) -> Result<()>,
) -> Result<()> {
    #[cfg(feature = "parallel")]
    {
        init_global();
        if current_threads() > 1 && parallel_ok(SEQUENTIAL_BELOW) {
            return pipelined(items, ahead.max(1), &f, &mut take);
        }
    }
    for item in items {
        take(f(item))?;
    }
    Ok(())
}

#[cfg(feature = "parallel")]
fn pipelined<T: Send, R: Send>(
    items: impl IntoIterator<Item = T>,
    ahead: usize,
    f: &(impl Fn(T) -> R + Sync + Send),
    take: &mut impl FnMut(R) -> Result<()>,
) -> Result<()> {
    use std::collections::VecDeque;
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
    type Made<R> = (usize, std::thread::Result<R>);
    let (tx, rx) = std::sync::mpsc::channel::<Made<R>>();
    rayon::in_place_scope(|scope| {
        // results waiting for the ones before them: slot i holds item `taken + i`
        let mut ready: VecDeque<Option<R>> = VecDeque::new();
        let (mut sent, mut taken) = (0usize, 0usize);
        // one result in; then every result now next in order to `take`
        let mut one = |ready: &mut VecDeque<Option<R>>, taken: &mut usize| -> Result<()> {
            let (i, r) = receive(&rx);
            let r = r.unwrap_or_else(|p| resume_unwind(p));
            if ready.len() <= i - *taken {
                ready.resize_with(i - *taken + 1, || None);
            }
            ready[i - *taken] = Some(r);
            while let Some(Some(_)) = ready.front() {
                if let Some(Some(r)) = ready.pop_front() {
                    *taken += 1;
                    take(r)?;
                }
            }
            Ok(())
        };
        for item in items {
            while sent - taken >= ahead {
                one(&mut ready, &mut taken)?;
            }
            let tx = tx.clone();
            let i = sent;
            sent += 1;
            // a panic goes back to the taker (which re-raises it) so that none waits
            // for a result that never comes
            scope.spawn(move |_| {
                let _ = tx.send((i, catch_unwind(AssertUnwindSafe(|| f(item)))));
            });
        }
        while taken < sent {
            one(&mut ready, &mut taken)?;
        }
        Ok(())
    })
}

/// The next result of [`pipelined`]: on a thread of the pool, other work of the pool is
/// done while waiting (the pool's threads must not all block).
#[cfg(feature = "parallel")]
fn receive<M>(rx: &std::sync::mpsc::Receiver<M>) -> M {
    use std::sync::mpsc::TryRecvError;
    loop {
        match rx.try_recv() {
            Ok(m) => return m,
            Err(TryRecvError::Disconnected) => unreachable!("the taker holds a sender"),
            Err(TryRecvError::Empty) => match rayon::yield_now() {
                Some(rayon::Yield::Executed) => {}
                Some(rayon::Yield::Idle) => {
                    if let Ok(m) = rx.recv_timeout(std::time::Duration::from_micros(200)) {
                        return m;
                    }
                }
                None => {
                    if let Ok(m) = rx.recv() {
                        return m;
                    }
                }
            },
        }
    }
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

/// `items.iter().enumerate().map(|(i, t)| f(i, t)).collect()`, in order: `f` sees
/// each item's index, to look ahead in `items` (a gather that [`prefetch`]es).
pub(crate) fn map_indexed<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(usize, &T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        if parallel_ok(items.len()) {
            use rayon::prelude::*;
            return items.par_iter().enumerate().map(|(i, t)| f(i, t)).collect();
        }
    }
    items.iter().enumerate().map(|(i, t)| f(i, t)).collect()
}

/// Ask the CPU to bring the cache lines holding `bytes` bytes from `p` into its cache,
/// for a read coming soon: where reads land at random places (a gather in another
/// order, Python objects over the heap), each would otherwise wait on memory in turn.
/// A hint only: it never faults, whatever the address.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint that does not access memory architecturally.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = p.cast::<i8>();
        _mm_prefetch::<_MM_HINT_T0>(p);
        if bytes > 1 {
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(bytes - 1));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
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
            // callers check with `check_threads` first (the evaluator does); the cap
            // only keeps a direct `with_threads(huge)` from failing
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_thread_counts() {
        assert_eq!(check_threads(0, "n").unwrap(), 0);
        assert_eq!(
            check_threads(MAX_THREADS as i128, "n").unwrap(),
            MAX_THREADS
        );
        assert_eq!(parse_threads(" 8\n", "--threads").unwrap(), 8);
        for (text, got) in [
            ("4097", "4097"),
            ("-1", "-1"),
            ("99999999999999999999", "99999999999999999999"),
            ("abc", "'abc'"),
            ("2.5", "'2.5'"),
            ("", "''"),
        ] {
            let e = parse_threads(text, "IRMETRICS_NUM_THREADS").unwrap_err();
            assert!(matches!(e, Error::Option(_)), "{e:?}");
            assert_eq!(
                e.to_string(),
                format!(
                    "IRMETRICS_NUM_THREADS must be a whole number from 0 to 4096, got {got} \
                     (0: all cores)"
                )
            );
        }
        // the variable: unset or blank is the default, anything else the same rule
        assert_eq!(threads_of_env_value(None).unwrap(), 0);
        assert_eq!(threads_of_env_value(Some(" ".into())).unwrap(), 0);
        assert_eq!(threads_of_env_value(Some("3".into())).unwrap(), 3);
        let e = threads_of_env_value(Some("100000".into())).unwrap_err();
        assert!(
            e.to_string().starts_with("IRMETRICS_NUM_THREADS must be"),
            "{e}"
        );
        let e = check_threads(1 << 70, "n_threads").unwrap_err().to_string();
        assert!(
            e.starts_with("n_threads must be a whole number from 0 to 4096"),
            "{e}"
        );
    }
}
