//! Fuzzes the LaTeX/Markdown/HTML cleaner (`topicmap::clean::Cleaner`) with arbitrary UTF-8.
//!
//! Besides "no panic" (and, through `-timeout`, no pathological slowness), it checks what the
//! cleaner documents and its own property tests assert:
//! - `clean_into` (into a reused, dirty buffer) returns exactly what `clean` returns;
//! - the output is idempotent: `clean(clean(x)) == clean(x)`;
//! - the output is trimmed, never holds two spaces in a row, and holds no whitespace or control
//!   character other than the ASCII space;
//! - the output holds none of the syntax the cleaner always consumes (`` \ $ { } ~ ` * ``) and none
//!   of the invisible characters it removes (soft hyphen, zero-width and direction marks, BOM);
//! - the output is at most twice as long as the input (the bound its hostile-input test uses).

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;
use topicmap::clean::Cleaner;

thread_local! {
    /// One buffer reused across inputs, as the pipeline's hot loop does.
    static BUF: RefCell<String> = RefCell::new(String::from("left over from a previous document"));
}

fn removed(c: char) -> bool {
    matches!(c, '\u{AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}')
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let cleaner = Cleaner::new();
    let out = cleaner.clean(s);

    BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        cleaner.clean_into(s, &mut buf);
        assert_eq!(*buf, out, "clean_into differs from clean");
    });

    assert!(
        !out.starts_with(' ') && !out.ends_with(' '),
        "untrimmed {out:?}"
    );
    assert!(!out.contains("  "), "double space in {out:?}");
    for c in out.chars() {
        assert!(
            c == ' ' || !(c.is_whitespace() || c.is_control()),
            "whitespace/control {c:?} in {out:?}"
        );
        assert!(
            !matches!(c, '\\' | '$' | '{' | '}' | '~' | '`' | '*'),
            "syntax char {c:?} left in {out:?}"
        );
        assert!(!removed(c), "invisible char {c:?} left in {out:?}");
    }
    assert!(
        out.len() <= 2 * s.len(),
        "output {} bytes from {} input bytes",
        out.len(),
        s.len()
    );

    let again = cleaner.clean(&out);
    assert_eq!(again, out, "not idempotent");
});
