//! Which system is better? Paired significance tests of per-query values
//! ([`paired`]), tests of many systems at once ([`tukey`]: Tukey's HSD, the randomized
//! Tukey HSD; [`anova`]: two-way ANOVA), multiple-comparison corrections
//! ([`Correction`]), effect sizes ([`effect`]), and [`compare`]: several runs evaluated on one qrels, every pair (or
//! every run against a baseline) tested per measure, in a [`Report`] that renders as a
//! table, Markdown, LaTeX, CSV or JSON.
//!
//! Resampling tests are seeded: resample r draws from its own stream of the seed
//! (ChaCha8, stream r), so a seed gives the same p-values on any machine and for any
//! thread count.

pub mod anova;
pub mod correct;
pub mod effect;
pub mod paired;
pub mod report;
pub(crate) mod rng;
pub mod tukey;

pub use anova::{anova2, Anova2};
pub use correct::Correction;
pub use effect::{effect_size, t_interval, Effect};
pub use paired::{
    bootstrap_test, bootstrap_tests, randomization_test, sign_test, ttest, wilcoxon, wilcoxon_with,
    Alternative, TestResult, WilcoxonMethod, WilcoxonOptions, ZeroMethod,
};
pub use report::{
    compare, compare_values, compare_values_with, CompareOptions, Format, PairResult, Report, Style,
};
pub use tukey::{ptukey_sf, randomized_tukey_hsd, tukey_hsd, TukeyHsd, TUKEY_MAX_GROUPS};

use crate::error::Result;

/// A paired significance test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// Paired Student's t-test.
    T,
    /// Wilcoxon's signed-rank test.
    Wilcoxon,
    /// The sign test.
    Sign,
    /// The paired randomization (Fisher) test.
    Randomization,
    /// The paired bootstrap test (shifted to the null).
    Bootstrap,
    /// Tukey's HSD over all systems (controls the family-wise error itself: no
    /// correction is applied on top).
    Tukey,
    /// Carterette's randomized Tukey HSD over all systems (no correction on top).
    RandomizedTukey,
}

impl Test {
    /// The names (and aliases) a test is known by.
    pub const NAMES: &'static [(&'static str, Test)] = &[
        ("t", Test::T),
        ("wilcoxon", Test::Wilcoxon),
        ("sign", Test::Sign),
        ("randomization", Test::Randomization),
        ("bootstrap", Test::Bootstrap),
        ("student", Test::T),
        ("ttest", Test::T),
        ("fisher", Test::Randomization),
        ("permutation", Test::Randomization),
        ("tukey", Test::Tukey),
        ("randomized_tukey", Test::RandomizedTukey),
        ("tukey_hsd", Test::Tukey),
    ];

    /// Parse `t` (`student`, `ttest`), `wilcoxon`, `sign`, `randomization` (`fisher`,
    /// `permutation`), `bootstrap`, `tukey` (`tukey_hsd`) or `randomized_tukey`.
    pub fn parse(name: &str) -> Result<Test> {
        correct::choose("test", name, Test::NAMES)
    }

    /// The short name (`"randomization"`).
    pub fn name(self) -> &'static str {
        match self {
            Test::T => "t",
            Test::Wilcoxon => "wilcoxon",
            Test::Sign => "sign",
            Test::Randomization => "randomization",
            Test::Bootstrap => "bootstrap",
            Test::Tukey => "tukey",
            Test::RandomizedTukey => "randomized_tukey",
        }
    }

    /// The name in words, for captions.
    pub fn label(self) -> &'static str {
        match self {
            Test::T => "paired Student's t-test",
            Test::Wilcoxon => "Wilcoxon's signed-rank test",
            Test::Sign => "the sign test",
            Test::Randomization => "Fisher's randomization test",
            Test::Bootstrap => "the paired bootstrap test",
            Test::Tukey => "Tukey's HSD test",
            Test::RandomizedTukey => "the randomized Tukey HSD test",
        }
    }

    /// Whether the test covers all systems at once and controls the family-wise error
    /// itself (no correction is applied on top).
    pub fn is_multi_system(self) -> bool {
        matches!(self, Test::Tukey | Test::RandomizedTukey)
    }
}
