//! The languages the tokenizer knows, by the name a pipeline file writes (`language = "german"`),
//! and for each: its Snowball stemmer, its stop words and how `language = "auto"` finds it.
//!
//! Every language rust-stemmers has a Snowball algorithm for is here, plus Chinese, which has
//! no stemmer but a word segmenter (see [`super::han`]). Stop words come from the stopwords-iso
//! lists (the `stop-words` crate): English keeps scikit-learn's list (so English results do not
//! move), every other language gets its stopwords-iso list together with scikit-learn's English
//! list (mixed text is common: English terms in German abstracts, Latin runs in Chinese ones).
//! Tamil has no stopwords-iso list, so only the English words. (stopwords-iso's own English list
//! holds content words such as "system" and "research"; adding it lowered the V-measure on
//! THUCNews.)
//!
//! Detection uses whatlang, restricted to these languages. [`detect_sample`] looks at a seeded
//! sample of the corpus (so the same corpus and seed always choose the same language) and
//! decides between one language for the corpus and one per document: see its docs for the rule.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rust_stemmers::Algorithm;
use serde::{Deserialize, Serialize};
use whatlang::Lang;

/// A language the tokenizer knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LanguageInfo {
    /// The name a pipeline file writes.
    pub name: &'static str,
    /// ISO 639-1, the stopwords-iso key.
    pub iso: &'static str,
    /// whatlang's language.
    lang: Lang,
    /// The Snowball algorithm (none for Chinese).
    pub stemmer: Option<Algorithm>,
}

macro_rules! languages {
    ($(($name:literal, $iso:literal, $lang:ident, $alg:expr)),* $(,)?) => {
        /// Every language, by name (Chinese last).
        pub const LANGUAGES: &[LanguageInfo] = &[
            $(LanguageInfo { name: $name, iso: $iso, lang: Lang::$lang, stemmer: $alg }),*
        ];
    };
}

languages![
    ("arabic", "ar", Ara, Some(Algorithm::Arabic)),
    ("danish", "da", Dan, Some(Algorithm::Danish)),
    ("dutch", "nl", Nld, Some(Algorithm::Dutch)),
    ("english", "en", Eng, Some(Algorithm::English)),
    ("finnish", "fi", Fin, Some(Algorithm::Finnish)),
    ("french", "fr", Fra, Some(Algorithm::French)),
    ("german", "de", Deu, Some(Algorithm::German)),
    ("greek", "el", Ell, Some(Algorithm::Greek)),
    ("hungarian", "hu", Hun, Some(Algorithm::Hungarian)),
    ("italian", "it", Ita, Some(Algorithm::Italian)),
    ("norwegian", "no", Nob, Some(Algorithm::Norwegian)),
    ("portuguese", "pt", Por, Some(Algorithm::Portuguese)),
    ("romanian", "ro", Ron, Some(Algorithm::Romanian)),
    ("russian", "ru", Rus, Some(Algorithm::Russian)),
    ("spanish", "es", Spa, Some(Algorithm::Spanish)),
    ("swedish", "sv", Swe, Some(Algorithm::Swedish)),
    ("tamil", "ta", Tam, Some(Algorithm::Tamil)),
    ("turkish", "tr", Tur, Some(Algorithm::Turkish)),
    ("chinese", "zh", Cmn, None),
];

/// The value of `tokenize.language` that detects the language.
pub const AUTO: &str = "auto";

/// The language called `name` (lowercase), if the tokenizer knows it.
pub fn by_name(name: &str) -> Option<&'static LanguageInfo> {
    LANGUAGES.iter().find(|l| l.name == name)
}

/// Every accepted name, comma-separated, for messages.
pub fn accepted_names() -> String {
    let mut names: Vec<&str> = LANGUAGES.iter().map(|l| l.name).collect();
    names.push(AUTO);
    names.join(", ")
}

