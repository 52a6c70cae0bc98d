//! The one grammar of measure names: trec_eval (`P.5,10`, `ndcg_cut.10`, `ndcg_cut_10`,
//! `ndcg.1=3,2=7`, nicknames), ir_measures (`nDCG@10`, `P(rel=2)@5`, `RBP(p=0.8)`) and
//! ranx (`ndcg@10`, `map@100-l2`), plus trec_eval parameter text (`Measure::with_params`)
//! and the suggestions offered for an unknown name.

use super::family::{
    alias_by_name, cam_measure, cwl_stat, family_by_name, nickname, ALIASES, NICKNAMES,
};
use super::Names;
use super::{Family, Measure, ParamKind, Params};
use crate::error::{Error, Result};

impl Measure {
    /// The family with trec_eval-style parameter text (what follows the `.`).
    pub fn with_params(family: Family, text: &str) -> Result<Measure> {
        let bad = |why: &str| {
            Error::Measure(format!(
                "bad parameters '{text}' for measure '{}': {why}",
                family.name()
            ))
        };
        let params = match family.param_kind() {
            ParamKind::None => return Err(bad("this measure takes no parameters")),
            ParamKind::Cutoffs => {
                let mut v = Vec::new();
                for part in text.split(',') {
                    let k = parse_cutoff(part).ok_or_else(|| {
                        bad(&format!(
                            "'{part}' is not a positive whole number of documents"
                        ))
                    })?;
                    v.push(k);
                }
                v.sort_unstable();
                if v.windows(2).any(|w| w[0] == w[1]) {
                    return Err(bad("a cut-off is given twice"));
                }
                Params::Cutoffs {
                    values: v,
                    given: true,
                }
            }
            ParamKind::Fractions => {
                let mut v = Vec::new();
                for part in text.split(',') {
                    let x: f64 = parse_number(part)
                        .ok_or_else(|| bad(&format!("'{part}' is not a finite number")))?;
                    v.push(x);
                }
                v.sort_by(f64::total_cmp);
                if v.windows(2).any(|w| w[0] == w[1]) {
                    return Err(bad("a value is given twice"));
                }
                Params::Fractions {
                    values: v,
                    given: true,
                }
            }
            ParamKind::Numbers => {
                let mut v = Vec::new();
                for part in text.split(',') {
                    v.push(
                        parse_number(part)
                            .ok_or_else(|| bad(&format!("'{part}' is not a finite number")))?,
                    );
                }
                match family {
                    Family::Utility if v.len() != 4 => {
                        return Err(bad("utility takes exactly four coefficients a,b,c,d"))
                    }
                    Family::SetF | Family::Relstring if v.len() != 1 => {
                        return Err(bad("this measure takes exactly one number"))
                    }
                    _ => {}
                }
                Params::Numbers {
                    values: v,
                    text: Some(text.to_string()),
                }
            }
            ParamKind::Pairs => {
                let mut pairs = Vec::new();
                for part in text.split(',') {
                    let (name, value) = part
                        .split_once('=')
                        .ok_or_else(|| bad(&format!("'{part}' is not of the form name=value")))?;
                    let value = parse_number(value)
                        .ok_or_else(|| bad(&format!("'{value}' is not a finite number")))?;
                    let ok = match family {
                        Family::Rbp | Family::RbpResid => name == "p" || valid_int(name),
                        _ => valid_int(name),
                    };
                    if !ok {
                        return Err(bad(&format!(
                            "'{name}' is not a relevance level{}",
                            if matches!(family, Family::Rbp | Family::RbpResid) {
                                " or p"
                            } else {
                                ""
                            }
                        )));
                    }
                    pairs.push((name.to_string(), value));
                }
                Params::Pairs {
                    pairs,
                    text: Some(text.to_string()),
                }
            }
        };
        let m = Measure {
            family,
            params,
            rel_level: None,
            opts: Vec::new(),
        };
        m.check()?;
        Ok(m)
    }
}

