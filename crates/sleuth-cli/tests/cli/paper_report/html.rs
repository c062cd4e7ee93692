//! The HTML index with the paper tables, and the side-by-side page's filters.

use super::*;
use crate::util::ok;

/// Issue 30 item 10: the index shows the recipe's tables in the paper's layout, and the
/// side-by-side page filters by "A right, B wrong", hop count and outcome, with every
/// string from the records escaped.
#[test]
fn the_html_index_shows_the_tables_and_the_questions_page_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let server = scripted_server();
    let out = run_recipe(tmp.path(), &server);
    let files = tmp.path().join("files");
    ok(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        "--out",
        files.to_str().unwrap(),
    ]);
    let index = std::fs::read_to_string(files.join("index.html")).unwrap();
    let t1 = index
        .find("<table class=\"paper\" id=\"table-sleuth_table1\">")
        .expect("Table 1 on the index");
    let t7 = index.find("id=\"table-sleuth_table7\"").unwrap();
    assert!(t1 < t7 && t7 < index.find("<h2>Trace pages</h2>").unwrap());
    assert!(index.contains("<th>HotpotQA (%)</th><th>MuSiQue 2-hop (%)</th>"));
    assert!(index.contains("<em>established baselines</em>"));
    assert!(index.contains("<td class=\"num\"><strong>100.0</strong></td>"));
    assert!(index.contains("+0.0 (react)"));
    assert!(
        index.contains("sleuth_table1.tex"),
        "the LaTeX file is linked"
    );

    let q = std::fs::read_to_string(files.join("questions.html")).unwrap();
    assert!(!q.contains(HOSTILE) && q.contains("&lt;b onmouseover=alert(1)&gt;x&lt;/b&gt;"));
    // One filter form per dataset table, naming the arms by position.
    assert_eq!(
        q.matches("<form class=\"filters qfilters\"").count(),
        3,
        "one per benchmark"
    );
    assert_eq!(q.matches("<table class=\"side\" id=\"side-").count(), 3);
    for select in ["a", "b", "hops", "outcome", "arm"] {
        assert!(
            q.contains(&format!("<select name=\"{select}\">")),
            "{select}"
        );
    }
    assert!(
        q.contains("<option value=\"0\">react</option>"),
        "arms in order"
    );
    assert!(q.contains("<option value=\"timeout\">timeout</option>"));
    // Benchmarks in the paper's order.
    let at = |d: &str| q.find(&format!("<h2>{d}</h2>")).unwrap();
    assert!(at("hotpotqa") < at("musique") && at("musique") < at("2wiki"));
    let musique = &q[at("musique")..];
    for hops in 2..=4 {
        assert!(musique.contains(&format!("<option value=\"{hops}\">{hops}</option>")));
    }
    // Rows carry each arm's result in the header's order (react, self-ask, sleuth,
    // facts-only) on HotpotQA: right, wrong, right, wrong.
    let hotpot = &q[q.find("<h2>hotpotqa</h2>").unwrap()..];
    assert!(hotpot.contains("<th>react</th><th>self-ask</th><th>sleuth</th><th>facts-only</th>"));
    assert!(
        hotpot.contains(
            "data-hops=\"2\" data-right=\"1 0 1 0\" data-outcome=\"correct other correct other\""
        ),
        "{hotpot}"
    );
    assert!(q.contains("<script>") && q.contains("qfilters"));
    // The script reads no record text: only data attributes and select values.
    let script = &q[q.rfind("<script>").unwrap()..];
    assert!(!script.contains("innerHTML") && !script.contains("textContent = d"));
}
