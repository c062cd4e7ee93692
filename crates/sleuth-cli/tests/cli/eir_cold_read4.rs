//! Integration tests for the third cold read of the EIR paper: prompting-only JSON by
//! default (App. H.4, C.2), F.3's own selection call and its rerun of the final call,
//! E.3's requirement refresh after every revision, list-price costs in the EIR tables
//! (D.5), Support F1's paired comparison over every question, the comparison table's
//! F1 p columns, the EIR tables' direction, and a per-method response cache. Each runs
//! `sleuth` against a local scripted server on the repository's fixture questions,
//! prints what it checks (`-- --nocapture`), and is named in `docs/fidelity/eir.md`.

use crate::agents::read_records;
use crate::eir_fidelity::{is_direct_action, is_eir_action, is_final, prompt, turn};
use crate::golden::fixture;
use crate::util::*;
use serde_json::{json, Value};
use sleuth_testkit::{MockServer, ReceivedRequest, Reply};

use crate::eir_cold_read::unread;

/// Every `maxItems` and `maxLength` bound in a JSON schema, with its path.
fn bounds(v: &Value, path: &str, out: &mut Vec<(String, &'static str, u64)>) {
    for key in ["maxItems", "maxLength"] {
        if let Some(n) = v.get(key).and_then(Value::as_u64) {
            out.push((path.to_string(), key, n));
        }
    }
    if let Some(props) = v.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            bounds(p, &format!("{path}.{k}"), out);
        }
    }
    if let Some(items) = v.get("items") {
        bounds(items, &format!("{path}[]"), out);
    }
}

/// EIR App. H.4, C.2: the paper asks for its JSON formats by prompting alone, and the
/// replies that fail to parse are part of its results. No EIR-setting method sends a
/// schema unless `json_schema=true`; opted in, the schemas bound no list or citation
/// count the prompts do not state (at least 32 items) and no reasoning to 600 characters.
#[test]
fn eir_setting_methods_send_no_json_schema_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let methods = "eir,direct,ssr,eir-reflexion,full-pool";
    for opted_in in [false, true] {
        let server = MockServer::spawn(crate::eir_cold_read3::read_once_then_submit);
        // A preset that sends schemas (the generic one sends none).
        let url = format!("openai-compat:{}#m?preset=vllm", server.url());
        let out = dir.path().join(format!("schema-{opted_in}"));
        let mut eval = Eval::new("musique", fixture("musique"), methods, &url, &out);
        if opted_in {
            eval = eval.set("json_schema=true");
        }
        eval.ok();
        let requests = server.requests();
        let with_schema = requests
            .iter()
            .filter(|r| r.body.get("response_format").is_some())
            .count();
        println!(
            "json_schema={opted_in}: {with_schema} of {} requests carry a schema",
            requests.len()
        );
        assert!(requests.len() > 20, "every method ran");
        if !opted_in {
            assert_eq!(with_schema, 0, "prompting only by default");
            continue;
        }
        // Every JSON call opted in (Reflexion's reflections are free text).
        for r in &requests {
            let p = prompt(r);
            if is_final(&p) || is_eir_action(&p) || is_direct_action(&p) {
                assert!(r.body.get("response_format").is_some(), "{p}");
            }
        }
        for r in &requests {
            let Some(format) = r.body.get("response_format") else {
                continue;
            };
            let schema = &format["json_schema"]["schema"];
            let mut found = Vec::new();
            bounds(schema, "", &mut found);
            for (path, key, n) in found {
                if key == "maxItems" {
                    assert!(n >= 32, "{path} caps a list at {n}");
                }
                if path.ends_with("reasoning") || path.ends_with("claim") {
                    assert!(n >= 1000, "{path} caps text at {n}");
                }
            }
        }
    }
}

