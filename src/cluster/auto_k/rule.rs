//! The rule that reads k off the sweep's silhouette curve (see the module docs of
//! [`super`] for why): a clear peak; else the end of an early fall, an interior peak the curve
//! falls back from, or the knee where it levels off; never below the floor
//! `floor(sqrt(n) / 10)`.
//!
//! It is a function of the per-k silhouettes alone (plus the corpus size and the previous k), so
//! it adds nothing to the sweep's cost and can be replayed from `k_selection.csv`
//! (`scripts/auto_k_eval.py` does, on a labelled panel).

/// A silhouette at least this high somewhere is a clear peak, taken as it is (text stays
/// below 0.11 at every k; separated groups give 0.5 and more).
pub const CLEAR: f64 = 0.25;
/// The knee: the first k where the smoothed silhouette has made this share of its rise.
pub const LEVEL: f64 = 0.6;
/// An early fall at least this share of the rise after it marks a few broad groups first.
pub const FALL: f64 = 0.15;
/// An interior maximum of the smoothed curve that it falls back from by at least this share of
/// its rise is a peak: the groups are found, and more k only splits them.
pub const PEAK_DROP: f64 = 0.5;
/// A previous run's k stays while it is within this share of the rise of where the rule
/// lands (the knee band `LEVEL ± KEEP`, or the bottom of a fall plus `KEEP` of the rise).
pub const KEEP: f64 = 0.1;
/// The curve is read on k <= this (or `lo + 2`), so a larger `k-max` does not move the knee.
pub const WINDOW: usize = 20;
/// Documents per unit of `sqrt(n)` in the floor `floor(sqrt(n) / RESOLUTION)`.
pub const RESOLUTION: f64 = 10.0;

/// What decided k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// A clear silhouette peak (at least [`CLEAR`]).
    ClearPeak,
    /// The knee: where the smoothed silhouette made [`LEVEL`] of its rise.
    Knee,
    /// The end of an early fall of the silhouette.
    Fall,
    /// An interior peak of the smoothed silhouette, which falls back after it.
    Peak,
    /// The floor `floor(sqrt(n) / 10)`, above what the curve gave.
    Floor,
    /// The previous run's k, within the band the rule allows it.
    Previous,
    /// A flat curve: the bottom of the range.
    Flat,
}

impl Evidence {
    /// As `run.json` and the report name it.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::ClearPeak => "clear-peak",
            Evidence::Knee => "knee",
            Evidence::Fall => "fall",
            Evidence::Peak => "peak",
            Evidence::Floor => "floor",
            Evidence::Previous => "previous",
            Evidence::Flat => "flat",
        }
    }
}

/// The curve the rule reads, per swept k.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The mean of each k's silhouette and its neighbours' (the window's ends repeated), for
    /// the k of the window; `None` beyond it.
    pub smoothed: Vec<Option<f64>>,
    /// The smoothed silhouette's rise at k, as a share of its rise over the window (0 at its
    /// lowest point, 1 at its highest).
    pub rise: Vec<Option<f64>>,
}

/// The rule's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub k: usize,
    pub evidence: Evidence,
    /// What the curve gave before the floor and the previous k (equal to `k` unless one of
    /// them decided), and how it was read.
    pub curve_k: usize,
    pub curve_by: Evidence,
    /// The floor for this corpus (capped at the top of the range).
    pub floor: usize,
    pub curve: Curve,
}

/// The floor: `floor(sqrt(n) / 10)` topics, at most `top`.
pub fn floor_k(n: usize, top: usize) -> usize {
    (((n as f64).sqrt() / RESOLUTION).floor() as usize).min(top)
}

