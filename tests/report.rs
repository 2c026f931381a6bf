//! The HTML report: self-contained, escaped, and loaded cleanly by a real browser.

mod common;
use common::*;
use std::fs;
use std::path::Path;
use std::process::Command;

fn hostile_report(dir: &Path) -> std::path::PathBuf {
    let body = format!(
        "name = \"h\"\ntitle = \"<b>Fixture</b> 论文列表\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
        fixture("hostile.csv").display().to_string()
    );
    let p = pipeline(dir, "h.toml", &body);
    let out = dir.join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn report_is_self_contained_and_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let out = hostile_report(tmp.path());
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("<script>alert(1)</script>"),
        "raw script from a title"
    );
    assert!(
        !html.contains("<b>Fixture</b>") && html.contains("&lt;b&gt;Fixture&lt;/b&gt; 论文列表")
    );
    for bad in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href=\"//",
        "<link",
        "<script src",
    ] {
        assert!(!html.contains(bad), "report.html contains {bad}");
    }
    // The only scripts are the map's data block and its own script.
    assert_eq!(html.matches("<script").count(), 2, "two script elements");
    assert!(html.contains("<script type=\"application/json\" id=\"map-data\">"));
    let svgs = html.matches("<svg").count();
    assert!(svgs >= 5, "charts are inlined as SVG ({svgs})");
    let (_, topics) = read_csv(&out.join("topics.csv"));
    for t in &topics {
        assert!(
            html.contains(&format!("id=\"topic-{}\"", t[0])),
            "a section for topic {}",
            t[0]
        );
    }
    let md = fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| 0 |") && md.contains("Rising"), "{md}");
    let (h, rows) = read_csv(&out.join("topic_trends.csv"));
    assert_eq!(h, ["period", "topic_id", "label", "count", "share"]);
    assert_eq!(rows.len(), 3 * 4, "3 topics x 4 years (2019..2022)");
}

/// Debian's Chromium, or `None` (with a NOT RUN line) outside CI when it is not installed; in
/// CI (`.ci/run` installs it) a missing browser fails the test.
fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not installed: .ci/run should have installed Debian's chromium");
        }
        eprintln!("NOT RUN: chromium is not installed (apt-get install chromium; CI installs it)");
    }
    found
}

/// The DOM headless Chromium built from `url` after its scripts ran, and its log (stderr,
/// where console messages show as `CONSOLE` lines). No network: every host resolves nowhere.
fn dump_dom(chromium: &str, url: &str, profile: &Path) -> (String, String) {
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            url,
        ])
        .output()
        .expect("chromium runs");
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "chromium failed: {log}");
    (String::from_utf8_lossy(&o.stdout).into_owned(), log)
}

/// Opens the report in headless Chromium (Debian's `chromium`, installed by `.ci/run`) and checks
/// the DOM it built and that the page logged nothing to the console.
#[test]
fn report_loads_in_headless_chromium_without_console_errors() {
    let Some(chromium) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = hostile_report(tmp.path());
    let url = format!("file://{}", out.join("report.html").display());
    let (dom, log) = dump_dom(chromium, &url, &tmp.path().join("profile"));
    assert!(dom.contains("<table"), "the topic table is in the DOM");
    assert!(
        dom.matches("<svg").count() >= 4,
        "the charts are in the DOM"
    );
    assert!(dom.contains("id=\"topic-0\""));
    assert!(!dom.contains("<script>alert(1)</script>"));
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
}

/// The interactive document map in a real browser: the page's own self-test (run under
/// `?map-selftest`) draws the canvas, hovers a document, searches a word of its title, clicks a
/// topic and zooms, and writes what it saw into `#map-selftest`.
#[test]
fn the_document_map_draws_hovers_searches_and_zooms_in_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (_, p) = synthetic_run(tmp.path(), 300);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("UMAP of all 300 documents"),
        "the map is an embedding"
    );
    let url = format!("file://{}?map-selftest", out.join("report.html").display());
    let (dom, log) = dump_dom(chromium, &url, &tmp.path().join("profile"));
    let start = dom
        .find("id=\"map-selftest\"")
        .expect("the self-test element");
    let report = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    assert!(report.contains("data-ok=\"true\""), "{report}");
    for check in [
        "ok points drawn",
        "ok hover",
        "ok search",
        "ok topic click",
        "ok zoom",
        "ok no errors",
    ] {
        assert!(report.contains(check), "{check} missing: {report}");
    }
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
}