/// EIR App. F.3: a separate call selects up to two more paragraphs (its own prompt,
/// not F.4's "decide whether to read more"), and the final call then runs on the
/// evidence even when no selected read succeeds (one of the 174 matches followed
/// none). F.4's control keeps its own prompt and its retain-the-original rule.
#[test]
fn a_model_selected_recovery_selects_with_its_own_call_and_always_answers_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(crate::eir_cold_read2::one_gold_read_cited_wrong());
    let url = format!("openai-compat:{}#m", server.url());
    let first = dir.path().join("eir");
    Eval::new("musique", fixture("musique"), "eir", &url, &first).ok();
    let prior = read_records(&first);
    let before = server.request_count();
    let out = dir.path().join("selected");
    Eval::new("musique", fixture("musique"), "eir-recover", &url, &out)
        .opt("--failures-of", first.display())
        .set(&format!("from={}", first.display()))
        .set("recover=selected")
        .ok();
    let prompts: Vec<String> = server.requests()[before..].iter().map(prompt).collect();
    let selecting: Vec<&String> = prompts.iter().filter(|p| !is_final(p)).collect();
    assert_eq!(
        selecting.len(),
        prior.len(),
        "one selection call per failure"
    );
    for p in &selecting {
        assert!(p.contains("Pick up to 2 of the unread titles"), "{p}");
        assert!(!p.contains("Decide whether"), "{p}");
    }
    let records = read_records(&out);
    assert_eq!(records.len(), prior.len());
    for r in &records {
        let p = prior.iter().find(|p| p["id"] == r["id"]).unwrap();
        println!(
            "{}: calls {}, read {} (earlier {})",
            r["id"], r["calls_by_kind"], r["retrieved"], p["retrieved"]
        );
        assert_eq!(r["calls_by_kind"], json!({"action": 1, "final": 1}));
        assert_eq!(r["retrieved"], p["retrieved"], "nothing was read");
        assert!(r["outputs"]["final_call"]["extra_reads"]["read"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    // F.4 (`extra_reads`): the deciding prompt, and no second final call without a read.
    let before = server.request_count();
    let more = dir.path().join("more");
    Eval::new("musique", fixture("musique"), "eir", &url, &more)
        .set("extra_reads=2")
        .ok();
    let deciding = server.requests()[before..]
        .iter()
        .map(prompt)
        .filter(|p| p.contains("Decide whether reading more paragraphs"))
        .count();
    assert_eq!(deciding, prior.len());
    for r in read_records(&more) {
        assert_eq!(r["calls_by_kind"]["final"], 1, "{}", r["calls_by_kind"]);
    }
}

/// EIR turns for the repair control: read, add C1 (and C2 depending on C1 when
/// `dependent`), read, then revise C1's claim and submit.
fn revise_c1(dependent: bool) -> impl Fn(&ReceivedRequest) -> Reply {
    let first = std::sync::Mutex::new(String::new());
    move |req| {
        let p = prompt(req);
        if p.contains("Refresh the requirements") {
            return Reply::text(json!({"requirements": []}).to_string());
        }
        if p.contains("Some conclusions were just revised") {
            return Reply::text(json!({"conclusions": []}).to_string());
        }
        if !is_eir_action(&p) {
            return Reply::text(crate::eir_paper::other(&p));
        }
        let titles = unread(&p);
        let read_first = json!({"type": "read", "title": titles.first()});
        let text = match turn(&p) {
            1 => {
                *first.lock().unwrap() = titles[0].clone();
                json!({"reasoning": "r", "requirements": [], "conclusions": [],
                    "action": read_first})
            }
            2 => {
                let cite = json!([{"title": *first.lock().unwrap(), "sentence": 0}]);
                let mut adds =
                    vec![json!({"op": "add", "id": "C1", "claim": "a", "citations": cite})];
                if dependent {
                    adds.push(json!({"op": "add", "id": "C2", "claim": "b",
                        "depends_on": ["C1"], "citations": cite}));
                }
                json!({"reasoning": "r", "requirements": [], "conclusions": adds,
                    "action": read_first})
            }
            _ => json!({"reasoning": "r", "requirements": [],
                "conclusions": [{"op": "revise", "id": "C1", "status": "tentative"}],
                "action": {"type": "submit", "answer": "ANSWER"}}),
        };
        Reply::text(text.to_string())
    }
}

/// EIR App. E.3: "when a claim changes, extra calls revise affected conclusions and
/// refresh requirements". By default every revision refreshes the requirements, and
/// the revising call runs only where a conclusion depends on the revised one;
/// `refresh=dependents` (the other reading) makes no call when none does.
#[test]
fn every_revision_refreshes_the_requirements_unless_refresh_is_dependents() {
    let dir = tempfile::tempdir().unwrap();
    for (dependent, refresh, expected) in [
        (false, "revision", vec!["requirements"]),
        (false, "dependents", vec![]),
        (true, "revision", vec!["conclusions", "requirements"]),
        (true, "dependents", vec!["conclusions", "requirements"]),
    ] {
        let server = MockServer::spawn(revise_c1(dependent));
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(format!("{dependent}-{refresh}"));
        Eval::new("musique", fixture("musique"), "eir", &url, &out)
            .opt("--limit", 1)
            .set("dependency_repair=true")
            .set(&format!("refresh={refresh}"))
            .ok();
        let r = &read_records(&out)[0];
        let none = Vec::new();
        let parts: Vec<&str> = r["outputs"]["final_call"]["repairs"]
            .as_array()
            .unwrap_or(&none)
            .iter()
            .map(|x| x["part"].as_str().unwrap())
            .collect();
        println!(
            "dependent {dependent}, refresh={refresh}: repair calls {parts:?}, calls {}",
            r["calls_by_kind"]
        );
        assert_eq!(parts, expected);
        let repair_calls = r["calls_by_kind"]["repair"].as_u64().unwrap_or(0);
        assert_eq!(repair_calls, expected.len() as u64);
    }
}

/// EIR App. D.5, Tables 9 and 19: dollar costs are "reconstructed at the fixed prices"
/// from token counts. A run replayed entirely from the response cache is billed 0, yet
/// Table 9's cost/q and the summary's list cost/q show its tokens at the list prices,
/// the same as the run that paid for them.
#[test]
fn eir_tables_cost_the_recorded_tokens_at_list_prices_even_from_the_cache() {
    use crate::eir_cold_read::{cell, lead, table};
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.toml");
    let (input_rate, output_rate) = (1000.0, 3000.0);
    std::fs::write(
        &prices,
        format!("[m]\ninput = {input_rate}\noutput = {output_rate}\n"),
    )
    .unwrap();
    let server = MockServer::spawn(crate::eir_cold_read3::read_once_then_submit);
    let url = format!("openai-compat:{}#m", server.url());
    let cache = dir.path().join("cache");
    let runs: Vec<_> = ["paid", "cached"]
        .iter()
        .map(|name| {
            let out = dir.path().join(name);
            Eval::new("musique", fixture("musique"), "eir,direct", &url, &out)
                .opt("--prices", prices.display())
                .opt("--cache", cache.display())
                .ok();
            read_records(&out)
        })
        .collect();
    let list = |r: &Value| {
        (r["input_tokens"].as_f64().unwrap() * input_rate
            + r["output_tokens"].as_f64().unwrap() * output_rate)
            / 1e6
    };
    for r in &runs[1] {
        let paid = runs[0]
            .iter()
            .find(|p| p["id"] == r["id"] && p["method"] == r["method"]);
        let paid = paid.unwrap();
        println!(
            "{} {}: billed {} (paid run {}), list {}",
            r["method"], r["id"], r["cost_usd"], paid["cost_usd"], r["list_cost_usd"]
        );
        assert_eq!(r["cost_usd"], 0.0, "every call a cache hit");
        assert!(paid["cost_usd"].as_f64().unwrap() > 0.0);
        let l = r["list_cost_usd"].as_f64().unwrap();
        assert!((l - list(r)).abs() < 1e-9 && l > 0.0, "{l} vs {}", list(r));
        assert!((l - paid["list_cost_usd"].as_f64().unwrap()).abs() < 1e-9);
    }
    // Table 9 averages over the report's dataset cells; under the EIR conventions
    // MuSiQue is one cell, so each row is the mean over the method's records.
    let cached = dir.path().join("cached");
    let report = ok(&["report", cached.to_str().unwrap(), "--conventions", "eir"]);
    let mean_list = |method: &str| {
        let of: Vec<f64> = runs[1]
            .iter()
            .filter(|r| r["method"] == method)
            .map(list)
            .collect();
        of.iter().sum::<f64>() / of.len() as f64
    };
    let (header, rows) = table(&report, "(EIR App. D.5, Table 9)");
    for row in &rows {
        let method = cell(&header, row, "method");
        let shown = lead(&cell(&header, row, "cost/q"));
        println!("Table 9 {method}: cost/q {shown}");
        assert!((shown - mean_list(&method)).abs() < 1e-4, "{row:?}");
    }
    assert!(report.contains("fixed list prices"), "{report}");
    // Our conventions split MuSiQue by hops in every table.
    let report = ok(&["report", cached.to_str().unwrap()]);
    let (header, rows) = table(&report, "Accuracy and cost per method");
    assert!(!rows.is_empty(), "{report}");
    for row in &rows {
        let (method, split) = (cell(&header, row, "method"), cell(&header, row, "dataset"));
        // MuSiQue rows are hop splits: `musique_2hop` holds the ids starting `2hop`.
        let hops = split.trim_start_matches("musique_").trim_end_matches("hop");
        let of: Vec<f64> = runs[1]
            .iter()
            .filter(|r| r["method"] == method.as_str())
            .filter(|r| r["id"].as_str().unwrap().starts_with(hops))
            .map(list)
            .collect();
        let expected = of.iter().sum::<f64>() / of.len() as f64;
        assert_eq!(lead(&cell(&header, row, "cost/q")), 0.0);
        let shown = lead(&cell(&header, row, "list cost/q"));
        println!("{method} {split}: billed 0, list cost/q {shown}");
        assert!((shown - expected).abs() < 1e-4, "{row:?}");
    }
}

/// EIR reads one paragraph and submits, its final call citing the paragraph read,
/// except on questions whose text has an even length, where the server refuses EIR's
/// second action request (an error record from mid-trajectory: no answer, no Support
/// F1). Direct reads and submits.
fn eir_fails_on_some() -> impl Fn(&ReceivedRequest) -> Reply {
    |req| {
        let p = prompt(req);
        if is_eir_action(&p) && turn(&p) == 2 {
            let q = crate::eir_paper::question(&p);
            if q.len().is_multiple_of(2) {
                return Reply::openai_error(400, "invalid_request_error", "refused");
            }
        }
        if is_final(&p) {
            let evidence: Vec<Value> = crate::eir_fidelity::evidence_titles(&p)
                .iter()
                .map(|t| json!({"title": t, "sentence": 0}))
                .collect();
            return Reply::text(json!({"answer": "A", "evidence": evidence}).to_string());
        }
        crate::eir_cold_read3::read_once_then_submit(req)
    }
}

/// EIR Tables 5 and 8 "include all 1,000 questions": the paired Support F1 comparison
/// counts a question without a Support F1 as 0 (as the summary does) instead of
/// leaving it out, so n is every question and the difference is over all of them.
#[test]
fn the_support_f1_comparison_counts_a_question_without_support_as_zero() {
    use crate::eir_cold_read::{cell, lead, table};
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::spawn(eir_fails_on_some());
    let url = format!("openai-compat:{}#m", server.url());
    let out = dir.path().join("run");
    // Some records are errors, so the run reports a failure; its records stand.
    Eval::new("musique", fixture("musique"), "eir,direct", &url, &out).output();
    // A failed episode is scored 0 today; a record without the score (written before
    // errors were scored, or edited by hand) must count as 0 all the same.
    let mut records = read_records(&out);
    for r in &mut records {
        if r["method"] == "eir" && !r["error"].is_null() {
            r["support_f1"] = Value::Null;
        }
        println!(
            "{} {}: support F1 {}",
            r["method"], r["id"], r["support_f1"]
        );
    }
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(out.join("records.jsonl"), lines.join("\n") + "\n").unwrap();
    let score = |r: &Value| 100.0 * r["support_f1"].as_f64().unwrap_or(0.0);
    let missing = records
        .iter()
        .filter(|r| r["method"] == "eir" && r["support_f1"].is_null())
        .count();
    assert!(missing > 0, "some EIR answers have no Support F1");
    let report = ok(&["report", out.to_str().unwrap(), "--baseline", "direct"]);
    let (header, rows) = table(&report, "(EIR Tables 5 and 8)");
    assert!(!rows.is_empty(), "{report}");
    for row in &rows {
        let split = cell(&header, row, "dataset");
        // `musique` pools every question; `musique_2hop` holds the ids starting `2hop`.
        let hops = split
            .strip_prefix("musique_")
            .map_or("", |h| h.trim_end_matches("hop"));
        let of = |method: &str| -> Vec<&Value> {
            records
                .iter()
                .filter(|r| r["method"] == method)
                .filter(|r| r["id"].as_str().unwrap().starts_with(hops))
                .collect()
        };
        let (eir, direct) = (of("eir"), of("direct"));
        let diff: f64 = eir
            .iter()
            .map(|e| {
                let d = direct.iter().find(|d| d["id"] == e["id"]).unwrap();
                score(e) - score(d)
            })
            .sum::<f64>()
            / eir.len() as f64;
        let shown = cell(&header, row, "ΔSupport F1 [95% CI]");
        println!(
            "{split}: n {} (questions {}), ΔSupport F1 {shown} (by hand {diff:.2})",
            cell(&header, row, "n"),
            eir.len()
        );
        assert_eq!(cell(&header, row, "n"), eir.len().to_string());
        assert!((lead(&shown) - diff).abs() < 0.01, "{row:?}");
    }
}

/// The comparison table's p columns name their test: F1 p and F1 Holm p (the paired
/// bootstrap of ΔF1 and its Holm adjustment, EIR §4.4, Tables 6 and 11-14) beside ΔF1,
/// EM Holm p beside the EM McNemar p. Each cell is the report's own value.
#[test]
fn the_comparison_table_shows_the_f1_p_and_its_holm_p_beside_the_em_holm_p() {
    use crate::eir_cold_read::{cell, table};
    let dir = tempfile::tempdir().unwrap();
    let dirs = crate::eir_cold_read3::three_benchmarks(dir.path());
    let extra = ["--holm-family", "dataset", "--bootstrap-p", "add-one"];
    let json = crate::eir_cold_read3::report_json(&dirs, &extra);
    let mut args = vec!["report"];
    args.extend(dirs.iter().map(String::as_str));
    args.extend(["--baseline", "eir"]);
    args.extend(extra);
    let report = ok(&args);
    let (header, rows) = table(&report, "### Paired comparison");
    assert!(!header.contains(&"Holm p".to_string()), "{header:?}");
    let comparisons = json["analysis"]["comparisons"].as_array().unwrap();
    assert_eq!(rows.len(), comparisons.len());
    let shown = |p: f64| {
        if p < 1e-4 {
            format!("{p:.1e}")
        } else {
            format!("{p:.4}")
        }
    };
    let mut moved = 0;
    for row in &rows {
        let (method, split) = (cell(&header, row, "method"), cell(&header, row, "dataset"));
        let c = comparisons
            .iter()
            .find(|c| {
                c["arm"]["method"] == method.as_str() && c["arm"]["dataset"] == split.as_str()
            })
            .unwrap();
        let (f1_p, f1_holm, em_holm) = (
            c["f1"]["p"].as_f64().unwrap(),
            c["p_f1_holm"].as_f64().unwrap(),
            c["p_holm"].as_f64().unwrap(),
        );
        println!(
            "{method} {split}: F1 p {} F1 Holm p {} EM Holm p {}",
            cell(&header, row, "F1 p"),
            cell(&header, row, "F1 Holm p"),
            cell(&header, row, "EM Holm p")
        );
        assert_eq!(cell(&header, row, "F1 p"), shown(f1_p));
        assert_eq!(cell(&header, row, "F1 Holm p"), shown(f1_holm));
        assert_eq!(cell(&header, row, "EM Holm p"), shown(em_holm));
        moved += usize::from(f1_holm != em_holm);
    }
    assert!(moved > 0, "the F1 and EM Holm columns are different tests");
}

/// EIR Tables 6, 7, 18 are "EIR minus each baseline" with b = baseline-only and c =
/// EIR-only, while the documented reports pass `--baseline eir`. `--direction
/// baseline-minus-method` prints those rows as the paper does: each difference and
/// interval negated, b/c and wins/losses swapped, p unchanged. The result equals what
/// a report with Direct as the baseline computes for EIR (difference, b, c, p).
#[test]
fn direction_baseline_minus_method_gives_the_eir_papers_eir_minus_baseline_rows() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = crate::eir_cold_read3::three_benchmarks(dir.path());
    let json = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["report"];
        args.extend(dirs.iter().map(String::as_str));
        args.extend(["--json"]);
        args.extend(extra);
        let v: Value = serde_json::from_str(&ok(&args)).unwrap();
        v["analysis"]["comparisons"].as_array().unwrap().clone()
    };
    let plain = json(&["--baseline", "eir"]);
    let paper = json(&["--baseline", "eir", "--direction", "baseline-minus-method"]);
    let by_direct = json(&["--baseline", "direct"]);
    assert_eq!(plain.len(), paper.len());
    let num = |v: &Value| v.as_f64().unwrap();
    let mut checked = 0;
    for (m, e) in plain.iter().zip(&paper) {
        assert_eq!(m["arm"], e["arm"]);
        for metric in ["em", "f1"] {
            let (a, b) = (&m[metric], &e[metric]);
            assert_eq!(num(&b["diff"]), -num(&a["diff"]));
            assert_eq!(
                (num(&b["lo"]), num(&b["hi"])),
                (-num(&a["hi"]), -num(&a["lo"]))
            );
            assert_eq!(a["p"], b["p"]);
        }
        assert_eq!((&e["b"], &e["c"]), (&m["c"], &m["b"]));
        assert_eq!(e["p_mcnemar"], m["p_mcnemar"]);
        assert_eq!(e["head_to_head"]["wins"], m["head_to_head"]["losses"]);
        if m["arm"]["method"] != "direct" {
            continue;
        }
        // EIR minus Direct, computed with Direct as the baseline.
        let d = by_direct
            .iter()
            .find(|d| d["arm"]["method"] == "eir" && d["arm"]["dataset"] == m["arm"]["dataset"])
            .unwrap();
        println!(
            "{}: EIR - Direct ΔF1 {} b/c {}/{} (Direct as baseline: {} {}/{})",
            m["arm"]["dataset"], e["f1"]["diff"], e["b"], e["c"], d["f1"]["diff"], d["b"], d["c"]
        );
        assert!((num(&e["f1"]["diff"]) - num(&d["f1"]["diff"])).abs() < 1e-9);
        assert!((num(&e["em"]["diff"]) - num(&d["em"]["diff"])).abs() < 1e-9);
        assert_eq!((&e["b"], &e["c"]), (&d["b"], &d["c"]));
        assert_eq!(e["p_mcnemar"], d["p_mcnemar"]);
        checked += 1;
    }
    assert!(checked >= 3, "every benchmark's Direct row");
    // The table says which way it subtracts.
    let mut args = vec!["report"];
    args.extend(dirs.iter().map(String::as_str));
    args.extend(["--baseline", "eir", "--direction", "baseline-minus-method"]);
    let report = ok(&args);
    assert!(
        report.contains("Differences are baseline minus method"),
        "{report}"
    );
    assert!(report.contains("only under the method / only under the baseline"));
}

