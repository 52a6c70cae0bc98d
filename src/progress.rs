//! Progress of long work: a [`Progress`] counter that the long operations (evaluating
//! a run, comparing runs, grid-searching fusion parameters) advance from their worker
//! threads with one atomic addition per query or per chunk, and that someone else
//! reads: the Python glue polls it from the loop that already watches for Ctrl-C and
//! calls the user's callback there (never from a worker thread); the command line draws
//! [`StderrBar`] when standard error is a terminal.
//!
//! Units are whatever the operation counts (queries evaluated, resamples drawn,
//! settings tried); an operation announces its units ([`Progress::add_total`]) before
//! it advances through them, so at the end of a completed operation `done == total`.
//! An operation made of phases (evaluation, then resampling) announces each phase as it
//! starts: `total` may grow, `done` never decreases.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// Units done and announced; shared by reference between the work and its observer.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    /// Nothing announced, nothing done.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Announce `n` more units of work.
    pub fn add_total(&self, n: u64) {
        self.total.fetch_add(n, Ordering::Relaxed);
    }

    /// Mark `n` units done.
    pub fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// `(done, total)` now; `done <= total` once the work is complete (while it runs, a
    /// reader may see an advance before the phase's announcement is visible: `done` is
    /// capped at `total` here).
    pub fn get(&self) -> (u64, u64) {
        let total = self.total.load(Ordering::Relaxed);
        let done = self.done.load(Ordering::Relaxed);
        (done.min(total), total)
    }
}

/// [`Progress::add_total`] on an optional counter.
pub(crate) fn announce(p: Option<&Progress>, n: usize) {
    if let Some(p) = p {
        p.add_total(n as u64);
    }
}

/// [`Progress::advance`] on an optional counter.
pub(crate) fn advance(p: Option<&Progress>, n: usize) {
    if let Some(p) = p {
        p.advance(n as u64);
    }
}

/// How long work runs before a bar appears: short work shows nothing. Read from
/// `IRMETRICS_PROGRESS_DELAY` (seconds) when set, else 2 seconds.
pub fn bar_delay() -> Duration {
    std::env::var("IRMETRICS_PROGRESS_DELAY")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(2), Duration::from_secs_f64)
}

/// A one-line bar on standard error, redrawn ten times a second while `f` runs (from
/// `delay` on), erased when it returns.
pub struct StderrBar;

impl StderrBar {
    /// Run `f` with `progress`, drawing the bar meanwhile on another thread.
    pub fn draw_while<R>(progress: &Progress, delay: Duration, f: impl FnOnce() -> R) -> R {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            s.spawn(move || {
                let start = Instant::now();
                let mut drawn = false;
                let tick = Duration::from_millis(100);
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(tick) {
                    if start.elapsed() < delay {
                        continue;
                    }
                    let (done, total) = progress.get();
                    let line = bar_line(done, total, start.elapsed());
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r{line}\x1b[K");
                    let _ = err.flush();
                    drawn = true;
                }
                if drawn {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(err, "\r\x1b[K");
                    let _ = err.flush();
                }
            });
            let r = f();
            let _ = tx.send(());
            r
        })
    }
}

/// The text of the bar: `irmetrics [#####-----]  50% 5/10 3s`; before any unit is
/// announced (files being read), `irmetrics ... 3s`.
pub fn bar_line(done: u64, total: u64, elapsed: Duration) -> String {
    const WIDTH: u64 = 30;
    if total == 0 {
        return format!("irmetrics ... {}s", elapsed.as_secs());
    }
    let frac = done as f64 / total as f64;
    let filled = ((frac * WIDTH as f64) as u64).min(WIDTH);
    format!(
        "irmetrics [{}{}] {:3.0}% {done}/{total} {}s",
        "#".repeat(filled as usize),
        "-".repeat((WIDTH - filled) as usize),
        frac * 100.0,
        elapsed.as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_caps() {
        let p = Progress::new();
        p.add_total(10);
        advance(Some(&p), 4);
        assert_eq!(p.get(), (4, 10));
        p.advance(20);
        assert_eq!(p.get(), (10, 10));
    }

    #[test]
    fn bar_text() {
        let line = bar_line(5, 10, Duration::from_secs(3));
        assert!(line.contains("[###############---------------]"), "{line}");
        assert!(line.contains(" 50% 5/10 3s"), "{line}");
        assert_eq!(bar_line(0, 0, Duration::from_secs(4)), "irmetrics ... 4s");
    }
}
