//! Nearest neighbours for the map: each document's `k` nearest others by cosine distance.
//!
//! A search over every pair costs n² dot products (75,000 documents in 100 dimensions: 5.6·10¹¹
//! multiply-adds). The topics cut it down: a document's near neighbours sit in its own topic or
//! in one of the topics whose centroids are next nearest to it, so each document is compared
//! only with the members of its own topic and of its `reach` next nearest topics. The products
//! are matrix products, topic by topic, in blocks of queries run in parallel; a block's shape
//! does not depend on the thread count and the kept neighbours are ordered by (distance, index),
//! so the result is the same at any thread count.

use ndarray::{s, Array2, ArrayView2};
use rayon::prelude::*;

/// Queries per matrix product (bounds the block of similarities held at once).
const BLOCK: usize = 512;

/// The `k` nearest neighbours of every row, nearest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbours {
    pub k: usize,
    /// Row `i`'s neighbours at `i * k .. (i + 1) * k` (`u32::MAX` where fewer were found).
    pub index: Vec<u32>,
    /// Their cosine distances, `1 - cos`, ascending (infinite where none was found).
    pub distance: Vec<f32>,
}

impl Neighbours {
    /// Row `i`'s neighbours as (index, distance), nearest first, the found ones only.
    pub fn of(&self, i: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let r = i * self.k..(i + 1) * self.k;
        self.index[r.clone()]
            .iter()
            .zip(&self.distance[r])
            .filter(|(&j, _)| j != u32::MAX)
            .map(|(&j, &d)| (j as usize, d))
    }
}

/// A fixed-size list of the best (largest similarity, then smallest index) candidates.
#[derive(Clone)]
struct Best {
    items: Vec<(f32, u32)>,
}

impl Best {
    fn new(k: usize) -> Best {
        Best {
            items: vec![(f32::NEG_INFINITY, u32::MAX); k],
        }
    }

