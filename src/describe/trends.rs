//! Trends: how each topic's share moves across periods (years, quarters, months or batches).
//!
//! A document's period is its time value bucketed by `[trends] period`, or, when its input has
//! no time column, its batch (the input's `batch` key or its file name). Periods that look like
//! times (`2018`, `2025-Q1`, `2025-03`) sort chronologically and are placed on a real time axis
//! (a year is 1.0, so a gap from 2018 to 2022 counts as four years); batches keep input order,
//! one step apart.
//!
//! **Change measure.** For each topic, the share in each period is first smoothed towards the
//! topic's overall share, `(count + a * p) / (n + a)` with `a = 10` pseudo-documents, so a period
//! with three papers cannot swing a trend on its own. The trend is the weighted least-squares
//! slope of the smoothed share over time, weighting each period by its number of documents, in
//! percentage points per year (per step for batches). Topics are ranked by it: positive is
//! rising, negative declining.

use serde::Serialize;

/// Pseudo-documents used to smooth period shares towards the topic's overall share.
pub const SMOOTHING: f64 = 10.0;

/// The change measure, as written in `run.json`, `trends.csv`'s notes and the README.
pub const MEASURE: &str = "weighted least-squares slope of the smoothed share (percentage points per year; per step for batches), periods weighted by their document counts, shares smoothed with 10 pseudo-documents towards the topic's overall share";

/// One period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Period {
    pub label: String,
    /// Position on the time axis (years, or the batch index).
    pub x: f64,
    pub documents: usize,
}

/// One topic's movement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicTrend {
    pub topic_id: usize,
    /// Percentage points per year (or per step).
    pub slope: f64,
    pub first_share: f64,
    pub last_share: f64,
}

/// Counts and shares of every topic in every period, and the ranked trends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trends {
    pub periods: Vec<Period>,
    /// `counts[topic][period]`.
    pub counts: Vec<Vec<usize>>,
    /// Raw shares: `counts / period documents`.
    pub shares: Vec<Vec<f64>>,
    /// Ranked by slope, most rising first.
    pub trends: Vec<TopicTrend>,
    /// Whether the axis is time (true) or batches (false).
    pub timed: bool,
}

impl Trends {
    /// Topics drawn as their own line in the share-over-time chart: the `n` whose share moved
    /// most (largest |slope|, ties to the lower index), in topic order.
    pub fn most_moving(&self, n: usize) -> Vec<usize> {
        let mut moving: Vec<&TopicTrend> = self.trends.iter().collect();
        moving.sort_by(|a, b| {
            b.slope
                .abs()
                .total_cmp(&a.slope.abs())
                .then(a.topic_id.cmp(&b.topic_id))
        });
        let mut ids: Vec<usize> = moving.iter().take(n).map(|t| t.topic_id).collect();
        ids.sort_unstable();
        ids
    }

    /// The fastest risers and decliners, for the movers chart: the `n` most rising (most first)
    /// and the `n` most declining (most declining last), leaving out flat topics. Empty with
    /// fewer than two periods, where nothing can move.
    pub fn extremes(&self, n: usize) -> Vec<&TopicTrend> {
        if self.periods.len() < 2 {
            return Vec::new();
        }
        let t = &self.trends;
        t.iter()
            .take(n)
            .chain(t.iter().rev().take(n).rev())
            .filter(|m| m.slope.abs() > 1e-9)
            .collect()
    }

    /// Every rising topic (most rising first), then every declining one (most declining
    /// first), for the report's list of movers. Empty with fewer than two periods.
    pub fn by_direction(&self) -> Vec<&TopicTrend> {
        if self.periods.len() < 2 {
            return Vec::new();
        }
        let t = &self.trends;
        t.iter()
            .filter(|m| m.slope > 0.0)
            .chain(t.iter().rev().filter(|m| m.slope < 0.0))
            .collect()
    }
}

/// Time position of a period label, when it is one: `2018`, `2025-Q2`, `2025-03`.
pub fn time_position(label: &str) -> Option<f64> {
    let year: f64 = label.get(..4)?.parse::<u16>().ok()? as f64;
    match label.get(4..) {
        Some("") => Some(year),
        Some(rest) if rest.starts_with("-Q") => {
            let q: f64 = rest[2..]
                .parse::<u8>()
                .ok()
                .filter(|q| (1..=4).contains(q))? as f64;
            Some(year + (q - 1.0) / 4.0)
        }
        Some(rest) if rest.starts_with('-') => {
            let m: f64 = rest[1..]
                .parse::<u8>()
                .ok()
                .filter(|m| (1..=12).contains(m))? as f64;
            Some(year + (m - 1.0) / 12.0)
        }
        _ => None,
    }
}

