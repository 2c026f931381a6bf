//! Joining the words of a phrase for people to read.
//!
//! English phrases are words with spaces between them ("language model"). Chinese is written
//! without spaces, so a phrase of Chinese words reads as one ("卷积" + "神经网络" ->
//! "卷积神经网络"), and a Latin word beside a Chinese one keeps its natural form ("bp" +
//! "神经网络" -> "bp神经网络"). The rule: no space where either neighbour is a Han character;
//! a space everywhere else. Text without Han characters is joined exactly as before.

use super::han::is_han;

/// `words` joined for display (see the module docs).
pub fn join_words<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut last: Option<char> = None;
    for w in words {
        if w.is_empty() {
            continue;
        }
        if let Some(prev) = last {
            let first = w.chars().next().expect("not empty");
            if !(is_han(prev) || is_han(first)) {
                out.push(' ');
            }
        }
        out.push_str(w);
        last = w.chars().next_back();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_joins_without_spaces_and_latin_keeps_them() {
        assert_eq!(join_words(["卷积", "神经网络"]), "卷积神经网络");
        assert_eq!(join_words(["bp", "神经网络"]), "bp神经网络");
        assert_eq!(join_words(["神经网络", "bp", "算法"]), "神经网络bp算法");
        assert_eq!(join_words(["chain", "of", "thought"]), "chain of thought");
        assert_eq!(join_words(["über", "modelle"]), "über modelle");
        assert_eq!(join_words(Vec::<&str>::new()), "");
    }
}