/// EIR Table 1 Panel B: Reflexion's first trial sends exactly Direct's requests, so a
/// shared response cache answers it with Direct's replies (the rows come out equal).
/// Under `--cache-scope method` every method's requests reach the server, as the
/// paper's separate runs did; the default scope still shares them.
#[test]
fn a_method_scoped_cache_sends_identical_requests_of_two_methods_to_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut sent = Vec::new();
    let mut reflexion_actions = 0;
    for scope in ["shared", "method"] {
        let server = MockServer::spawn(crate::eir_cold_read3::read_once_then_submit);
        let url = format!("openai-compat:{}#m", server.url());
        let out = dir.path().join(scope);
        let mut eval = Eval::new(
            "musique",
            fixture("musique"),
            "direct,eir-reflexion",
            &url,
            &out,
        )
        .opt(
            "--cache",
            dir.path().join(format!("cache-{scope}")).display(),
        )
        .opt("--concurrency", 1);
        if scope == "method" {
            eval = eval.opt("--cache-scope", "method");
        }
        eval.ok();
        let actions = server
            .requests()
            .iter()
            .filter(|r| crate::eir_fidelity::is_direct_action(&prompt(r)))
            .count();
        // Every trial's action calls, replayed or not.
        reflexion_actions = read_records(&out)
            .iter()
            .filter(|r| r["method"] == "eir-reflexion")
            .map(|r| r["calls_by_kind"]["action"].as_u64().unwrap() as usize)
            .sum();
        println!("--cache-scope {scope}: {actions} Direct-style action requests reached the server ({reflexion_actions} Reflexion action calls)");
        sent.push(actions);
    }
    // Direct reads once and submits: two action calls per question, and Reflexion's
    // first trial the same two. Method scope: every call reaches the server; shared:
    // the first trial's are Direct's, replayed.
    let (questions, direct) = (4, 8);
    assert_eq!(sent[1], direct + reflexion_actions, "method: each its own");
    assert_eq!(
        sent[0],
        sent[1] - 2 * questions,
        "shared: the first trial replayed"
    );
}
