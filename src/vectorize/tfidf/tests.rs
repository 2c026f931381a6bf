//! The TF-IDF tests: hand-computed weights, scikit-learn's document-frequency bounds, n-grams,
//! and transform and its counts against the fit.

use super::*;
use crate::tokenize::{Analyzer, StopWordList, TokenizedCorpus, TokenizerParams};
use approx::assert_abs_diff_eq;

fn tokenize(texts: &[&str]) -> TokenizedCorpus {
    let s = TokenizerParams::new()
        .stem(false)
        .stop_words(StopWordList::None)
        .min_length(1)
        .check()
        .unwrap();
    TokenizedCorpus::build_texts(texts, &Analyzer::new(&s))
}

#[test]
fn counting_transform_counts_single_word_features_and_weighs_the_same() {
    let train = tokenize(&["a b c a", "b c d", "a d d e", "c e a b"]);
    let params = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(1)))
        .max_df(DocFreq::Fraction(1.0))
        .ngram_range([1, 2])
        .check()
        .unwrap();
    let m = params.fit(&train).unwrap();
    assert!(
        m.features().iter().any(|f| f.stem.contains(' ')),
        "bigrams too"
    );
    let new = tokenize(&["a a b x", "x y", "d e e a b", "c"]);
    let (matrix, counts) = m.transform_counting(&new);
    let plain = m.transform(&new);
    for r in 0..plain.n_rows() {
        assert_eq!(matrix.row(r), plain.row(r), "row {r}");
    }
    let of_term = m.term_features(&new);
    for (d, got) in counts.iter().enumerate() {
        let mut want = std::collections::BTreeMap::<u32, u32>::new();
        for t in new.doc_terms(d) {
            if of_term[t as usize] != u32::MAX {
                *want.entry(of_term[t as usize]).or_default() += 1;
            }
        }
        assert_eq!(got, &want.into_iter().collect::<Vec<_>>(), "doc {d}");
    }
    assert_eq!(counts[1], Vec::new(), "no known word");
    assert_eq!(counts[0].iter().map(|c| c.1).sum::<u32>(), 3);
}

#[test]
fn issue_39_sub_words_are_weighed_but_not_counted_as_words() {
    use crate::tokenize::ChineseTerms;
    let p = TokenizerParams::new()
        .language("chinese")
        .chinese(ChineseTerms::WordsBigrams)
        .check()
        .unwrap();
    let tc = TokenizedCorpus::build_texts(&["神经网络", "网络", "神经网络"], &Analyzer::new(&p));
    let params = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(1)))
        .max_df(DocFreq::Fraction(1.0))
        .check()
        .unwrap();
    let m = params.fit(&tc).unwrap();
    let col = |s: &str| m.features().iter().position(|f| f.surface == s).unwrap() as u32;
    // "经网" is only ever inside a word: a feature all the same, in documents 0 and 2.
    assert_eq!(m.features()[col("经网") as usize].df, 2);
    assert!(m.matrix().row(0).0.contains(&col("经网")));
    // The counts that labels are made of hold the words alone: "网络" in document 0 is a
    // sub-word, in document 1 a word.
    let (matrix, counts) = m.transform_counting(&tc);
    assert_eq!(matrix.row(0), m.matrix().row(0));
    assert_eq!(counts[0], [(col("神经网络"), 1)]);
    assert_eq!(counts[1], [(col("网络"), 1)]);
    // With bigrams of terms too, a sub-word is a single feature, never inside an n-gram.
    let two = TokenizedCorpus::build_texts(&["卷积神经网络", "卷积神经网络"], &Analyzer::new(&p));
    let ngrams = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(1)))
        .max_df(DocFreq::Fraction(1.0))
        .ngram_range([1, 2])
        .check()
        .unwrap()
        .fit(&two)
        .unwrap();
    let word = |t: &u32| two.terms[*t as usize].is_word();
    assert!(ngrams.features().iter().any(|f| f.surface == "经网"));
    assert!(ngrams.features().iter().any(|f| f.terms.len() == 2));
    for f in ngrams.features().iter().filter(|f| f.terms.len() > 1) {
        assert!(f.terms.iter().all(word), "{f:?}");
    }
}

