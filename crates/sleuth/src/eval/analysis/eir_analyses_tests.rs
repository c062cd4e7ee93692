use super::*;

#[test]
fn wilson_interval_matches_the_papers_f1_figure() {
    // EIR App. F.1: 1,248 of 2,758 errors, 95% CI 43.40-47.11%.
    let (lo, hi) = wilson(1248, 2758);
    assert!(
        (lo - 43.40).abs() < 0.01 && (hi - 47.11).abs() < 0.01,
        "{lo} {hi}"
    );
    assert_eq!(wilson(0, 0), (0.0, 0.0));
}
