//! Tests of the boilerplate rules, fitted on small corpora and applied to their documents:
//! repetition (thresholds, sampling, duplicates, the back-off), rights statements, message
//! furniture, `keep`, Chinese segments, and the same fit for any thread count.

use super::*;

fn fit<S: AsRef<str> + Sync>(texts: &[S], min_docs: Option<usize>) -> Boilerplate {
    BoilerplateParams::new()
        .min_docs(min_docs)
        .check()
        .unwrap()
        .fit(texts)
}

/// `texts` followed by `n` documents of unique words with no segment in common, so that
/// the few short documents of a test are not most of its corpus (the back-off rule).
fn with_filler(texts: &[&str], n: usize) -> Vec<String> {
    let mut all: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    all.extend((0..n).map(|i| format!("Filler {} text.", word(i + 1000))));
    all
}

/// A word of letters unique to `n` (digits would all normalise to `0`).
fn word(mut n: usize) -> String {
    let mut w = String::new();
    while {
        w.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        n > 0
    } {}
    w
}

fn strip(b: &Boilerplate, text: &str) -> (String, Removed) {
    let (mut out, mut r, mut scanner) = (String::new(), Removed::default(), Scanner::default());
    if !b.strip(text, &mut out, &mut r, &mut scanner) {
        out = text.to_string();
    }
    (out, r)
}

#[test]
fn years_and_numbers_do_not_split_a_publisher_line() {
    let texts = [
        "Kernels for graphs. © 2017 IEEE.",
        "Deep nets for speech. Personal note of the editors here. Copyright © 2019 IEEE.",
        "Bandits with many arms and their regret. Personal note of the editors here.",
        "Decision trees grown on tabular data. Personal note of the editors here.",
    ];
    let b = fit(&texts, Some(3));
    assert_eq!(b.repeated.len(), 1);
    assert_eq!(b.repeated[0].text, "Personal note of the editors here.");
    assert_eq!(b.repeated[0].documents, 3);
    let (t, r) = strip(&b, texts[1]);
    assert_eq!(
        t.split_whitespace().collect::<Vec<_>>(),
        ["Deep", "nets", "for", "speech."]
    );
    assert_eq!((r.repeated, r.rights_statements, r.documents), (1, 1, 1));
    assert_eq!(strip(&b, texts[0]).0.trim(), "Kernels for graphs.");
}

#[test]
fn the_cheap_search_finds_every_rights_phrase_and_furniture() {
    for phrase in RIGHTS_STARTS.iter().chain(RIGHTS_ANYWHERE) {
        let raw = phrase.replace('0', "2019");
        assert!(rights::may_hold_furniture(&raw), "{raw}");
        assert!(rights::may_hold_furniture(&raw.to_uppercase()), "{raw}");
        let mut cap = raw.clone();
        if cap.is_char_boundary(1) {
            cap[..1].make_ascii_uppercase();
        }
        assert!(rights::may_hold_furniture(&cap), "{cap}");
    }
    for raw in [
        "(C) 2019 Acme",
        "joe@x.org writes:",
        "Bob wrote:",
        "text\n--\nJoe",
    ] {
        assert!(rights::may_hold_furniture(raw), "{raw}");
    }
    assert!(!rights::may_hold_furniture("We study kernels on graphs."));
    // With no repeated segment, a text the search passes over is kept whole, and one it
    // finds is scanned.
    let b = fit(&["Kernels.", "Graphs."], None);
    assert!(b.repeated.is_empty());
    assert_eq!(strip(&b, "We study kernels.").0, "We study kernels.");
    assert_eq!(strip(&b, "Kernels. © 2019 Acme Inc.").0.trim(), "Kernels.");
}

#[test]
fn a_sampled_fit_scales_the_threshold_given() {
    assert_eq!(scaled_min_docs(50, 100, 100), 50);
    assert_eq!(scaled_min_docs(50, 20_000, 100_000), 10);
    assert_eq!(scaled_min_docs(3, 20_000, 1_000_000), 2);
}

#[test]
fn rights_statements_go_even_once() {
    let b = fit(&["x"], None);
    let text = "We study kernels. © The Author(s) 2018. Published by Oxford University Press on behalf of the Society. \
                All rights reserved. For permissions, please email: journals.permissions@oup.com";
    let (t, r) = strip(&b, text);
    assert_eq!(t.trim(), "We study kernels.");
    assert_eq!(r.rights_statements, 4);
    // A sentence about copyright is not a statement of it.
    assert_eq!(
        strip(&b, "We detect copyright infringement in diffusion models.")
            .1
            .rights_statements,
        0
    );
}

#[test]
fn duplicate_documents_count_once() {
    let t = "A paper that is listed three times in the list.";
    let b = fit(&[t, t, t, "Another one."], Some(3));
    assert!(b.repeated.is_empty());
}

#[test]
fn signatures_and_quote_headers() {
    let texts = [
        "My car broke.\nIn article <1993.abc@x.edu>, joe@y.com (Joe) writes:\nGordon Banks N3JXP | Skepticism is the chastity of the intellect\n",
        "Doctors disagree.\nGordon Banks N3JXP | Skepticism is the chastity of the intellect\n",
        "Take aspirin.\n--\nSome One, Dept of Things\nPhone 555\n",
    ];
    // Two short posts of three, each mostly signature: the filler keeps the corpus from
    // being mostly signatures (the back-off rule).
    let b = fit(&with_filler(&texts, 60), Some(2));
    assert_eq!(b.repeated.len(), 1);
    assert_eq!(b.backed_off, None);
    let (t, r) = strip(&b, texts[0]);
    assert_eq!(t.trim(), "My car broke.");
    assert_eq!((r.quote_headers, r.repeated), (1, 1));
    let (t, r) = strip(&b, texts[2]);
    assert_eq!(t.trim(), "Take aspirin.");
    assert_eq!(r.signatures, 1);
}

