//! The segment scanner: one pass over a raw text that cuts it into segments (lines, and
//! sentences within lines) and writes each segment's normalised form, whose hash is its key.
//!
//! Normalised form: letters lowercased, words (runs of letters and digits) separated by one
//! space, every run of digits written `0`, `©` and `(c)` before a year as the word `©`. So
//! "© 2017 IEEE." and "Copyright © 2019 IEEE" differ only by their first word, and two
//! signatures that differ by a phone number are one.
//!
//! Segments end at a line break, after `.`, `!` or `?` followed by whitespace (or the end), after
//! `。`, `！` or `？`, and before a `©` that follows more than a short lead-in ("Copyright ©"
//! stays whole). Whitespace between segments belongs to none.
//!
//! Why one pass: the scanner runs on every document of every run (and of every `assign`), so
//! cutting and normalising are fused, ASCII bytes are classified through one table, and
//! nothing is allocated per segment (the normalised bytes go into one reused buffer). While it
//! scans it also notes the words a rights statement needs ([`Segment::anchored`]), so the
//! phrase search runs only on the few segments that hold one.

use xxhash_rust::xxh3::xxh3_64;

/// One segment of a text, as the scanner hands it over.
#[derive(Debug)]
pub struct Segment<'a> {
    /// Byte range in the text.
    pub start: usize,
    pub end: usize,
    /// The normalised form, and its hash.
    pub norm: &'a [u8],
    pub key: u64,
    pub words: usize,
    pub letters: usize,
    /// Holds `©`, `版权` or one of the words "rights", "copyright", "licensed", "distributed".
    pub anchored: bool,
}

const SEP: u8 = 0;
const STOP: u8 = 4;
const BREAK: u8 = 5;
const PAREN: u8 = 6;

/// The class of every ASCII byte that is not a letter, a digit or a space (those take the
/// run paths).
static CLASS: [u8; 128] = {
    let mut t = [SEP; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if b == b'.' || b == b'!' || b == b'?' {
            STOP
        } else if b == b'\n' || b == b'\r' {
            BREAK
        } else if b == b'(' {
            PAREN
        } else {
            SEP
        };
        c += 1;
    }
    t
};

/// Reusable scanning state (one per thread).
#[derive(Debug, Default)]
pub struct Scanner {
    norm: Vec<u8>,
    state: State,
}

#[derive(Debug, Default, Clone, Copy)]
struct State {
    start: Option<usize>,
    in_word: bool,
    in_digits: bool,
    word_start: usize,
    words: usize,
    letters: usize,
    anchored: bool,
}

impl Scanner {
    /// Calls `f` with every segment of `text`, in order.
    pub fn scan(&mut self, text: &str, mut f: impl FnMut(&Segment<'_>)) {
        let b = text.as_bytes();
        self.reset();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c < 0x80 {
                i = self.ascii(b, i, &mut f);
            } else {
                i = self.non_ascii(text, i, &mut f);
            }
        }
        self.end_segment(b.len(), &mut f);
    }

