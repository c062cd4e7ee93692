//! `sleuth eval`

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`sleuth eval` is not implemented yet")
}