#[test]
fn keep_wins_and_off_is_off() {
    let texts = [
        "a. Code and data are released here.",
        "b. Code and data are released here.",
        "c. Code and data are released here.",
    ];
    let kept = BoilerplateParams::new()
        .min_docs(Some(3))
        .keep(vec!["Code and data are released here".into()])
        .check()
        .unwrap()
        .fit(&texts);
    assert!(kept.repeated.is_empty());
    assert_eq!(strip(&kept, texts[0]).0, texts[0]);
    let off = BoilerplateParams::new()
        .enabled(false)
        .check()
        .unwrap()
        .fit(&texts);
    assert_eq!(strip(&off, "© 2019 IEEE. Text.").0, "© 2019 IEEE. Text.");
}

#[test]
fn chinese_sentences_are_segments() {
    let texts = [
        "卷积神经网络用于图像分类。本文版权归作者所有，未经许可不得转载。",
        "图神经网络。本文版权归作者所有，未经许可不得转载。",
        "强化学习。本文版权归作者所有，未经许可不得转载。",
    ];
    // Han text has no spaces: each ideograph counts as a word.
    let b = fit(&with_filler(&texts, 40), Some(3));
    assert_eq!(b.repeated.len(), 1);
    assert_eq!(strip(&b, texts[1]).0, "图神经网络。");
    let mut segs = Vec::new();
    Scanner::default().scan(texts[0], |s| segs.push(&texts[0][s.start..s.end]));
    assert_eq!(
        segs,
        [
            "卷积神经网络用于图像分类。",
            "本文版权归作者所有，未经许可不得转载。"
        ]
    );
}

/// Issue 40: a segment that is a document's whole text (links aside) is never cut by the
/// repetition rule; other documents still lose it.
#[test]
fn a_whole_text_is_never_cut_as_repeated() {
    let mut texts: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "We study {} and {} at length. Code and data are released here.",
                word(i + 100),
                word(i + 500)
            )
        })
        .collect();
    texts.push("Code and data are released here.".into());
    texts.push("Code and data are released here.\nhttps://x.org/code".into());
    let b = fit(&texts, None);
    assert_eq!(b.backed_off, None, "2 of 42 documents: below the share");
    assert_eq!(b.repeated.len(), 1);
    for whole in &texts[40..] {
        assert_eq!(strip(&b, whole), (whole.to_string(), Removed::default()));
    }
    let (t, r) = strip(&b, &texts[0]);
    assert_eq!(t.trim(), "We study wd and gt at length.");
    assert_eq!((r.repeated, r.documents), (1, 1));
}

/// Issue 40: 30 x 3 templated records that differ only in a number. The repetition rule
/// would empty all of them, so it backs off and the texts stay whole.
#[test]
fn the_repetition_rule_backs_off_when_it_would_empty_the_corpus() {
    let templates = [
        "Neural network training {} graph",
        "Protein folding with {} diffusion steps",
        "Bandit regret bounds for {} arms",
    ];
    let texts: Vec<String> = (1..=30)
        .flat_map(|i| templates.map(|t| t.replace("{}", &i.to_string())))
        .collect();
    let b = fit(&texts, None);
    let off = b.backed_off.expect("backed off");
    assert_eq!((off.documents, off.examined, off.found), (90, 90, 3));
    assert!(b.repeated.is_empty());
    assert!(
        off.to_string()
            .contains("90 of 90 documents (100%, more than 5%)"),
        "{off}"
    );
    for t in &texts {
        assert_eq!(strip(&b, t).0, *t);
    }
    // Saved and read back, the model still removes nothing.
    let json = serde_json::to_string(&b).unwrap();
    let back: Boilerplate = serde_json::from_str::<Boilerplate>(&json)
        .unwrap()
        .indexed();
    assert_eq!(back.backed_off, Some(off));
    assert_eq!(strip(&back, &texts[0]).0, texts[0]);
    // Under the share, the rule stays on: 4 nearly emptied documents of 100.
    let mut few: Vec<String> = (7..11)
        .map(|i| format!("Neural network training {i} graph"))
        .collect();
    few.extend((0..96).map(|i| {
        format!(
            "A long abstract about {} and {} methods. Neural network training 3 graph",
            word(i + 10),
            word(i + 900)
        )
    }));
    let b = fit(&few, None);
    assert_eq!(b.backed_off, None);
    assert_eq!(b.repeated.len(), 1);
}

#[test]
fn auto_threshold() {
    assert_eq!(auto_min_docs(30), 3);
    assert_eq!(auto_min_docs(18_846), 19);
    assert_eq!(auto_min_docs(200_000), 200);
    assert_eq!(
        BoilerplateParams::new().min_docs(Some(1)).check(),
        Err(BoilerplateParamsError::MinDocs)
    );
}

#[test]
fn the_fit_is_the_same_for_any_thread_count() {
    let texts: Vec<String> = (0..20_000)
        .map(|i| {
            format!(
                "{} {} {}. Shared line number {} of the corpus here.",
                word(i),
                word(i * 7 + 1),
                word(i * 13 + 5),
                i % 5
            )
        })
        .collect();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| fit_strings(&texts));
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(|| fit_strings(&texts));
    assert_eq!(one, two);
    assert_eq!(
        one.repeated.len(),
        1,
        "digits are one word: the five lines are one"
    );
}

fn fit_strings(texts: &[String]) -> Boilerplate {
    BoilerplateParams::new().check().unwrap().fit(texts)
}
