//! Fuzz smoke for CI: replays the stored corpus (fuzz/corpus/) through every target
//! and mutates it for a couple of seconds per target; no input may panic, and every
//! error must carry a message (format errors: file and line). The long runs use
//! `tools/fuzz.rs`.

mod fuzz_support;

use std::time::Duration;

use fuzz_support::{execute, fuzz, load_corpus, quiet_panics, Outcome, Target};

#[test]
fn stored_corpus_replays_without_crash() {
    quiet_panics();
    let mut n = 0;
    for t in Target::ALL {
        for input in load_corpus(t) {
            if let Outcome::Crash(msg) = execute(t, &input) {
                // the default hook again, so that this failure's message is shown
                let _ = std::panic::take_hook();
                panic!(
                    "{} crashed on {:?}: {msg}",
                    t.name(),
                    String::from_utf8_lossy(&input)
                );
            }
            n += 1;
        }
    }
    assert!(n > 100, "the stored corpus is missing ({n} inputs)");
}

#[test]
fn fuzz_smoke() {
    quiet_panics();
    let secs: u64 = std::env::var("IRMETRICS_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    for (i, t) in Target::ALL.into_iter().enumerate() {
        let corpus = load_corpus(t);
        let st = fuzz(
            t,
            &corpus,
            1000 + i as u64,
            Duration::from_secs(secs),
            200_000,
        );
        assert!(
            st.executions > 50,
            "{}: only {} executions",
            t.name(),
            st.executions
        );
        if let Some((msg, input)) = st.crashes.first() {
            let _ = std::panic::take_hook();
            panic!(
                "{} crashed on {:?}: {msg}",
                t.name(),
                String::from_utf8_lossy(input)
            );
        }
    }
}
