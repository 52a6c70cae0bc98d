//! Method and normalization names as data both ways (ranx's spellings), the parameters
//! each method takes, and suggestions for unknown names.

use crate::error::{Error, Result};

/// A per-query score normalization (ranx's `normalize` / the `norm` of `fuse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// `(s - min) / max(max - min, 1e-9)`.
    MinMax,
    /// `(max - s) / max(max - min, 1e-9)` (the ranking is reversed).
    MinMaxInverted,
    /// `s / max(max, 1e-9)`.
    Max,
    /// `(s - min) / max(sum - min * n, 1e-9)`.
    Sum,
    /// `(s - mean) / max(std, 1e-9)`, the population standard deviation.
    Zmuv,
    /// `1 - i / n` for the document at 0-based rank `i` of `n`.
    Rank,
    /// `1 - i / c` for a document at rank `i`, where `c` counts the documents any run
    /// retrieved for the query; `0.5 - (n - 1) / (2c)` for those this run did not.
    Borda,
}

const NORMS: &[(&str, Norm)] = &[
    ("min-max", Norm::MinMax),
    ("min-max-inverted", Norm::MinMaxInverted),
    ("max", Norm::Max),
    ("sum", Norm::Sum),
    ("zmuv", Norm::Zmuv),
    ("rank", Norm::Rank),
    ("borda", Norm::Borda),
    // ranx's other spellings
    ("min_max", Norm::MinMax),
    ("min_max_inverted", Norm::MinMaxInverted),
    // the z-score by its usual name (ranx: zmuv, zero mean and unit variance)
    ("z-score", Norm::Zmuv),
    ("zscore", Norm::Zmuv),
    ("z_score", Norm::Zmuv),
];

impl Norm {
    /// Every normalization, in the order of ranx's documentation.
    pub const ALL: [Norm; 7] = [
        Norm::MinMax,
        Norm::MinMaxInverted,
        Norm::Max,
        Norm::Sum,
        Norm::Zmuv,
        Norm::Rank,
        Norm::Borda,
    ];

    /// The canonical (ranx) name.
    pub fn name(self) -> &'static str {
        NORMS
            .iter()
            .find(|(_, n)| *n == self)
            .map_or("?", |(s, _)| s)
    }

    /// Parse a ranx name (`min-max` or `min_max`, ...); unknown names are refused with
    /// the closest known ones.
    pub fn parse(s: &str) -> Result<Norm> {
        let key = s.trim().to_ascii_lowercase();
        NORMS
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, m)| *m)
            .ok_or_else(|| unknown("normalization", s, NORMS.iter().map(|(n, _)| *n)))
    }
}

impl std::fmt::Display for Norm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A fusion method: ranx's 25, by ranx's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // each is documented in the table of `fusion/mod.rs`
pub enum Method {
    Anz,
    BayesFuse,
    BordaFuse,
    Condorcet,
    Gmnz,
    Isr,
    LogIsr,
    LognIsr,
    MapFuse,
    Max,
    Med,
    Min,
    Mixed,
    Mnz,
    PosFuse,
    ProbFuse,
    Rbc,
    Rrf,
    SegFuse,
    SlideFuse,
    Sum,
    WBordaFuse,
    WCondorcet,
    Wmnz,
    Wsum,
}

const METHODS: &[(&str, Method)] = &[
    ("anz", Method::Anz),
    ("bayesfuse", Method::BayesFuse),
    ("bordafuse", Method::BordaFuse),
    ("condorcet", Method::Condorcet),
    ("gmnz", Method::Gmnz),
    ("isr", Method::Isr),
    ("log_isr", Method::LogIsr),
    ("logn_isr", Method::LognIsr),
    ("mapfuse", Method::MapFuse),
    ("max", Method::Max),
    ("med", Method::Med),
    ("min", Method::Min),
    ("mixed", Method::Mixed),
    ("mnz", Method::Mnz),
    ("posfuse", Method::PosFuse),
    ("probfuse", Method::ProbFuse),
    ("rbc", Method::Rbc),
    ("rrf", Method::Rrf),
    ("segfuse", Method::SegFuse),
    ("slidefuse", Method::SlideFuse),
    ("sum", Method::Sum),
    ("w_bordafuse", Method::WBordaFuse),
    ("w_condorcet", Method::WCondorcet),
    ("wmnz", Method::Wmnz),
    ("wsum", Method::Wsum),
];

/// A parameter of a method: its name, ranx's default (`None`: ranx has none, so it
/// must be given) and what values it takes.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The name (`k`, `phi`, ...; `weights` is a list, one per run).
    pub name: &'static str,
    /// ranx's default, if it has one.
    pub default: Option<f64>,
    /// The closed range a value must lie in.
    pub range: (f64, f64),
}

