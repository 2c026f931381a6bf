//! `report.xlsx` read back with a real reader (calamine), cell by cell against the CSVs; the
//! Parquet copies read back with polars; the workbook converted by LibreOffice headless.

mod common;
use calamine::{open_workbook, Data, Reader, Xlsx};
use common::*;
use std::collections::HashMap;
use std::path::Path;

/// A fixture run with every format, refitted once so that there is a drift table.
fn report(dir: &Path) -> std::path::PathBuf {
    let p = csv_pipeline(
        dir,
        "[output]\nformats = [\"csv\", \"xlsx\", \"parquet\"]\n",
    );
    let out = dir.join("out");
    for seed in ["42", "7"] {
        let o = run(&[
            "run",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--set",
            &format!("cluster.seed={seed}"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    out
}

/// What the CSV writer makes of a text cell (its formula guard).
fn guarded(s: &str) -> String {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}"),
        _ => s.to_string(),
    }
}

/// Compares one sheet with one CSV: same header, same number of rows, and every cell equal
/// (text as the CSV writes it, numbers to the CSV's six decimals).
fn same_table(sheet: &calamine::Range<Data>, csv: &Path) {
    let (header, rows) = read_csv(csv);
    let cells: Vec<Vec<Data>> = sheet.rows().map(|r| r.to_vec()).collect();
    let got_header: Vec<String> = cells[0].iter().map(|c| c.to_string()).collect();
    assert_eq!(got_header, header, "{}", csv.display());
    assert_eq!(cells.len() - 1, rows.len(), "{} rows", csv.display());
    for (i, (row, want)) in cells[1..].iter().zip(&rows).enumerate() {
        for (j, (cell, want)) in row.iter().zip(want).enumerate() {
            let at = format!("{} row {} column {}", csv.display(), i + 1, header[j]);
            match cell {
                Data::String(s) => assert_eq!(&guarded(s), want, "{at}"),
                Data::Float(x) => {
                    let w: f64 = want.parse().unwrap_or_else(|_| panic!("{at}: {want:?}"));
                    assert!((x - w).abs() <= 1e-6 * w.abs().max(1.0), "{at}: {x} vs {w}");
                }
                Data::Bool(b) => assert_eq!(b.to_string(), *want, "{at}"),
                Data::Empty => assert_eq!(want, "", "{at}"),
                other => panic!("{at}: unexpected cell {other:?}"),
            }
        }
    }
}

#[test]
fn workbook_cells_equal_the_csvs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = report(tmp.path());
    let mut wb: Xlsx<_> = open_workbook(out.join("report.xlsx")).expect("calamine opens it");
    assert_eq!(
        wb.sheet_names(),
        ["Topics", "Documents", "Terms", "Trends", "Drift", "About"]
    );
    for (sheet, csv) in [
        ("Topics", "topics.csv"),
        ("Documents", "documents.csv"),
        ("Terms", "terms.csv"),
        ("Drift", "drift.csv"),
    ] {
        let range = wb.worksheet_range(sheet).unwrap();
        same_table(&range, &out.join(csv));
    }

    // Ids and counts are numbers, text is text (no guard needed in a workbook).
    let docs = wb.worksheet_range("Documents").unwrap();
    let header: Vec<String> = docs
        .rows()
        .next()
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in docs.rows().skip(1) {
        assert!(matches!(row[col("topic_id")], Data::Float(_)), "{row:?}");
        assert!(matches!(row[col("doc_id")], Data::String(_)), "{row:?}");
    }

    // Trends: one row per period, one column per topic, the shares of topic_trends.csv.
    let (h, rows) = read_csv(&out.join("topic_trends.csv"));
    let want: HashMap<(String, String), f64> = rows
        .iter()
        .map(|r| {
            let get = |c: &str| r[h.iter().position(|x| x == c).unwrap()].clone();
            (
                (get("period"), get("topic_id")),
                get("share").parse().unwrap(),
            )
        })
        .collect();
    let trends = wb.worksheet_range("Trends").unwrap();
    let tr: Vec<Vec<Data>> = trends.rows().map(|r| r.to_vec()).collect();
    let mut seen = 0;
    for row in &tr[1..] {
        let period = row[0].to_string();
        for (j, cell) in row.iter().enumerate().skip(2) {
            let id = tr[0][j].to_string().split(':').next().unwrap().to_string();
            let Data::Float(x) = cell else {
                panic!("{cell:?}")
            };
            let w = want[&(period.clone(), id)];
            assert!((x - w).abs() < 1e-6, "{period}: {x} vs {w}");
            seen += 1;
        }
    }
    assert_eq!(
        seen,
        want.len(),
        "every share of topic_trends.csv is in Trends"
    );

    // About: the inputs with their checksums, as run.json has them.
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let about = wb.worksheet_range("About").unwrap();
    let text: Vec<String> = about
        .rows()
        .flat_map(|r| r.iter().map(|c| c.to_string()))
        .collect();
    let sha = run["inputs"][0]["sha256"].as_str().unwrap();
    assert!(
        text.iter().any(|c| c == sha),
        "the About sheet lists the input's sha256"
    );
    assert!(
        text.iter().any(|c| c == "cluster.max-iter"),
        "settings keyed as in the file"
    );
}

#[test]
fn topic_labels_link_to_their_topic_row_and_charts_are_native() {
    let tmp = tempfile::tempdir().unwrap();
    let out = report(tmp.path());
    let file = std::fs::File::open(out.join("report.xlsx")).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut read = |name: &str| {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut s).unwrap();
        s
    };
    let documents = read("xl/worksheets/sheet2.xml");
    let links = documents.matches("<hyperlink ").count();
    let (h, rows) = read_csv(&out.join("documents.csv"));
    assert_eq!(links, rows.len(), "one link per document");
    // The first document's link points at its topic's row in Topics.
    let topic = column(&h, &rows, "topic_id")[0];
    let (th, trows) = read_csv(&out.join("topics.csv"));
    let row = column(&th, &trows, "topic_id")
        .iter()
        .position(|t| *t == topic)
        .unwrap()
        + 2;
    assert!(
        documents.contains(&format!("location=\"'Topics'!A{row}\"")),
        "{}",
        &documents[documents.find("<hyperlinks").unwrap_or(0)..][..300.min(documents.len())]
    );
    assert!(documents.contains("<pane ") && documents.contains("<autoFilter "));
    let charts: Vec<String> = zip
        .file_names()
        .filter(|n| n.starts_with("xl/charts/"))
        .map(String::from)
        .collect();
    assert_eq!(
        charts.len(),
        2,
        "topic sizes and share over time: {charts:?}"
    );
}