/// The stopwords-iso list of a language (empty when it has none).
pub fn iso_stop_words(language: &LanguageInfo) -> &'static [&'static str] {
    stop_words::lookup(language.iso).unwrap_or(&[])
}

/// A detected language and how sure whatlang was (0 to 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detected {
    pub language: String,
    pub confidence: f64,
}

/// The language of one text, among [`LANGUAGES`] (`None`: too little text to tell).
pub fn detect(text: &str) -> Option<Detected> {
    let detector = whatlang::Detector::with_allowlist(LANGUAGES.iter().map(|l| l.lang).collect());
    detect_with(&detector, text)
}

fn detect_with(detector: &whatlang::Detector, text: &str) -> Option<Detected> {
    let info = detector.detect(text)?;
    let language = LANGUAGES.iter().find(|l| l.lang == info.lang())?;
    Some(Detected {
        language: language.name.to_string(),
        confidence: info.confidence(),
    })
}

/// What `language = "auto"` found in a corpus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// The corpus's language: the most common one in the sample.
    pub language: String,
    /// The mean confidence of the sample's documents detected in that language.
    pub confidence: f64,
    /// The share of the sample detected in that language.
    pub share: f64,
    /// Documents looked at.
    pub sample: usize,
    /// The languages above [`MIXED_SHARE`] of the sample, most common first, when there are two
    /// or more: then each document is tokenized in its own language (one of these).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_document: Vec<String>,
}

impl std::fmt::Display for Detection {
    /// "german (detected in 97% of 500 sampled documents, confidence 0.99)", and the languages
    /// of a mixed corpus.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (detected in {:.0}% of {} sampled documents, confidence {:.2})",
            self.language,
            self.share * 100.0,
            self.sample,
            self.confidence
        )?;
        if !self.per_document.is_empty() {
            write!(
                f,
                "; mixed: each document in its own of {}",
                self.per_document.join(", ")
            )?;
        }
        Ok(())
    }
}

/// Documents [`detect_sample`] looks at.
pub const SAMPLE: usize = 500;

/// A second language held by at least this share of the sample makes the corpus mixed.
pub const MIXED_SHARE: f64 = 0.1;

/// Detects the language of a seeded sample of [`SAMPLE`] texts. The corpus's language is the
/// most common in the sample (ties: the first in [`LANGUAGES`]); when a second language holds at
/// least [`MIXED_SHARE`] of the sample, the corpus counts as mixed and `per_document` lists
/// every language above that share, so each document is tokenized in its own one of them.
/// `None` when no sampled text could be told (empty or too short).
pub fn detect_sample(texts: &[&str], seed: u64) -> Option<Detection> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    order.shuffle(&mut rng);
    order.truncate(SAMPLE);
    order.sort_unstable();
    let detector = whatlang::Detector::with_allowlist(LANGUAGES.iter().map(|l| l.lang).collect());
    // Per language: documents and summed confidence, in LANGUAGES order.
    let mut tally = vec![(0usize, 0.0f64); LANGUAGES.len()];
    for &i in &order {
        if let Some(d) = detect_with(&detector, texts[i]) {
            let at = LANGUAGES.iter().position(|l| l.name == d.language).unwrap();
            tally[at].0 += 1;
            tally[at].1 += d.confidence;
        }
    }
    let told: usize = tally.iter().map(|t| t.0).sum();
    let mut ranked: Vec<usize> = (0..LANGUAGES.len()).filter(|&l| tally[l].0 > 0).collect();
    ranked.sort_by(|&a, &b| tally[b].0.cmp(&tally[a].0).then(a.cmp(&b)));
    let &best = ranked.first()?;
    let above: Vec<String> = ranked
        .iter()
        .filter(|&&l| tally[l].0 as f64 >= MIXED_SHARE * told as f64)
        .map(|&l| LANGUAGES[l].name.to_string())
        .collect();
    Some(Detection {
        language: LANGUAGES[best].name.to_string(),
        confidence: tally[best].1 / tally[best].0 as f64,
        share: tally[best].0 as f64 / told as f64,
        sample: order.len(),
        per_document: if above.len() > 1 { above } else { Vec::new() },
    })
}