const WEIGHTS: ParamSpec = ParamSpec {
    name: "weights",
    default: None,
    range: (0.0, f64::INFINITY),
};

impl Method {
    /// Every method, by name.
    pub fn all() -> impl Iterator<Item = Method> {
        METHODS.iter().map(|(_, m)| *m)
    }

    /// ranx's name.
    pub fn name(self) -> &'static str {
        METHODS
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("?", |(s, _)| s)
    }

    /// Parse ranx's name (case ignored); unknown names are refused with the closest.
    pub fn parse(s: &str) -> Result<Method> {
        let key = s.trim().to_ascii_lowercase();
        METHODS
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, m)| *m)
            .ok_or_else(|| unknown("fusion method", s, METHODS.iter().map(|(n, _)| *n)))
    }

    /// The parameters the method takes (ranx's keyword arguments), `weights` included.
    pub fn params(self) -> &'static [ParamSpec] {
        use Method::*;
        const K: ParamSpec = ParamSpec {
            name: "k",
            default: Some(60.0),
            range: (0.0, f64::INFINITY),
        };
        const PHI: ParamSpec = ParamSpec {
            name: "phi",
            default: None,
            range: (0.0, 1.0),
        };
        const GAMMA: ParamSpec = ParamSpec {
            name: "gamma",
            default: None,
            range: (f64::NEG_INFINITY, f64::INFINITY),
        };
        const SIGMA: ParamSpec = ParamSpec {
            name: "sigma",
            default: Some(0.01),
            range: (0.0, 1.0),
        };
        const N_SEGMENTS: ParamSpec = ParamSpec {
            name: "n_segments",
            default: None,
            range: (1.0, f64::INFINITY),
        };
        const W: ParamSpec = ParamSpec {
            name: "w",
            default: None,
            range: (0.0, f64::INFINITY),
        };
        match self {
            Rrf => &[K],
            ProbFuse => &[N_SEGMENTS],
            SlideFuse => &[W],
            Rbc => &[PHI],
            Gmnz => &[GAMMA],
            LognIsr => &[SIGMA],
            Wsum | Wmnz | Mixed | WBordaFuse | WCondorcet => &[WEIGHTS],
            _ => &[],
        }
    }

    /// Whether the method is trained on qrels (ranx's `*_train` functions).
    pub fn needs_qrels(self) -> bool {
        use Method::*;
        matches!(
            self,
            BayesFuse | MapFuse | PosFuse | ProbFuse | SegFuse | SlideFuse
        )
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The parameters of one fusion: a value by name, and the weights (one per run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: Vec<(String, f64)>,
    /// One weight per run (`wsum`, `wmnz`, `mixed`, `w_bordafuse`, `w_condorcet`).
    pub weights: Option<Vec<f64>>,
}

impl Params {
    /// No parameter: every method's defaults.
    pub fn new() -> Params {
        Params::default()
    }

    /// Set a named scalar parameter (`k`, `phi`, `gamma`, `sigma`); checked against the
    /// method when fusing.
    pub fn set(mut self, name: &str, value: f64) -> Params {
        self.values.retain(|(n, _)| n != name);
        self.values.push((name.to_string(), value));
        self
    }

    /// Set the weights, one per run.
    pub fn with_weights(mut self, weights: Vec<f64>) -> Params {
        self.weights = Some(weights);
        self
    }

    /// The parameters given by name (weights apart), in the order set.
    pub fn values(&self) -> &[(String, f64)] {
        &self.values
    }

    /// The value of `name` for `method`: given, else ranx's default; refused when ranx
    /// has none or the value is outside the parameter's range.
    pub(crate) fn get(&self, method: Method, name: &str) -> Result<f64> {
        let spec = method.params().iter().find(|p| p.name == name);
        let given = self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
        match (given, spec) {
            (Some(v), _) => Ok(v),
            (
                None,
                Some(ParamSpec {
                    default: Some(d), ..
                }),
            ) => Ok(*d),
            _ => Err(Error::Option(format!(
                "fusion method '{method}' needs the parameter '{name}' (ranx has no default \
                 for it); pass it in params"
            ))),
        }
    }

    /// Check the parameters against the method and the number of runs: no unknown
    /// name, values in range, one finite non-negative weight per run.
    pub(crate) fn check(&self, method: Method, n_runs: usize) -> Result<()> {
        let specs = method.params();
        for (name, v) in &self.values {
            let Some(spec) = specs.iter().find(|p| p.name == name.as_str()) else {
                return Err(unknown_param(method, name));
            };
            let (lo, hi) = spec.range;
            if v.is_nan() || *v < lo || *v > hi || (hi.is_infinite() && !v.is_finite()) {
                return Err(Error::Option(format!(
                    "parameter '{name}' of fusion method '{method}' must be a number {}, got {v}",
                    range_words(spec.range)
                )));
            }
        }
        let wants_weights = specs.iter().any(|p| p.name == "weights");
        match (&self.weights, wants_weights) {
            (Some(_), false) => return Err(unknown_param(method, "weights")),
            (None, true) => {
                return Err(Error::Option(format!(
                    "fusion method '{method}' needs weights, one per run ({n_runs})"
                )))
            }
            (Some(w), true) => {
                if w.len() != n_runs {
                    return Err(Error::Option(format!(
                        "{} weights given for {n_runs} runs; give one weight per run",
                        w.len()
                    )));
                }
                if let Some((i, x)) = w
                    .iter()
                    .enumerate()
                    .find(|(_, x)| !(x.is_finite() && **x >= 0.0))
                {
                    return Err(Error::Option(format!(
                        "weight {} is {x}; weights must be finite numbers >= 0",
                        i + 1
                    )));
                }
            }
            (None, false) => {}
        }
        for spec in specs.iter().filter(|p| p.name != "weights") {
            self.get(method, spec.name)?;
        }
        Ok(())
    }
}

fn range_words((lo, hi): (f64, f64)) -> String {
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => format!("from {lo} to {hi}"),
        (true, false) => format!(">= {lo}"),
        _ => "(finite)".to_string(),
    }
}

