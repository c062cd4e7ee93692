//! `sleuth experiment`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`sleuth experiment` is not implemented yet")
}