    fn better(a: (f32, u32), b: (f32, u32)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    /// Empty again, for the next query.
    fn clear(&mut self) {
        self.items.fill((f32::NEG_INFINITY, u32::MAX));
    }

    fn offer(&mut self, sim: f32, j: u32) {
        let k = self.items.len();
        if k == 0 || !Self::better((sim, j), self.items[k - 1]) {
            return;
        }
        let mut at = k - 1;
        while at > 0 && Self::better((sim, j), self.items[at - 1]) {
            self.items[at] = self.items[at - 1];
            at -= 1;
        }
        self.items[at] = (sim, j);
    }
}

/// Rows grouped by topic: `members[t]` are the rows of topic `t`, in row order.
pub(super) fn members(topic_of: &[usize], topics: usize) -> Vec<Vec<usize>> {
    let mut members = vec![Vec::new(); topics];
    for (i, &t) in topic_of.iter().enumerate() {
        members[t].push(i);
    }
    members
}

/// The topics each row is searched in: its own and the `reach` others whose centroids are most
/// similar to the row.
fn search_topics(
    x: ArrayView2<f32>,
    topic_of: &[usize],
    centroids: ArrayView2<f32>,
    reach: usize,
) -> Vec<Vec<usize>> {
    let sims = x.dot(&centroids.t());
    sims.outer_iter()
        .zip(topic_of)
        .map(|(row, &own)| {
            let mut best = Best::new(reach.min(centroids.nrows().saturating_sub(1)));
            for (t, &s) in row.iter().enumerate() {
                if t != own {
                    best.offer(s, t as u32);
                }
            }
            let mut ts = vec![own];
            ts.extend(best.items.iter().map(|&(_, t)| t as usize));
            ts
        })
        .collect()
}

/// Each row's `k` nearest other rows of `x` (unit rows), searched in its own topic and its
/// `reach` nearest others (`topic_of[i]` indexes the rows of `centroids`).
pub fn neighbours(
    x: ArrayView2<f32>,
    topic_of: &[usize],
    centroids: ArrayView2<f32>,
    k: usize,
    reach: usize,
) -> Neighbours {
    let n = x.nrows();
    let members = members(topic_of, centroids.nrows());
    let searched = search_topics(x, topic_of, centroids, reach);
    let mut queries = vec![Vec::new(); centroids.nrows()];
    for (i, ts) in searched.iter().enumerate() {
        for &t in ts {
            queries[t].push(i);
        }
    }
    let mut best = vec![Best::new(k); n];
    for (t, qs) in queries.iter().enumerate() {
        if members[t].is_empty() || qs.is_empty() {
            continue;
        }
        let m = crate::sample::rows(x, &members[t]);
        let found: Vec<Vec<(usize, Best)>> = qs
            .par_chunks(BLOCK)
            .map(|block| block_best(x, block, &m, &members[t], k))
            .collect();
        for (i, b) in found.into_iter().flatten() {
            for &(sim, j) in &b.items {
                if j != u32::MAX {
                    best[i].offer(sim, j);
                }
            }
        }
    }
    let mut index = Vec::with_capacity(n * k);
    let mut distance = Vec::with_capacity(n * k);
    for b in best {
        for (sim, j) in b.items {
            index.push(j);
            distance.push(if j == u32::MAX {
                f32::INFINITY
            } else {
                (1.0 - sim).max(0.0)
            });
        }
    }
    Neighbours { k, index, distance }
}

/// The best `k` members (by similarity) for each query row of `block`, itself excluded.
fn block_best(
    x: ArrayView2<f32>,
    block: &[usize],
    m: &Array2<f32>,
    member_rows: &[usize],
    k: usize,
) -> Vec<(usize, Best)> {
    let q = crate::sample::rows(x, block);
    let sims = q.dot(&m.t());
    block
        .iter()
        .enumerate()
        .map(|(r, &i)| {
            let mut b = Best::new(k);
            for (c, &s) in sims.slice(s![r, ..]).iter().enumerate() {
                let j = member_rows[c];
                if j != i {
                    b.offer(s, j as u32);
                }
            }
            (i, b)
        })
        .collect()
}

/// For each row of `queries`, `f` of its `k` most similar rows of `pool` (no self to skip),
/// given as (pool row, similarity), most similar first. Blocks of queries run in parallel, and
/// `f` runs inside them, so what is made of the neighbours is made on every core.
pub fn nearest_in<T: Send>(
    queries: ArrayView2<f32>,
    pool: ArrayView2<f32>,
    k: usize,
    f: impl Fn(&[(usize, f32)]) -> T + Sync,
) -> Vec<T> {
    let rows: Vec<usize> = (0..queries.nrows()).collect();
    rows.par_chunks(BLOCK)
        .flat_map_iter(|block| {
            let q = queries.slice(s![block[0]..block[0] + block.len(), ..]);
            let sims = q.dot(&pool.t());
            let (mut b, mut found) = (Best::new(k), Vec::with_capacity(k));
            (0..block.len())
                .map(|r| {
                    b.clear();
                    for (c, &s) in sims.slice(s![r, ..]).iter().enumerate() {
                        b.offer(s, c as u32);
                    }
                    found.clear();
                    found.extend(
                        b.items
                            .iter()
                            .filter(|&&(_, j)| j != u32::MAX)
                            .map(|&(s, j)| (j as usize, s)),
                    );
                    f(&found)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn unit(v: &[[f32; 2]]) -> Array2<f32> {
        let mut a = Array2::from_shape_fn((v.len(), 2), |(i, j)| v[i][j]);
        for mut r in a.outer_iter_mut() {
            let n = r.dot(&r).sqrt();
            r /= n;
        }
        a
    }

    #[test]
    fn neighbours_are_the_nearest_others_in_order() {
        let x = unit(&[[1.0, 0.0], [1.0, 0.1], [1.0, 0.3], [0.0, 1.0], [0.1, 1.0]]);
        let c = array![[1.0f32, 0.0], [0.0, 1.0]];
        let nb = neighbours(x.view(), &[0, 0, 0, 1, 1], c.view(), 2, 1);
        let of0: Vec<usize> = nb.of(0).map(|(j, _)| j).collect();
        assert_eq!(of0, vec![1, 2]);
        let of3: Vec<usize> = nb.of(3).map(|(j, _)| j).collect();
        // Row 3's second neighbour comes from the other topic, reached through `reach`.
        assert_eq!(of3, vec![4, 2]);
        let d: Vec<f32> = nb.of(0).map(|(_, d)| d).collect();
        assert!(d[0] <= d[1] && d[0] >= 0.0);
    }

    #[test]
    fn a_topic_out_of_reach_is_not_searched() {
        let x = unit(&[[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]]);
        let c = array![[1.0f32, 0.0], [0.0, 1.0]];
        let nb = neighbours(x.view(), &[0, 0, 1], c.view(), 2, 0);
        // Row 2 is alone in its topic and may not look elsewhere.
        assert_eq!(nb.of(2).count(), 0);
        assert_eq!(nb.of(0).count(), 1);
    }

    #[test]
    fn nearest_in_ranks_the_pool() {
        let pool = unit(&[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
        let q = unit(&[[1.0, 0.2]]);
        let got = nearest_in(q.view(), pool.view(), 2, |found| found.to_vec());
        assert_eq!(got[0].iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 2]);
    }
}
