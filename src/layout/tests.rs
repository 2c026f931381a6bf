use super::*;
use ndarray::Array2;

/// `groups` groups of `per` documents in `d` dimensions: each group around its own axis, with
/// seeded noise; returns the vectors, each row's group, and the group centroids.
fn groups(groups: usize, per: usize, d: usize) -> (Array2<f32>, Vec<usize>, Array2<f32>) {
    use rand::Rng;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let n = groups * per;
    let topic: Vec<usize> = (0..n).map(|i| i / per).collect();
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        let base = if j == topic[i] { 1.0 } else { 0.0 };
        base + rng.gen_range(-0.3f32..0.3)
    });
    let mut x = x;
    unit_rows(x.view_mut());
    let mut c = Array2::<f32>::zeros((groups, d));
    for (i, &t) in topic.iter().enumerate() {
        let mut row = c.row_mut(t);
        row += &x.row(i);
    }
    unit_rows(c.view_mut());
    (x, topic, c)
}

fn fit(params: MapValidParams, x: &Array2<f32>, topic: &[usize], c: &Array2<f32>) -> Map {
    let sizes: Vec<usize> = (0..c.nrows())
        .map(|t| topic.iter().filter(|&&x| x == t).count())
        .collect();
    params.fit(
        x.view(),
        Topics {
            assignments: topic,
            centroids: c.view(),
            sizes: &sizes,
        },
        42,
    )
}

/// Share of each point's `k` nearest points on the map that are of its own group.
fn same_group_share(points: &[[f32; 2]], topic: &[usize], k: usize) -> f64 {
    let mut same = 0usize;
    for (i, p) in points.iter().enumerate() {
        let mut d: Vec<(f32, usize)> = points
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(j, q)| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2), j))
            .collect();
        d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        same += d[..k]
            .iter()
            .filter(|&&(_, j)| topic[j] == topic[i])
            .count();
    }
    same as f64 / (points.len() * k) as f64
}

#[test]
fn the_embedding_keeps_groups_together_and_labels_on_them() {
    let (x, topic, c) = groups(4, 60, 8);
    let map = fit(MapParams::new().check().unwrap(), &x, &topic, &c);
    assert_eq!(map.method, MapMethod::Umap);
    assert!(
        map.note.starts_with("UMAP of all 240 documents"),
        "{}",
        map.note
    );
    let share = same_group_share(&map.documents, &topic, 10);
    assert!(share > 0.95, "same-group neighbours on the map: {share}");
    // Each label anchor is one of its topic's own points.
    for (t, a) in map.centres.iter().enumerate() {
        assert!(map
            .documents
            .iter()
            .zip(&topic)
            .any(|(p, &g)| g == t && p == a));
    }
}

#[test]
fn the_map_is_the_same_at_any_thread_count() {
    let (x, topic, c) = groups(3, 80, 6);
    let at = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                fit(
                    MapParams::new().sample(100).check().unwrap(),
                    &x,
                    &topic,
                    &c,
                )
            })
    };
    let one = at(1);
    assert_eq!(one, at(2));
    assert_eq!(one, at(3));
}

#[test]
fn documents_outside_the_sample_land_in_their_topics_region() {
    let (x, topic, c) = groups(3, 100, 6);
    let map = fit(
        MapParams::new().sample(120).check().unwrap(),
        &x,
        &topic,
        &c,
    );
    assert!(
        map.note.contains("seeded sample of 120 of 300"),
        "{}",
        map.note
    );
    assert!(map
        .documents
        .iter()
        .all(|p| p[0].is_finite() && p[1].is_finite()));
    let share = same_group_share(&map.documents, &topic, 10);
    assert!(share > 0.9, "same-group neighbours on the map: {share}");
    assert_eq!(map.landmarks.as_ref().map(|l| l.coords.len()), Some(120));
}

