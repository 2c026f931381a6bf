//! The idempotence guard: is the scanner's output something it would change again?
//!
//! `clean(clean(x)) == clean(x)` must hold for every input, or a cleaned text saved in a model
//! would clean differently when read back. The scanner is written so its output holds nothing
//! it acts on, but a few constructs are assembled from pieces (`&\textbf{amp};` becomes
//! `&amp;`). A cheap scan of the output ([`is_stable`], the special bytes found 32 at a time)
//! tells the rare text that needs another pass; adversarial nesting that outlasts the passes
//! has its leftovers blanked ([`blank_unstable`]), which is a fixed point by construction.

use super::byteset::ByteSet;
use super::chars::{char_at, classify, is_alnum_at, slice, Class};
use super::entities::entity_at;
use super::pdf::cid_at;
use super::scan::special_table;
use super::writer::Writer;

/// The scanner's special bytes plus `]`, for the stability check (`](` may form a link).
static CHECK: ByteSet = ByteSet::new(special_table(true));

/// True when cleaning `s` again would return it unchanged. Meant for the
/// scanner's own output, whose spaces are single and interior by
/// construction of [`Writer`], so spaces are not examined.
pub(super) fn is_stable(s: &str) -> bool {
    first_unstable(s, 0).is_none()
}

/// Byte range of the first char at or after `from` that the scanner could
/// act on (conservative: every pattern it reacts to is flagged).
fn first_unstable(s: &str, from: usize) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let n = b.len();
    let mut i = from;
    while i < n {
        let c = b[i];
        if !CHECK.contains(c) {
            i = CHECK.find(b, i);
            continue;
        }
        let len = match c {
            b'\\' | b'$' | b'{' | b'}' | b'~' | b'`' | b'*' => 1,
            b'-' if b.get(i + 1) == Some(&b'-') => 1,
            b']' if b.get(i + 1) == Some(&b'(') => 1,
            b'&' if entity_at(b, i + 1).is_some() => 1,
            b'(' if cid_at(b, i).is_some() => 1,
            b'_' => {
                let prev_ok = slice(s, 0, i)
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric);
                let mut j = i + 1;
                while j < n && b[j] == b'_' {
                    j += 1;
                }
                if prev_ok && is_alnum_at(s, j) {
                    i = j;
                    continue;
                }
                j - i
            }
            b'-' | b']' | b'&' | b'(' | b'[' => 0,
            0..=0x7F => 1,
            _ => match char_at(s, i) {
                Some(ch) if classify(ch) == Class::Keep => 0,
                Some(ch) => ch.len_utf8(),
                None => 1,
            },
        };
        if len > 0 {
            return Some((i, len));
        }
        i += 1;
    }
    None
}

/// Last resort after [`MAX_REPASSES`](super::MAX_REPASSES): every char the scanner could still act
/// on becomes a space, then spaces are folded. No pattern the scanner reacts
/// to contains a space, and folding never makes two other chars adjacent, so
/// the result is a fixed point.
pub(super) fn blank_unstable(s: &str, out: &mut String) {
    out.clear();
    let mut w = Writer {
        out,
        pending: false,
    };
    let mut from = 0;
    while let Some((at, len)) = first_unstable(s, from) {
        push_folded(slice(s, from, at), &mut w);
        w.space();
        from = at + len;
    }
    push_folded(slice(s, from, s.len()), &mut w);
}

/// Writes `part` with its spaces folded by the writer.
fn push_folded(part: &str, w: &mut Writer<'_>) {
    for (k, piece) in part.split(' ').enumerate() {
        if k > 0 {
            w.space();
        }
        w.push_str(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan::run;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blank_unstable_yields_a_fixed_point() {
        // Each flagged char becomes a space; hand-derived expectations.
        let mut out = String::new();
        blank_unstable("a--b &amp; c_ (cid:5) x](y) z\u{200B}w $ k", &mut out);
        assert_eq!(out, "a -b amp; c cid:5) x (y) z w k");
        assert!(is_stable(&out));
    }

    /// Strings that are mostly already clean, with the characters the stability
    /// check has to judge case by case (`_`, `-`, `&`, `(`, `[`, `]`, non-ASCII).
    fn near_stable() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just(" ".to_string()),
            Just("_".to_string()),
            Just("-".to_string()),
            Just("&".to_string()),
            Just("amp;".to_string()),
            Just("#1;".to_string()),
            Just("(".to_string()),
            Just("cid:".to_string()),
            Just("1)".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("!".to_string()),
            Just("é".to_string()),
            Just("—".to_string()),
            Just("\u{2003}".to_string()),
            Just("\u{200B}".to_string()),
            "[a-z0-9]{1,3}",
        ];
        prop::collection::vec(piece, 0..30).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]


        #[test]
        fn stable_check_is_sound(s in near_stable()) {
            // Whenever the stability check accepts a string, one raw pass must
            // leave it unchanged (this is what makes the repass loop correct).
            // The check relies on the writer's invariant that spaces are single
            // and interior, so only strings of that shape are fed to it.
            prop_assume!(!s.contains("  ") && !s.starts_with(' ') && !s.ends_with(' '));
            if is_stable(&s) {
                let mut again = String::new();
                run(&s, &mut again);
                prop_assert_eq!(again, s);
            }
        }
    }
}
