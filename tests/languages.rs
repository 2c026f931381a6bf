//! Issue 20: topics in the user's own language. The real binary on a Chinese paper list (a title
//! line, then blank-line-separated abstracts on three themes) with a user dictionary: labels read
//! as Chinese (no spaces between Han characters, no stop words, no lone fragments of words), the
//! dictionary's words stay whole, `assign` with the saved model reproduces the fit, and the
//! language is chosen, detected and refused as the issue says.

mod common;
use common::*;
use std::fs;
use std::path::{Path, PathBuf};
use topicmap::tokenize::{han, languages};

/// The fixture's files copied into `dir`, and its pipeline there.
fn chinese_fixture(dir: &Path) -> PathBuf {
    for f in ["papers_zh.txt", "user_dictionary.txt", "papers_zh.toml"] {
        fs::copy(fixture("languages").join(f), dir.join(f)).unwrap();
    }
    dir.join("papers_zh.toml")
}

fn fit(dir: &Path, pipeline: &Path) -> PathBuf {
    let out = dir.join("fit");
    let o = run(&[
        "run",
        pipeline.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// `topicmap assign` of `dir/input` with the model in `out`, into `dir/again`.
fn assign_again(dir: &Path, out: &Path, input: &str) -> PathBuf {
    let again = dir.join("again");
    let input = dir.join(input);
    let o = run(&[
        "assign",
        "--model",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    again
}

fn labels(out: &Path) -> Vec<String> {
    let (h, rows) = read_csv(&out.join("topics.csv"));
    column(&h, &rows, "label")
        .into_iter()
        .map(String::from)
        .collect()
}

/// Why a label term does not read right, if it does not.
fn fault(term: &str, stop: &[&str]) -> Option<&'static str> {
    let chars: Vec<char> = term.chars().collect();
    if chars
        .windows(3)
        .any(|w| han::is_han(w[0]) && w[1] == ' ' && han::is_han(w[2]))
    {
        return Some("a space between Han characters");
    }
    if stop.contains(&term) {
        return Some("a stop word");
    }
    if han::is_lone_han(term) && !han::is_dictionary_word(term) {
        return Some("a lone character that is no word");
    }
    None
}

#[test]
fn issue_20_chinese_labels_read_right_and_assign_reproduces_the_fit() {
    let tmp = tempfile::tempdir().unwrap();
    let out = fit(tmp.path(), &chinese_fixture(tmp.path()));
    let zh = languages::by_name("chinese").unwrap();
    let en = languages::by_name("english").unwrap();
    let stop: Vec<&str> = languages::iso_stop_words(zh)
        .iter()
        .chain(languages::iso_stop_words(en))
        .copied()
        .collect();
    let labels = labels(&out);
    assert_eq!(labels.len(), 3);
    for label in &labels {
        for term in label.split(", ") {
            assert_eq!(fault(term, &stop), None, "{term:?} in {label:?}");
        }
    }
    insta::assert_snapshot!("chinese_labels", labels.join("\n"));
    // The user dictionary keeps its words whole: they are terms of the topics.
    let terms = fs::read_to_string(out.join("terms.csv")).unwrap();
    for word in ["扩散模型", "大语言模型", "有限元"] {
        assert!(terms.contains(word), "{word} is not a term:\n{terms}");
    }
    // The model saves the language, the segmenter and the dictionary with its sha256.
    let model: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(model["tokenize"]["language"], "chinese");
    assert_eq!(model["tokenize"]["segmenter"], "jieba");
    let dict = &model["tokenize"]["user_dictionary"];
    assert_eq!(dict["file"], "user_dictionary.txt");
    assert_eq!(dict["sha256"].as_str().unwrap().len(), 64);

    let again = assign_again(tmp.path(), &out, "papers_zh.txt");
    let (h1, r1) = read_csv(&out.join("documents.csv"));
    let (h2, r2) = read_csv(&again.join("documents.csv"));
    assert_eq!(r1.len(), 24);
    assert_eq!(column(&h1, &r1, "doc_id"), column(&h2, &r2, "doc_id"));
    assert_eq!(
        column(&h1, &r1, "topic_id"),
        column(&h2, &r2, "topic_id"),
        "assign tokenizes exactly as the fit did"
    );
}

#[test]
fn issue_39_sub_words_weigh_in_the_clustering_but_never_name_a_topic() {
    use topicmap::tokenize::{Analyzer, TokenizedCorpus, TokenizerValidParams};
    let tmp = tempfile::tempdir().unwrap();
    let out = fit(tmp.path(), &chinese_fixture(tmp.path()));
    let model: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(model["tokenize"]["chinese"], "words+characters+bigrams");
    // The terms that are only ever inside words (characters and bigrams), as the fit's own
    // tokenizer finds them in the fixture's text.
    let params: TokenizerValidParams = serde_json::from_value(model["tokenize"].clone()).unwrap();
    let text = fs::read_to_string(tmp.path().join("papers_zh.txt")).unwrap();
    let tc = TokenizedCorpus::build_texts(&[text.as_str()], &Analyzer::new(&params));
    let inside: Vec<&str> = tc
        .terms
        .iter()
        .filter(|t| !t.is_word())
        .map(|t| t.surface.as_str())
        .collect();
    // They are features of the model...
    let features: Vec<&str> = model["surfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        inside.iter().any(|s| features.contains(s)),
        "no sub-word is a feature"
    );
    // ...but no topic lists or is labelled by one.
    let (h, rows) = read_csv(&out.join("terms.csv"));
    let listed = column(&h, &rows, "term");
    assert!(!listed.is_empty());
    for term in listed
        .iter()
        .copied()
        .chain(labels(&out).iter().flat_map(|l| l.split(", ")))
    {
        assert!(!inside.contains(&term), "{term:?} is only a sub-word");
    }
}

#[test]
fn issue_20_a_model_whose_dictionary_changed_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = fit(tmp.path(), &chinese_fixture(tmp.path()));
    let model = out.join("model.json");
    let text = fs::read_to_string(&model).unwrap();
    fs::write(&model, text.replacen("思维链", "思维", 1)).unwrap();
    let input = tmp.path().join("papers_zh.txt");
    let o = run(&[
        "assign",
        "--model",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
        "--out",
        tmp.path().join("again").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("user_dictionary.txt") && err.contains("does not match its sha256"),
        "{err}"
    );
}

#[test]
fn issue_20_auto_detects_the_language_and_check_prints_it() {
    let tmp = tempfile::tempdir().unwrap();
    let p = chinese_fixture(tmp.path());
    let body = fs::read_to_string(&p)
        .unwrap()
        .replace("language = \"chinese\"", "language = \"auto\"");
    fs::write(&p, body).unwrap();
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("language: auto (tokenize.language); detected: chinese (detected in 100% of 24 sampled documents, confidence"),
        "{stdout}"
    );
    let out = tmp.path().join("auto");
    let o = bin()
        .args(["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("language: chinese (detected in 100%"),
        "{}",
        stderr(&o)
    );
    let run_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let t = &run_json["settings"]["tokenize"];
    assert_eq!(t["language"], "chinese", "{t}");
    assert_eq!(t["detected"]["language"], "chinese", "{t}");
    let auto = labels(&out);
    let fixed = labels(&fit(tmp.path(), &chinese_fixture(tmp.path())));
    assert_eq!(
        auto, fixed,
        "auto chose Chinese and tokenized as language = \"chinese\""
    );
}

#[test]
fn issue_20_an_unknown_language_and_a_missing_dictionary_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let p = chinese_fixture(tmp.path());
    let body = fs::read_to_string(&p).unwrap();
    fs::write(&p, body.replace("\"chinese\"", "\"klingon\"")).unwrap();
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("tokenize.language \"klingon\"") && err.contains("german, greek"),
        "{err}"
    );
    fs::write(&p, body.replace("user_dictionary.txt", "missing.txt")).unwrap();
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("missing.txt"), "{}", stderr(&o));
    fs::write(tmp.path().join("bad.txt"), "扩散模型 lots\n").unwrap();
    fs::write(&p, body.replace("user_dictionary.txt", "bad.txt")).unwrap();
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(stderr(&o).contains("bad.txt, line 1"), "{}", stderr(&o));
}

#[test]
fn issue_20_german_gets_stop_words_and_a_stop_word_list_switches_them() {
    let tmp = tempfile::tempdir().unwrap();
    let topics = [
        "Ich habe die Bundesregierung und den Haushalt im Parlament diskutiert",
        "Ich finde die Fußballmannschaft und das Tor im Stadion großartig",
    ];
    let mut body = String::from("Nachrichten\n");
    for i in 0..24 {
        body.push_str(&format!(
            "\n{} {}\n",
            topics[i % 2],
            ["heute", "gestern", "morgen"][i % 3]
        ));
    }
    fs::write(tmp.path().join("de.txt"), body).unwrap();
    let toml =
        "[[input]]\npath = \"de.txt\"\n[tokenize]\nlanguage = \"german\"\n[cluster]\nk = 2\n";
    let p = pipeline(tmp.path(), "de.toml", toml);
    let out = fit(tmp.path(), &p);
    let terms = fs::read_to_string(out.join("terms.csv")).unwrap();
    for stop in [",ich,", ",und,", ",die,"] {
        assert!(!terms.contains(stop), "{stop} is a term:\n{terms}");
    }
    // The list form replaces the built-in list: `stop-words = []` switches it off.
    let listed = toml.replace(
        "language = \"german\"",
        "language = \"german\"\nstop-words = [\"ich\"]",
    );
    let p = pipeline(tmp.path(), "listed.toml", &listed);
    let out = tmp.path().join("listed");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let t = &run_json["settings"]["tokenize"];
    assert_eq!(
        (&t["stop_words"], &t["extra_stop_words"]),
        (&"none".into(), &serde_json::json!(["ich"]))
    );
}

#[test]
fn issue_20_a_mixed_corpus_is_tokenized_document_by_document() {
    let tmp = tempfile::tempdir().unwrap();
    let en = [
        "The proposed method improves image classification accuracy with convolutional networks",
        "We train convolutional networks for image classification and report the accuracy",
    ];
    let de = [
        "Die Regierung hat den Haushalt und die Steuern im Parlament beschlossen",
        "Das Parlament diskutiert die Steuern und den Haushalt der Regierung",
    ];
    let mut body = String::from("Papers\n");
    for i in 0..30 {
        let text = if i % 3 == 0 { de[i % 2] } else { en[i % 2] };
        body.push_str(&format!("\n{text} {i}\n"));
    }
    fs::write(tmp.path().join("mixed.txt"), body).unwrap();
    // Four sentences repeated thirty times: the repetition rule would rightly take them for
    // boilerplate.
    let toml = "[[input]]\npath = \"mixed.txt\"\n[clean]\nboilerplate = false\n[tokenize]\nlanguage = \"auto\"\n[cluster]\nk = 2\n";
    let out = fit(tmp.path(), &pipeline(tmp.path(), "mixed.toml", toml));
    let run_json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let detected = &run_json["settings"]["tokenize"]["detected"];
    assert_eq!(detected["language"], "english", "{detected}");
    assert_eq!(
        detected["per_document"],
        serde_json::json!(["english", "german"])
    );
    // German stop words are no terms of the German documents; the German topic is found.
    let terms = fs::read_to_string(out.join("terms.csv")).unwrap();
    for stop in [",die,", ",und,", ",der,", ",the,"] {
        assert!(!terms.contains(stop), "{stop} is a term:\n{terms}");
    }
    assert!(terms.contains("parlament"), "{terms}");
    // `assign` detects each document's language as the fit did.
    let again = assign_again(tmp.path(), &out, "mixed.txt");
    let (h1, r1) = read_csv(&out.join("documents.csv"));
    let (h2, r2) = read_csv(&again.join("documents.csv"));
    assert_eq!(column(&h1, &r1, "topic_id"), column(&h2, &r2, "topic_id"));
}