fn unknown_param(method: Method, name: &str) -> Error {
    let known: Vec<String> = method
        .params()
        .iter()
        .map(|p| format!("'{}'", p.name))
        .collect();
    let takes = if known.is_empty() {
        "takes no parameter".to_string()
    } else {
        format!("takes {}", known.join(", "))
    };
    Error::Option(format!(
        "fusion method '{method}' has no parameter '{name}'; it {takes}"
    ))
}

/// The error for an unknown name, with up to three known names near it
/// ([`crate::error::suggestions`]).
fn unknown<'a>(what: &str, s: &str, known: impl Iterator<Item = &'a str>) -> Error {
    let close = crate::error::suggestions(s, known, |n| n.to_ascii_lowercase(), 3);
    if close.is_empty() {
        Error::Option(format!("unknown {what} '{s}'"))
    } else {
        Error::Option(format!(
            "unknown {what} '{s}'; did you mean {}?",
            crate::error::quoted(&close)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_suggested() {
        for m in Method::all() {
            assert_eq!(Method::parse(m.name()).unwrap(), m);
        }
        assert_eq!(Method::all().count(), 25);
        for n in Norm::ALL {
            assert_eq!(Norm::parse(n.name()).unwrap(), n);
        }
        assert_eq!(Norm::parse("min_max").unwrap(), Norm::MinMax);
        for z in ["z-score", "zscore", "Z_Score"] {
            assert_eq!(Norm::parse(z).unwrap(), Norm::Zmuv);
        }
        let e = Method::parse("rff").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown fusion method 'rff'; did you mean 'rrf'"),
            "{e}"
        );
        let e = Norm::parse("minmax").unwrap_err().to_string();
        assert!(e.contains("did you mean 'min-max'"), "{e}");
        let e = Norm::parse("nonsense-entirely").unwrap_err().to_string();
        assert_eq!(e, "unknown normalization 'nonsense-entirely'");
    }

    #[test]
    fn params_are_checked_against_the_method() {
        let p = Params::new();
        assert_eq!(p.get(Method::Rrf, "k").unwrap(), 60.0);
        assert!(p
            .check(Method::Rbc, 2)
            .unwrap_err()
            .to_string()
            .contains("'phi'"));
        let e = Params::new()
            .set("k", 1.0)
            .check(Method::Sum, 2)
            .unwrap_err();
        assert!(e.to_string().contains("takes no parameter"), "{e}");
        let e = Params::new()
            .with_weights(vec![1.0])
            .check(Method::Wsum, 2)
            .unwrap_err();
        assert!(
            e.to_string().starts_with("1 weights given for 2 runs"),
            "{e}"
        );
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = Params::new()
                .with_weights(vec![1.0, bad])
                .check(Method::Wsum, 2)
                .unwrap_err();
            assert!(e.to_string().starts_with("weight 2 is"), "{e}");
        }
        let e = Params::new().set("sigma", 2.0).check(Method::LognIsr, 2);
        assert!(e.is_err());
        assert!(Params::new().check(Method::Wsum, 2).is_err());
    }
}
