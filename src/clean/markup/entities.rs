//! HTML entities: `&amp;`, `&lt;`, `&#39;`, `&#x41;` and a few more, decoded to their chars.
//!
//! Abstracts scraped from web pages and XML feeds are often escaped once or twice, and an
//! undecoded `&amp;` would become the word `amp`. The decoding follows the chain of a
//! double-encoded entity (`&amp;lt;` -> `<`) in one go, and its char then goes through the
//! same rule as any input char (a `&nbsp;` is a space, a `&shy;` nothing). A `&` that starts no
//! known entity is a plain ampersand (`AT&T`).

use super::writer::{emit_char, Writer};

/// `&` whose entity name (if any) starts at `q`.
pub(super) fn amp(s: &str, mut q: usize, w: &mut Writer<'_>) -> usize {
    let b = s.as_bytes();
    loop {
        match entity_at(b, q) {
            Some((Entity::Amp, len)) => q += len,
            Some((Entity::Char(ch), len)) => {
                emit_char(ch, w);
                return q + len;
            }
            Some((Entity::Drop, len)) => return q + len,
            None => {
                w.push('&');
                return q;
            }
        }
    }
}

/// Result of decoding an HTML entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entity {
    /// `&amp;` (or `&#38;`): an ampersand, which may itself start another entity
    /// (double-encoded `&amp;lt;` decodes all the way to `<`).
    Amp,
    /// Any other entity, decoded to one char.
    Char(char),
    /// A numeric entity naming no valid char: dropped.
    Drop,
}

/// Decodes the entity whose name starts at `b[q]` (just after the `&`).
/// Returns the entity and the number of bytes it spans from `q`, `;` included.
pub(super) fn entity_at(b: &[u8], q: usize) -> Option<(Entity, usize)> {
    // Longest name we know is 6 bytes ("hellip", "thinsp"); numeric forms are
    // at most "#x10FFFF" (8) or "#1114111" (8).
    let rest = b.get(q..)?;
    let end = rest.iter().take(10).position(|&c| c == b';')?;
    let name = &rest[..end];
    let len = end + 1;
    let ch = match name {
        b"amp" => return Some((Entity::Amp, len)),
        b"lt" => '<',
        b"gt" => '>',
        b"quot" => '"',
        b"apos" => '\'',
        b"nbsp" => '\u{A0}',
        b"shy" => '\u{AD}',
        b"ndash" => '–',
        b"mdash" => '—',
        b"hellip" => '…',
        b"lsquo" => '‘',
        b"rsquo" => '’',
        b"ldquo" => '“',
        b"rdquo" => '”',
        b"times" => '×',
        b"ensp" | b"emsp" | b"thinsp" => '\u{2002}',
        [b'#', b'x' | b'X', hex @ ..] if (1..=6).contains(&hex.len()) => {
            let mut v: u32 = 0;
            for &h in hex {
                v = v * 16 + (h as char).to_digit(16)?;
            }
            return Some((numeric(v), len));
        }
        [b'#', dec @ ..] if (1..=7).contains(&dec.len()) => {
            let mut v: u32 = 0;
            for &d in dec {
                v = v * 10 + (d as char).to_digit(10)?;
            }
            return Some((numeric(v), len));
        }
        _ => return None,
    };
    Some((Entity::Char(ch), len))
}

/// A numeric entity's value: `&#38;` is an ampersand like `&amp;`.
fn numeric(v: u32) -> Entity {
    match char::from_u32(v) {
        Some('&') => Entity::Amp,
        Some(c) => Entity::Char(c),
        None => Entity::Drop,
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;

    #[test]
    fn html_entities() {
        assert_eq!(
            c("Tom &amp; Jerry &lt;b&gt; &quot;q&quot; it&#39;s &#x41;&#66; a&nbsp;b"),
            "Tom & Jerry <b> \"q\" it's AB a b"
        );
        assert_eq!(c("double &amp;amp; and &amp;lt;"), "double & and <");
        assert_eq!(c("AT&T and R&D; & done &"), "AT&T and R&D; & done &");
        // Assembled from pieces: the first pass yields `&amp;`, the repass `&`.
        assert_eq!(c(r"&\textbf{amp};"), "&");
        assert_eq!(c("(ci{}d:99)x"), "x");
    }
}
