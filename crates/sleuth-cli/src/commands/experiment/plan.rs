//! What `sleuth experiment` prints for people: the dry run's plan (jobs, questions,
//! estimated spend, each split's question protocol) and each job's equivalent `sleuth
//! eval` command line. Nothing here runs a job.

use sleuth::report::table::{Cell, Table};
use sleuth::study::{Experiment, ExperimentRun, Job};
use sleuth::terminal::terminal_safe;

/// The equivalent `sleuth eval` command line of a job, for people to read and to run
/// jobs by hand (the jobs themselves run as typed jobs, never through this text).
pub fn eval_command(job: &Job) -> Vec<String> {
    let mut a = vec!["eval".to_string()];
    let selection = &job.selection;
    if let sleuth::study::Source::File { dataset, path } = &selection.source {
        if let Some(d) = dataset {
            a.extend(["--dataset".into(), d.name().to_string()]);
        }
        a.extend(["--data".into(), path.display().to_string()]);
    }
    a.extend([
        "--methods".into(),
        job.methods.names.join(","),
        "--model".into(),
        job.model.spec.clone(),
    ]);
    if let Some(h) = selection.hops {
        a.extend(["--hops".into(), h.to_string()]);
    }
    if let Some(s) = selection.sample {
        a.extend(["--sample".into(), s.size.to_string()]);
        a.extend(["--seed".into(), s.seed.to_string()]);
        if s.offset > 0 {
            a.extend(["--sample-offset".into(), s.offset.to_string()]);
        }
    }
    if let Some(l) = selection.limit {
        a.extend(["--limit".into(), l.to_string()]);
    }
    if let Some(s) = selection.shard {
        a.extend(["--shard".into(), s.to_string()]);
    }
    if let Some(c) = job.concurrency {
        a.extend(["--concurrency".into(), c.to_string()]);
    }
    if job.model.batch {
        a.push("--batch".into());
    }
    for (k, v) in &job.methods.settings {
        a.extend(["--set".into(), format!("{k}={v}")]);
    }
    if let Some(c) = &job.methods.corpus {
        a.extend(["--env".into(), "corpus".into()]);
        a.extend(["--index".into(), c.index.display().to_string()]);
        a.extend(["--corpus-reads".into(), c.reads.to_string()]);
    }
    a.extend(["--out".into(), job.out.display().to_string()]);
    match &job.model.cache {
        sleuth::study::CacheChoice::Off => a.push("--no-cache".into()),
        sleuth::study::CacheChoice::At(c) => a.extend(["--cache".into(), c.clone()]),
        sleuth::study::CacheChoice::Default => {}
    }
    if job.model.cache_scope == sleuth::llm::middleware::CacheScope::Method {
        a.extend(["--cache-scope".into(), "method".into()]);
    }
    a
}

/// A command line for people to read: a cache URL's password is left out.
pub fn shown(argv: &[String]) -> String {
    let parts: Vec<String> = argv
        .iter()
        .map(|a| sleuth::llm::middleware::redact(a))
        .collect();
    parts.join(" ")
}

/// The questions protocol of the jobs: each split's seeded sample and the setup
/// questions it holds out (their ids, so prompt work can stay off them).
fn print_protocol(experiment: &Experiment, jobs: &[Job]) -> anyhow::Result<()> {
    let mut seen = Vec::new();
    for (spec, job) in experiment.jobs.iter().zip(jobs) {
        let split = (spec.dataset, spec.hops, spec.data.clone());
        if seen.contains(&split) {
            continue;
        }
        seen.push(split);
        let name = spec.hops.map_or(spec.dataset.name().to_string(), |h| {
            format!("{}-{h}hop", spec.dataset)
        });
        let Some(sample) = job.selection.sample else {
            println!(
                "{name}: every question of {} (no sample)",
                spec.data.display()
            );
            continue;
        };
        println!(
            "{name}: seeded sample of {} (seed {}) from {}",
            sample.size,
            sample.seed,
            spec.data.display()
        );
        if let Some(held) = job.selection.held_out() {
            let held = held.select()?;
            let ids = held.questions.ids()?;
            println!(
                "  {} setup questions held out, never scored: {}",
                ids.len(),
                terminal_safe(&ids.join(", "))
            );
        }
    }
    Ok(())
}

/// `--dry-run`: every job with its questions, episodes and estimated spend, then the
/// totals and the equivalent commands.
pub fn print_plan(run: &ExperimentRun) -> anyhow::Result<()> {
    let (experiment, jobs, running) = (&run.experiment, &run.jobs[..], &run.running);
    let title = format!("experiment {}: {}", experiment.name, experiment.description);
    let mut cols = vec![
        "#",
        "dataset",
        "hops",
        "methods",
        "settings",
        "questions",
        "episodes",
    ];
    cols.extend(crate::cost::COLUMNS);
    let mut table = Table::new("plan", &title, &cols);
    // Dollars: measured per-call means from earlier runs under the output root.
    let price = crate::cost::price_check(&running.model)?;
    let history = [running.out_root.clone()];
    let mut totals = Vec::new();
    let mut usages: Vec<(String, sleuth::eval::estimate::Usage)> = Vec::new();
    let (mut episodes, mut recorded, mut calls, mut rounds) = (0usize, 0usize, 0.0f64, 0.0f64);
    for (i, (spec, job)) in experiment.jobs.iter().zip(jobs).enumerate() {
        let plan = job.prepare()?.plan(job, &price, &history);
        let q = plan.questions;
        let (to_run, done) = plan.episodes();
        episodes += to_run;
        recorded += done;
        calls += plan.budget_calls();
        rounds += plan.rounds();
        for (m, usage) in plan.usages() {
            if !usages.iter().any(|(n, _)| *n == m) {
                usages.push((m, usage));
            }
        }
        totals.push(plan.total);
        let settings: Vec<String> = spec
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut row = vec![
            Cell::Int(i as u64 + 1),
            Cell::text(spec.dataset.name()),
            spec.hops.map_or(Cell::Missing, |h| Cell::Int(u64::from(h))),
            Cell::text(spec.methods.join(",")),
            Cell::text(settings.join(" ")),
            Cell::Int(q as u64),
            Cell::Int(to_run as u64),
        ];
        row.extend(crate::cost::cells(Some(&plan.total)));
        table.push(row);
    }
    print!("{}", table.to_markdown());
    println!(
        "\n{} jobs, {episodes} episodes; upper bound: {calls:.0} model calls if every episode used its whole budget (`sleuth methods NAME` shows each method's bound and estimate)",
        jobs.len()
    );
    let total = sleuth::eval::estimate::Estimate::total(&totals);
    print!(
        "{}",
        crate::cost::footer(&total, &running.model.spec, &usages)
    );
    if jobs.iter().any(|j| j.model.batch) {
        // Jobs run one after another, so their rounds add up.
        print!(
            "{}",
            crate::cost::batch_footer(&total, price.pricing, rounds)
        );
    }
    if recorded > 0 {
        println!("{recorded} episodes already recorded under the output root are not counted (they are skipped when it resumes)");
    }
    println!("\nquestions:");
    print_protocol(experiment, jobs)?;
    println!("\nequivalent commands:");
    for job in jobs {
        println!("sleuth {}", shown(&eval_command(job)));
    }
    let reports = super::report_lines(run);
    if !reports.is_empty() {
        println!("\nreport commands (Holm flags from the recipe's conventions):");
        for line in reports {
            println!("{line}");
        }
    }
    Ok(())
}