#[test]
fn parquet_copies_hold_the_exact_values() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let out = report(tmp.path());
    for name in ["documents", "topics", "terms", "topic_trends"] {
        let df =
            ParquetReader::new(std::fs::File::open(out.join(format!("{name}.parquet"))).unwrap())
                .finish()
                .unwrap();
        let (header, rows) = read_csv(&out.join(format!("{name}.csv")));
        let names: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(names, header, "{name}");
        assert_eq!(df.height(), rows.len(), "{name}");
    }
    let df = ParquetReader::new(std::fs::File::open(out.join("documents.parquet")).unwrap())
        .finish()
        .unwrap();
    assert_eq!(df.column("topic_id").unwrap().dtype(), &DataType::UInt32);
    let (h, rows) = read_csv(&out.join("documents.csv"));
    let ids = df.column("doc_id").unwrap().str().unwrap().clone();
    for (i, want) in column(&h, &rows, "doc_id").iter().enumerate() {
        assert_eq!(&guarded(ids.get(i).unwrap()), want);
    }
}

/// LibreOffice (Debian's libreoffice-calc-nogui, installed by `.ci/run`) converts the workbook
/// sheet by sheet: the conversion succeeds and the Documents sheet has every document.
#[test]
fn libreoffice_opens_the_workbook() {
    let soffice = std::process::Command::new("soffice")
        .arg("--version")
        .output();
    if !soffice.is_ok_and(|o| o.status.success()) {
        if std::env::var_os("CI").is_some() {
            panic!(
                "soffice is not installed: .ci/run should have installed libreoffice-calc-nogui"
            );
        }
        eprintln!("NOT RUN: libreoffice_opens_the_workbook: soffice is not installed (apt-get install libreoffice-calc-nogui; CI installs it)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = report(tmp.path());
    let lo = tmp.path().join("lo");
    let profile = tmp.path().join("profile");
    let o = std::process::Command::new("soffice")
        .args([
            &format!("-env:UserInstallation=file://{}", profile.display()),
            "--headless",
            "--convert-to",
            // UTF-8, comma-separated, quoted text, every sheet into its own file.
            "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1",
            "--outdir",
            lo.to_str().unwrap(),
            out.join("report.xlsx").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "soffice failed: {}", stderr(&o));
    let converted = lo.join("report-Documents.csv");
    assert!(
        converted.is_file(),
        "no Documents sheet converted: {}",
        stderr(&o)
    );
    let (h1, r1) = read_csv(&converted);
    let (h2, r2) = read_csv(&out.join("documents.csv"));
    assert_eq!(h1, h2);
    assert_eq!(r1.len(), r2.len(), "LibreOffice sees every document");
    assert_eq!(column(&h1, &r1, "doc_id"), column(&h2, &r2, "doc_id"));
}

#[test]
fn formula_like_titles_are_plain_strings_in_the_workbook() {
    let tmp = tempfile::tempdir().unwrap();
    let body = format!(
        "name = \"h\"\n[[input]]\npath = {:?}\nid = \"id\"\ntime = \"year\"\n[tokenize]\nmin-df = 2\n[cluster]\nk = 3\n",
        fixture("hostile.csv").display().to_string()
    );
    let p = pipeline(tmp.path(), "h.toml", &body);
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut wb: Xlsx<_> = open_workbook(out.join("report.xlsx")).unwrap();
    let docs = wb.worksheet_range("Documents").unwrap();
    same_table(&docs, &out.join("documents.csv"));
    let titles: Vec<String> = docs.rows().skip(1).map(|r| r[2].to_string()).collect();
    assert!(titles.contains(&"=HYPERLINK(\"http://example.invalid\",\"click\")".to_string()));
    assert!(
        titles.contains(&"+1 graph networks".to_string()),
        "no guard in a workbook"
    );
    // No cell of the workbook is a formula.
    let mut zip =
        zip::ZipArchive::new(std::fs::File::open(out.join("report.xlsx")).unwrap()).unwrap();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        if f.name().starts_with("xl/worksheets/") {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut f, &mut s).unwrap();
            assert!(
                !s.contains("<f>") && !s.contains("<f "),
                "a formula in {}",
                f.name()
            );
        }
    }
}

#[test]
fn a_large_corpus_keeps_its_first_documents_in_the_sheet_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let p = csv_pipeline(tmp.path(), "[output]\nworkbook-documents = 5\n");
    let out = tmp.path().join("out");
    let o = run(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds the first 5 of 18 documents"),
        "{}",
        stderr(&o)
    );
    let mut wb: Xlsx<_> = open_workbook(out.join("report.xlsx")).unwrap();
    let docs = wb.worksheet_range("Documents").unwrap();
    let (_, rows) = read_csv(&out.join("documents.csv"));
    assert_eq!(rows.len(), 18, "the CSV has every document");
    assert_eq!(
        docs.rows().count(),
        1 + 5,
        "header and the first five documents"
    );
    let first: Vec<String> = docs.rows().skip(1).map(|r| r[0].to_string()).collect();
    let want: Vec<String> = rows.iter().take(5).map(|r| r[0].clone()).collect();
    assert_eq!(first, want);
    let about = wb.worksheet_range("About").unwrap();
    assert!(about
        .rows()
        .any(|r| r[1].to_string().starts_with("the first 5 of 18 documents")));
}