/// The language of one document of a mixed corpus: detected among `allowed`, else the first of
/// them (too little text to tell).
pub fn detect_among<'a>(
    detector: &whatlang::Detector,
    allowed: &'a [String],
    text: &str,
) -> &'a str {
    let found = detect_with(detector, text).map(|d| d.language);
    match found.and_then(|f| allowed.iter().find(|a| **a == f)) {
        Some(a) => a,
        None => &allowed[0],
    }
}

/// A whatlang detector restricted to `names` (languages of [`LANGUAGES`]).
pub fn detector_for(names: &[String]) -> whatlang::Detector {
    let langs = names
        .iter()
        .filter_map(|n| by_name(n))
        .map(|l| l.lang)
        .collect();
    whatlang::Detector::with_allowlist(langs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_snowball_language_and_chinese_by_name() {
        assert_eq!(LANGUAGES.len(), 19);
        for l in LANGUAGES.iter().filter(|l| l.stemmer.is_some()) {
            let _ = rust_stemmers::Stemmer::create(l.stemmer.unwrap());
        }
        assert!(by_name("chinese").unwrap().stemmer.is_none());
        assert!(by_name("klingon").is_none());
        assert!(accepted_names().contains("german, greek") && accepted_names().ends_with("auto"));
    }

    #[test]
    fn stop_lists_hold_the_function_words() {
        let zh = iso_stop_words(by_name("chinese").unwrap());
        for w in ["的", "了", "在", "对", "和", "是"] {
            assert!(zh.contains(&w), "{w}");
        }
        let de = iso_stop_words(by_name("german").unwrap());
        assert!(de.contains(&"ich") && de.contains(&"und"));
        assert!(iso_stop_words(by_name("tamil").unwrap()).is_empty());
    }

    #[test]
    fn detects_single_texts() {
        let de = detect("Die Bundesregierung hat am Mittwoch beschlossen, die Steuern für kleine Unternehmen zu senken.").unwrap();
        assert_eq!(de.language, "german");
        assert!(de.confidence > 0.5, "{de:?}");
        let zh = detect("基于卷积神经网络的图像识别方法研究").unwrap();
        assert_eq!(zh.language, "chinese");
        assert_eq!(detect(""), None);
    }

    #[test]
    fn sample_detection_is_seeded_and_sees_mixed_corpora() {
        let en = "The proposed method improves the accuracy of image classification on standard benchmarks.";
        let fr = "La méthode proposée améliore la précision de la classification des images sur les jeux de données.";
        let one: Vec<&str> = vec![en; 40];
        let d = detect_sample(&one, 7).unwrap();
        assert_eq!(
            (d.language.as_str(), d.share, d.sample),
            ("english", 1.0, 40)
        );
        assert!(d.per_document.is_empty());
        let mut mixed: Vec<&str> = vec![en; 30];
        mixed.extend(vec![fr; 10]);
        let m = detect_sample(&mixed, 7).unwrap();
        assert_eq!(
            m,
            detect_sample(&mixed, 7).unwrap(),
            "same seed, same answer"
        );
        assert_eq!(m.language, "english");
        assert_eq!(m.per_document, ["english", "french"]);
        let det = detector_for(&m.per_document);
        assert_eq!(detect_among(&det, &m.per_document, fr), "french");
        assert_eq!(detect_among(&det, &m.per_document, ""), "english");
        assert!(detect_sample(&["", "  "], 1).is_none());
        assert!(
            m.to_string()
                .starts_with("english (detected in 75% of 40 sampled documents"),
            "{m}"
        );
        assert!(
            m.to_string()
                .ends_with("mixed: each document in its own of english, french"),
            "{m}"
        );
    }
}