/// Builds the trend tables. `periods[i]` is document `i`'s period label.
pub fn trends(periods: &[String], assignments: &[usize], k: usize) -> Trends {
    // Order periods: chronological when all are times, else first appearance.
    let mut labels: Vec<&str> = Vec::new();
    for p in periods {
        if !labels.contains(&p.as_str()) {
            labels.push(p);
        }
    }
    let timed = !labels.is_empty() && labels.iter().all(|l| time_position(l).is_some());
    if timed {
        labels.sort_by(|a, b| {
            time_position(a)
                .unwrap_or(0.0)
                .total_cmp(&time_position(b).unwrap_or(0.0))
        });
    }
    let index: std::collections::HashMap<&str, usize> =
        labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();
    let np = labels.len();
    let mut counts = vec![vec![0usize; np]; k];
    for (p, &t) in periods.iter().zip(assignments) {
        counts[t][index[p.as_str()]] += 1;
    }
    let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    from_counts(&labels, counts, timed)
}

/// The trend tables from counts already made: `counts[topic][period]` for the periods
/// `labels`, in the order they are to be shown (`timed`: they are times, in time order).
pub fn from_counts(labels: &[String], counts: Vec<Vec<usize>>, timed: bool) -> Trends {
    let np = labels.len();
    let k = counts.len();
    let docs: Vec<usize> = (0..np).map(|j| counts.iter().map(|c| c[j]).sum()).collect();
    let period_list: Vec<Period> = labels
        .iter()
        .enumerate()
        .map(|(j, l)| Period {
            label: l.to_string(),
            x: if timed {
                time_position(l).unwrap_or(j as f64)
            } else {
                j as f64
            },
            documents: docs[j],
        })
        .collect();
    let shares: Vec<Vec<f64>> = counts
        .iter()
        .map(|row| {
            row.iter()
                .zip(&docs)
                .map(|(&c, &n)| if n > 0 { c as f64 / n as f64 } else { 0.0 })
                .collect()
        })
        .collect();
    let total: usize = docs.iter().sum();
    let mut trend_rows: Vec<TopicTrend> = (0..k)
        .map(|t| {
            let overall = counts[t].iter().sum::<usize>() as f64 / total.max(1) as f64;
            let smoothed: Vec<f64> = counts[t]
                .iter()
                .zip(&docs)
                .map(|(&c, &n)| (c as f64 + SMOOTHING * overall) / (n as f64 + SMOOTHING))
                .collect();
            let xs: Vec<f64> = period_list.iter().map(|p| p.x).collect();
            let ws: Vec<f64> = docs.iter().map(|&n| n as f64).collect();
            TopicTrend {
                topic_id: t,
                slope: 100.0 * wls_slope(&xs, &smoothed, &ws),
                first_share: shares[t].first().copied().unwrap_or(0.0),
                last_share: shares[t].last().copied().unwrap_or(0.0),
            }
        })
        .collect();
    trend_rows.sort_by(|a, b| {
        b.slope
            .total_cmp(&a.slope)
            .then(a.topic_id.cmp(&b.topic_id))
    });
    Trends {
        periods: period_list,
        counts,
        shares,
        trends: trend_rows,
        timed,
    }
}