impl Measure {
    /// Check every parameter against the catalogue: each number in its family's
    /// [`Domain`](super::Domain) ([`Family::params`]), cut-offs positive. The one
    /// check for every spelling and route: the parser runs it on what it builds, and
    /// [`Evaluator::new`](crate::Evaluator::new) on every measure it is given (so a
    /// `Measure` built by hand in Rust is held to the same rules).
    pub fn check(&self) -> Result<()> {
        let f = self.family;
        let bad = |name: &str, x: f64, domain: super::Domain| {
            Error::Measure(format!(
                "measure '{}': parameter {name} must be {}, got {}",
                f.name(),
                domain.describe(),
                // shortest digits, in exponent form when huge or tiny (1e308, not 309 digits)
                if x != 0.0 && !(1e-4..1e16).contains(&x.abs()) {
                    format!("{x:e}")
                } else {
                    fmt_num(x)
                }
            ))
        };
        let check = |name: &str, x: f64| -> Result<()> {
            let p = f.param(name).ok_or_else(|| {
                Error::Measure(format!("measure '{}' has no parameter '{name}'", f.name()))
            })?;
            if p.domain.contains(x) {
                Ok(())
            } else {
                Err(bad(p.name, x, p.domain))
            }
        };
        match &self.params {
            Params::None => {}
            Params::Cutoffs { values, .. } => {
                if values.contains(&0) {
                    return Err(Error::Measure(format!(
                        "measure '{}': a cut-off must be a positive whole number of \
                         documents, got 0",
                        f.name()
                    )));
                }
            }
            Params::Fractions { values, .. } | Params::Numbers { values, .. } => {
                let name = f.params().first().map_or("value", |p| p.name);
                for &x in values {
                    check(name, x)?;
                }
            }
            Params::Pairs { pairs, .. } => {
                for (key, x) in pairs {
                    check(if key == "p" { "p" } else { "gain" }, *x)?;
                }
            }
        }
        for (key, x) in &self.opts {
            let is_gain = key.len() > 1
                && key.starts_with('g')
                && key[1..].bytes().all(|b| b.is_ascii_digit());
            if key == "judged_only" {
                // ir_measures' judged_only=True, any family: a flag
                if !super::Domain::Flag.contains(*x) {
                    return Err(bad("judged_only", *x, super::Domain::Flag));
                }
                if f.needs_credibility() && *x == 1.0 {
                    return Err(Error::Measure(format!(
                        "measure '{}' has no option judged_only; rank judged documents \
                         only with the evaluator's judged_only (-J)",
                        f.name()
                    )));
                }
                continue;
            }
            check(if is_gain { "gN" } else { key }, *x)?;
        }
        if f == Family::Dcg
            && !self.pairs().is_empty()
            && self.opts.iter().any(|(k, _)| k != "judged_only")
        {
            return Err(Error::Measure(format!(
                "measure 'dcg': give the gains once, as trec_eval's level=gain pairs \
                 (dcg.1=3) or as gN options (dcg(g1=3)), not both (got '{}' and options {})",
                self.column_names().join(", "),
                self.opts
                    .iter()
                    .map(|(k, v)| format!("{k}={}", fmt_num(*v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        if f.is_cwl() {
            self.check_cwl()?;
        }
        if matches!(f, Family::Nlre | Family::Ngre)
            && self.opt("mu", 0.5) + self.opt("nu", 0.5) <= 0.0
        {
            // Lioma et al.'s normalisations vanish when both weights are 0
            return Err(Error::Measure(format!(
                "measure '{}': mu + nu must be greater than 0 (mu, nu >= 0)",
                f.name()
            )));
        }
        Ok(())
    }

    /// The C/W/L models' gains: either cwl_eval's own (the labels, which must then lie
    /// in [0, 1]), or binary at `rel=N`, or scaled from [min_rel, max_rel] to [0, 1]
    /// (ir_measures); and cwl_eval computes P@k for k up to its depth only.
    fn check_cwl(&self) -> Result<()> {
        let name = self.family.name();
        let has = |k: &str| self.opts.iter().any(|(n, _)| n == k);
        if has("min_rel") && !has("max_rel") {
            return Err(Error::Measure(format!(
                "measure '{name}': min_rel needs max_rel (gains are scaled from \
                 [min_rel, max_rel] to [0, 1])"
            )));
        }
        if has("max_rel") {
            let (lo, hi) = (self.opt("min_rel", 0.0), self.opt("max_rel", 0.0));
            if hi <= lo {
                return Err(Error::Measure(format!(
                    "measure '{name}': max_rel ({}) must be greater than min_rel ({})",
                    fmt_num(hi),
                    fmt_num(lo)
                )));
            }
            if self.rel_level.is_some() {
                return Err(Error::Measure(format!(
                    "measure '{name}': give either rel (binary gains) or max_rel (graded \
                     gains scaled to [0, 1]), not both"
                )));
            }
        }
        if self.family == Family::Inst && self.opt("T", 1.0) < INST_MIN_T {
            // INST's continuation divides by i + 2T - (gain of the top i), which is at
            // least 2T; for T below this, i + T rounds to i and the quotient to 0/0
            return Err(Error::Measure(format!(
                "measure '{name}': parameter T must be at least {INST_MIN_T:e}, got {}",
                fmt_num(self.opt("T", 1.0))
            )));
        }
        let depth = super::CWL_DEPTH as u64;
        if self.family == Family::CwlP && self.cutoffs().iter().any(|&k| k > depth) {
            return Err(Error::Measure(format!(
                "measure '{name}': a cut-off must be at most {depth}, cwl_eval's depth"
            )));
        }
        Ok(())
    }
}

/// INST's smallest goal T: above the rounding of i + T at the ranks cwl_eval reads.
const INST_MIN_T: f64 = 1e-6;

/// trec_eval's `valid_int` for gain-map keys: optional sign, then digits.
fn valid_int(s: &str) -> bool {
    let d = s.strip_prefix(['-', '+']).unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// A positive cut-off. Like trec_eval, a fractional part is dropped (`23.4` is 23).
pub(crate) fn parse_cutoff(s: &str) -> Option<u64> {
    let s = s.trim();
    let int = match s.split_once('.') {
        Some((i, f)) if f.bytes().all(|b| b.is_ascii_digit()) => i,
        Some(_) => return None,
        None => s,
    };
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    int.parse::<u64>().ok().filter(|&k| k > 0)
}

/// An option's value: a number, or for the C/W/L `stat` a statistic's name (`ETU`).
fn option_number(key: &str, v: &str) -> Option<f64> {
    let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
    match key {
        "stat" => cwl_stat(v).or_else(|| parse_number(v)),
        "m" => cam_measure(v).or_else(|| parse_number(v)),
        _ => parse_number(v),
    }
}

pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    s.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Parse one measure request into one or more measures.
///
/// Accepted spellings (names are case-insensitive in meaning: `MAP` is `map`):
/// * trec_eval: `P`, `P.5,10`, `P_5,10`, `ndcg_cut.10`, `ndcg_cut_10`, `ndcg.1=3,2=7`,
///   `rbp.p=0.8`, nicknames `official`, `all_trec`, `set`;
/// * ir_measures: `P@5`, `R@1000`, `AP`, `AP@100`, `RR`, `RR@10`, `nDCG`, `nDCG@10`, `Rprec`,
///   `Bpref`, `Success@10`, `infAP`, `NumRet`, `NumRel`, `NumRelRet`, `NumQ`, `SetP`, `SetR`,
///   `SetF`, `SetRelP`, `IPrec@0.5`, `RBP(p=0.8)`, `Judged`, `Judged@10`, with the options
///   `rel=N` (any of them), `cutoff=k`, `judged_only=True`, `gains={0:1,1:2}`,
///   `dcg='exp-log2'`, `beta=` (SetF), `recall=` (IPrec), `relative=True` (SetP);
/// * ranx: `precision`, `precision@5`, `recall@100`, `f1`, `hits@10`, `hit_rate`, `map`,
///   `map@100`, `mrr`, `mrr@10`, `ndcg`, `ndcg@10`, `r-precision`, `bpref`, `rbp.95`, and
///   `-lN` on any (`map@100-l2`).
///
/// Where one spelling has two meanings, [`Names::Irmetrics`] keeps trec_eval's for its
/// names (`recall`); see [`parse_measure_as`].
pub fn parse_measure(input: &str) -> Result<Vec<Measure>> {
    parse_measure_as(input, Names::Irmetrics)
}

/// [`parse_measure`] with the meanings of one peer where the peers differ ([`Names`]):
/// `recall` and `hits` without a cut-off are ranx's whole ranking with
/// [`Names::Ranx`], `ERR@k` is gdeval's (gmax = 4) with [`Names::IrMeasures`].
pub fn parse_measure_as(input: &str, names: Names) -> Result<Vec<Measure>> {
    let s = input.trim();
    if s.is_empty() {
        return Err(Error::Measure("empty measure name".into()));
    }
    if let Some(fams) = nickname(s) {
        return Ok(fams.iter().map(|&f| Measure::new(f)).collect());
    }
    if let Some(f) = bare_peer_name(s, names) {
        return Ok(vec![Measure::new(f)]);
    }
    if let Some(m) = parse_fixed_level(s)? {
        return Ok(vec![m]);
    }
    // `Rprec(rel=2)`, `SetF(beta=0.5)`: a peer's name with options first; trec_eval-like
    // names with family options (`err_cut_10(gmax=4)`) after
    if s.contains('(') {
        if let Some(m) = parse_at_style(s, names)? {
            return Ok(vec![m]);
        }
    }
    if let Some(m) = parse_trec(s)? {
        return Ok(vec![m]);
    }
    if let Some(m) = parse_at_style(s, names)? {
        return Ok(vec![m]);
    }
    Err(unknown(s))
}

/// `R@P(x)` (recall at precision x) and `P@R(x)` (precision at recall x), any case.
fn parse_fixed_level(s: &str) -> Result<Option<Measure>> {
    let lower = s.to_ascii_lowercase();
    let (family, rest) = if let Some(r) = lower.strip_prefix("r@p(") {
        (Family::RecallAtPrecision, r)
    } else if let Some(r) = lower.strip_prefix("p@r(") {
        (Family::PrecisionAtRecall, r)
    } else {
        return Ok(None);
    };
    let level = rest.strip_suffix(')').ok_or_else(|| {
        Error::Measure(format!("'{s}': unbalanced parenthesis in measure options"))
    })?;
    Measure::with_params(family, level).map(Some)
}

/// A bare peer name (no parameters) whose meaning is not trec_eval's family of the same
/// name: ranx's `precision`, `f1`, `hit_rate` (the whole ranking), ir_measures' `Judged`
/// (every retrieved document), and with [`Names::Ranx`] ranx's `recall` and `hits`.
/// trec_eval's own names (`recall`, `P`, `map`) keep trec_eval's meaning otherwise.
fn bare_peer_name(s: &str, names: Names) -> Option<Family> {
    if names == Names::Ranx {
        if s.eq_ignore_ascii_case("recall") {
            return Some(Family::SetRecall);
        }
        if s.eq_ignore_ascii_case("hits") {
            return Some(Family::SetHits);
        }
    }
    let plain = alias_by_name(s)?.plain?;
    match family_by_name(s) {
        Some(f) if f.is_trec_eval() => None,
        _ => Some(plain),
    }
}

/// trec_eval syntax: `name`, `name.params`, or `name_cutoff` for cut-off families,
/// optionally followed by family options in parentheses (`err_cut_10(gmax=4)`).
fn parse_trec(s: &str) -> Result<Option<Measure>> {
    if let Some(head) = s.strip_suffix(')') {
        if let Some((name, opts)) = head.split_once('(') {
            return match parse_trec_plain(name)? {
                Some(mut m) => {
                    let mut extra = Vec::new();
                    for opt in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
                        let (k, v) = opt.split_once('=').ok_or_else(|| {
                            Error::Measure(format!("'{s}': option '{opt}' is not name=value"))
                        })?;
                        let v = option_number(k.trim(), v).ok_or_else(|| {
                            Error::Measure(format!("'{s}': option '{k}' needs a finite number"))
                        })?;
                        extra.push((k.trim().to_string(), v));
                    }
                    m.set_opts(extra)?;
                    Ok(Some(m))
                }
                None => Ok(None),
            };
        }
    }
    parse_trec_plain(s)
}

fn parse_trec_plain(s: &str) -> Result<Option<Measure>> {
    if let Some(f) = family_by_name(s) {
        return Ok(Some(Measure::new(f)));
    }
    if let Some((name, params)) = s.split_once('.') {
        if let Some(f) = family_by_name(name) {
            // ranx's `rbp.95` (p = 0.95) is not trec_eval's `rbp.p=0.95`: the at-style
            // grammar reads it
            // (with ranx's `-lN` suffix too: `rbp.95-l2`)
            let digits = params.split_once("-l").map_or(params, |(d, _)| d);
            let ranx_rbp = f == Family::Rbp
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit());
            if !ranx_rbp {
                return Measure::with_params(f, params).map(Some);
            }
        }
    }
    // `ndcg_cut_10`, `P_5`, `iprec_at_recall_0.10`, `Rprec_mult_0.20`, `unj_5`.
    for (i, _) in s.match_indices('_').rev() {
        let (name, rest) = (&s[..i], &s[i + 1..]);
        if let Some(f) = family_by_name(name) {
            if matches!(f.param_kind(), ParamKind::Cutoffs | ParamKind::Fractions)
                && !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
            {
                return Measure::with_params(f, rest).map(Some);
            }
        }
    }
    Ok(None)
}

/// ir_measures / ranx syntax: `Name(opt=v,...)@k` with an optional `-lN` suffix.
///
/// The checks run in a fixed order, which fixes which error a bad name gets: the
/// `-lN` suffix, the parentheses, each option, an empty cut-off, then the name.
fn parse_at_style(s: &str, names: Names) -> Result<Option<Measure>> {
    let (rest, suffix_level) = split_level_suffix(s)?;
    let (base, opts_text, cut) = split_at_name(s, rest)?;
    let mut opts = AtOptions {
        rel_level: suffix_level,
        ..AtOptions::default()
    };
    if let Some(text) = opts_text {
        opts.parse(s, text)?;
    }
    if names == Names::IrMeasures {
        // ir_measures maps the qrels' labels through `gains` and hands them to
        // pytrec_eval: a label mapped below 0 is trec_eval's unjudged, so its gain is 0
        // (and out of the ideal ranking, as a gain of 0 is)
        let judged_only = opts
            .family
            .iter()
            .any(|(n, v)| n == "judged_only" && *v != 0.0);
        for (name, v) in &mut opts.family {
            let gain = name.len() > 1
                && name.starts_with('g')
                && name[1..].bytes().all(|b| b.is_ascii_digit());
            if gain && *v < 0.0 {
                if judged_only {
                    // there those documents also leave the ranking, as unjudged ones
                    return Err(Error::Measure(format!(
                        "'{s}': with judged_only=True, ir_measures drops the documents \
                         whose label a negative gain maps below 0 as unjudged, which \
                         irmetrics does not reproduce; give those labels gain 0"
                    )));
                }
                *v = 0.0;
            }
        }
    }
    if cut == Some("") {
        return Err(Error::Measure(format!("'{s}': nothing after '@'")));
    }
    // ir_measures' `cutoff=k` (`recall=x` of IPrec); an `@k` after it wins, as there
    let cut_text = opts.cutoff.take();
    let mut cut = cut.or(cut_text.as_deref());
    if names == Names::Ranx && cut == Some("0") {
        // ranx's k = 0: the whole ranking (`ndcg@0` is `ndcg`, `recall@0` ranx's `recall`)
        cut = None;
    }
    // ir_measures' Accuracy@k is its pairwise accuracy (ours: the confusion matrix's)
    if names == Names::IrMeasures && base.eq_ignore_ascii_case("Accuracy") && cut.is_some() {
        let m = Measure::with_params(Family::PairAccuracyCut, cut.unwrap_or_default())?;
        return opts.apply(s, m).map(Some);
    }
    if names == Names::IrMeasures
        && base.eq_ignore_ascii_case("ERR")
        && !opts.family.iter().any(|(n, _)| n == "gmax")
    {
        // gdeval.pl's (ir_measures') fixed maximum grade
        opts.family.push(("gmax".into(), 4.0));
    }
    if names == Names::IrMeasures
        && base.eq_ignore_ascii_case("IPrec")
        && !opts.family.iter().any(|(n, _)| n == "trec_eval9")
    {
        // ir_measures' IPrec is pytrec_eval's, whose trec_eval 9 ranks a level so
        opts.family.push(("trec_eval9".into(), 1.0));
    }
    if names == Names::Ranx && cut.is_none() && opts_text.is_none() {
        // ranx's `recall-l2` / `hits-l2`: the whole ranking at a level
        if let Some(f) = bare_peer_name(base, names) {
            return opts.apply(s, Measure::new(f)).map(Some);
        }
    }
    let Some((plain, with_cut)) = at_families(base, &mut opts) else {
        return Ok(None);
    };
    let Some(m) = at_measure(s, base, cut, plain, with_cut)? else {
        return Ok(None);
    };
    opts.apply(s, m).map(Some)
}

/// ranx's relevance-level suffix: `map@100-l2` is (`map@100`, level 2).
fn split_level_suffix(s: &str) -> Result<(&str, Option<i64>)> {
    if let Some(pos) = s.rfind("-l") {
        let lvl = &s[pos + 2..];
        if !lvl.is_empty() && lvl.bytes().all(|b| b.is_ascii_digit()) {
            let level = lvl
                .parse()
                .map_err(|_| Error::Measure(format!("bad relevance level in '{s}'")))?;
            return Ok((&s[..pos], Some(level)));
        }
    }
    Ok((s, None))
}

/// `base(options)@cut` into its three parts (`s` is the whole request, for errors).
fn split_at_name<'a>(
    s: &str,
    rest: &'a str,
) -> Result<(&'a str, Option<&'a str>, Option<&'a str>)> {
    let (head, cut) = match rest.split_once('@') {
        Some((h, c)) => (h, Some(c)),
        None => (rest, None),
    };
    match head.split_once('(') {
        Some((base, o)) => {
            let o = o.strip_suffix(')').ok_or_else(|| {
                Error::Measure(format!("'{s}': unbalanced parenthesis in measure options"))
            })?;
            Ok((base, Some(o), cut))
        }
        None => Ok((head, None, cut)),
    }
}

/// The options of an at-style name, sorted by what they control.
#[derive(Default)]
struct AtOptions {
    /// `rel=N` (or the `-lN` suffix): the measure's own relevance level.
    rel_level: Option<i64>,
    /// `p=x`: RBP's persistence.
    p: Option<f64>,
    /// `dcg='exp-log2'`: exponential gains (nDCG only).
    exp_gain: bool,
    /// Family options (`beta`, `gmax`, `b`, `ideal_all`, `gN`, `judged_only`), checked
    /// by `set_opts`.
    family: Vec<(String, f64)>,
    /// ir_measures' `cutoff=k` (or IPrec's `recall=x`), as the text after `@` would be.
    cutoff: Option<String>,
    /// ir_measures' `relative=True` of `SetP`: set_relative_P.
    relative: bool,
    /// `K=k` of BPM: its cut-off, given as an option.
    bpm_k: bool,
}

impl AtOptions {
    /// Read `name=value, ...` (values may be quoted; ir_measures' `gains={0:1,1:2}` is
    /// one option).
    fn parse(&mut self, s: &str, text: &str) -> Result<()> {
        for opt in split_options(text).map(str::trim).filter(|o| !o.is_empty()) {
            let (k, v) = opt.split_once('=').ok_or_else(|| {
                Error::Measure(format!(
                    "'{s}': option '{opt}' is not of the form name=value"
                ))
            })?;
            let v = v.trim().trim_matches(|c| c == '\'' || c == '"');
            self.set(s, k.trim(), v)?;
        }
        Ok(())
    }

    fn set(&mut self, s: &str, k: &str, v: &str) -> Result<()> {
        match k {
            "rel" => self.rel_level = Some(parse_rel_option(s, v)?),
            "p" => {
                self.p = Some(parse_number(v).ok_or_else(|| {
                    Error::Measure(format!("'{s}': p must be a finite number, got '{v}'"))
                })?)
            }
            "dcg" => match v {
                "exp-log2" => self.exp_gain = true,
                "log2" => {}
                _ => {
                    return Err(Error::Measure(format!(
                        "'{s}': dcg must be 'log2' or 'exp-log2', got '{v}'"
                    )))
                }
            },
            // torchmetrics' min_precision / min_recall are the level after `@`
            "cutoff" | "recall" | "min_precision" | "min_recall" => {
                self.cutoff = Some(v.to_string())
            }
            "normalize" => {
                let on = parse_flag(s, k, v)?;
                self.family
                    .push(("normalize".into(), f64::from(u8::from(on))));
            }
            "K" => {
                self.cutoff = Some(v.to_string());
                self.bpm_k = true;
            }
            // options named by a word: a C/W/L statistic, the measure CAM and WHAM
            // aggregate
            "stat" | "m" => {
                let x = option_number(k, v).ok_or_else(|| {
                    let words: &[&str] = if k == "stat" {
                        &super::family::CWL_STATS
                    } else {
                        &super::family::CAM_MEASURES
                    };
                    Error::Measure(format!(
                        "'{s}': {k} must be one of {}, got '{v}'",
                        words.join(", ")
                    ))
                })?;
                self.family.push((k.to_string(), x));
            }
            "judged_only" => {
                if parse_flag(s, k, v)? {
                    self.family.push(("judged_only".into(), 1.0));
                }
            }
            "relative" => self.relative = parse_flag(s, k, v)?,
            "gains" => {
                let inner = v
                    .strip_prefix('{')
                    .and_then(|v| v.strip_suffix('}'))
                    .ok_or_else(|| {
                        Error::Measure(format!(
                            "'{s}': gains must be a map {{label: gain, ...}}, got '{v}'"
                        ))
                    })?;
                for pair in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let (label, gain) = pair.split_once(':').ok_or_else(|| {
                        Error::Measure(format!("'{s}': '{pair}' in gains is not label: gain"))
                    })?;
                    let label = label.trim();
                    if label.is_empty() || !label.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(Error::Measure(format!(
                            "'{s}': the labels of gains must be whole numbers >= 0, got \
                             '{label}'"
                        )));
                    }
                    let gain = parse_number(gain).ok_or_else(|| {
                        Error::Measure(format!("'{s}': gain must be a finite number, got '{gain}'"))
                    })?;
                    let label = label.trim_start_matches('0');
                    let label = if label.is_empty() { "0" } else { label };
                    self.family.push((format!("g{label}"), gain));
                }
            }
            k if is_family_option(k) => {
                let x = parse_number(v).ok_or_else(|| {
                    Error::Measure(format!("'{s}': {k} must be a finite number, got '{v}'"))
                })?;
                self.family.push((k.to_string(), x));
            }
            other => {
                return Err(Error::Measure(format!(
                    "'{s}': option '{other}' is not supported (supported: rel, cutoff, \
                     judged_only; p for RBP and Compat; normalize for Compat; dcg and gains \
                     for nDCG; beta for F and SetF; gmax for ERR/nERR; b for dcg_jk; recall \
                     for IPrec; trec_eval9 for iprec_at_recall and 11pt_avg; relative for SetP; max_fpr for AUROC; min_precision, \
                     min_recall for R@P, P@R; T, K, p, hb, hc, gain_med, min_rel, max_rel \
                     and stat for the C/W/L models; mu, nu, lambda and m for the credibility \
                     measures)"
                )))
            }
        }
        Ok(())
    }

    /// Put the options on the measure the name resolved to.
    fn apply(mut self, s: &str, mut m: Measure) -> Result<Measure> {
        if self.relative {
            if m.family != Family::SetP {
                return Err(Error::Measure(format!(
                    "'{s}': relative applies to SetP only"
                )));
            }
            m = Measure::new(Family::SetRelativeP);
        }
        // ir_measures' NumRet(rel=N): retrieved documents with label >= N
        if m.family == Family::NumRet && self.rel_level.is_some() {
            m = Measure::new(Family::NumRelRet);
        }
        // ir_measures' SetF(beta=b) is trec_eval's set_F.b
        if m.family == Family::SetF {
            if let Some(i) = self.family.iter().position(|(n, _)| n == "beta") {
                let (_, b) = self.family.remove(i);
                m = Measure::with_params(Family::SetF, &fmt_num(b))?;
            }
        }
        if let Some(pv) = self.p {
            match m.family {
                Family::Rbp => {
                    m = Measure::with_params(Family::Rbp, &format!("p={}", fmt_num(pv)))?
                }
                Family::RbpBin
                | Family::RbpLabel
                | Family::Compat
                | Family::CwlRbp
                | Family::Nerr10 => self.family.push(("p".into(), pv)),
                _ => {
                    return Err(Error::Measure(format!(
                        "'{s}': p applies to RBP only (and to Compat, cwl_rbp and NERR10)"
                    )))
                }
            }
        }
        if self.bpm_k && !matches!(m.family, Family::Bpm | Family::BpmDynamic) {
            return Err(Error::Measure(format!(
                "'{s}': K applies to BPM only (other measures take a cut-off, @k)"
            )));
        }
        if self.exp_gain && !matches!(m.family, Family::NdcgBurges | Family::NdcgBurgesCut) {
            return Err(Error::Measure(format!("'{s}': dcg applies to nDCG only")));
        }
        // a level these measures would not use is refused, not ignored: ERR's gains are
        // the labels against gmax, and judged-ness has no level
        if self.rel_level.is_some()
            && matches!(
                m.family,
                Family::ErrCut | Family::NerrCut | Family::Judged | Family::SetJudged | Family::Unj
            )
        {
            return Err(Error::Measure(format!(
                "'{s}': a relevance level (rel=, -lN) does not apply to {}: {}",
                m.family.name(),
                if matches!(m.family, Family::ErrCut | Family::NerrCut) {
                    "its gains are the labels, up to gmax"
                } else {
                    "whether a document is judged has no level"
                }
            )));
        }
        m.rel_level = self.rel_level;
        m.set_opts(self.family)?;
        Ok(m)
    }
}

/// A flag option: `True`/`False` (ir_measures' Python spelling), `true`/`false`, 1/0.
pub(crate) fn parse_flag(s: &str, k: &str, v: &str) -> Result<bool> {
    match v {
        "True" | "true" | "1" => Ok(true),
        "False" | "false" | "0" => Ok(false),
        _ => Err(Error::Measure(format!(
            "'{s}': {k} must be True or False, got '{v}'"
        ))),
    }
}

/// Options split at the commas outside braces (`gains={0:1,1:2}, cutoff=10`).
pub(crate) fn split_options(text: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i32;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter()
}

/// `rel=N`: a whole number >= 0.
pub(crate) fn parse_rel_option(s: &str, v: &str) -> Result<i64> {
    let l: i64 = v
        .parse()
        .map_err(|_| Error::Measure(format!("'{s}': rel must be a whole number, got '{v}'")))?;
    if l < 0 {
        return Err(Error::Measure(format!(
            "'{s}': relevance level rel={l} must be 0 or more; negative labels \
             mean 'pooled but unjudged' and can never be relevant"
        )));
    }
    Ok(l)
}

/// The numeric options of families beyond trec_eval: `beta`, `gmax`, `b`, `ideal_all`,
/// `trec_eval9` (iprec_at_recall and 11pt_avg as trec_eval 9) and the gain map `gN`.
fn is_family_option(k: &str) -> bool {
    // (`judged_only` is read by `AtOptions::set` as a flag)
    matches!(
        k,
        "beta"
            | "gmax"
            | "trec_eval9"
            | "b"
            | "ideal_all"
            | "T"
            | "hb"
            | "hc"
            | "gain_med"
            | "min_rel"
            | "max_rel"
            | "max_fpr"
            | "mu"
            | "nu"
            | "lambda"
    ) || (k.len() > 1 && k.starts_with('g') && k[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// The families an at-style base name means, (without a cut-off, with one), or None if
/// it names none. Looks in the alias table, then ranx's `rbp.95` (which sets p), then
/// the canonical names (`tpr@10`, `fallout@100`).
fn at_families(base: &str, opts: &mut AtOptions) -> Option<(Option<Family>, Option<Family>)> {
    if let Some(a) = alias_by_name(base) {
        return Some(refine_alias(a.plain, a.with_cut, opts));
    }
    // ranx rbp.95 -> p = 0.95, the labels themselves as gains (ranx's)
    let lower = base.to_ascii_lowercase();
    if let Some(digits) = lower.strip_prefix("rbp.") {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            opts.p = Some(format!("0.{digits}").parse().unwrap_or(0.9));
            return Some((Some(Family::RbpLabel), None));
        }
        return None;
    }
    let f = family_by_name(base)?;
    match f.param_kind() {
        ParamKind::Cutoffs | ParamKind::Fractions => Some((None, Some(f))),
        ParamKind::None => Some((Some(f), None)),
        ParamKind::Numbers | ParamKind::Pairs => None,
    }
}

/// The variants an alias's options select: `nDCG(dcg='exp-log2')` is ndcg_burges,
/// `nDCG(gN=x)` (any family option) ndcg_gain, `RBP(rel=N)` rbp_bin.
fn refine_alias(
    plain: Option<Family>,
    with_cut: Option<Family>,
    opts: &AtOptions,
) -> (Option<Family>, Option<Family>) {
    use Family::*;
    match (plain, with_cut) {
        (Some(Ndcg), Some(NdcgCut)) if opts.exp_gain => (Some(NdcgBurges), Some(NdcgBurgesCut)),
        (Some(Ndcg), Some(NdcgCut)) if opts.family.iter().any(|(n, _)| n != "judged_only") => {
            (Some(NdcgGain), Some(NdcgGainCut))
        }
        (Some(Rbp), None) if opts.rel_level.is_some() => (Some(RbpBin), None),
        other => other,
    }
}

/// The measure for a base name and an optional cut-off text, given the families it
/// means without and with a cut-off.
fn at_measure(
    s: &str,
    base: &str,
    cut: Option<&str>,
    plain: Option<Family>,
    with_cut: Option<Family>,
) -> Result<Option<Measure>> {
    match (cut, plain, with_cut) {
        (Some(c), _, Some(f)) => Measure::with_params(f, c).map(Some),
        (None, Some(f), _) => Ok(Some(Measure::new(f))),
        (None, None, Some(f)) => Err(Error::Measure(format!(
            "'{s}' needs a cut-off, e.g. '{base}@10' (or trec_eval's '{}')",
            f.name()
        ))),
        (Some(_), _, None) => Err(Error::Measure(format!(
            "'{s}': '{base}' takes no @ cut-off"
        ))),
        (None, None, None) => Ok(None),
    }
}

/// A number as names print it: Rust's shortest round-trip form (`0.8`, `4`).
pub(super) fn fmt_num(x: f64) -> String {
    format!("{x}")
}

/// Every name the parser knows, for suggestions, read from the catalogue: the canonical
/// family names first, then the nicknames, then the aliases (shown with an example
/// cut-off when they need one: `hits@10`, `IPrec@0.5`).
fn known_names() -> impl Iterator<Item = String> {
    let families = Family::ALL.iter().map(|f| f.name().to_string());
    let nicknames = NICKNAMES.iter().map(|(n, _)| n.to_string());
    let aliases = ALIASES.iter().flat_map(|a| {
        let example = match (a.plain, a.with_cut) {
            (None, Some(f)) if f.param_kind() == ParamKind::Fractions => "@0.5",
            (None, Some(_)) => "@10",
            _ => "",
        };
        a.names.iter().map(move |n| format!("{n}{example}"))
    });
    families.chain(nicknames).chain(aliases)
}

/// A name without its parameters, lower case: what suggestions compare.
fn bare(name: &str) -> String {
    name.split(['@', '.', '('])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
}

/// The error for a name nothing parses, with up to four known names near it
/// ([`crate::error::suggestions`], parameters and case ignored: of names that differ
/// only in case or parameters the first known, a canonical name before an alias).
fn unknown(s: &str) -> Error {
    let close = crate::error::suggestions(s, known_names(), bare, 4);
    if close.is_empty() {
        Error::Measure(format!(
            "unknown measure '{s}'; see irmetrics.measures() for the list"
        ))
    } else {
        Error::Measure(format!(
            "unknown measure '{s}'; did you mean {}?",
            crate::error::quoted(&close)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names as data both ways: every name offered as a suggestion parses.
    #[test]
    fn every_known_name_parses() {
        for name in known_names() {
            assert!(parse_measure(&name).is_ok(), "{name}");
        }
    }

    /// ranx's `rbp.95` is reached (trec_eval's grammar must not claim it) and means
    /// p = 0.95 with ranx's gains (the labels): rbp_label, not trec_eval's rescaled rbp.
    #[test]
    fn ranx_rbp_spelling_means_p() {
        let m = parse_measure("rbp.95").unwrap();
        assert_eq!(m[0].column_names(), ["rbp_label(p=0.95)"]);
        assert_eq!(parse_measure("RBP.95").unwrap(), m);
        assert_eq!(parse_measure("rbp_label(p=0.95)").unwrap(), m);
        assert_ne!(parse_measure("rbp.8").unwrap(), m);
        assert!(parse_measure("rbp.9x").is_err());
    }

    fn cols_as(name: &str, names: Names) -> Vec<String> {
        parse_measure_as(name, names)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .iter()
            .flat_map(|m| m.column_names())
            .collect()
    }

    /// The peers' spellings of issue 12, each with the peer's meaning.
    /// ir_measures reads a negative gain as pytrec_eval sees the label it maps to:
    /// unjudged, gain 0; elsewhere the gain is used as given.
    #[test]
    fn ir_measures_negative_gains_are_unjudged_labels() {
        let name = "nDCG(gains={1:-1,2:5})@3";
        let ir = cols_as(name, Names::IrMeasures);
        assert_eq!(ir, cols_as("nDCG(gains={1:0,2:5})@3", Names::IrMeasures));
        assert_ne!(ir, cols_as(name, Names::Irmetrics));
        let e = parse_measure_as("nDCG(gains={1:-1},judged_only=True)", Names::IrMeasures);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("give those labels gain 0"));
    }

    #[test]
    fn peer_spellings() {
        let n = Names::Irmetrics;
        for (name, want) in [
            ("MAP", vec!["map"]),
            ("MRR", vec!["recip_rank"]),
            ("NDCG@10", vec!["ndcg_cut_10"]),
            ("P_5,10", vec!["P_5", "P_10"]),
            ("ndcg_cut_5,10", vec!["ndcg_cut_5", "ndcg_cut_10"]),
            ("nDCG(gains={0:1,1:2})", vec!["ndcg_gain(g0=1,g1=2)"]),
            (
                "nDCG(dcg=\"exp-log2\", cutoff=20)@10",
                vec!["ndcg_burges_cut_10"],
            ),
            (
                "nDCG(dcg='exp-log2', cutoff=20)",
                vec!["ndcg_burges_cut_20"],
            ),
            ("IPrec(rel=2, recall=0.4)", vec!["iprec_at_recall_0.40-l2"]),
            ("SetRelP(rel=2)", vec!["set_relative_P-l2"]),
            ("SetP(relative=True)", vec!["set_relative_P"]),
            ("SetF(rel=1, beta=0.5)", vec!["set_F_0.5-l1"]),
            ("infAP(rel=2)", vec!["infAP-l2"]),
            ("Rprec(rel=2)", vec!["Rprec-l2"]),
            ("P(judged_only=True)@4", vec!["P_4(judged_only=1)"]),
            ("P(judged_only=False)@4", vec!["P_4"]),
            ("Judged", vec!["set_judged"]),
            ("judged", vec!["set_judged"]),
            ("Judged@10", vec!["judged_10"]),
            ("precision", vec!["set_P"]),
            ("f1", vec!["set_F"]),
            ("hit_rate", vec!["set_success"]),
            ("hit_rate-l2", vec!["set_success-l2"]),
            ("NumRet(rel=2)", vec!["num_rel_ret-l2"]),
            ("NumRet", vec!["num_ret"]),
            ("ERR@10", vec!["err_cut_10"]),
            ("err@10", vec!["err_cut_10"]),
            ("ERR(gmax=4)@10", vec!["err_cut_10(gmax=4)"]),
            // trec_eval's names keep trec_eval's meaning by default
            (
                "recall",
                vec![
                    "recall_5",
                    "recall_10",
                    "recall_15",
                    "recall_20",
                    "recall_30",
                    "recall_100",
                    "recall_200",
                    "recall_500",
                    "recall_1000",
                ],
            ),
            ("hits", vec!["hits_1", "hits_5", "hits_10"]),
        ] {
            assert_eq!(cols_as(name, n), want, "{name}");
        }
        assert_eq!(cols_as("recall", Names::Ranx), ["set_recall"]);
        assert_eq!(cols_as("hits", Names::Ranx), ["set_hits"]);
        assert_eq!(cols_as("recall-l2", Names::Ranx), ["set_recall-l2"]);
        assert_eq!(cols_as("recall@10", Names::Ranx), ["recall_10"]);
        // ranx's k = 0 is the whole ranking, as the bare name; elsewhere refused
        assert_eq!(cols_as("recall@0", Names::Ranx), ["set_recall"]);
        assert_eq!(cols_as("hits@0-l2", Names::Ranx), ["set_hits-l2"]);
        for name in [
            "ndcg",
            "map",
            "mrr",
            "precision",
            "f1",
            "hit_rate",
            "ndcg_burges",
        ] {
            let zero = format!("{name}@0");
            assert_eq!(
                cols_as(&zero, Names::Ranx),
                cols_as(name, Names::Ranx),
                "{name}"
            );
            assert!(parse_measure(&zero).is_err(), "{zero}");
        }
        assert_eq!(cols_as("ERR@10", Names::IrMeasures), ["err_cut_10(gmax=4)"]);
        assert_eq!(cols_as("err@10", Names::IrMeasures), ["err_cut_10(gmax=4)"]);
        assert_eq!(
            cols_as("ERR(gmax=2)@10", Names::IrMeasures),
            ["err_cut_10(gmax=2)"]
        );
        assert_eq!(cols_as("recall", Names::IrMeasures), cols_as("recall", n));
        // every alias means one thing whatever its case
        for a in ALIASES {
            for name in a.names {
                for spelled in [
                    name.to_string(),
                    name.to_ascii_lowercase(),
                    name.to_ascii_uppercase(),
                ] {
                    for cut in ["", "@10", "@0.5"] {
                        let x =
                            parse_measure(&format!("{spelled}{cut}")).map_err(|e| e.to_string());
                        let y = parse_measure(&format!("{name}{cut}")).map_err(|e| e.to_string());
                        assert_eq!(x.is_ok(), y.is_ok(), "{spelled}{cut}");
                        if let (Ok(x), Ok(y)) = (x, y) {
                            assert_eq!(x, y, "{spelled}{cut}");
                        }
                    }
                }
            }
        }
    }

    /// Every spelling of a parameter outside its domain is refused by the one check,
    /// with an error naming the measure and the parameter.
    #[test]
    fn parameters_outside_their_domain_are_refused_in_every_spelling() {
        for (name, family, param) in [
            // Rprec_mult: multiples of R >= 0
            ("Rprec_mult.-0.5", "Rprec_mult", "multiple of R"),
            ("Rprec_mult.0.2,-1", "Rprec_mult", "multiple of R"),
            // recall levels in [0, 1], all spellings
            ("iprec_at_recall.1.5", "iprec_at_recall", "recall level"),
            ("iprec_at_recall.-0.1", "iprec_at_recall", "recall level"),
            ("iprec_at_recall_1.10", "iprec_at_recall", "recall level"),
            ("IPrec@1.5", "iprec_at_recall", "recall level"),
            ("IPrec@-0.5", "iprec_at_recall", "recall level"),
            // `iprec@x` is ir_measures' IPrec (any case): trec_eval's iprec_at_recall
            ("iprec@2", "iprec_at_recall", "recall level"),
            ("iprec.2", "iprec", "recall level"),
            ("11pt_avg.0.5,1.2", "11pt_avg", "recall level"),
            // F's beta >= 0: trec_eval's set_F and the F_cut options
            ("set_F.-1", "set_F", "beta"),
            ("F(beta=-1)@10", "F_cut", "beta"),
            ("F_cut_10(beta=-0.5)", "F_cut", "beta"),
            // relstring's length
            ("relstring.-1", "relstring", "length"),
            // gmax: a whole number with 2^gmax finite
            ("ERR(gmax=1024)@10", "err_cut", "gmax"),
            ("err_cut_10(gmax=2.5)", "err_cut", "gmax"),
            ("nerr_cut_5(gmax=-1)", "nerr_cut", "gmax"),
            // persistence strictly between 0 and 1, every spelling
            ("rbp.p=1", "rbp", "p"),
            ("rbp.p=0", "rbp", "p"),
            ("rbp_resid.p=1.5", "rbp_resid", "p"),
            ("RBP(p=1)", "rbp", "p"),
            ("RBP(rel=1,p=0)", "rbp_bin", "p"),
            ("rbp_bin(p=2)", "rbp_bin", "p"),
            // Jarvelin-Kekalainen's log base b > 1
            ("dcg_jk(b=1)@10", "dcg_jk", "b"),
            ("dcg_jk_5(b=0.5)", "dcg_jk", "b"),
            // ideal_all is a flag
            ("nDCG(ideal_all=2)@10", "ndcg_gain_cut", "ideal_all"),
            ("ndcg_gain(ideal_all=0.5)", "ndcg_gain", "ideal_all"),
        ] {
            let e = parse_measure(name).unwrap_err();
            assert!(matches!(e, Error::Measure(_)), "{name}: {e:?}");
            let e = e.to_string();
            assert!(
                e.contains(&format!("measure '{family}': parameter {param} must be ")),
                "{name}: {e}"
            );
            // and through the list parser (what every route calls)
            assert!(super::super::MeasureSet::parse(&[name]).is_err(), "{name}");
        }
        // NaN and infinities are never a parameter, whatever the spelling
        for name in [
            "rbp.p=nan",
            "set_F.inf",
            "utility.1,-1,0,nan",
            "ndcg.1=inf",
            "iprec_at_recall.nan",
            "F(beta=inf)@10",
            "ERR(gmax=nan)@10",
            "dcg(g1=-inf)@10",
            "ndcg(g2=1e999)@10",
        ] {
            let e = parse_measure(name).unwrap_err();
            assert!(matches!(e, Error::Measure(_)), "{name}: {e:?}");
            assert!(e.to_string().contains("finite number"), "{name}: {e}");
        }
    }

    #[test]
    fn a_level_a_measure_would_ignore_is_refused() {
        for name in [
            "ERR(rel=2)@10",
            "err@10-l2",
            "nERR(rel=2)@20",
            "Judged(rel=2)@10",
        ] {
            let e = parse_measure(name).unwrap_err().to_string();
            assert!(e.contains("does not apply"), "{name}: {e}");
        }
        assert!(parse_measure("ndcg@10-l2").is_ok());
    }

    #[test]
    fn parameters_at_the_edges_of_their_domain_are_accepted() {
        for name in [
            "Rprec_mult.0,0.2,5",
            "iprec_at_recall.0,1",
            "IPrec@0",
            "IPrec@1",
            "iprec@1",
            "11pt_avg.0,1",
            "set_F.0",
            "set_F.0.5",
            "SetF",
            "F(beta=0)@10",
            "relstring.0",
            "ERR(gmax=0)@10",
            "ERR(gmax=1023)@10",
            "rbp.p=0.000001",
            "RBP(p=0.999999)",
            "dcg_jk(b=1.0001)@10",
            "nDCG(ideal_all=0)@10",
            "nDCG(ideal_all=1)@10",
            "utility.-1e300,1,0,-2",
            "ndcg.0=-1,1=9007199254740992",
            "dcg(g1=-0.5)@10",
            "P(rel=0)@5",
        ] {
            let m = parse_measure(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(m.iter().all(|m| m.check().is_ok()), "{name}");
        }
    }

    /// Options that are no family's: named in the error, `g` without a label included.
    #[test]
    fn unknown_options_are_named() {
        for (name, opt) in [
            ("nDCG(foo=1)@10", "foo"),
            ("nDCG(g=1)@10", "g"),
            ("P(gx=1)@5", "gx"),
        ] {
            let e = parse_measure(name).unwrap_err().to_string();
            assert!(
                e.contains(&format!("option '{opt}' is not supported")),
                "{name}: {e}"
            );
        }
    }

    /// A measure built by hand in Rust meets the same check (the evaluator runs it).
    #[test]
    fn hand_built_measures_are_checked_too() {
        use super::super::Params;
        let mut m = Measure::new(Family::Rbp);
        m.params = Params::Pairs {
            pairs: vec![("p".into(), 1.5)],
            text: None,
        };
        let e = m.check().unwrap_err().to_string();
        assert!(e.contains("measure 'rbp': parameter p must be"), "{e}");
        let mut m = Measure::new(Family::IprecAtRecall);
        m.params = Params::Fractions {
            values: vec![f64::NAN],
            given: true,
        };
        assert!(m.check().is_err());
        let mut m = Measure::new(Family::P);
        m.params = Params::Cutoffs {
            values: vec![0, 5],
            given: true,
        };
        assert!(m.check().unwrap_err().to_string().contains("cut-off"));
        let mut m = Measure::new(Family::FCut);
        m.opts = vec![("beta".into(), -1.0)];
        assert!(m.check().is_err());
        // `g` alone is no gain option (`gN` needs a label N)
        let mut m = Measure::new(Family::Dcg);
        m.opts = vec![("g".into(), 1.0)];
        assert!(m
            .check()
            .unwrap_err()
            .to_string()
            .contains("no parameter 'g'"));
        // set_opts leaves the measure as it was when it refuses
        let mut m = Measure::new(Family::FCut);
        assert!(m.set_opts(vec![("beta".into(), -2.0)]).is_err());
        assert!(m.opts.is_empty());
    }

    /// The catalogue is complete: every named option and every list or pair parameter
    /// has a domain, and every family's defaults lie in it.
    #[test]
    fn every_parameter_has_a_domain() {
        for &f in Family::ALL {
            for opt in f.options() {
                assert!(f.param(opt).is_some(), "{}: option {opt}", f.name());
            }
            match f.param_kind() {
                ParamKind::Fractions | ParamKind::Numbers | ParamKind::Pairs => {
                    assert!(!f.params().is_empty(), "{}", f.name())
                }
                ParamKind::None | ParamKind::Cutoffs => {
                    let named: Vec<&str> = f.params().iter().map(|p| p.name).collect();
                    assert_eq!(named, f.options(), "{}", f.name());
                }
            }
            assert!(Measure::new(f).check().is_ok(), "{}", f.name());
        }
    }

    #[test]
    fn suggestions_come_from_the_tables() {
        // an alias only (ranx hit_rate), a nickname and a canonical name
        let e = parse_measure("hitrate@10").unwrap_err().to_string();
        assert!(e.contains("'hit_rate'"), "{e}");
        let e = parse_measure("al_trec").unwrap_err().to_string();
        assert!(e.contains("'all_trec'"), "{e}");
        let e = parse_measure("ndgc_cut.10").unwrap_err().to_string();
        assert!(e.contains("'ndcg_cut'"), "{e}");
        // one suggestion per name up to case: the canonical spelling
        let e = parse_measure("infapp").unwrap_err().to_string();
        assert!(e.contains("'infAP'") && !e.contains("'InfAP'"), "{e}");
    }
}
