//! The examples under every subcommand's `--help`, in one place so each command has
//! one and they are easy to keep true. Attached to the parsed command tree at start-up.

/// (subcommand path, example lines). Every subcommand, nested ones included, is here;
/// `examples_cover_every_subcommand` (CLI tests) checks it through `--help`.
const EXAMPLES: &[(&str, &str)] = &[
    ("data", "sleuth data stats --dataset musique --data musique.jsonl"),
    ("data stats", "sleuth data stats --dataset musique --data musique.jsonl --hops 4 --json"),
    ("data corpus", "sleuth data corpus --dataset hotpotqa --data hotpot_dev.jsonl --out corpus.jsonl\nsleuth data corpus --dataset hotpotqa-wiki --out wiki-corpus.jsonl"),
    ("data fetch", "sleuth data fetch --list\nsleuth data fetch musique\nsleuth data fetch 2wiki --from ~/Downloads/data_ids_april7.zip"),
    ("score", "sleuth score --dataset hotpotqa --data hotpot_dev.jsonl --predictions pred.json --json\nsleuth score --dataset musique --data musique.jsonl --predictions pred.jsonl --explain 2hop__574419_270105"),
    ("ask", "sleuth ask --model openai:gpt-4o-mini --dataset musique --data musique.jsonl --id 2hop__574419_270105\nsleuth ask --method react --model local:smollm2 --question \"Who ...?\" --paragraphs paras.jsonl"),
    ("eval", "sleuth eval --dataset musique --data musique.jsonl --hops 4 --methods react,sleuth \\\n  --model openai:gpt-4o-mini --out runs/mq4\nsleuth eval ... --dry-run        # estimated calls, tokens and dollars; runs nothing"),
    ("report", "sleuth report runs/mq4 --baseline react\nsleuth report runs/ --baseline 'sleuth [nudge=none]' --out runs/report --html"),
    ("export", "sleuth export runs/mq4 --method sleuth --format musique --out sleuth.jsonl\nsleuth score --dataset musique --data musique.jsonl --predictions sleuth.jsonl"),
    ("index", "sleuth index build --corpus corpus.jsonl --out idx"),
    ("index build", "sleuth index build --corpus corpus.jsonl --out idx"),
    ("index search", "sleuth index search idx \"jazz bassist Nogales\" -k 5 --explain"),
    ("index check", "sleuth index check idx"),
    ("model", "sleuth model list"),
    ("model pull", "sleuth model pull smollm2"),
    ("model list", "sleuth model list"),
    ("model path", "sleuth model path smollm2"),
    ("model bench", "sleuth model bench --model smollm2 --turns 10"),
    ("demo", "sleuth demo\nsleuth demo --model openai:gpt-4o-mini"),
    ("experiment", "sleuth experiment experiments/nudge-sweep.toml --model openai:gpt-4o-mini --dry-run\nsleuth experiment experiments/nudge-sweep.toml --model openai:gpt-4o-mini --out runs/nudge-sweep"),
    ("methods", "sleuth methods\nsleuth methods eir --set reads=10"),
    ("cache", "sleuth cache stats"),
    ("cache stats", "sleuth cache stats --cache ~/.cache/sleuth/responses"),
    ("cache export", "sleuth cache export --cache ~/.cache/sleuth/responses --out entries.jsonl"),
    ("cache import", "sleuth cache import entries.jsonl --cache redis://cache-node:6379/0"),
    ("cache clear", "sleuth cache clear --cache ~/.cache/sleuth/responses"),
    ("completions", "sleuth completions bash > ~/.local/share/bash-completion/completions/sleuth\nsleuth completions zsh > \"${fpath[1]}/_sleuth\""),
];

fn examples_of(path: &str) -> Option<String> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| {
        let lines: Vec<String> = e.lines().map(|l| format!("  {l}")).collect();
        format!("Examples:\n{}", lines.join("\n"))
    })
}

/// Attaches the examples to `cmd`'s subcommands (recursively; `prefix` is the path so
/// far).
pub fn attach(cmd: clap::Command, prefix: &str) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for name in names {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| {
            let s = attach(s, &path);
            match examples_of(&path) {
                Some(text) => s.after_help(text),
                None => s,
            }
        });
    }
    cmd
}
