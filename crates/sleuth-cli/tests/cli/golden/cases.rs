//! The golden cases: every registry method, and every setting group that changes what a
//! method sends (its prompts, its constraints, its budgets) or how it stops.
//!
//! Loop cases run T = 5 turns unless they say otherwise: the nudge (α = 0.7) then comes
//! with turn 4, so one short episode shows the nudge, a dropped fact, a turn without
//! the notation and a turn with two actions (see `script.rs`).

/// What a case needs before its run.
#[derive(Debug, Clone, Copy)]
pub enum Setup {
    /// The question's own pool.
    Pool,
    /// A BM25 index built from the fixture's paragraphs (`--env corpus`).
    Corpus,
    /// An earlier plain EIR run on the same questions (`eir-recover`'s `from`), whose
    /// known failures are selected with `--failures-of`.
    RecoverFrom,
}

#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The transcript's file name.
    pub name: &'static str,
    /// What the case pins, in a few words.
    pub about: &'static str,
    pub dataset: &'static str,
    pub methods: &'static str,
    pub limit: usize,
    /// `--set` pairs; `$WORK` is the case's scratch folder.
    pub settings: &'static [&'static str],
    pub setup: Setup,
}

const fn pool(
    name: &'static str,
    about: &'static str,
    methods: &'static str,
    settings: &'static [&'static str],
) -> Case {
    Case {
        name,
        about,
        dataset: "musique",
        methods,
        limit: 2,
        settings,
        setup: Setup::Pool,
    }
}

const fn eir(
    name: &'static str,
    about: &'static str,
    methods: &'static str,
    settings: &'static [&'static str],
) -> Case {
    Case {
        name,
        about,
        dataset: "musique",
        methods,
        limit: 2,
        settings,
        setup: Setup::Pool,
    }
}

const T5: &[&str] = &["turns=5"];