    /// The normalised form of a whole text as one segment (a `keep` entry), with its counts.
    pub fn normalise_all(&mut self, text: &str) -> Option<(u64, usize, usize)> {
        let mut found = None;
        let flat: String = text
            .chars()
            .map(|c| {
                if matches!(c, '\n' | '\r' | '.' | '!' | '?' | '。' | '！' | '？') {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        self.scan(&flat, |s| found = Some((s.key, s.words, s.letters)));
        found
    }

    fn reset(&mut self) {
        self.norm.clear();
        self.state = State::default();
    }

    /// Handles the ASCII byte at `i` (a whole run of letters or digits at once, so the loop
    /// branches per word, not per byte); returns the next position.
    fn ascii(&mut self, b: &[u8], i: usize, f: &mut impl FnMut(&Segment<'_>)) -> usize {
        let c = b[i];
        if c == b' ' {
            self.end_word();
            return i + 1;
        }
        if c.is_ascii_alphanumeric() {
            if self.state.start.is_none() {
                self.state.start = Some(i);
            }
            return if c.is_ascii_digit() {
                self.digit_run(b, i)
            } else {
                self.letter_run(b, i)
            };
        }
        let class = CLASS[c as usize];
        if class == BREAK {
            self.end_segment(i, f);
            return i + 1;
        }
        if self.state.start.is_none() {
            if c.is_ascii_whitespace() {
                return i + 1;
            }
            self.state.start = Some(i);
        }
        match class {
            PAREN if is_paren_c_year(&b[i..]) => {
                self.copyright();
                return i + 3;
            }
            STOP => {
                self.end_word();
                if b.get(i + 1).is_none_or(u8::is_ascii_whitespace) {
                    self.end_segment(i + 1, f);
                }
            }
            _ => self.end_word(),
        }
        i + 1
    }

    /// Handles the non-ASCII char at `i`; returns the next position.
    fn non_ascii(&mut self, text: &str, i: usize, f: &mut impl FnMut(&Segment<'_>)) -> usize {
        let ch = text[i..]
            .chars()
            .next()
            .expect("a char starts at every lead byte");
        let next = i + ch.len_utf8();
        if ch.is_whitespace() {
            if self.state.start.is_some() {
                self.end_word();
            }
            return next;
        }
        if ch == '©' && self.state.start.is_some_and(|s| i > s + 16) {
            self.end_segment(i, f);
        }
        if self.state.start.is_none() {
            self.state.start = Some(i);
        }
        match ch {
            '©' => self.copyright(),
            '。' | '！' | '？' => {
                self.end_word();
                self.end_segment(next, f);
            }
            '版' if text[next..].starts_with('权') => {
                self.state.anchored = true;
                self.letter_char(ch);
            }
            c if c.is_numeric() => self.digit(),
            c if c.is_alphanumeric() => self.letter_char(c),
            _ => self.end_word(),
        }
        next
    }

    fn start_word(&mut self) {
        if !self.state.in_word {
            if !self.norm.is_empty() {
                self.norm.push(b' ');
            }
            self.state.words += 1;
            self.state.in_word = true;
            self.state.word_start = self.norm.len();
        }
    }

    /// The run of ASCII letters from `i`, lowercased into the form; returns its end.
    fn letter_run(&mut self, b: &[u8], i: usize) -> usize {
        let end = b[i..]
            .iter()
            .position(|c| !c.is_ascii_alphabetic())
            .map_or(b.len(), |n| i + n);
        self.start_word();
        self.state.in_digits = false;
        self.state.letters += end - i;
        let at = self.norm.len();
        self.norm.extend_from_slice(&b[i..end]);
        self.norm[at..].make_ascii_lowercase();
        end
    }

    /// The run of ASCII digits from `i`, as one `0`; returns its end.
    fn digit_run(&mut self, b: &[u8], i: usize) -> usize {
        let end = b[i..]
            .iter()
            .position(|c| !c.is_ascii_digit())
            .map_or(b.len(), |n| i + n);
        self.digit();
        end
    }

    fn letter_char(&mut self, c: char) {
        // Scripts written without spaces: each ideograph after the first counts as a word.
        let continues = self.state.in_word;
        self.start_word();
        self.state.in_digits = false;
        self.state.letters += 1;
        self.state.words += usize::from(continues && is_ideograph(c));
        let mut buf = [0u8; 4];
        for l in c.to_lowercase() {
            self.norm
                .extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
        }
    }

    fn digit(&mut self) {
        self.start_word();
        if !self.state.in_digits {
            self.norm.push(b'0');
        }
        self.state.in_digits = true;
    }

    fn copyright(&mut self) {
        self.end_word();
        self.start_word();
        self.norm.extend_from_slice("©".as_bytes());
        self.state.in_word = false;
        self.state.anchored = true;
    }

    /// Ends the current word, noting it when it anchors a rights statement.
    fn end_word(&mut self) {
        if self.state.in_word {
            let w = &self.norm[self.state.word_start..];
            if matches!(w, b"rights" | b"copyright" | b"licensed" | b"distributed") {
                self.state.anchored = true;
            }
        }
        self.state.in_word = false;
        self.state.in_digits = false;
    }

    /// Ends the current segment at `end` (exclusive) and hands it to `f` when it has a word.
    fn end_segment(&mut self, end: usize, f: &mut impl FnMut(&Segment<'_>)) {
        self.end_word();
        if let Some(start) = self.state.start {
            if self.state.words > 0 {
                f(&Segment {
                    start,
                    end,
                    norm: &self.norm,
                    key: xxh3_64(&self.norm),
                    words: self.state.words,
                    letters: self.state.letters,
                    anchored: self.state.anchored,
                });
            }
        }
        self.reset();
    }
}

/// `(c)` or `(C)` before a year (`(c) 2019`): the copyright sign written in ASCII. Without the
/// year it is an enumeration's third item.
fn is_paren_c_year(b: &[u8]) -> bool {
    b.len() >= 5
        && b[1] | 0x20 == b'c'
        && b[2] == b')'
        && b[3..]
            .iter()
            .find(|c| **c != b' ')
            .is_some_and(u8::is_ascii_digit)
}

/// CJK ideographs (unified, extension A, compatibility), kana and hangul syllables.
fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Vec<(String, String, bool)> {
        let mut out = Vec::new();
        Scanner::default().scan(text, |s| {
            out.push((
                text[s.start..s.end].to_string(),
                String::from_utf8(s.norm.to_vec()).unwrap(),
                s.anchored,
            ))
        });
        out
    }

    #[test]
    fn lines_and_sentences() {
        let s = scan(
            "We study kernels. © 2018 Elsevier B.V. All rights reserved.\nLine two (c) no year",
        );
        let texts: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(
            texts,
            [
                "We study kernels.",
                "© 2018 Elsevier B.V.",
                "All rights reserved.",
                "Line two (c) no year"
            ]
        );
        assert_eq!(s[1].1, "© 0 elsevier b v");
        assert!(s[1].2 && s[2].2 && !s[0].2 && !s[3].2);
    }

    #[test]
    fn copyright_lead_in_stays_whole_and_paren_c_year_is_the_sign() {
        let s = scan("Copyright © 2019 IEEE. (C) 2020 ACM, Inc.");
        assert_eq!(s[0].0, "Copyright © 2019 IEEE.");
        assert_eq!(s[0].1, "copyright © 0 ieee");
        assert_eq!(s[1].1, "© 0 acm inc");
    }

    #[test]
    fn non_ascii_text() {
        let s = scan("Lovász Übung 3.5 Punkte.  卷积神经网络。版权所有");
        assert_eq!(s[0].1, "lovász übung 0 0 punkte");
        assert_eq!(s[1].0, "卷积神经网络。");
        assert!(s[2].2, "版权 anchors");
    }

    #[test]
    fn the_same_words_give_the_same_key() {
        let mut keys = Vec::new();
        for t in [
            "Thanks in advance...",
            "thanks   IN advance!",
            "Thanks, in advance.",
        ] {
            Scanner::default().scan(t, |s| keys.push(s.key));
        }
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "{keys:?}");
    }
}