/// The rule on silhouettes `sil` of `ks` (increasing, consecutive: the whole swept range),
/// for `n` documents and the previous run's k. Non-finite silhouettes (a k the sample could
/// not score) count as the lowest finite one. `None` when no silhouette is finite.
pub fn decide(ks: &[usize], sil: &[f64], n: usize, previous: Option<usize>) -> Option<Verdict> {
    let lowest = sil
        .iter()
        .copied()
        .filter(|s| s.is_finite())
        .reduce(f64::min)?;
    let sil: Vec<f64> = sil
        .iter()
        .map(|&s| if s.is_finite() { s } else { lowest })
        .collect();
    let (lo, top) = (*ks.first()?, *ks.last()?);
    let floor = floor_k(n, top);
    let window = ks
        .iter()
        .take_while(|&&k| k <= top.min(WINDOW.max(lo + 2)))
        .count();
    let s = smooth3(&sil[..window]);
    let curve = Curve::of(&s, ks.len());
    let verdict = |k, evidence, (curve_k, curve_by)| Verdict {
        k,
        evidence,
        curve_k,
        curve_by,
        floor,
        curve: curve.clone(),
    };
    let peak = first_max(&sil);
    if sil[peak] >= CLEAR {
        let read = (ks[peak], Evidence::ClearPeak);
        return Some(verdict(ks[peak], Evidence::ClearPeak, read));
    }
    let Some(reading) = Reading::of(&s) else {
        return Some(verdict(lo, Evidence::Flat, (lo, Evidence::Flat)));
    };
    let curve_k = ks[reading.at()];
    let read = (curve_k, reading.evidence());
    let kept = previous
        .filter(|p| (lo..=top).contains(p))
        .filter(|&p| reading.keeps(&s, ks, p, floor));
    Some(match kept {
        Some(p) if p.max(floor) != curve_k.max(floor) => {
            let evidence = if p >= floor {
                Evidence::Previous
            } else {
                Evidence::Floor
            };
            verdict(p.max(floor), evidence, read)
        }
        _ if floor > curve_k => verdict(floor, Evidence::Floor, read),
        _ => verdict(curve_k, reading.evidence(), read),
    })
}

impl Curve {
    /// The smoothed window `s` and its rise, for `len` swept k.
    fn of(s: &[f64], len: usize) -> Curve {
        let (min, span) = min_span(s);
        let rise = |v: f64| if span > 0.0 { (v - min) / span } else { 0.0 };
        Curve {
            smoothed: (0..len).map(|i| s.get(i).copied()).collect(),
            rise: (0..len).map(|i| s.get(i).map(|&v| rise(v))).collect(),
        }
    }
}

/// The lowest value and the distance to the highest.
fn min_span(s: &[f64]) -> (f64, f64) {
    let min = s.iter().copied().fold(f64::INFINITY, f64::min);
    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max - min)
}

/// Each value averaged with its two neighbours, the end values repeated at the ends.
fn smooth3(v: &[f64]) -> Vec<f64> {
    let last = v.len() as isize - 1;
    let at = |i: isize| v[i.clamp(0, last) as usize];
    (0..=last)
        .map(|i| (at(i - 1) + at(i) + at(i + 1)) / 3.0)
        .collect()
}

/// The index of the first largest value.
fn first_max(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |best, i| if v[i] > v[best] { i } else { best })
}

/// The index of the first smallest value.
fn first_min(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |best, i| if v[i] < v[best] { i } else { best })
}

/// Where the smoothed curve `s` says k is, and how far a previous k may stray from it.
enum Reading {
    /// The first index where `s` made [`LEVEL`] of its rise (`min`, `span`).
    Knee { at: usize, min: f64, span: f64 },
    /// The curve first falls from an early peak to its bottom, by at least [`FALL`] of the
    /// rise after the bottom (`after`): a few broad groups before the finer topics. `at` is
    /// the first index after the peak within [`KEEP`] of that rise above the bottom.
    Fall {
        at: usize,
        peak: usize,
        bottom: usize,
        after: f64,
    },
    /// The curve climbs to an interior maximum `at` and falls back by at least [`PEAK_DROP`]
    /// of its rise (`span`).
    Peak { at: usize, span: f64 },
}

impl Reading {
    /// The reading of `s`, or `None` when it is flat.
    fn of(s: &[f64]) -> Option<Reading> {
        let (min, span) = min_span(s);
        if span <= 0.0 {
            return None;
        }
        let bottom = first_min(s);
        let rise = |part: &[f64]| {
            part.iter()
                .copied()
                .fold(0.0, |m, v| f64::max(m, v - s[bottom]))
        };
        let (before, after) = (rise(&s[..bottom]), rise(&s[bottom + 1..]));
        if bottom > 0 && after > 0.0 && before >= FALL * after {
            let peak = first_max(&s[..bottom]);
            let at = (peak + 1..=bottom)
                .find(|&i| s[i] <= s[bottom] + KEEP * after)
                .unwrap_or(bottom);
            return Some(Reading::Fall {
                at,
                peak,
                bottom,
                after,
            });
        }
        let top = first_max(s);
        let fall_back = s[top..].iter().copied().fold(s[top], f64::min);
        if s[top] - fall_back >= PEAK_DROP * span {
            return Some(Reading::Peak { at: top, span });
        }
        let at = first_reaching(s, min, span, LEVEL);
        Some(Reading::Knee { at, min, span })
    }