pub const CASES: &[Case] = &[
    // The pool setting's methods, as the registry builds them.
    pool("react", "ReAct", "react", T5),
    pool("react-cot", "ReAct with chain of thought", "react-cot", T5),
    pool("self-ask", "Self-Ask", "self-ask", T5),
    pool("ircot", "IRCoT", "ircot", T5),
    pool("reflexion", "Reflexion, two episodes", "reflexion", T5),
    pool("notes", "the unstructured Notes baseline", "notes", T5),
    pool("facts-only", "working memory: facts", "facts-only", T5),
    pool(
        "facts-hyp",
        "working memory: facts and hypotheses",
        "facts-hyp",
        T5,
    ),
    pool(
        "facts-q",
        "working memory: facts and open questions",
        "facts-q",
        T5,
    ),
    pool("sleuth", "SLEUTH", "sleuth", T5),
    pool(
        "sleuth-default-budget",
        "SLEUTH with the paper's T = 20",
        "sleuth",
        &[],
    ),
    pool(
        "sleuth-eir",
        "SLEUTH's loop, then EIR's final call",
        "sleuth-eir",
        T5,
    ),
    // The commitment nudge and its controls.
    pool(
        "sleuth-nudge-turn",
        "nudge at a fixed turn",
        "sleuth",
        &["turns=5", "nudge=turn:2"],
    ),
    pool(
        "sleuth-nudge-none",
        "no nudge",
        "sleuth",
        &["turns=5", "nudge=none"],
    ),
    pool("sleuth-tau", "τ = 3", "sleuth", &["turns=5", "tau=3"]),
    pool(
        "sleuth-nudge-gate",
        "the nudge also waits for no open question",
        "sleuth",
        &["turns=5", "nudge_gate=empty-questions"],
    ),
    pool(
        "sleuth-adaptive",
        "adaptive commitment",
        "sleuth",
        &["turns=5", "nudge=adaptive", "adaptive_stagnation=1"],
    ),
    pool(
        "react-nudge-all",
        "ReAct + nudge control (App. D.4)",
        "react",
        &["turns=5", "nudge_all=true"],
    ),
    pool(
        "notes-nudge",
        "Notes with SLEUTH's nudge",
        "notes",
        &["turns=5", "nudge=0.5"],
    ),
    // Stopping strategies (App. D.5).
    pool(
        "sleuth-structural",
        "structural completion",
        "sleuth",
        &["turns=5", "stopping=structural"],
    ),
    pool(
        "sleuth-forward-only",
        "forward-only",
        "sleuth",
        &["turns=5", "stopping=forward-only"],
    ),
    pool(
        "sleuth-contrastive",
        "contrastive elimination",
        "sleuth",
        &["turns=5", "stopping=contrastive"],
    ),
    pool(
        "sleuth-late-verification",
        "late verification",
        "sleuth",
        &["turns=5", "stopping=late-verification"],
    ),
    pool(
        "sleuth-late-verification-accepted",
        "late verification with a turn left after the chain check",
        "sleuth",
        &["turns=6", "stopping=late-verification"],
    ),
    pool(
        "sleuth-late-verification-memory",
        "late verification keeping the memory",
        "sleuth",
        &["turns=5", "stopping=late-verification-memory"],
    ),
    // Enforcement (App. M) and the memory's runtime help.
    pool(
        "sleuth-enforce",
        "runtime enforcement with reminders",
        "sleuth",
        &["turns=5", "enforce=true"],
    ),
    pool(
        "sleuth-enforce-one-reminder",
        "enforcement with one reminder",
        "sleuth",
        &["turns=5", "enforce=true", "max_reminders=1"],
    ),
    pool(
        "sleuth-restore-facts",
        "dropped facts handed back",
        "sleuth",
        &["turns=5", "restore_facts=true"],
    ),
    // Context, actions, channel, grammar, retrieval.
    pool(
        "sleuth-compact",
        "context compaction",
        "sleuth",
        &["turns=5", "compact=1"],
    ),
    pool(
        "sleuth-compact-slack",
        "compaction with slack for prompt caches",
        "sleuth",
        &["turns=5", "compact=1", "compact_slack=1"],
    ),
    pool(
        "sleuth-contradictions",
        "per-fact confidence and contradiction detection",
        "sleuth",
        &["turns=5", "contradictions=true"],
    ),
    pool(
        "sleuth-one-action",
        "one action per turn",
        "sleuth",
        &["turns=5", "actions_per_turn=1"],
    ),
    pool(
        "sleuth-native-tools",
        "the native tool channel",
        "sleuth",
        &["turns=5", "tool_channel=native"],
    ),
    pool(
        "react-native-tools",
        "ReAct on the native tool channel",
        "react",
        &["turns=5", "tool_channel=native"],
    ),
    pool(
        "sleuth-last-turn",
        "the last turn accepts only finish",
        "sleuth",
        &["turns=3", "last_turn_answer_only=true", "nudge=none"],
    ),
    pool(
        "sleuth-timeout",
        "the turn budget runs out",
        "sleuth",
        &["turns=3", "nudge=none"],
    ),
    pool(
        "sleuth-no-grammar",
        "no output grammar",
        "sleuth",
        &["turns=5", "grammar=false"],
    ),
    pool(
        "react-no-grammar",
        "ReAct without an output grammar",
        "react",
        &["turns=5", "grammar=false"],
    ),
    pool(
        "sleuth-grammar-open",
        "the opt-in grammar servers get (free reasoning, several action lines)",
        "sleuth",
        &["turns=5", "grammar=true"],
    ),
    pool(
        "sleuth-top-k",
        "one paragraph per search",
        "sleuth",
        &["turns=5", "top_k=1"],
    ),
    pool(
        "sleuth-sampling",
        "temperature and output tokens",
        "sleuth",
        &["turns=5", "temperature=0.5", "max_tokens=300"],
    ),
    // The other benchmarks: their loaders, metrics and support rules.
    Case {
        dataset: "hotpotqa",
        ..pool("hotpotqa-sleuth", "SLEUTH on HotpotQA", "sleuth,react", T5)
    },
    Case {
        dataset: "2wiki",
        ..pool(
            "2wiki-sleuth",
            "SLEUTH on 2WikiMultiHopQA",
            "sleuth,react",
            T5,
        )
    },
    Case {
        limit: 4,
        ..pool(
            "musique-hops",
            "2-, 3- and 4-hop questions, repeated titles",
            "react",
            &["turns=3"],
        )
    },
    // The EIR setting.
    eir("eir", "EIR", "eir", &[]),
    eir("direct", "Direct", "direct", &[]),
    eir("full-pool", "Full Pool", "full-pool", &[]),
    eir("ssr", "Agentic SSR", "ssr", &[]),
    eir(
        "eir-reflexion",
        "Reflexion in the EIR setting",
        "eir-reflexion",
        &["trials=2"],
    ),
    eir(
        "eir-reflexion-default",
        "Reflexion with the paper's five trials",
        "eir-reflexion",
        &[],
    ),
    eir(
        "eir-reads",
        "a read budget of 2",
        "eir,direct",
        &["reads=2"],
    ),
    eir(
        "eir-action-turns",
        "a fixed number of action turns",
        "eir",
        &["action_turns=3"],
    ),
    eir(
        "eir-list-feedback-off",
        "lists kept out of later prompts (E.2)",
        "eir",
        &["list_feedback=false"],
    ),
    eir(
        "eir-dependency-repair",
        "dependency repair",
        "eir",
        &["dependency_repair=true"],
    ),
    eir(
        "eir-dependency-repair-unapplied",
        "dependency repair, changes discarded",
        "eir",
        &["dependency_repair=unapplied"],
    ),
    eir(
        "eir-extra-reads",
        "additional retrieval after the answer",
        "eir",
        &["extra_reads=2"],
    ),
    Case {
        limit: 1,
        ..eir(
            "eir-schema",
            "JSON schema sent as an output constraint (opt-in; default prompting only)",
            "eir,direct,ssr",
            &["json_schema=true"],
        )
    },
    Case {
        limit: 1,
        ..eir(
            "eir-sampling",
            "temperature, output tokens and the verifier's temperature",
            "eir,ssr",
            &[
                "temperature=0.3",
                "max_tokens=500",
                "verifier_temperature=0.9",
            ],
        )
    },
    Case {
        dataset: "hotpotqa",
        ..eir(
            "hotpotqa-eir",
            "EIR and Direct on HotpotQA",
            "eir,direct,full-pool",
            &[],
        )
    },
    Case {
        dataset: "2wiki",
        ..eir(
            "2wiki-eir",
            "EIR and Direct on 2WikiMultiHopQA",
            "eir,direct,full-pool",
            &[],
        )
    },
    // The recovery tests (F.2, F.3) on an earlier run's evidence.
    Case {
        setup: Setup::RecoverFrom,
        limit: 4,
        ..eir(
            "eir-recover-added",
            "the missed annotated paragraphs added",
            "eir-recover",
            &["from=$WORK/earlier", "recover=added"],
        )
    },
    Case {
        setup: Setup::RecoverFrom,
        limit: 4,
        ..eir(
            "eir-recover-unchanged",
            "the final call repeated on the same evidence",
            "eir-recover",
            &["from=$WORK/earlier", "recover=unchanged"],
        )
    },
    Case {
        setup: Setup::RecoverFrom,
        limit: 4,
        ..eir(
            "eir-recover-selected",
            "up to two paragraphs the model picks",
            "eir-recover",
            &["from=$WORK/earlier", "recover=selected"],
        )
    },
    // The open-corpus setting (EIR §4.3, App. H.1).
    Case {
        setup: Setup::Corpus,
        limit: 1,
        ..eir(
            "corpus",
            "BM25 search and read by id, both families",
            "react,sleuth,eir,direct",
            &["turns=5"],
        )
    },
];
