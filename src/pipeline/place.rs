//! Place: documents into a saved model's topics, without refitting.
//!
//! Prepared documents (ingested, cleaned and tokenized with the model's own tokenizer) go
//! through the model's TF-IDF, reduction and centroids ([`place`]), and onto the fitted
//! document map among its landmarks. Documents sharing no word
//! with the model's vocabulary are left out and listed. The same [`place`] serves `topicmap
//! assign` on files, on an Arrow stream (an engine's partition), and each chunk of a streaming
//! run.

use super::prepare::{LeftOut, Prepared};
use super::PipelineError;
use crate::cluster::Clustering;
use crate::describe::aggregate::{Aggregates, Assigned};
use crate::describe::{Topic, TopicSummary};
use crate::ingest::{Corpus, PeriodUnit};
use crate::model::SavedModel;
use crate::progress::Progress;
use crate::vectorize::TfIdf;
use ndarray::Array2;

/// A saved model made ready to place documents: its TF-IDF, centroids and outlier floors built
/// once, for every batch.
#[derive(Debug)]
pub struct Placer {
    pub model: SavedModel,
    tfidf: TfIdf,
    centroids: Array2<f32>,
    term_centroids: Option<Array2<f32>>,
    floors: Vec<f64>,
    landmarks: Option<crate::layout::Landmarks>,
    /// The fit's sentence model, when it clustered the transformer's sentence vectors.
    embed: Option<crate::embed::EmbedValidParams>,
    /// That model, loaded by the first documents placed and kept for the rest.
    loaded: crate::embed::Loaded,
}

impl Placer {
    /// Fails only when the model needs its sentence model's folder (`method = "transformer"`)
    /// and the folder is gone or changed.
    pub fn new(model: SavedModel) -> Result<Placer, crate::embed::EmbedError> {
        let embed = model.embedding.as_ref().map(|e| e.params()).transpose()?;
        Ok(Placer {
            embed,
            loaded: crate::embed::Loaded::default(),
            tfidf: model.tfidf(),
            centroids: model.centroid_matrix(),
            term_centroids: model.term_centroid_matrix(),
            floors: model.outlier_floors(),
            landmarks: model.map.as_ref().map(|m| m.load()),
            model,
        })
    }

    /// How a preparation of documents for this model embeds them (`None` when its features
    /// use no model): with the fit's model, loaded once for every batch, each vector after room
    /// for the LSA part when the features are `both`.
    pub fn embedder(&self) -> Option<super::prepare::Embedder<'_>> {
        let lead = |p: &crate::embed::EmbedValidParams| p.lead(self.model.reducer.dims());
        super::prepare::Embedder::of(
            self.embed.as_ref(),
            None,
            &self.loaded,
            self.embed.as_ref().map_or(0, lead),
        )
    }

    /// The model's topics (ids and labels) with a batch's `sizes` and `outliers` (by topic
    /// index).
    pub fn summary(&self, sizes: &[usize], outliers: &[usize]) -> TopicSummary {
        let n: usize = sizes.iter().sum();
        TopicSummary {
            topics: self
                .model
                .topics
                .iter()
                .enumerate()
                .map(|(index, t)| Topic {
                    id: t.id,
                    label: t.label.clone(),
                    auto_label: t.auto_label.clone().unwrap_or_else(|| t.label.clone()),
                    size: sizes[index],
                    share: sizes[index] as f64 / n.max(1) as f64,
                    terms: Vec::new(),
                    representatives: Vec::new(),
                    outliers: outliers[index],
                    named: t.named,
                })
                .collect(),
            classes: None,
            documents: n,
        }
    }

    /// Empty sums over this model's topics and features.
    pub fn aggregates(&self, keep: usize) -> Aggregates {
        Aggregates::new(
            self.model.topics.iter().map(|t| t.id).collect(),
            self.tfidf.features().len(),
            keep,
        )
    }
}

/// Documents placed into a model's topics.
#[derive(Debug)]
pub struct Placed {
    pub corpus: Corpus,
    pub clustering: Clustering,
    /// Each document's `(feature, count)` of its single-word features, when asked for.
    pub features: Option<Vec<Vec<(u32, u32)>>>,
    /// What the clean stage removed from these documents.
    pub cleaned: crate::clean::CleanTally,
    /// Each document's place on the fitted map (NaN when the model has no map).
    pub map: Vec<[f32; 2]>,
}

