//! The c-TF-IDF formula, and the [`ClassTable`] it is computed over.
//!
//! `W(t, c) = tf(t, c)' * ln(1 + A / f(t))`, with `tf(t, c)' = sqrt(tf(t, c) / |c|)` when
//! damped (see the [module docs](super)). Words are weighed by their weight units (the
//! [`ClassTable`]); phrases by raw counts against the topics' raw totals. The formula is written
//! once ([`damped_tf`], [`idf`]) for both, and the table keeps the weight units, so what is built
//! from topics later (the topic hierarchy, merged topics, summed reports) weighs the same way.

/// The c-TF-IDF tables behind the topics' terms, kept for what is built from topics later (the
/// topic hierarchy, merged topics): per vocabulary term (a "slot"), its surface, how generic it
/// is, its inverse class frequency, and each topic's weight units.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassTable {
    /// Term id of each slot.
    pub terms: Vec<u32>,
    /// Surface form of each slot.
    pub surfaces: Vec<String>,
    /// Share of all documents each slot occurs in.
    pub share: Vec<f64>,
    /// `ln(1 + A / f(t))` of each slot.
    pub idf: Vec<f64>,
    /// Slot of the term each slot is one with (a plural the stemmer keeps, see the module).
    pub canon: Vec<u32>,
    /// `units[topic][slot]`: each document of the topic adds `1000 (1 + ln count)`.
    pub units: Vec<Vec<u64>>,
    /// Whether the term frequency is damped (`sqrt`).
    pub damping: bool,
}

impl ClassTable {
    /// The tables of classes with these weight units (`units[class][slot]`); the other
    /// arguments are the fields of the same names. The inverse class frequency is computed from
    /// the units: `A` is the mean of the classes' totals, `f(t)` the slot's units over all
    /// classes.
    pub fn new(
        terms: Vec<u32>,
        surfaces: Vec<String>,
        share: Vec<f64>,
        canon: Vec<u32>,
        units: Vec<Vec<u64>>,
        damping: bool,
    ) -> ClassTable {
        let freq: Vec<f64> = (0..terms.len())
            .map(|s| units.iter().map(|r| r[s] as f64).sum())
            .collect();
        // Sums of whole numbers far below 2^53: exact in any order.
        let mean = freq.iter().sum::<f64>() / units.len().max(1) as f64;
        ClassTable {
            idf: freq.iter().map(|&f| idf(mean, f)).collect(),
            terms,
            surfaces,
            share,
            canon,
            units,
            damping,
        }
    }

    /// The c-TF-IDF weights of a class with these units (a topic's, or several summed).
    pub fn weights(&self, units: &[u64]) -> Vec<f64> {
        let total: f64 = units.iter().map(|&u| u as f64).sum();
        units
            .iter()
            .zip(&self.idf)
            .map(|(&u, &idf)| {
                if u == 0 || total <= 0.0 {
                    return 0.0;
                }
                damped_tf(u as f64, total, self.damping) * idf
            })
            .collect()
    }
}

/// `count / class_total`, its square root when `damping`.
pub(super) fn damped_tf(count: f64, class_total: f64, damping: bool) -> f64 {
    let tf = count / class_total;
    if damping {
        tf.sqrt()
    } else {
        tf
    }
}

/// `ln(1 + mean / f)` (0 for a term never seen): the inverse class frequency of a term seen `f`
/// times over all classes, whose totals average `mean`.
pub(super) fn idf(mean: f64, f: f64) -> f64 {
    if f > 0.0 {
        (1.0 + mean / f).ln()
    } else {
        0.0
    }
}