    fn at(&self) -> usize {
        match *self {
            Reading::Knee { at, .. } | Reading::Fall { at, .. } | Reading::Peak { at, .. } => at,
        }
    }

    fn evidence(&self) -> Evidence {
        match self {
            Reading::Knee { .. } => Evidence::Knee,
            Reading::Fall { .. } => Evidence::Fall,
            Reading::Peak { .. } => Evidence::Peak,
        }
    }

    /// Whether a previous run's k `p` (a swept k) stays: in the knee band between the first
    /// k reaching `LEVEL - KEEP` and the first reaching `LEVEL + KEEP` of the rise (each at
    /// least the floor), or, after a fall, past the early peak and within `KEEP` of the rise
    /// above the bottom, or, at a peak, within `KEEP` of the rise below its top.
    fn keeps(&self, s: &[f64], ks: &[usize], p: usize, floor: usize) -> bool {
        match *self {
            Reading::Knee { min, span, .. } => {
                let edge = |level: f64| ks[first_reaching(s, min, span, level)].max(floor);
                (edge(LEVEL - KEEP)..=edge(LEVEL + KEEP)).contains(&p)
            }
            Reading::Fall {
                peak,
                bottom,
                after,
                ..
            } => ks
                .iter()
                .position(|&k| k == p)
                .filter(|&i| i < s.len())
                .is_some_and(|i| i > peak && s[i] - s[bottom] <= KEEP * after),
            Reading::Peak { at, span } => ks
                .iter()
                .position(|&k| k == p)
                .filter(|&i| i < s.len())
                .is_some_and(|i| s[at] - s[i] <= KEEP * span),
        }
    }
}