/// Hand-computed: docs "a a b", "b c", "c"; n = 3; df a=1, b=2, c=2.
/// smooth idf: a = ln(4/2)+1 = 1.693147, b = c = ln(4/3)+1 = 1.287682.
/// Raw tf, doc 0: a = 2*1.693147 = 3.386294, b = 1.287682; L2 norm = 3.622844
/// -> a = 0.934708, b = 0.355434.
#[test]
fn matches_hand_computed_values() {
    let tc = tokenize(&["a a b", "b c", "c"]);
    let params = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(1)))
        .max_df(DocFreq::Fraction(1.0))
        .sublinear_tf(false)
        .check()
        .unwrap();
    let m = params.fit(&tc).unwrap();
    let surfaces: Vec<&str> = m.features().iter().map(|f| f.surface.as_str()).collect();
    assert_eq!(surfaces, ["a", "b", "c"]);
    assert_abs_diff_eq!(m.idf()[0], 1.693147, epsilon = 1e-5);
    assert_abs_diff_eq!(m.idf()[1], 1.287682, epsilon = 1e-5);
    let (idx, val) = m.matrix().row(0);
    assert_eq!(idx, &[0, 1]);
    assert_abs_diff_eq!(val[0], 0.934708, epsilon = 1e-5);
    assert_abs_diff_eq!(val[1], 0.355434, epsilon = 1e-5);
    let (idx, val) = m.matrix().row(2);
    assert_eq!(idx, &[2]);
    assert_abs_diff_eq!(val[0], 1.0, epsilon = 1e-6);
}

/// Sublinear tf and non-smooth idf: doc 0 a: (1+ln 2)*(ln(3/1)+1) = 1.693147*2.098612 = 3.553227,
/// b: 1*(ln(3/2)+1) = 1.405465; norm 3.821101 -> 0.929896, 0.367817.
#[test]
fn sublinear_tf_and_plain_idf() {
    let tc = tokenize(&["a a b", "b c", "c"]);
    let m = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(1)))
        .max_df(DocFreq::Fraction(1.0))
        .smooth_idf(false)
        .check()
        .unwrap()
        .fit(&tc)
        .unwrap();
    let (_, val) = m.matrix().row(0);
    assert_abs_diff_eq!(val[0], 0.929896, epsilon = 1e-5);
    assert_abs_diff_eq!(val[1], 0.367817, epsilon = 1e-5);
}

#[test]
fn df_bounds_follow_sklearn() {
    let tc = tokenize(&["a b", "a c", "a d", "b e"]);
    // max_df 0.5 -> df <= 2: drops a (df 3). min_df 2 keeps only b.
    let m = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(2)))
        .max_df(DocFreq::Fraction(0.5))
        .check()
        .unwrap()
        .fit(&tc)
        .unwrap();
    let s: Vec<&str> = m.features().iter().map(|f| f.surface.as_str()).collect();
    assert_eq!(s, ["b"]);
    assert_eq!(
        TfIdfParams::new()
            .min_df(Some(DocFreq::Count(9)))
            .check()
            .unwrap()
            .fit(&tc)
            .unwrap_err(),
        TfIdfError::MinDfTooLarge { min: 9, docs: 4 }
    );
    assert!(matches!(
        TfIdfParams::new()
            .min_df(Some(DocFreq::Count(4)))
            .max_df(DocFreq::Fraction(1.0))
            .check()
            .unwrap()
            .fit(&tc),
        Err(TfIdfError::NoTerms { .. })
    ));
}

#[test]
fn ngrams_and_transform_reuse_the_vocabulary() {
    let tc = tokenize(&["language model", "language model rocks", "model"]);
    let m = TfIdfParams::new()
        .min_df(Some(DocFreq::Count(2)))
        .max_df(DocFreq::Fraction(1.0))
        .ngram_range([1, 2])
        .check()
        .unwrap()
        .fit(&tc)
        .unwrap();
    let s: Vec<&str> = m.features().iter().map(|f| f.surface.as_str()).collect();
    assert_eq!(s, ["language", "model", "language model"]);
    let again = m.transform(&tc);
    assert_eq!(
        &again,
        m.matrix(),
        "transform of the training corpus equals the fit"
    );
    let other = tokenize(&["unknown words model"]);
    let t = m.transform(&other);
    assert_eq!(t.row(0).0, &[1]);
}
