//! `sleuth methods [NAME]`: every method with its setting and summary, or one method's
//! settings (resolved defaults, what each accepts) and its call estimate. Everything
//! shown comes from the registry rows, so it cannot drift from what runs.

use anyhow::Result;
use sleuth::methods::registry;
use sleuth::methods::settings;
use sleuth::names::Named;

#[derive(clap::Args)]
pub struct Args {
    /// Show this method's settings and estimate.
    pub name: Option<String>,
    /// Settings to resolve the defaults and the estimate under (`--set key=value`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print the method table as Markdown (the README's table).
    #[arg(long, conflicts_with = "name")]
    pub markdown: bool,
}

pub fn run(args: Args) -> Result<()> {
    if args.markdown {
        print!("{}", registry::markdown_table());
        return Ok(());
    }
    let Some(name) = &args.name else {
        let width = registry::METHODS
            .iter()
            .map(|m| m.name.len())
            .max()
            .unwrap_or(0);
        for m in registry::METHODS {
            println!("{:width$}  {:6}  {}", m.name, m.setting.name(), m.summary);
        }
        println!("\n`sleuth methods NAME` shows a method's settings and call estimate.");
        return Ok(());
    };
    let options = crate::resolve::MethodArgs {
        set: args.set.clone(),
        ..Default::default()
    };
    let method = options.setup(name)?.build()?.built.remove(0);
    let spec = method.spec();
    println!(
        "{} ({} setting{})",
        spec.name,
        spec.setting.name(),
        if spec.corpus {
            "; also --env corpus"
        } else {
            ""
        }
    );
    println!("{}\n", spec.summary);
    println!("settings (--set key=value):");
    let width = spec.reads().iter().map(|k| k.len()).max().unwrap_or(0);
    for (key, value) in method.settings() {
        let doc = settings::def(key).map_or("", |d| d.doc);
        println!("  {key:width$} = {value:<8} {doc}");
    }
    println!(
        "\nmodel calls per question: at most {} (every budget used up)",
        method.calls_per_episode()
    );
    Ok(())
}