/// The first index where `s` reaches `min + level * span` (`level` capped at 1).
fn first_reaching(s: &[f64], min: f64, span: f64, level: f64) -> usize {
    let threshold = min + level.min(1.0) * span;
    s.iter()
        .position(|&v| v >= threshold)
        .unwrap_or(s.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ks() -> Vec<usize> {
        (2..=20).collect()
    }

    fn on(sil: impl Fn(f64) -> f64) -> Vec<f64> {
        ks().into_iter().map(|k| sil(k as f64)).collect()
    }

    #[test]
    fn a_clear_peak_wins_wherever_it_is() {
        let mut sil = on(|k| 0.01 + 0.005 * k);
        sil[1] = 0.6;
        let v = decide(&ks(), &sil, 20_000, Some(9)).unwrap();
        assert_eq!((v.k, v.evidence), (3, Evidence::ClearPeak));
    }

    #[test]
    fn the_knee_is_where_the_curve_levels_off() {
        // Rises fast to k = 8, then creeps: 60% of the rise is made at k = 7 (smoothed).
        let sil = on(|k| {
            if k <= 8.0 {
                0.01 * k
            } else {
                0.08 + 0.001 * (k - 8.0)
            }
        });
        let v = decide(&ks(), &sil, 1_000, None).unwrap();
        assert_eq!((v.k, v.evidence, v.floor), (7, Evidence::Knee, 3));
        assert_eq!(v.curve.rise[0], Some(0.0));
        assert_eq!(
            v.curve.rise.iter().flatten().copied().reduce(f64::max),
            Some(1.0)
        );
        // The floor lifts it on a large corpus (sqrt(20,000) / 10 = 14.1).
        let big = decide(&ks(), &sil, 20_000, None).unwrap();
        assert_eq!((big.k, big.evidence, big.curve_k), (14, Evidence::Floor, 7));
        // A silhouette that only creeps up: the floor decides, as the size rule did.
        let creep = decide(&ks(), &on(|k| 0.01 + 0.005 * k), 20_000, None).unwrap();
        assert_eq!((creep.k, creep.evidence), (14, Evidence::Floor));
    }

    #[test]
    fn an_early_fall_ends_where_the_curve_bottoms_out() {
        // A peak at 3 (broad groups), down to a bottom at 7, then up again.
        let sil = on(|k| match k as usize {
            2 => 0.05,
            3 => 0.07,
            4 => 0.05,
            5 => 0.03,
            6 => 0.02,
            7 => 0.015,
            k => 0.015 + 0.004 * (k - 7) as f64,
        });
        let v = decide(&ks(), &sil, 900, None).unwrap();
        assert_eq!(v.evidence, Evidence::Fall);
        assert!((5..=8).contains(&v.k), "{}", v.k);
    }

    #[test]
    fn an_interior_peak_the_curve_falls_back_from_is_taken() {
        // Separated but overlapping groups: up to k = 10, then back down (not a saturation).
        let sil = on(|k| 0.127 - 0.0072 * (k - 10.0).abs());
        let v = decide(&ks(), &sil, 1_000, None).unwrap();
        assert_eq!((v.k, v.evidence), (10, Evidence::Peak));
        // A previous k near the top stays; one down the slope does not.
        assert_eq!(decide(&ks(), &sil, 1_000, Some(11)).unwrap().k, 11);
        assert_eq!(decide(&ks(), &sil, 1_000, Some(14)).unwrap().k, 10);
    }

    #[test]
    fn a_previous_k_stays_within_the_band_and_not_outside() {
        let sil = on(|k| {
            if k <= 8.0 {
                0.01 * k
            } else {
                0.08 + 0.001 * (k - 8.0)
            }
        });
        let at = |p| decide(&ks(), &sil, 1_000, Some(p)).unwrap();
        // The knee is 7; the band runs from the first k at 50% to the first at 70% of the rise.
        assert_eq!((at(6).k, at(6).evidence), (6, Evidence::Previous));
        assert_eq!(
            (at(7).k, at(7).evidence),
            (7, Evidence::Knee),
            "no change: the knee"
        );
        assert_eq!(
            (at(12).k, at(12).evidence),
            (7, Evidence::Knee),
            "too far: the knee"
        );
        assert_eq!(at(25).k, 7, "not swept");
    }

    #[test]
    fn flat_and_unscored_curves() {
        let v = decide(&ks(), &on(|_| 0.05), 1_000, None).unwrap();
        assert_eq!((v.k, v.evidence), (2, Evidence::Flat));
        assert!(decide(&[2, 3], &[f64::NEG_INFINITY, f64::NAN], 100, None).is_none());
        // An unscored k counts as the lowest silhouette; the rest decide.
        let mut sil = on(|k| {
            if k <= 8.0 {
                0.01 * k
            } else {
                0.08 + 0.001 * (k - 8.0)
            }
        });
        sil[10] = f64::NEG_INFINITY;
        assert_eq!(decide(&ks(), &sil, 1_000, None).unwrap().k, 7);
    }

    #[test]
    fn the_window_stops_at_20_whatever_k_max_is() {
        let ks: Vec<usize> = (2..=30).collect();
        let sil: Vec<f64> = ks
            .iter()
            .map(|&k| {
                if k <= 8 {
                    0.01 * k as f64
                } else {
                    0.08 + 0.001 * (k - 8) as f64
                }
            })
            .collect();
        let v = decide(&ks, &sil, 1_000, None).unwrap();
        assert_eq!(v.k, 7);
        assert_eq!(v.curve.smoothed[19], None, "k = 21 is beyond the window");
        assert_eq!(floor_k(75_000, 20), 20);
        assert_eq!(floor_k(964, 20), 3);
    }
}

/// The rule against its reference: the 42 sweeps of the labelled panel (14 sets, three runs
/// each; `scripts/auto_k/auto_k_eval.py collect`), with the picks the Python replay of the
/// rule (`knee_floor`) made on them, for k-max 20 and 30 and after several previous k.
#[cfg(test)]
mod panel {
    use super::decide;

    #[derive(serde::Deserialize)]
    struct Sweep {
        set: String,
        variant: String,
        n: usize,
        ks: Vec<usize>,
        silhouette: Vec<f64>,
        chosen: std::collections::BTreeMap<usize, usize>,
        chosen_with_previous: std::collections::BTreeMap<usize, usize>,
    }

    #[test]
    fn the_rule_picks_what_its_reference_picked_on_the_panel() {
        let sweeps: Vec<Sweep> =
            serde_json::from_str(include_str!("../../../tests/fixtures/auto_k_sweeps.json"))
                .unwrap();
        assert_eq!(sweeps.len(), 42);
        for s in &sweeps {
            let what = format!("{} {}", s.set, s.variant);
            for (&hi, &want) in &s.chosen {
                let upto = s.ks.iter().take_while(|&&k| k <= hi).count();
                let v = decide(&s.ks[..upto], &s.silhouette[..upto], s.n, None).unwrap();
                assert_eq!(v.k, want, "{what}, k-max {hi}: {:?}", v.evidence);
            }
            let upto = s.ks.iter().take_while(|&&k| k <= 20).count();
            for (&previous, &want) in &s.chosen_with_previous {
                let v = decide(&s.ks[..upto], &s.silhouette[..upto], s.n, Some(previous));
                assert_eq!(v.unwrap().k, want, "{what}, previous {previous}");
            }
        }
    }
}