impl Placed {
    /// Adds every document to `agg` (periods bucketed by `unit`), and the skipped ones.
    pub fn add_to(&self, agg: &mut Aggregates, unit: PeriodUnit) {
        let features = self
            .features
            .as_ref()
            .expect("placed with features for aggregates");
        let outliers = self.clustering.outliers();
        let sources: Vec<String> = self
            .corpus
            .sources
            .iter()
            .map(|s| s.path.display().to_string())
            .collect();
        for (i, d) in self.corpus.documents.iter().enumerate() {
            let period = d.period(unit);
            agg.add(Assigned {
                topic: self.clustering.assignments()[i],
                period: &period,
                outlier: outliers[i],
                distance: self.clustering.distances()[i],
                doc_id: &d.id,
                title: &crate::ingest::display_title(&self.corpus, i),
                text: &d.text,
                source: &sources[d.source],
                label: d.label.as_deref(),
                features: &features[i],
            });
        }
        for s in &self.corpus.skipped {
            agg.skip(
                &s.file.display().to_string(),
                s.row as u64,
                s.reason.clone(),
            );
        }
    }
}

/// Rows to the nearest centroid, but a row at least as similar to a zero-shot named topic as its
/// threshold to that topic, as the fit placed them ([`crate::cluster::guided`]).
fn assign_zero_shot(placer: &Placer, x: ndarray::ArrayView2<f32>) -> Clustering {
    let centroids = placer.centroids.view();
    let Some((guides, topics)) = placer
        .model
        .embedding
        .as_ref()
        .and_then(|e| e.zero_shot_guides())
    else {
        return Clustering::assign(centroids, x);
    };
    let fixed: Vec<Option<usize>> = guides
        .zero_shot(x)
        .into_iter()
        .map(|j| j.map(|j| topics[j]))
        .collect();
    Clustering::assign_fixed(centroids, x, &fixed)
        .with_zero_shot(fixed.iter().map(Option::is_some).collect())
}

/// Places prepared documents into the model's topics: TF-IDF, reduction, nearest centroid (in
/// the term space for a refined model), outliers judged by the fit's floors. With `features`,
/// each document's word counts per model feature come back too (for c-TF-IDF sums).
pub fn place(
    placer: &Placer,
    mut prepared: Prepared,
    features: bool,
    progress: &Progress,
) -> Result<Placed, PipelineError> {
    let (matrix, mut counts) = if features {
        placer.tfidf.transform_counting(&prepared.tokens)
    } else {
        (placer.tfidf.transform(&prepared.tokens), Vec::new())
    };
    let zero: Vec<usize> = (0..matrix.n_rows())
        .filter(|&i| matrix.row(i).0.is_empty())
        .collect();
    let keep = prepared.drop_rows(&zero, LeftOut::NotInModel, progress)?;
    let matrix = if zero.is_empty() {
        matrix
    } else {
        let mut k = keep.iter();
        counts.retain(|_| *k.next().unwrap_or(&true));
        let rows: Vec<usize> = (0..matrix.n_rows()).filter(|&i| keep[i]).collect();
        matrix.select_rows(&rows)
    };
    let lsa = placer.model.reducer.transform(&matrix)?;
    let vectors = match &placer.embed {
        Some(params) => {
            let sentences = prepared.take_sentences()?;
            params.features(params.features, lsa, Some(sentences))
        }
        None => lsa,
    };
    let clustering = match &placer.term_centroids {
        Some(terms) => Clustering::assign_terms(
            placer.centroids.view(),
            terms.view(),
            vectors.view(),
            &matrix,
        ),
        None => assign_zero_shot(placer, vectors.view()),
    }
    .with_outlier_floors(placer.floors.clone());
    let map = match &placer.landmarks {
        Some(l) => l.place(vectors.view(), clustering.assignments()),
        None => vec![[f32::NAN; 2]; vectors.nrows()],
    };
    let features = features.then_some(counts);
    Ok(Placed {
        corpus: prepared.corpus,
        clustering,
        features,
        cleaned: prepared.cleaned,
        map,
    })
}
