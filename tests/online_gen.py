"""A seeded synthetic search log with its ground truth, for the tests and benches/online.py.

The log is generated as structure (sessions -> SERPs -> clicks, in time order), and
every metric's truth is computed from that structure with numpy, never through
irmetrics: a click's SERP is known by construction, whereas irmetrics must find it from
the (shuffled) rows. Each session has 1 + Poisson(0.6) SERPs; a SERP has 0 results with
probability 0.05, else 1-50; its clicks (binomial, the rate depending on the variant)
land on positions 1 + Geometric(0.35) capped at n_results; half the clicks carry a
dwell; some SERPs are followed by a purchase (a success event) and some by a hover (an
unknown type, ignored by irmetrics and so by the truth's derived dwell too).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

DWELL_CAP = 1800.0
T0 = 1_714_521_600.0  # 2024-05-01T00:00:00Z
VARIANT_CLICK_P = {"A": 0.30, "B": 0.40}


def generate(n_sessions: int, seed: int = 0, shuffle: bool = True) -> dict[str, Any]:
    """``{"events": DataFrame, "truth": {...}, "serp": {...}, ...}`` for ``n_sessions``."""
    rng = np.random.default_rng(seed)
    s_variant = rng.integers(0, 2, n_sessions)  # 0: A, 1: B
    n_serps = 1 + rng.poisson(0.6, n_sessions)
    serp_session = np.repeat(np.arange(n_sessions), n_serps)
    m = serp_session.size
    n_results = np.where(rng.random(m) < 0.05, 0, rng.integers(1, 51, m))
    vocab = 5000
    query = np.minimum(rng.zipf(1.4, m), vocab) - 1
    latency = np.round(rng.lognormal(4.5, 0.5, m), 1)
    p_click = np.where(s_variant[serp_session] == 1, VARIANT_CLICK_P["B"], VARIANT_CLICK_P["A"])
    clicks = np.where(n_results > 0, rng.binomial(3, p_click), 0)
    purchase = rng.random(m) < 0.04
    hover = rng.random(m) < 0.10
    # events per SERP, in order: the SERP, its clicks, a purchase, a hover
    per_serp = 1 + clicks + purchase + hover
    n_events = int(per_serp.sum())
    serp_first = np.concatenate([[0], np.cumsum(per_serp)[:-1]])
    ev_serp = np.repeat(np.arange(m), per_serp)
    offset = np.arange(n_events) - serp_first[ev_serp]
    kind = np.full(n_events, "query", dtype=object)
    is_click = (offset >= 1) & (offset <= clicks[ev_serp])
    kind[is_click] = "click"
    extra = offset - clicks[ev_serp]  # 1: purchase if any, then hover
    is_purchase = (extra == 1) & purchase[ev_serp]
    kind[is_purchase] = "purchase"
    is_hover = ~(offset == 0) & ~is_click & ~is_purchase
    kind[is_hover] = "hover"
    ev_session = serp_session[ev_serp]
    # times: a session start over 30 days, then gaps of 0.5 + Exp(25) seconds
    start = T0 + rng.random(n_sessions) * 30 * 86400
    gaps = np.round(0.5 + rng.exponential(25.0, n_events), 3)
    csum = np.cumsum(gaps)
    first_of_session = np.concatenate([[True], ev_session[1:] != ev_session[:-1]])
    base = np.maximum.accumulate(np.where(first_of_session, csum - gaps, 0.0))
    time = np.round(start[ev_session] + (csum - base), 3)
    position = np.full(n_events, np.nan)
    cpos = 1 + rng.geometric(0.35, int(is_click.sum())) - 1
    cpos = np.minimum(np.maximum(cpos, 1), n_results[ev_serp[is_click]])
    position[is_click] = cpos
    dwell = np.full(n_events, np.nan)
    given = is_click & (rng.random(n_events) < 0.5)
    dwell[given] = np.round(rng.exponential(40.0, int(given.sum())), 2)
    is_serp = offset == 0
    names = np.array(["A", "B"], dtype=object)
    events = pd.DataFrame(
        {
            "session_id": np.char.add("s", ev_session.astype(str)).astype(object),
            "timestamp": time,
            "type": kind,
            "query": np.where(is_serp, np.char.add("q", query[ev_serp].astype(str)), None),
            "n_results": np.where(is_serp, n_results[ev_serp], np.nan),
            "position": position,
            "doc_id": np.where(is_click, "d", None),
            "dwell": dwell,
            "latency_ms": np.where(is_serp, latency[ev_serp], np.nan),
            "variant": names[s_variant[ev_session]],
        }
    )
    order = rng.permutation(n_events) if shuffle else np.arange(n_events)
    events = events.iloc[order].reset_index(drop=True)
    g = {
        "serp_session": serp_session,
        "n_results": n_results,
        "query": query,
        "latency": latency,
        "clicks": clicks,
        "purchase": purchase,
        "s_variant": s_variant,
        "ev": {
            "serp": ev_serp,
            "session": ev_session,
            "time": time,
            "is_click": is_click,
            "is_hover": is_hover,
            "is_serp": is_serp,
            "position": position,
            "dwell": dwell,
        },
    }
    return {"events": events, "structure": g, "truth": truth(g), "n_hover": int(is_hover.sum())}


def _ratio(a: float, b: float) -> float:
    return float(a) / float(b) if b else float("nan")


def truth(g: dict[str, Any], sessions: np.ndarray | None = None) -> dict[str, float]:
    """Every metric from the generated structure (optionally for some sessions)."""
    ev = g["ev"]
    n_sessions = g["s_variant"].size
    keep_s = (
        np.ones(n_sessions, bool) if sessions is None else np.isin(np.arange(n_sessions), sessions)
    )
    serp_keep = keep_s[g["serp_session"]]
    m = int(serp_keep.sum())
    # derived dwell: the next kept (not hover) event of the session, capped; last: the cap
    kept = ~ev["is_hover"]
    k_time, k_session = ev["time"][kept], ev["session"][kept]
    nxt = np.full(k_time.size, np.inf)
    same = k_session[1:] == k_session[:-1]
    nxt[:-1][same] = k_time[1:][same] - k_time[:-1][same]
    derived = np.full(ev["time"].size, np.nan)
    derived[kept] = np.minimum(nxt, DWELL_CAP)
    dwell = np.where(np.isnan(ev["dwell"]), derived, ev["dwell"])
    click = ev["is_click"] & keep_s[ev["session"]]
    c_serp, c_pos, c_time = ev["serp"][click], ev["position"][click], ev["time"][click]
    serp_time = np.zeros(g["n_results"].size)
    serp_time[ev["serp"][ev["is_serp"]]] = ev["time"][ev["is_serp"]]
    # first click of each SERP: clicks are in time order within a SERP
    first = np.concatenate([[True], c_serp[1:] != c_serp[:-1]]) if c_serp.size else c_serp
    first_serp, first_pos = c_serp[first], c_pos[first]
    min_pos = np.full(g["n_results"].size, np.inf)
    np.minimum.at(min_pos, c_serp, c_pos)
    clicked = np.zeros(g["n_results"].size, bool)
    clicked[c_serp] = True
    nr = g["n_results"][serp_keep]
    ttfc = c_time[first] - serp_time[first_serp]
    out: dict[str, float] = {
        "ctr": _ratio(clicked[serp_keep].sum(), m),
        "clicks_per_query": _ratio(c_serp.size, m),
        "zero_result_rate": _ratio((nr == 0).sum(), m),
        "click_mrr": _ratio((1.0 / first_pos).sum(), m),
        "time_to_first_click": float(np.median(ttfc)) if ttfc.size else float("nan"),
    }
    for k in (1, 3, 5, 10):
        out[f"ctr@{k}"] = _ratio((min_pos[serp_keep] <= k).sum(), m)
    for p in range(1, 11):
        out[f"ctr_by_position@{p}"] = _ratio((c_pos == p).sum(), (nr >= p).sum())
    s_click = np.zeros(n_sessions, bool)
    s_click[ev["session"][click]] = True
    s_success = np.zeros(n_sessions, bool)
    s_success[ev["session"][click][dwell[click] >= 30.0]] = True
    s_success[g["serp_session"][g["purchase"]]] = True
    n = int(keep_s.sum())
    out["abandonment_rate"] = _ratio((~s_click & keep_s).sum(), n)
    out["success_rate"] = _ratio((s_success & keep_s).sum(), n)
    return out