/// Weighted least-squares slope of `y` on `x`; 0 when `x` has no spread.
pub fn wls_slope(x: &[f64], y: &[f64], w: &[f64]) -> f64 {
    let sw: f64 = w.iter().sum();
    if sw <= 0.0 {
        return 0.0;
    }
    let mx = x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw;
    let my = y.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw;
    let sxx: f64 = x.iter().zip(w).map(|(a, b)| b * (a - mx).powi(2)).sum();
    let sxy: f64 = x
        .iter()
        .zip(y)
        .zip(w)
        .map(|((a, c), b)| b * (a - mx) * (c - my))
        .sum();
    if sxx <= 1e-12 {
        0.0
    } else {
        sxy / sxx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_abs_diff_eq;

    #[test]
    fn time_positions() {
        assert_eq!(time_position("2018"), Some(2018.0));
        assert_eq!(time_position("2025-Q3"), Some(2025.5));
        assert_eq!(time_position("2025-04"), Some(2025.25));
        assert_eq!(time_position("000_9fada30fd42eec01"), None);
        assert_eq!(time_position("2025-Q5"), None);
    }

    #[test]
    fn wls_slope_matches_hand_computation() {
        // y = 2x + 1 exactly: slope 2 whatever the weights.
        assert_abs_diff_eq!(
            wls_slope(&[0.0, 1.0, 2.0], &[1.0, 3.0, 5.0], &[1.0, 5.0, 2.0]),
            2.0,
            epsilon = 1e-12
        );
        // Points (0,0) w=1 and (1,1) w=1 and (2,0) w=2: mx = 1.25, my = 0.25,
        // sxx = 1*1.5625 + 1*0.0625 + 2*0.5625 = 2.75, sxy = 1*(-1.25)(-0.25) + 1*(-0.25)(0.75) + 2*(0.75)(-0.25) = -0.25
        assert_abs_diff_eq!(
            wls_slope(&[0.0, 1.0, 2.0], &[0.0, 1.0, 0.0], &[1.0, 1.0, 2.0]),
            -0.25 / 2.75,
            epsilon = 1e-12
        );
        assert_eq!(wls_slope(&[3.0, 3.0], &[0.0, 1.0], &[1.0, 1.0]), 0.0);
    }

    #[test]
    fn rising_topic_ranks_first_and_tiny_periods_do_not_dominate() {
        // Topic 1 grows from 10% to 50% over three big years; a tiny 2019 period has one document
        // of topic 0 only (share 100%) and must not make topic 0 "rising".
        let mut periods = Vec::new();
        let mut topics = Vec::new();
        for (year, n, t1) in [
            ("2016", 100, 10),
            ("2017", 100, 30),
            ("2018", 100, 50),
            ("2019", 1, 0),
        ] {
            for i in 0..n {
                periods.push(year.to_string());
                topics.push(if i < t1 { 1 } else { 0 });
            }
        }
        let tr = trends(&periods, &topics, 2);
        assert!(tr.timed);
        assert_eq!(
            tr.periods
                .iter()
                .map(|p| p.label.as_str())
                .collect::<Vec<_>>(),
            ["2016", "2017", "2018", "2019"]
        );
        assert_eq!(tr.counts[1], [10, 30, 50, 0]);
        assert_abs_diff_eq!(tr.shares[0][3], 1.0);
        assert_eq!(tr.trends[0].topic_id, 1);
        assert!(tr.trends[0].slope > 10.0, "{:?}", tr.trends);
        assert!(tr.trends[1].slope < 0.0);
    }

    #[test]
    fn movers_are_chosen_by_slope() {
        let mut periods = Vec::new();
        let mut topics = Vec::new();
        // Topic 0 falls, 1 rises, 2 stays, 3 rises a little.
        for (year, counts) in [
            ("2000", [60, 10, 20, 10]),
            ("2001", [30, 40, 20, 10]),
            ("2002", [10, 55, 20, 15]),
        ] {
            for (t, &n) in counts.iter().enumerate() {
                for _ in 0..n {
                    periods.push(year.to_string());
                    topics.push(t);
                }
            }
        }
        let tr = trends(&periods, &topics, 4);
        assert_eq!(tr.most_moving(2), [0, 1]);
        let ids = |v: Vec<&TopicTrend>| v.iter().map(|t| t.topic_id).collect::<Vec<_>>();
        assert_eq!(ids(tr.extremes(1)), [1, 0]);
        // The flat topic 2 is left out.
        assert_eq!(ids(tr.extremes(2)), [1, 3, 0]);
        let by_dir = ids(tr.by_direction());
        assert_eq!((by_dir[0], by_dir[by_dir.len() - 1]), (1, 0), "{by_dir:?}");
        assert!(!by_dir.contains(&2), "{by_dir:?}");
        let one = trends(&["x".to_string()], &[0], 1);
        assert!(one.extremes(3).is_empty() && one.by_direction().is_empty());
    }

    #[test]
    fn batches_keep_input_order() {
        let periods: Vec<String> = ["b-list", "a-list", "b-list"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let tr = trends(&periods, &[0, 0, 0], 1);
        assert!(!tr.timed);
        assert_eq!(tr.periods[0].label, "b-list");
        assert_eq!(tr.periods[1].x, 1.0);
    }
}