#[test]
fn a_sample_only_map_places_the_sample_and_nothing_else() {
    let (x, topic, c) = groups(3, 100, 6);
    let params = MapParams::new().sample(120).check().unwrap();
    let full = fit(params.clone(), &x, &topic, &c);
    let only = fit(params.sample_only(), &x, &topic, &c);
    let placed: Vec<usize> = (0..300)
        .filter(|&i| only.documents[i][0].is_finite())
        .collect();
    assert_eq!(placed.len(), 120);
    // The sample is laid out as in the full map; the model keeps the same landmarks.
    for &i in &placed {
        assert_eq!(only.documents[i], full.documents[i]);
    }
    assert_eq!(only.landmarks, full.landmarks);
    assert!(only.centres.iter().all(|a| a[0].is_finite()));
}

#[test]
fn too_few_documents_fall_back_to_the_linear_projection() {
    let (x, topic, c) = groups(2, 5, 4);
    let map = fit(MapParams::new().check().unwrap(), &x, &topic, &c);
    assert_eq!(map.method, MapMethod::Linear);
    assert!(
        map.note
            .contains("10 documents are too few to embed with 15 neighbours"),
        "{}",
        map.note
    );
    assert!(map.landmarks.is_none());
}

#[test]
fn equal_documents_do_not_panic_and_a_collapsed_layout_is_caught() {
    let x = Array2::from_elem((40, 3), 1.0f32);
    let c = Array2::from_elem((1, 3), 1.0f32);
    let map = fit(MapParams::new().check().unwrap(), &x, &[0; 40], &c);
    assert!(map
        .documents
        .iter()
        .all(|p| p[0].is_finite() && p[1].is_finite()));
    assert!(degenerate(&[[1.0, 2.0]; 5]));
    assert!(!degenerate(&[[1.0, 2.0], [1.0, 3.0]]));
    assert!(degenerate(&[[f32::NAN, 2.0], [1.0, 3.0]]));
}

#[test]
fn bad_parameters_are_refused() {
    assert_eq!(
        MapParams::new().neighbours(1).check(),
        Err(MapParamsError::Neighbours(1))
    );
    assert_eq!(
        MapParams::new().sample(10).check(),
        Err(MapParamsError::Sample(10))
    );
}

#[test]
fn a_report_from_sums_draws_the_landmarks_in_their_reported_topics() {
    let saved = SavedLandmarks {
        k: 2,
        topics: vec![0, 1, 2, 2, 7],
        coords: vec![[0.0, 0.0], [1.0, 1.0], [5.0, 5.0], [6.0, 6.0], [9.0, 9.0]],
        vectors: vec![vec![1, 0]; 5],
    };
    // Model topics 1 and 2 merged into reported topic 1; topic 7 is not the model's.
    let map = landmarks_only(&saved, &[0, 1, 1], 2);
    assert_eq!(
        map.documents.len(),
        4,
        "the landmark of an unknown topic is left out"
    );
    assert_eq!(map.topics, Some(vec![0, 1, 1, 1]));
    assert_eq!(map.centres.len(), 2);
    assert_eq!(map.centres[0], [0.0, 0.0]);
    assert!(map.note.contains("4 landmarks"), "{}", map.note);
    assert_eq!(map.method, MapMethod::Umap);
}

/// Every point is in the frame: no coordinate below 0 (a spreadsheet would read `-0.2` as a
/// formula's start), the longer side [`FRAME`] long.
fn assert_in_frame(points: &[[f32; 2]]) {
    assert!(points
        .iter()
        .all(|p| p[0] >= 0.0 && p[1] >= 0.0 && !p[0].is_sign_negative()));
    let side = |axis: usize| points.iter().map(|p| p[axis]).fold(0.0f32, f32::max);
    assert!(
        (side(0).max(side(1)) - FRAME).abs() < 1e-3,
        "{}",
        side(0).max(side(1))
    );
}

#[test]
fn every_map_is_written_in_a_frame_without_negative_coordinates() {
    let (x, topic, c) = groups(3, 60, 8);
    let umap = MapParams::new().sample(100).check().unwrap();
    let map = fit(umap, &x, &topic, &c);
    assert_eq!(map.method, MapMethod::Umap);
    assert_in_frame(&map.documents);
    let linear = MapParams::new().method(MapMethod::Linear).check().unwrap();
    assert_in_frame(&fit(linear, &x, &topic, &c).documents);
}
