//! `sleuth demo`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`sleuth demo` is not implemented yet")
}
