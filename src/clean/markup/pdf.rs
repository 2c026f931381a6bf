//! PDF extraction artefacts: the `(cid:N)` codes a text extractor writes for glyphs it could
//! not map to Unicode.
//!
//! In the NeurIPS abstracts they are mostly TeX's OT1 fonts showing through: `(cid:173)` is a
//! soft hyphen at a line break (the two halves of the word are joined again), and a few codes
//! are ligatures (`classi(cid:12)cation` -> `classification`), restored only when glued to
//! lowercase letters so a stray code is not turned into letters. Any other code is dropped.

use super::chars::is_alnum_at;
use super::writer::Writer;

/// `(`: a PDF `(cid:N)` code, or a plain parenthesis.
pub(super) fn paren(s: &str, i: usize, w: &mut Writer<'_>) -> usize {
    let b = s.as_bytes();
    let Some((num, end)) = cid_at(b, i) else {
        w.push('(');
        return i + 1;
    };
    if num == 173 {
        // Soft hyphen at a line break: join the two halves of the word.
        let mut k = end;
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        return k;
    }
    if let Some(lig) = ligature(num) {
        let next_lower = b.get(end).is_some_and(u8::is_ascii_lowercase);
        let prev_lower = !w.pending && w.out.as_bytes().last().is_some_and(u8::is_ascii_lowercase);
        if next_lower || (prev_lower && !is_alnum_at(s, end)) {
            w.push_str(lig);
        }
    }
    end
}

/// Parses `(cid:N)` at `b[i]`; returns `N` and the index just past `)`.
pub(super) fn cid_at(b: &[u8], i: usize) -> Option<(u32, usize)> {
    let rest = b.get(i..)?;
    let digits = rest.strip_prefix(b"(cid:")?;
    let nd = digits
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if nd == 0 || nd > 5 || digits.get(nd) != Some(&b')') {
        return None;
    }
    let n = digits[..nd]
        .iter()
        .fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0'));
    Some((n, i + 5 + nd + 1))
}

/// The ligature a PDF `(cid:N)` code stands for in TeX's OT1 fonts, as seen
/// in the NeurIPS extraction (`classi(cid:12)cation`, `di(cid:14)cult`,
/// `in(cid:3)uenced`). Used only when glued to lowercase letters.
fn ligature(n: u32) -> Option<&'static str> {
    match n {
        2 | 12 => Some("fi"),
        3 | 13 => Some("fl"),
        11 => Some("ff"),
        14 => Some("ffi"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;

    #[test]
    fn cid_soft_hyphen_joins_words() {
        // nips_1987_2018.csv, "A Computer Simulation of Olfactory Cortex ..."
        assert_eq!(
            c("we  have  developed  a  computer  simulation  of piri(cid:173) form  (olfactory)  cortex  which  is  capable  of reproducing  spatial  and  temporal  patterns. Using  a  simple  Hebb-type  learning  rule  in  conjunc(cid:173) tion  with  the  cortical  dynamics"),
            "we have developed a computer simulation of piriform (olfactory) cortex which is capable of reproducing spatial and temporal patterns. Using a simple Hebb-type learning rule in conjunction with the cortical dynamics"
        );
        assert_eq!(c("play back(cid:173)"), "play back");
    }

    #[test]
    fn other_cids_dropped_or_ligatures() {
        assert_eq!(c("a (cid:147)tempered(cid:148) prior"), "a tempered prior");
        assert_eq!(c("O(103 (cid:0) 104) examples"), "O(103 104) examples");
        // Ligatures glued to lowercase letters (OT1 codes 11..14, 2, 3).
        assert_eq!(
            c("binary classi(cid:12)cation; di(cid:14)cult; e(cid:11)ects; in(cid:3)uenced; mean (cid:12)eld"),
            "binary classification; difficult; effects; influenced; mean field"
        );
        assert_eq!(c("an N(cid:2)N grid"), "an NN grid");
        assert_eq!(c("(cid:12) alone"), "alone");
    }
}
