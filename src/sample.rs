//! Deterministic subsets and views shared by the stages and the writers: which rows a capped
//! step works on (and their copy), and which range of a map's values a view shows.
//!
//! Why here: clustering (the rows polishing runs on), the layout (the landmarks a model keeps,
//! the points a label anchor is chosen among), the document-map chart and the report's map all
//! take these decisions, and they must take them the same way; none of them owns the others.

/// At most `cap` of the indices `0..n`, evenly spread: all when `n <= cap`, else
/// `floor(j * n / cap)` for `j in 0..cap` (deterministic). The one rule for the rows k-means
/// polishes on, the landmarks a model keeps, the points a label anchor is chosen among, and the
/// points a chart draws.
pub fn even_indices(n: usize, cap: usize) -> impl Iterator<Item = usize> {
    let take = n.min(cap);
    (0..take).map(move |j| (j as u128 * n as u128 / take as u128) as usize)
}

/// The rows `idx` of `x`, copied side by side into a new matrix. The one way the stages copy a
/// subset of rows (mini-batch k-means' batches, the rows polishing runs on, seeds and kept
/// centroids, the landmarks and queries of the map's neighbours): ndarray's `select` copies
/// through `concatenate`, one row view at a time, which was 1.6% of an arXiv 75k run's samples
/// in mini-batch k-means alone.
pub fn rows<A: Clone>(x: ndarray::ArrayView2<A>, idx: &[usize]) -> ndarray::Array2<A> {
    let d = x.ncols();
    let mut v = Vec::with_capacity(idx.len() * d);
    for &i in idx {
        let row = x.row(i);
        match row.as_slice() {
            Some(s) => v.extend_from_slice(s),
            None => v.extend(row.iter().cloned()),
        }
    }
    ndarray::Array2::from_shape_vec((idx.len(), d), v).expect("whole rows")
}

/// The 0.5% and 99.5% quantiles of the finite values (`None` when there are none): the view of
/// a map, so that a few far points do not squash the rest. The static chart and the report's
/// interactive map frame their views with it.
pub fn central_range(vals: impl Iterator<Item = f32>) -> Option<(f32, f32)> {
    let mut v: Vec<f32> = vals.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f32::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some((at(0.005), at(0.995)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_copies_what_select_copies() {
        let x = ndarray::Array2::from_shape_fn((5, 3), |(i, j)| (i * 10 + j) as f32);
        let idx = [4, 0, 4, 2];
        assert_eq!(rows(x.view(), &idx), x.select(ndarray::Axis(0), &idx));
        // A view whose rows do not lie side by side (every other column).
        let t = x.slice(ndarray::s![.., ..;2]);
        assert_eq!(rows(t, &idx), t.select(ndarray::Axis(0), &idx));
        assert_eq!(rows(x.view(), &[]).dim(), (0, 3));
    }

    #[test]
    fn even_indices_are_evenly_spread_and_capped() {
        // floor(j * 10 / 4) for j = 0..4
        assert_eq!(even_indices(10, 4).collect::<Vec<_>>(), vec![0, 2, 5, 7]);
        assert_eq!(even_indices(3, 4).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(even_indices(0, 4).count(), 0);
        assert_eq!(even_indices(1_000_000, 20_000).count(), 20_000);
        assert_eq!(even_indices(1_000_000, 20_000).last(), Some(999_950));
    }

    #[test]
    fn the_central_range_leaves_out_the_far_half_percent() {
        let vals = (0..1000).map(|i| i as f32).chain([f32::NAN, 1e9]);
        // 1,001 finite values: the 0.5% and 99.5% quantiles by nearest rank.
        assert_eq!(central_range(vals), Some((5.0, 995.0)));
        assert_eq!(central_range([f32::NAN].into_iter()), None);
    }
}
